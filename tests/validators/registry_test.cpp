// The rule registry (validators/registry.cpp): one row per rule of the
// catalogue the profiles read, each with the checks that judge it, and each
// check listed once, under a name of its own.
#include <gtest/gtest.h>

#include <set>
#include <string_view>

#include "validators/registry.h"

namespace aiadmit {
namespace {

TEST(RuleRegistry, TheRowsAreTheCatalogue) {
  ASSERT_EQ(ruleRows().size(), ruleCatalogue().size());
  for (size_t i = 0; i < ruleRows().size(); ++i) {
    const RuleInfo& row = ruleRows()[i].rule;
    const RuleInfo& catalogued = ruleCatalogue()[i];
    EXPECT_EQ(row.id, catalogued.id);
    EXPECT_EQ(row.title, catalogued.title);
    EXPECT_EQ(row.defaultAction, catalogued.defaultAction);
    EXPECT_EQ(row.controllerDefault, catalogued.controllerDefault);
    EXPECT_EQ(row.subject, catalogued.subject);
    EXPECT_EQ(row.premise, catalogued.premise);
    EXPECT_EQ(&ruleInfo(row.id), &catalogued);
  }
  EXPECT_EQ(lastRule(), ruleCatalogue().back().id);
}

TEST(RuleRegistry, EveryRuleIsCheckedAndEveryCheckListedOnce) {
  std::set<std::string_view> names;
  for (const RuleRow& row : ruleRows()) {
    SCOPED_TRACE(row.rule.id.name());
    EXPECT_FALSE(row.checks.empty() && row.claimChecks.empty()) << "nothing checks it";
    for (const ValidatorDeclaration* validator : row.checks) {
      EXPECT_TRUE(validator->eachTemplate != nullptr || validator->onceForWorkload != nullptr)
          << validator->name << " checks nothing";
      EXPECT_TRUE(names.insert(validator->name).second) << validator->name << " twice";
    }
    for (const ClaimValidatorDeclaration* validator : row.claimChecks) {
      EXPECT_NE(validator->check, nullptr) << validator->name;
      EXPECT_TRUE(names.insert(validator->name).second) << validator->name << " twice";
    }
  }
}

}  // namespace
}  // namespace aiadmit
