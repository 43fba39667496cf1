// The one way to a PodSpec's required node-selector terms, on each shape a
// PodSpec gives it.
#include <gtest/gtest.h>

#include <string>

#include "tests/support/test_support.h"
#include "webhook/model/scheduling.h"

namespace aiadmit {
namespace {

using testing::parseJson;

TEST(RequiredNodeSelectorTerms, FoundWhereKubernetesKeepsThem) {
  const auto spec = parseJson(R"({"affinity":{"nodeAffinity":{
      "requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
        {"matchExpressions":[{"key":"gpu","operator":"Exists"}]}]}}}})");
  const JsonValue* terms = requiredNodeSelectorTerms(spec.get());
  ASSERT_NE(terms, nullptr);
  ASSERT_TRUE(terms->IsArray());
  EXPECT_EQ(terms->Size(), 1u);
  EXPECT_EQ(std::string(kRequiredNodeSelectorTermsPath),
            "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
            "nodeSelectorTerms");
}

TEST(RequiredNodeSelectorTerms, NoneWhereAStepIsMissingOrNoObject) {
  EXPECT_EQ(requiredNodeSelectorTerms(static_cast<const JsonValue*>(nullptr)), nullptr);
  for (
      const char* shape : {
          R"({})",
          R"({"affinity":null})",
          R"({"affinity":{"podAffinity":{}}})",
          R"({"affinity":{"nodeAffinity":[]}})",
          R"({"affinity":{"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[]}}})",
          R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":"x"}}})",
          R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{}}}})",
      }) {
    const auto spec = parseJson(shape);
    EXPECT_EQ(requiredNodeSelectorTerms(static_cast<const JsonValue*>(spec.get())), nullptr)
        << shape;
  }
}

TEST(RequiredNodeSelectorTerms, TermsThatAreNoArrayAreGivenAsTheyAre) {
  const auto spec = parseJson(R"({"affinity":{"nodeAffinity":{
      "requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":{}}}}})");
  const JsonValue* terms = requiredNodeSelectorTerms(spec.get());
  ASSERT_NE(terms, nullptr);
  EXPECT_TRUE(terms->IsObject()) << "the callers check isArray themselves";
}

TEST(RequiredNodeSelectorTerms, TheMutableViewIsTheSameValue) {
  auto spec = parseJson(R"({"affinity":{"nodeAffinity":{
      "requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[]}}}})");
  JsonValue* terms = requiredNodeSelectorTerms(static_cast<JsonValue*>(spec.get()));
  ASSERT_NE(terms, nullptr);
  EXPECT_EQ(terms, requiredNodeSelectorTerms(static_cast<const JsonValue*>(spec.get())));
}

TEST(EnsureRequiredNodeSelectorTerms, MakesTheWayToTheTerms) {
  for (const char* shape : {
           R"({})",
           R"({"affinity":null})",
           R"({"affinity":{"podAffinity":{"x":1}}})",
           R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{}}}})",
       }) {
    auto spec = parseJson(shape);
    JsonValue& terms = ensureRequiredNodeSelectorTerms(*spec, spec->GetAllocator());
    EXPECT_TRUE(terms.IsArray()) << shape;
    EXPECT_EQ(&terms, requiredNodeSelectorTerms(static_cast<JsonValue*>(spec.get()))) << shape;
  }
  auto kept = parseJson(R"({"affinity":{"podAffinity":{"x":1}}})");
  ensureRequiredNodeSelectorTerms(*kept, kept->GetAllocator());
  EXPECT_NE(member(member(kept.get(), "affinity"), "podAffinity"), nullptr)
      << "the rest of affinity stays";
}

TEST(EnsureRequiredNodeSelectorTerms, KeepsTermsThereAreAndReplacesNoArray) {
  auto spec = parseJson(R"({"affinity":{"nodeAffinity":{
      "requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"a":1}]}}}})");
  EXPECT_EQ(ensureRequiredNodeSelectorTerms(*spec, spec->GetAllocator()).Size(), 1u);
  auto wrong = parseJson(R"({"affinity":{"nodeAffinity":{
      "requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":"x"}}}})");
  JsonValue& terms = ensureRequiredNodeSelectorTerms(*wrong, wrong->GetAllocator());
  EXPECT_TRUE(terms.IsArray());
  EXPECT_TRUE(terms.Empty());
}

}  // namespace
}  // namespace aiadmit
