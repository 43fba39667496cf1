// The policies bench/e2e-latency.sh measures beside aiadmit are meant to make
// the placement the shipped profiles make: Kyverno's MutatingPolicy
// (bench/operators/kyverno/gpu-pool-mutating-policy.yaml, --kyverno), the
// hand-written native policies (bench/policies/gpu-pool-native.yaml,
// --policies) and the ClusterPolicy of the earlier comparison
// (bench/operators/kyverno/gpu-pool.yaml). The profiles are the one source of
// that pool; this fails when they change and the policies do not, so the
// comparison keeps comparing the same change.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mutators/mutator.h"
#include "tests/support/test_support.h"
#include "webhook/codec/yaml_json.h"
#include "webhook/model/scheduling.h"
#include "webhook/policy/profile_loader.h"

namespace aiadmit {
namespace {

using namespace ::aiadmit::testing;

std::vector<ManifestDocument> parsed(const std::string& text) {
  std::vector<ManifestDocument> documents;
  std::string error;
  EXPECT_TRUE(parseManifests(text, documents, &error)) << error;
  return documents;
}

const JsonValue* rule(const JsonValue* policy, std::string_view name) {
  const JsonValue* rules = member(member(policy, "spec"), "rules");
  if (rules == nullptr || !rules->IsArray()) return nullptr;
  for (const JsonValue& each : rules->GetArray()) {
    if (stringMember(&each, "name") == name) return &each;
  }
  return nullptr;
}

// The shipped profiles' one GPU pool.
Placement shippedPool() {
  ProfileLoadResult loaded = loadProfileDirectory(sourceDir() + "/profiles", mutationSwitches());
  EXPECT_TRUE(loaded.ok());
  Placement pool;
  for (const Profile& profile : loaded.set->profiles()) {
    if (profile.placement.nodeSelector.empty()) continue;
    EXPECT_TRUE(pool.nodeSelector.empty() || pool.nodeSelector == profile.placement.nodeSelector)
        << profile.name;
    pool = profile.placement;
  }
  return pool;
}

// Every CEL JSON patch expression of the mutating policies in `path`.
std::string celPatches(const std::string& path, std::string_view kind, size_t policies) {
  std::string expressions;
  size_t found = 0;
  for (const ManifestDocument& document : parsed(readFile(sourceDir() + path))) {
    if (stringMember(document.json.get(), "kind") != kind) continue;
    ++found;
    const JsonValue* mutations = member(member(document.json.get(), "spec"), "mutations");
    if (mutations == nullptr || !mutations->IsArray()) continue;
    for (const JsonValue& mutation : mutations->GetArray()) {
      expressions += std::string(stringMember(member(&mutation, "jsonPatch"), "expression")) + "\n";
    }
  }
  EXPECT_EQ(found, policies) << path;
  return expressions;
}

// The CEL policies add the pool's one toleration and its node selector, as
// literals where none of that key is there.
void expectPlacesOnThePool(const std::string& expressions, const Placement& pool) {
  ASSERT_EQ(pool.tolerations.size(), 1u);
  const Toleration& toleration = pool.tolerations[0];
  EXPECT_NE(expressions.find("Object.spec.tolerations{key: '" + toleration.key + "', operator: '" +
                             toleration.op + "', value: '" + toleration.value + "', effect: '" +
                             toleration.effect + "'}"),
            std::string::npos)
      << expressions;
  ASSERT_EQ(pool.nodeSelector.size(), 1u);
  const auto& [key, value] = *pool.nodeSelector.begin();
  EXPECT_NE(expressions.find("{'" + key + "': '" + value + "'}"), std::string::npos) << expressions;
  EXPECT_NE(expressions.find("'/spec/nodeSelector/" + key + "', value: '" + value + "'"),
            std::string::npos)
      << expressions;
}

TEST(KyvernoComparisonPolicy, TheMutatingPolicyPlacesPodsOnThePoolOfTheShippedProfiles) {
  expectPlacesOnThePool(
      celPatches("/bench/operators/kyverno/gpu-pool-mutating-policy.yaml", "MutatingPolicy", 1),
      shippedPool());
}

TEST(KyvernoComparisonPolicy, TheHandWrittenNativePolicyPlacesPodsOnThePoolOfTheShippedProfiles) {
  expectPlacesOnThePool(
      celPatches("/bench/policies/gpu-pool-native.yaml", "MutatingAdmissionPolicy", 1),
      shippedPool());
}

TEST(KyvernoComparisonPolicy, PlacesPodsOnThePoolOfTheShippedProfiles) {
  const std::vector<ManifestDocument> documents =
      parsed(readFile(sourceDir() + "/bench/operators/kyverno/gpu-pool.yaml"));
  ASSERT_EQ(documents.size(), 1u);
  const JsonValue* policy = documents[0].json.get();
  EXPECT_EQ(stringMember(policy, "kind"), "ClusterPolicy");

  // The toleration it adds, from its JSON patch (a YAML document of its own).
  const JsonValue* tolerate = rule(policy, "tolerate-the-gpu-pool");
  ASSERT_NE(tolerate, nullptr);
  const std::vector<ManifestDocument> patch =
      parsed(std::string(stringMember(member(tolerate, "mutate"), "patchesJson6902")));
  ASSERT_EQ(patch.size(), 1u);
  ASSERT_TRUE(patch[0].json->IsArray());
  ASSERT_EQ(patch[0].json->Size(), 1u);
  const JsonValue& operation = (*patch[0].json)[0];
  EXPECT_EQ(stringMember(&operation, "path"), "/spec/tolerations/-");
  const JsonValue* toleration = member(&operation, "value");
  ASSERT_NE(toleration, nullptr);

  // The node selector it adds where absent (Kyverno's add anchor).
  const JsonValue* select = rule(policy, "select-the-gpu-pool");
  ASSERT_NE(select, nullptr);
  const JsonValue* nodeSelector = member(
      member(member(member(select, "mutate"), "patchStrategicMerge"), "spec"), "nodeSelector");
  ASSERT_NE(nodeSelector, nullptr);

  ProfileLoadResult loaded = loadProfileDirectory(sourceDir() + "/profiles", mutationSwitches());
  ASSERT_TRUE(loaded.ok());
  int gpuProfiles = 0;
  for (const Profile& profile : loaded.set->profiles()) {
    if (profile.placement.nodeSelector.empty()) continue;
    ++gpuProfiles;
    ASSERT_EQ(profile.placement.tolerations.size(), 1u) << profile.name;
    EXPECT_TRUE(tolerationCovers(*toleration, profile.placement.tolerations[0])) << profile.name;
    ASSERT_EQ(nodeSelector->MemberCount(), profile.placement.nodeSelector.size()) << profile.name;
    for (const auto& [key, value] : profile.placement.nodeSelector) {
      EXPECT_EQ(stringMember(nodeSelector, "+(" + key + ")"), value) << profile.name << ": " << key;
    }
  }
  EXPECT_GT(gpuProfiles, 0);
}

}  // namespace
}  // namespace aiadmit
