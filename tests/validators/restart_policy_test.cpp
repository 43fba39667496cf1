// AIA014 through the engine's /validate path: bare GPU Pods that restart, or keep the default
// restartPolicy. Manifests that break the rule and near misses that must pass, each under profiles
// that deny, warn and switch every rule off.
#include "tests/support/validator_harness.h"

namespace aiadmit {
namespace {

using namespace testing;

const std::vector<RuleCase> kCases = {
    {"TrainingPodRestartsAlways", "default", gpuPod("training", R"(
  restartPolicy: Always
  containers: [{name: train, image: t, resources: {limits: {nvidia.com/gpu: 1}}}])"),
     "spec.restartPolicy"},
    {"BatchPodWithTheDefault", "default", gpuPod("batch", R"(
  containers: [{name: infer, image: i, resources: {limits: {nvidia.com/gpu: 1}}}])"),
     "spec.restartPolicy"},
    {"TrainingPodOnFailure", "default", gpuPod("training", R"(
  restartPolicy: OnFailure
  containers: [{name: train, image: t, resources: {limits: {nvidia.com/gpu: 1}}}])"),
     ""}};

AIADMIT_RULE_ACTIONS_TEST(AIA014, kCases);

}  // namespace
}  // namespace aiadmit
