// AIA012 through the engine's /validate path: GPUs in a namespace the profile does not allow them
// in. Manifests that break the rule and near misses that must pass, each under profiles that deny,
// warn and switch every rule off.
#include "tests/support/validator_harness.h"

namespace aiadmit {
namespace {

using namespace testing;

const std::vector<RuleCase> kCases = {
    {"NamespaceWithoutGpus", "restricted-web", gpuJob("batch", "", "", kOneGpu),
     "metadata.namespace",
     "[AIA012] metadata.namespace: namespace restricted-web may not use GPUs under profile "
     "batch-restricted; run it in restricted-gpu, restricted-lab-*, or ask the platform team for "
     "GPU access"},
    {"AllowedNamespace", "restricted-gpu", gpuJob("batch", "", "", kOneGpu), ""},
    // 0 is no GPU: a chart's CPU-only run in a namespace without GPUs, off the pool.
    {"ZeroGpusInANamespaceWithoutGpus", "restricted-web", R"(apiVersion: batch/v1
kind: Job
metadata: {name: cpu-run, annotations: {aiadmit.dev/workload: batch}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: run, image: r, resources: {limits: {nvidia.com/gpu: 0}}}
)",
     ""},
    {"AllowedByPattern", "restricted-lab-7", gpuJob("batch", "", "", kOneGpu), ""}};

AIADMIT_RULE_ACTIONS_TEST(AIA012, kCases);

}  // namespace
}  // namespace aiadmit
