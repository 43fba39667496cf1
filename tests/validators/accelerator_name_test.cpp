// AIA003 through the real server over TLS: accelerator resource names the profile does not offer:
// typos, no vendor domain, another vendor, the removed alpha name, a MIG slice written otherwise,
// the ".shared" renaming either way; ordinary extended resources are left alone. Manifests
// that break the rule and near misses that must pass, each under profiles that deny, warn and
// switch every rule off.
#include "tests/support/validator_harness.h"

namespace aiadmit {
namespace {

using namespace testing;

const std::vector<RuleCase> kCases = {
    {"PluralTypo", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {limits: {nvidia.com/gpus: 1}}})"),
     "spec.template.spec.containers[0].resources.limits"},
    {"NoVendorDomain", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {limits: {gpu: 1}}})"),
     "spec.template.spec.containers[0].resources.limits"},
    {"OtherVendorGpuNotOffered", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {limits: {amd.com/gpu: 1}}})"),
     "spec.template.spec.containers[0].resources.limits"},
    {"OrdinaryExtendedResourcesAreLeftAlone", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {limits: {nvidia.com/gpu: 1, nvidia.com/rdma_shared_device_a: 1, example.com/outputs: 2, hugepages-2Mi: 1Gi}}})"),
     ""},
    {"AllowedMigSlice", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {limits: {nvidia.com/mig-2g.20gb: 1}}})"),
     ""},
    // The kubelet's own GPU resource, gone since Kubernetes 1.11.
    {"RemovedAlphaGpuName", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {limits: {alpha.kubernetes.io/nvidia-gpu: 1}}})"),
     "spec.template.spec.containers[0].resources.limits"},
    {"MigSliceWrittenOtherwise", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {limits: {nvidia.com/mig1g.10gb: 1}}})"),
     "spec.template.spec.containers[0].resources.limits"},
    // Where the device plugin does not rename shared GPUs, and where it does.
    {"SharedNameOnAPoolThatDoesNotRename", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {limits: {nvidia.com/gpu.shared: 1}}})"),
     "spec.template.spec.containers[0].resources.limits"},
    {"WholeGpusOnAPoolThatRenames", "sliced-jobs", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {limits: {nvidia.com/gpu: 1}}})"),
     "spec.template.spec.containers[0].resources.limits"},
    {"SharedNameOnAPoolThatRenames", "sliced-jobs", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {limits: {nvidia.com/gpu.shared: 1}}})"),
     ""}};

AIADMIT_RULE_ACTIONS_TEST(AIA003, kCases);

}  // namespace
}  // namespace aiadmit
