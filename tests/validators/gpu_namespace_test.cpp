// AIA012 through the real server over TLS: GPUs in a namespace the profile does not allow them in.
// Manifests that break the rule and near misses that must pass, each under
// profiles that deny, warn and switch every rule off.
#include "tests/support/validator_harness.h"

namespace aiadmit {
namespace {

using namespace testing;

const std::vector<RuleCase> kCases = {
    {"NamespaceWithoutGpus", "restricted-web", gpuJob("batch", "", "", kOneGpu),
     "metadata.namespace"},
    {"AllowedNamespace", "restricted-gpu", gpuJob("batch", "", "", kOneGpu), ""},
    {"AllowedByPattern", "restricted-lab-7", gpuJob("batch", "", "", kOneGpu), ""}};

AIADMIT_RULE_ACTIONS_TEST(AIA012, kCases);

}  // namespace
}  // namespace aiadmit
