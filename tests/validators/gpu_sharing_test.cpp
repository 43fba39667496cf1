// AIA013 through the engine's /validate path: shared GPUs (MIG slices, time-slicing) for training.
// Manifests that break the rule and near misses that must pass, each under
// profiles that deny, warn and switch every rule off.
#include "tests/support/validator_harness.h"

namespace aiadmit {
namespace {

using namespace testing;

const std::vector<RuleCase> kCases = {
    {"MigSliceForTraining", "default", gpuJob("training", "", "", R"(
      - {name: train, image: t, resources: {limits: {nvidia.com/mig-1g.10gb: 1}}})"),
     "spec.template.spec.containers[0].resources.limits"},
    {"TimeSlicedReplicaForTraining", "default", gpuJob("training", "", "", R"(
      - {name: train, image: t, resources: {limits: {nvidia.com/gpu.shared: 1}}})"),
     "spec.template.spec.containers[0].resources.limits"},
    {"SharingNodeSelectorForTraining", "default",
     replaced(gpuJob("training", "", "", kOneGpu), "nodeSelector: {accelerator: nvidia}",
              "nodeSelector: {accelerator: nvidia, "
              "cloud.google.com/gke-gpu-sharing-strategy: time-sharing}"),
     "spec.template.spec.nodeSelector"},
    // A slice asked for as 0 is no slice: a chart that switched it off.
    {"NoMigSliceForTraining", "default", gpuJob("training", "", "", R"(
      - {name: train, image: t, resources: {limits: {nvidia.com/gpu: 1, nvidia.com/mig-1g.10gb: 0}}})"),
     ""},
    {"MigSliceForBatch", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {limits: {nvidia.com/mig-1g.10gb: 1}}})"),
     ""}};

AIADMIT_RULE_ACTIONS_TEST(AIA013, kCases);

}  // namespace
}  // namespace aiadmit
