// AIA006 through the engine's /validate path: more GPUs in one Pod, as the scheduler counts them,
// than a node has. Manifests that break the rule and near misses that must pass, each under
// profiles that deny, warn and switch every rule off.
#include "tests/support/validator_harness.h"

namespace aiadmit {
namespace {

using namespace testing;

const std::vector<RuleCase> kCases = {
    {"TwoContainersAddUp", "default", gpuJob("batch", "", "", R"(
      - {name: a, image: i, resources: {limits: {nvidia.com/gpu: 5}}}
      - {name: b, image: i, resources: {limits: {nvidia.com/gpu: 5}}})"),
     "spec.template.spec.containers"},
    {"SidecarAddsToContainers", "default",
     gpuJob("batch", "", R"(
      initContainers:
      - {name: sidecar, image: s, restartPolicy: Always, resources: {limits: {nvidia.com/gpu: 1}}})",
            R"(
      - {name: a, image: i, resources: {limits: {nvidia.com/gpu: 8}}})"),
     "spec.template.spec.containers"},
    {"OneContainerTooBig", "default", gpuJob("training", "", "", R"(
      - {name: a, image: i, resources: {limits: {nvidia.com/gpu: 16}}})"),
     "spec.template.spec.containers[0].resources.limits"},
    {"ZeroAddsNothing", "default", gpuJob("batch", "", "", R"(
      - {name: a, image: i, resources: {limits: {nvidia.com/gpu: 8}}}
      - {name: b, image: i, resources: {limits: {nvidia.com/gpu: 0}}})"),
     ""},
    {"OneMoreThanANode", "default", gpuJob("batch", "", "", R"(
      - {name: a, image: i, resources: {limits: {nvidia.com/gpu: 8}}}
      - {name: b, image: i, resources: {limits: {nvidia.com/gpu: 1}}})"),
     "spec.template.spec.containers"},
    {"InitContainerRunsAlone", "default",
     gpuJob("batch", "", R"(
      initContainers:
      - {name: warm, image: w, resources: {limits: {nvidia.com/gpu: 8}}})",
            R"(
      - {name: a, image: i, resources: {limits: {nvidia.com/gpu: 8}}})"),
     ""}};

AIADMIT_RULE_ACTIONS_TEST(AIA006, kCases);

}  // namespace
}  // namespace aiadmit
