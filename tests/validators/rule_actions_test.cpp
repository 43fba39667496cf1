// Every rule's cases, as its own file registers them with
// AIADMIT_RULE_ACTIONS_TEST, through the engine's /validate path under profiles
// that deny, warn and switch every rule off: one test per rule,
// AllRules/RuleActionsTest.ViolationsFollowTheActionAndNearMissesPass/AIA0NN.
#include "tests/support/validator_harness.h"

namespace aiadmit::testing {
namespace {

TEST_P(RuleActionsTest, ViolationsFollowTheActionAndNearMissesPass) {
  const RuleId rule{GetParam()};
  const auto& registered = ruleActionCases().at(rule.number);
  ASSERT_EQ(registered.size(), 1u) << rule.name() << " has cases in more than one file";
  expectViolationsFollowTheActionAndNearMissesPass(rule, *registered.front());
}

// The rules are read when the tests are registered, after every file's
// static initialisation has added its cases.
INSTANTIATE_TEST_SUITE_P(AllRules, RuleActionsTest, ::testing::ValuesIn(rulesWithActionCases()),
                         ruleParamName);

}  // namespace
}  // namespace aiadmit::testing
