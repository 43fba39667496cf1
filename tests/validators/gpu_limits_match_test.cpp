// AIA005 through the engine's /validate path: requests of an extended resource (a GPU, an RDMA
// device, any vendor's device) that differ from their limits or have none, compared by value.
// Manifests that break the rule and near misses that must pass, each under profiles that deny,
// warn and switch every rule off.
#include "tests/support/validator_harness.h"

namespace aiadmit {
namespace {

using namespace testing;

const std::vector<RuleCase> kCases = {
    {"RequestBelowLimit", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {requests: {nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: 2}}})"),
     "spec.template.spec.containers[0].resources.requests"},
    {"RequestWithoutLimit", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {requests: {nvidia.com/gpu: 1}}})"),
     "spec.template.spec.containers[0].resources.limits"},
    {"SameAmountSpelledDifferently", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {requests: {nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: 1000m}}})"),
     ""},
    // Every extended resource, whatever its vendor: an RDMA device beside the GPU.
    {"OtherExtendedResourceRequestAboveLimit", "default", gpuJob("training", "", "", R"(
      - {name: train, image: t, resources: {requests: {rdma/hca_shared_devices_a: 2}, limits: {nvidia.com/gpu: 1, rdma/hca_shared_devices_a: 1}}})"),
     "spec.template.spec.containers[0].resources.requests"},
    {"OtherExtendedResourceWithoutLimitInAnInitContainer", "default",
     gpuJob("training", "", R"(
      initContainers:
      - {name: stage, image: s, resources: {requests: {example.com/dongle: 1}}})",
            kOneGpu),
     "spec.template.spec.initContainers[0].resources.limits"},
    // 0 is a container without the GPU, and still an extended resource to the API server: a
    // request of 0 needs its limit of 0, and a request of 0 below a limit of 1 is refused.
    {"ZeroRequestedAndLimited", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {limits: {nvidia.com/gpu: 1}}}
      - {name: helper, image: h, resources: {requests: {nvidia.com/gpu: "0"}, limits: {nvidia.com/gpu: 0}}})"),
     ""},
    {"ZeroRequestBelowALimit", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {requests: {nvidia.com/gpu: 0}, limits: {nvidia.com/gpu: 1}}})"),
     "spec.template.spec.containers[0].resources.requests"},
    // Native resources may be overcommitted: memory and CPU requests below their limits.
    {"NativeResourcesMayDiffer", "default", gpuJob("training", "", "", R"(
      - {name: train, image: t, resources: {requests: {cpu: 4, memory: 16Gi, rdma/hca_shared_devices_a: 1}, limits: {cpu: 8, memory: 32Gi, nvidia.com/gpu: 1, rdma/hca_shared_devices_a: 1}}})"),
     ""}};

AIADMIT_RULE_ACTIONS_TEST(AIA005, kCases);

}  // namespace
}  // namespace aiadmit
