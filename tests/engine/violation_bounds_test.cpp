// The violations of one review: each kept once, in linear work, and at most
// kMaxViolationsPerRule of a rule listed, then a line with how many more.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "webhook/engine/violation_bounds.h"

namespace aiadmit {
namespace {

Violation at(RuleId rule, size_t container) {
  return {"spec.containers[" + std::to_string(container) + "].resources.limits", "misspelt",
          "fix it", "misspelt", rule};
}

// 40,000 equal violations become one; distinct ones all stay, in order.
TEST(ViolationBounds, RepeatsAreErasedAndDistinctOnesKeptInOrder) {
  std::vector<Violation> same(40000, at(AIA003, 0));
  eraseRepeatedViolations(same);
  EXPECT_EQ(same.size(), 1u);

  std::vector<Violation> distinct;
  for (size_t i = 0; i < 1000; ++i) distinct.push_back(at(AIA003, i));
  distinct.push_back(at(AIA003, 7));
  eraseRepeatedViolations(distinct);
  ASSERT_EQ(distinct.size(), 1000u);
  for (size_t i = 0; i < distinct.size(); ++i) EXPECT_EQ(distinct[i], at(AIA003, i));
}

// An UPDATE keeps what the old object did not have.
TEST(ViolationBounds, ThoseAlreadyThereAreErased) {
  std::vector<Violation> now{at(AIA003, 0), at(AIA003, 1), at(AIA004, 1)};
  eraseViolationsIn(now, {at(AIA003, 1), at(AIA005, 0)});
  EXPECT_EQ(now, (std::vector<Violation>{at(AIA003, 0), at(AIA004, 1)}));
}

// Twenty of a rule are listed as they are; the twenty-first makes the line.
TEST(ViolationBounds, TwentyOfARuleAreListedAndTheRestCounted) {
  std::vector<Violation> twenty;
  for (size_t i = 0; i < kMaxViolationsPerRule; ++i) twenty.push_back(at(AIA003, i));
  const std::vector<Violation> asTheyWere = twenty;
  capViolationsPerRule(twenty);
  EXPECT_EQ(twenty, asTheyWere);

  std::vector<Violation> many;
  for (size_t i = 0; i < 25; ++i) many.push_back(at(AIA003, i));
  many.push_back(at(AIA004, 0));
  many.push_back(at(AIA003, 99));
  capViolationsPerRule(many);
  ASSERT_EQ(many.size(), 22u);
  EXPECT_EQ(many[19], at(AIA003, 19));
  EXPECT_EQ(many[20].rule, AIA003);
  EXPECT_EQ(many[20].problem, "6 more violations of this rule, not listed");
  EXPECT_FALSE(many[20].mayChange);
  EXPECT_EQ(many[21], at(AIA004, 0));
}

// What the line stands for rests on the cluster's answers: it warns at most.
TEST(ViolationBounds, TheLineForViolationsThatRestOnTheClusterMayChange) {
  std::vector<Violation> absent;
  for (size_t i = 0; i <= kMaxViolationsPerRule; ++i) {
    absent.push_back(at(AIA019, i));
    absent.back().absent = ClusterRef{};
  }
  capViolationsPerRule(absent);
  ASSERT_EQ(absent.size(), kMaxViolationsPerRule + 1);
  EXPECT_EQ(absent.back().problem, "1 more violation of this rule, not listed");
  EXPECT_TRUE(absent.back().mayChange);
}

}  // namespace
}  // namespace aiadmit
