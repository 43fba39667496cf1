// Profile selection: the documented precedence (profiles/README.md,
// "Selection"), the annotation path, and the exact tie detection that makes
// the winner unique.
#include "webhook/policy/profile_set.h"

#include <gtest/gtest.h>

#include "mutators/mutator.h"
#include "tests/support/test_support.h"
#include "webhook/policy/profile_loader.h"

namespace aiadmit {
namespace {

using aiadmit::testing::parseJson;

// One profile document; `scope` is the YAML of spec.scope's body or "".
std::string profileYaml(const std::string& name, const std::string& cls,
                        const std::string& scope = "") {
  std::string out = "---\napiVersion: aiadmit.dev/v1\nkind: Profile\nmetadata:\n  name: " + name +
                    "\nspec:\n  class: " + cls + "\n";
  if (!scope.empty()) out += "  scope:\n" + scope;
  return out;
}

std::shared_ptr<const ProfileSet> load(const std::string& yaml) {
  ProfileLoadResult result = loadProfileText(yaml, "profiles/test.yaml", mutationSwitches());
  std::string errors;
  for (const ProfileError& error : result.errors) errors += error.format() + "\n";
  EXPECT_TRUE(result.ok()) << errors;
  return result.set;
}

std::string loadErrors(const std::string& yaml) {
  const ProfileLoadResult result = loadProfileText(yaml, "profiles/test.yaml", mutationSwitches());
  std::string errors;
  for (const ProfileError& error : result.errors) errors += error.format() + "\n";
  return errors;
}

// A set with every kind of scope for class training, and defaults for the others.
const std::string kLayered =
    profileYaml("training", "training") +
    profileYaml("training-vision", "training", "    matchLabels: {team: vision}\n") +
    profileYaml("training-vision-gold", "training",
                "    matchLabels: {team: vision, tier: gold}\n") +
    profileYaml("training-ml", "training", "    namespaces: [\"ml-*\"]\n") +
    profileYaml("training-ml-vision", "training",
                "    namespaces: [\"ml-*\"]\n    matchLabels: {team: vision}\n") +
    profileYaml("training-ml-prod", "training", "    namespaces: [ml-prod, research]\n") +
    profileYaml("batch", "batch") + profileYaml("realtime", "realtime");

struct Labels {
  std::shared_ptr<JsonDocument> object;
  std::shared_ptr<JsonDocument> templ;
  Labels(const std::string& objectLabels, const std::string& templateLabels)
      : object(parseJson(objectLabels)), templ(parseJson(templateLabels)) {}
};

std::string selected(const ProfileSet& set, WorkloadClass cls, std::string_view ns,
                     const Labels& labels, std::string_view requested = "") {
  const ProfileSelection selection =
      set.select(cls, ns, labels.object.get(), labels.templ.get(), requested);
  if (!selection.error.empty()) return "error: " + selection.error;
  return selection.profile == nullptr ? "none" : selection.profile->name;
}

TEST(ProfileSelection, FollowsTheDocumentedPrecedence) {
  const auto set = load(kLayered);
  ASSERT_NE(set, nullptr);
  const Labels none("{}", "{}");
  const Labels vision(R"({"team":"vision"})", "{}");
  const Labels visionGold(R"({"team":"vision","tier":"gold"})", "{}");
  const WorkloadClass T = WorkloadClass::Training;
  // No namespace scope: the more labels the better.
  EXPECT_EQ(selected(*set, T, "default", none), "training");
  EXPECT_EQ(selected(*set, T, "default", vision), "training-vision");
  EXPECT_EQ(selected(*set, T, "default", visionGold), "training-vision-gold");
  // A namespace pattern beats any number of labels without a namespace scope.
  EXPECT_EQ(selected(*set, T, "ml-dev", visionGold), "training-ml-vision");
  EXPECT_EQ(selected(*set, T, "ml-dev", none), "training-ml");
  // An exact namespace beats a pattern, even one with labels.
  EXPECT_EQ(selected(*set, T, "ml-prod", vision), "training-ml-prod");
  EXPECT_EQ(selected(*set, T, "research", visionGold), "training-ml-prod");
  // Other classes are not affected by training's scopes.
  EXPECT_EQ(selected(*set, WorkloadClass::Batch, "ml-prod", vision), "batch");
  EXPECT_EQ(selected(*set, WorkloadClass::Realtime, "research", none), "realtime");
}

TEST(ProfileSelection, ReasonSaysWhyTheProfileWasChosen) {
  const auto set = load(kLayered);
  const Labels vision(R"({"team":"vision"})", "{}");
  const Labels none("{}", "{}");
  auto reason = [&](std::string_view ns, const Labels& labels) {
    return set->select(WorkloadClass::Training, ns, labels.object.get(), labels.templ.get(), "")
        .reason;
  };
  EXPECT_EQ(reason("default", none), "default for class training");
  EXPECT_EQ(reason("default", vision), "scope labels team=vision");
  EXPECT_EQ(reason("ml-dev", vision),
            "scope namespace pattern ml-* matches ml-dev, labels team=vision");
  EXPECT_EQ(reason("research", none), "scope namespace research");
}

TEST(ProfileSelection, LabelsComeFromTheObjectThenItsPodTemplate) {
  const auto set = load(kLayered);
  const WorkloadClass T = WorkloadClass::Training;
  EXPECT_EQ(selected(*set, T, "default", Labels("{}", R"({"team":"vision"})")), "training-vision");
  // The object's own value wins over the template's for the same key.
  EXPECT_EQ(selected(*set, T, "default", Labels(R"({"team":"nlp"})", R"({"team":"vision"})")),
            "training");
  EXPECT_EQ(selected(*set, T, "default",
                     Labels(R"({"team":"vision"})", R"({"tier":"gold","team":"nlp"})")),
            "training-vision-gold");
  // Non-string label values never match.
  EXPECT_EQ(selected(*set, T, "default", Labels(R"({"team":1})", "{}")), "training");
}

TEST(ProfileSelection, NoProfileWhenNoScopeMatches) {
  const auto set = load(profileYaml("training-ml", "training", "    namespaces: [\"ml-*\"]\n") +
                        profileYaml("batch", "batch"));
  const Labels none("{}", "{}");
  EXPECT_EQ(selected(*set, WorkloadClass::Training, "default", none), "none");
  EXPECT_EQ(selected(*set, WorkloadClass::Realtime, "ml-a", none), "none");
  EXPECT_EQ(selected(*set, WorkloadClass::Training, "ml-a", none), "training-ml");
}

TEST(ProfileSelection, AnnotationNamesAProfileOfTheClassAllowedInTheNamespace) {
  const auto set = load(kLayered);
  const Labels none("{}", "{}");
  const WorkloadClass T = WorkloadClass::Training;
  // Labels are not required when the profile is named: naming it is the choice.
  EXPECT_EQ(selected(*set, T, "default", none, "training-vision-gold"), "training-vision-gold");
  const ProfileSelection chosen =
      set->select(T, "ml-dev", none.object.get(), none.templ.get(), "training-ml");
  EXPECT_EQ(chosen.reason, "annotation aiadmit.dev/profile=training-ml");
  // The namespace scope still applies.
  EXPECT_EQ(selected(*set, T, "default", none, "training-ml"),
            "error: profile \"training-ml\" is not allowed in namespace default (profiles of "
            "class training for namespace default: training, training-vision, "
            "training-vision-gold)");
  EXPECT_EQ(selected(*set, T, "ml-dev", none, "batch"),
            "error: profile \"batch\" is for class batch, not training (profiles of class "
            "training for namespace ml-dev: training, training-ml, training-ml-vision, "
            "training-vision, training-vision-gold)");
  EXPECT_EQ(selected(*set, WorkloadClass::Realtime, "ml-dev", none, "fast"),
            "error: profile \"fast\" does not exist (profiles of class realtime for namespace "
            "ml-dev: realtime)");
}

TEST(ProfileSelection, AnnotationErrorSaysWhenNoProfileOfTheClassApplies) {
  const auto set = load(profileYaml("batch", "batch"));
  const Labels none("{}", "{}");
  EXPECT_EQ(selected(*set, WorkloadClass::Training, "default", none, "batch"),
            "error: profile \"batch\" is for class batch, not training (no profile of class "
            "training applies to namespace default)");
}

TEST(ProfileSelection, HandBuiltTiesGoToTheFirstNameDeterministically) {
  // Sets from the loader never tie; a set built in code may, and still answers the same.
  std::vector<Profile> profiles(2);
  profiles[0].name = "zeta";
  profiles[1].name = "alpha";
  for (Profile& profile : profiles) profile.workloadClass = WorkloadClass::Batch;
  const ProfileSet set(std::move(profiles));
  EXPECT_EQ(selected(set, WorkloadClass::Batch, "default", Labels("{}", "{}")), "alpha");
  EXPECT_EQ(set.profiles().front().name, "alpha");
}

TEST(ProfileSelection, ScopeMatchesKeepsItsSpecificityScale) {
  const auto set = load(kLayered);
  const Labels vision(R"({"team":"vision"})", "{}");
  int specificity = -1;
  ASSERT_TRUE(ProfileSet::scopeMatches(*set->find("training-ml-vision"), "ml-a",
                                       vision.object.get(), nullptr, &specificity));
  EXPECT_EQ(specificity, 1001);
  ASSERT_TRUE(ProfileSet::scopeMatches(*set->find("training-ml-prod"), "ml-prod", nullptr, nullptr,
                                       &specificity));
  EXPECT_EQ(specificity, 2000);
  EXPECT_FALSE(ProfileSet::scopeMatches(*set->find("training-ml-prod"), "ml-dev", nullptr, nullptr,
                                        nullptr));
}

ProfileScope scope(std::vector<std::string> namespaces,
                   std::map<std::string, std::string> labels = {}) {
  return ProfileScope{std::move(namespaces), std::move(labels)};
}

std::string tieOf(const ProfileScope& a, const ProfileScope& b) {
  const auto forward = findScopeTie(a, b);
  const auto backward = findScopeTie(b, a);
  EXPECT_EQ(forward.has_value(), backward.has_value()) << "findScopeTie must be symmetric";
  return forward ? forward->describe() : "no tie";
}

TEST(ScopeTies, AreFoundWithAWitnessObject) {
  EXPECT_EQ(tieOf(scope({}), scope({})), "namespace default (any namespace, 0 labels)");
  EXPECT_EQ(tieOf(scope({"a*"}), scope({"*b"})), "namespace ab (namespace pattern, 0 labels)");
  EXPECT_EQ(tieOf(scope({"team-*"}), scope({"*-prod"})),
            "namespace team-prod (namespace pattern, 0 labels)");
  EXPECT_EQ(tieOf(scope({"ml-?"}), scope({"ml-*"})),
            "namespace ml-a (namespace pattern, 0 labels)");
  EXPECT_EQ(tieOf(scope({"x", "shared"}), scope({"shared", "y"})),
            "namespace shared (exact namespace, 0 labels)");
  EXPECT_EQ(tieOf(scope({}, {{"team", "a"}}), scope({}, {{"tier", "b"}})),
            "namespace default with labels team=a,tier=b (any namespace, 1 label)");
  EXPECT_EQ(tieOf(scope({"ml-*"}, {{"team", "a"}}), scope({"ml-*"}, {{"team", "a"}})),
            "namespace ml-a with labels team=a (namespace pattern, 1 label)");
}

TEST(ScopeTies, ScopesThatCanNeverSelectTheSameObjectWithEqualPrecedenceDoNotTie) {
  // Disjoint patterns.
  EXPECT_EQ(tieOf(scope({"team-a-*"}), scope({"team-b-*"})), "no tie");
  EXPECT_EQ(tieOf(scope({"*-a"}), scope({"*-b"})), "no tie");
  EXPECT_EQ(tieOf(scope({"ml-??"}), scope({"ml-???"})), "no tie");
  // Overlapping only in strings that are not namespace names (ending in '-').
  EXPECT_EQ(tieOf(scope({"a*"}), scope({"*-"})), "no tie");
  // Different exact names.
  EXPECT_EQ(tieOf(scope({"prod"}), scope({"staging"})), "no tie");
  // Different ranks: exact against pattern, scoped against unscoped.
  EXPECT_EQ(tieOf(scope({"ml-prod"}), scope({"ml-*"})), "no tie");
  EXPECT_EQ(tieOf(scope({"ml-*"}), scope({})), "no tie");
  // Different numbers of labels, or labels that disagree.
  EXPECT_EQ(tieOf(scope({}, {{"team", "a"}}), scope({})), "no tie");
  EXPECT_EQ(tieOf(scope({}, {{"team", "a"}}), scope({}, {{"team", "b"}})), "no tie");
  // The patterns share only "ab", which b lists exactly: there b ranks higher.
  EXPECT_EQ(tieOf(scope({"a?"}), scope({"?b", "ab"})), "no tie");
}

TEST(ScopeTies, LoaderRefusesTiesAndAcceptsDisjointScopes) {
  EXPECT_EQ(loadErrors(profileYaml("a", "batch", "    namespaces: [\"team-a-*\"]\n") +
                       profileYaml("b", "batch", "    namespaces: [\"team-b-*\"]\n") +
                       profileYaml("c", "batch", "    namespaces: [team-a-1]\n") +
                       profileYaml("d", "training", "    namespaces: [\"team-a-*\"]\n")),
            "");
  EXPECT_EQ(loadErrors(profileYaml("a", "batch", "    namespaces: [\"team-*\"]\n") +
                       profileYaml("b", "batch", "    namespaces: [\"*-b\"]\n")),
            "profiles/test.yaml:17:3: spec.scope: profiles \"a\" (profiles/test.yaml:5) and "
            "\"b\" both select a batch workload in namespace team-b (namespace pattern, 0 "
            "labels) with equal precedence; make one scope more specific, or the scopes "
            "disjoint\n");
}

TEST(NamespacePatterns, IntersectionIsExactOverNamespaceNames) {
  EXPECT_EQ(namespaceMatchedByAll({"*"}).value_or("none"), "a");
  EXPECT_EQ(namespaceMatchedByAll({"-*"}).value_or("none"), "none");
  EXPECT_EQ(namespaceMatchedByAll({"*-"}).value_or("none"), "none");
  EXPECT_EQ(namespaceMatchedByAll({"a*", "*b"}).value_or("none"), "ab");
  EXPECT_EQ(namespaceMatchedByAll({"a*", "*b"}, {"ab"}).value_or("none"), "abb");
  EXPECT_EQ(namespaceMatchedByAll({"a?"}, {"aa", "ab"}).value_or("none"), "ac");
  EXPECT_EQ(namespaceMatchedByAll({"prod"}).value_or("none"), "prod");
  EXPECT_EQ(namespaceMatchedByAll({"prod", "p*"}).value_or("none"), "prod");
  EXPECT_EQ(namespaceMatchedByAll({"prod", "s*"}).value_or("none"), "none");
  // 64 characters is one too many for a namespace.
  EXPECT_EQ(namespaceMatchedByAll({std::string(64, '?')}).value_or("none"), "none");
  EXPECT_EQ(namespaceMatchedByAll({std::string(63, '?')}).value_or("none"), std::string(63, 'a'));
  // Every one-character name but one is excluded: the last is found.
  std::vector<std::string> all;
  for (char c : std::string_view("abcdefghijklmnopqrstuvwxyz012345678")) all.emplace_back(1, c);
  const std::vector<std::string_view> excluded(all.begin(), all.end());
  EXPECT_EQ(namespaceMatchedByAll({"?"}, excluded).value_or("none"), "9");
}

TEST(ProfileModel, AllowedResourcesAcceptPatterns) {
  const auto set = load(R"(apiVersion: aiadmit.dev/v1
kind: Profile
metadata: {name: batch}
spec:
  class: batch
  gpu:
    allowedResources: ["nvidia.com/mig-*"]
    sharingAllowed: true
)");
  const Profile& batch = *set->find("batch");
  EXPECT_TRUE(batch.allowsResource("nvidia.com/gpu"));
  EXPECT_TRUE(batch.allowsResource("nvidia.com/mig-1g.10gb"));
  EXPECT_FALSE(batch.allowsResource("nvidia.com/gpus"));
  EXPECT_FALSE(batch.allowsResource("amd.com/gpu"));
  EXPECT_EQ(batch.gpu.allowedResources,
            (std::vector<std::string>{"nvidia.com/gpu", "nvidia.com/mig-*"}));
  EXPECT_TRUE(isSharedGpuResource("nvidia.com/mig-3g.40gb"));
  EXPECT_TRUE(isSharedGpuResource("nvidia.com/gpu.shared"));
  EXPECT_FALSE(isSharedGpuResource("nvidia.com/gpu"));
}

TEST(ProfileModel, StartupFailureThresholdCoversTheBudget) {
  Probes probes;
  probes.startup.periodSeconds = 10;
  probes.startupBudgetSeconds = 1800;
  EXPECT_EQ(probes.startupFailureThreshold(), 180);
  probes.startupBudgetSeconds = 1801;
  EXPECT_EQ(probes.startupFailureThreshold(), 181);
  probes.startupBudgetSeconds = 5;
  EXPECT_EQ(probes.startupFailureThreshold(), 1);
}

TEST(ProfileSelection, ManyProfilesScopedToDistinctNamespacesLoadAndSelect) {
  std::string yaml = profileYaml("training", "training");
  for (int i = 0; i < 1000; ++i) {
    const std::string ns = "team-" + std::to_string(i);
    yaml += profileYaml(ns, "training", "    namespaces: [" + ns + ", \"" + ns + "-*\"]\n");
  }
  const auto set = load(yaml);
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(set->profiles().size(), 1001u);
  const Labels none("{}", "{}");
  EXPECT_EQ(selected(*set, WorkloadClass::Training, "team-512", none), "team-512");
  EXPECT_EQ(selected(*set, WorkloadClass::Training, "team-7-dev", none), "team-7");
  EXPECT_EQ(selected(*set, WorkloadClass::Training, "other", none), "training");
}

}  // namespace
}  // namespace aiadmit

namespace aiadmit {
namespace {

size_t linesOf(const std::string& text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

// Each profile is reported once, with the first one it ties with: three of
// one scope make two errors (not three pairs), and 150 make 100 and a line
// saying the rest are not looked for.
TEST(ScopeTies, EachProfileIsReportedOnceAndTiesAreCappedAtOneHundred) {
  std::string three;
  for (const char* name : {"a", "b", "c"}) three += profileYaml(name, "batch");
  EXPECT_EQ(linesOf(loadErrors(three)), 2u) << loadErrors(three);

  std::string many;
  for (int i = 0; i < 150; ++i) many += profileYaml("p" + std::to_string(i), "batch");
  const std::string errors = loadErrors(many);
  EXPECT_EQ(linesOf(errors), 101u);
  EXPECT_NE(errors.find("more than 100 profiles tie with another"), std::string::npos);
  EXPECT_EQ(linesOf(loadErrors(profileYaml("a", "batch") + profileYaml("b", "training"))), 0u);
}

}  // namespace
}  // namespace aiadmit
