// AIA011 through the real server over TLS: priority classes the profile does not allow.
// Manifests that break the rule and near misses that must pass, each under
// profiles that deny, warn and switch every rule off.
#include "tests/support/validator_harness.h"

namespace aiadmit {
namespace {

using namespace testing;

const std::vector<RuleCase> kCases = {
    {"RealtimePriorityForTraining", "default",
     gpuJob("training", "", "\n      priorityClassName: ai-realtime", kOneGpu),
     "spec.template.spec.priorityClassName"},
    {"AnotherAllowedClass", "default",
     gpuJob("training", "", "\n      priorityClassName: ai-batch", kOneGpu), ""}};

AIADMIT_RULE_ACTIONS_TEST(AIA011, kCases);

}  // namespace
}  // namespace aiadmit
