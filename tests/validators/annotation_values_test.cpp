// AIA001 through the engine's /validate path: aiadmit.dev annotations whose
// value aiadmit cannot use. Two validators share the rule and this one test:
// validators/workload_annotation.cpp (a workload class that is not one) and
// validators/annotation_values.cpp (a container that does not exist, a GPU
// count that is not a positive whole number, an unknown profile). Manifests
// that break the rule and near misses that must pass, each under profiles
// that deny, warn and switch every rule off.
#include "tests/support/validator_harness.h"

namespace aiadmit {
namespace {

using namespace testing;

const std::vector<RuleCase> kCases = {
    {"SynonymOfAClass", "default",
     realtimeDeployment("", kServingContainer, "{aiadmit.dev/workload: inference}"),
     "metadata.annotations[aiadmit.dev/workload]"},
    {"TypoOnTheTemplate", "default",
     R"(apiVersion: batch/v1
kind: Job
metadata: {name: run}
spec:
  template:
    metadata: {annotations: {aiadmit.dev/workload: trainig}}
    spec:
      restartPolicy: Never)" +
         kPoolPlacement + "\n      containers:" + kOneGpu + "\n",
     "spec.template.metadata.annotations[aiadmit.dev/workload]"},
    {"KnownClass", "default",
     realtimeDeployment("", kServingContainer, "{aiadmit.dev/workload: realtime}"), ""},
    // The other annotations a developer writes: a value aiadmit cannot
    // use is refused, never ignored.
    {"GpuContainerTypo", "default",
     gpuJob("training, aiadmit.dev/gpu-container: traner", "", "", kOneGpu),
     "metadata.annotations[aiadmit.dev/gpu-container]"},
    {"GpuContainerNamesAContainer", "default",
     gpuJob("training, aiadmit.dev/gpu-container: train", "", "", kOneGpu), ""},
    {"GpuCountInWords", "default",
     replaced(gpuJob("training, aiadmit.dev/gpus: two", "", "",
                     "\n      - {name: train, image: t, resources: {limits: {memory: 1Gi}}}"),
              kPoolPlacement, ""),
     "metadata.annotations[aiadmit.dev/gpus]"},
    {"GpuCountFraction", "default", gpuJob("training, aiadmit.dev/gpus: \"0.5\"", "", "", kOneGpu),
     "metadata.annotations[aiadmit.dev/gpus]"},
    {"GpuCountWhole", "default", gpuJob("training, aiadmit.dev/gpus: \"1\"", "", "", kOneGpu), ""},
    {"UnknownProfile", "default", gpuJob("training, aiadmit.dev/profile: trainig", "", "", kOneGpu),
     "metadata.annotations[aiadmit.dev/profile]"}};

AIADMIT_RULE_ACTIONS_TEST(AIA001, kCases);

}  // namespace
}  // namespace aiadmit
