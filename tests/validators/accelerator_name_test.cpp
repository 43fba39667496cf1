// AIA003 through the engine's /validate path: misspelt accelerator resource names: typos of the
// profile's names and of other vendors' (amd.com/gpus), no vendor domain, a domain cut short,
// the removed alpha name, a MIG slice written otherwise, the ".shared" renaming either way.
// Another vendor's real name is never "corrected" into the profile's, and ordinary extended
// resources are left alone. Manifests that break the rule and near misses that must pass,
// each under profiles that deny, warn and switch every rule off.
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
    // Every vendor's real names run where their vendor's pool is; no
    // profile of these places them, and none is told it meant nvidia.com/gpu.
    {"AmdGpuIsAmds", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {limits: {amd.com/gpu: 1}}})"),
     ""},
    {"IntelGpuIsIntels", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {limits: {gpu.intel.com/i915: 1}}})"),
     ""},
    {"GaudiIsIntelGaudis", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {limits: {habana.ai/gaudi: 8}}})"),
     ""},
    {"NeuronCoresAreAwss", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {limits: {aws.amazon.com/neuroncore: 2}}})"),
     ""},
    {"TpuIsGoogles", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {limits: {google.com/tpu: 4}}})"),
     ""},
    // A misspelling of another vendor's name is one: did you mean its name.
    {"OtherVendorsPluralTypo", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {limits: {amd.com/gpus: 1}}})"),
     "spec.template.spec.containers[0].resources.limits"},
    {"VendorDomainCutShort", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {limits: {nvidia/gpu: 1}}})"),
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
