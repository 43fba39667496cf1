// `profiles export --admission-policies`: the shipped profiles' policies as a
// golden file (tests/golden/admission-policies/shipped.yaml; the API server's
// answers to them are tests/e2e/admission_policy_export_e2e_test.cpp), the
// report's lines, and what a profile's choices change in the export.
// AIADMIT_UPDATE_GOLDEN=1 rewrites the golden file from the current output.
#include "webhook/policy/admission_policy_export.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "mutators/mutator.h"
#include "tests/support/golden_files.h"
#include "tests/support/test_support.h"
#include "webhook/codec/yaml_json.h"

namespace aiadmit {
namespace {

using namespace testing;

std::shared_ptr<const ProfileSet> shippedProfiles() {
  ProfileLoadResult loaded = loadProfileDirectory(sourceDir() + "/profiles", mutationSwitches());
  EXPECT_TRUE(loaded.ok());
  return loaded.set;
}

Profile trainingProfile() {
  Profile profile;
  profile.name = "training";
  profile.workloadClass = WorkloadClass::Training;
  profile.gpu.allowedResources = {"nvidia.com/gpu"};
  profile.placement.nodeSelector = {{"accelerator", "nvidia"}};
  profile.placement.tolerations = {Toleration{"accelerator", "Equal", "gpu", "NoSchedule"}};
  profile.scheduling.priorityClassName = "ai-training";
  return profile;
}

AdmissionPolicyExport exportOne(Profile profile) {
  std::vector<Profile> profiles;
  profiles.push_back(std::move(profile));
  return exportAdmissionPolicies(ProfileSet(std::move(profiles)));
}

bool hasLine(const std::vector<std::string>& lines, const std::string& line) {
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

std::string allDocuments(const AdmissionPolicyExport& exported) {
  std::string out;
  for (const std::string& document : exported.documents) out += document;
  return out;
}

TEST(AdmissionPolicyExport, ShippedProfilesAsGolden) {
  const AdmissionPolicyExport exported = exportAdmissionPolicies(*shippedProfiles());
  compareWithGoldenFile(admissionPolicyFile(exported),
                        sourceDir() + "/tests/golden/admission-policies/shipped.yaml");
}

TEST(AdmissionPolicyExport, ReportSaysWhatIsExportedAndWhatStays) {
  const AdmissionPolicyExport exported = exportAdmissionPolicies(*shippedProfiles());
  EXPECT_TRUE(hasLine(exported.report,
                      "exported: profile training: pods (CREATE) declared aiadmit.dev/workload: "
                      "training that ask for nvidia.com/gpu (aiadmit-training-pods); rules AIA014 "
                      "deny, AIA011 deny, AIA006 deny"));
  EXPECT_TRUE(hasLine(exported.report,
                      "exported: profile training: jobs (CREATE) declared aiadmit.dev/workload: "
                      "training that ask for nvidia.com/gpu (aiadmit-training-jobs); rules AIA014 "
                      "deny, AIA011 deny, AIA006 deny"));
  EXPECT_TRUE(hasLine(exported.report,
                      "exported: profile batch: cronjobs (CREATE) declared aiadmit.dev/workload: "
                      "batch that ask for nvidia.com/gpu (aiadmit-batch-cronjobs); rules AIA014 "
                      "deny, AIA011 deny, AIA006 deny"));
  EXPECT_TRUE(hasLine(exported.report,
                      "exported: profile realtime: deployments, statefulsets, replicasets (CREATE) "
                      "declared aiadmit.dev/workload: realtime that ask for nvidia.com/gpu "
                      "(aiadmit-realtime-apps); rules AIA011 deny, AIA006 deny, AIA015 warn"));
  // A class its kind refuses (AIA002) and every UPDATE stay with the webhook.
  const std::string file = admissionPolicyFile(exported);
  EXPECT_EQ(file.find("profile realtime: jobs"), std::string::npos);
  EXPECT_EQ(file.find("profile training: deployments"), std::string::npos);
  EXPECT_EQ(file.find("- UPDATE"), std::string::npos);
  EXPECT_TRUE(hasLine(exported.report,
                      "stays with the webhook: realtime Pods whose GPU containers lack a readiness "
                      "or startup probe (realtime-probes needs a port guess, AIA009)"));
  EXPECT_TRUE(hasLine(exported.report,
                      "stays with the webhook: cluster-aware rules AIA016, AIA017, AIA018, AIA019, "
                      "AIA020 and DRA claim objects; the validating webhook stays registered for "
                      "them"));
  // The file begins with the report, one comment line each.
  EXPECT_NE(file.find("\n# " + exported.report.back() + "\n---\n"), std::string::npos);
  // Per profile and kind it fits (training and batch: pods, jobs, cronjobs;
  // realtime: pods and the apps controllers), a mutating policy and its
  // binding, and a validating policy and binding per action (realtime: deny
  // and warn).
  EXPECT_EQ(exported.documents.size(), 2u * 3u * 4u + 2u * 6u);
}

TEST(AdmissionPolicyExport, ScopedProfileStaysWithTheWebhook) {
  Profile scoped = trainingProfile();
  scoped.scope.namespaces = {"team-*"};
  const AdmissionPolicyExport exported = exportOne(scoped);
  EXPECT_TRUE(exported.documents.empty());
  EXPECT_TRUE(hasLine(exported.report,
                      "stays with the webhook: profile training: scoped by namespace or labels"));
  // Beside it, the same profile for every namespace is exported: for
  // Pods, Jobs and CronJobs.
  EXPECT_EQ(exportOne(trainingProfile()).documents.size(), 3u * 4u);
}

TEST(AdmissionPolicyExport, EachRuleTakesTheProfilesAction) {
  Profile warns = trainingProfile();
  warns.rules.set(AIA014, RuleAction::Warn);
  warns.rules.set(AIA011, RuleAction::Off);
  const std::string documents = allDocuments(exportOne(warns));
  EXPECT_NE(documents.find("name: aiadmit-training-pods-warn"), std::string::npos);
  EXPECT_NE(documents.find("name: aiadmit-training-jobs-warn"), std::string::npos);
  EXPECT_NE(documents.find("- Warn"), std::string::npos);
  // A warning reads as the webhook's warning line, not its denial.
  EXPECT_NE(documents.find("training Pod restarts Always; set restartPolicy Never or OnFailure"),
            std::string::npos);
  EXPECT_EQ(documents.find("[AIA011]"), std::string::npos);
  // The default: AIA014 and AIA011 deny.
  const std::string denies = allDocuments(exportOne(trainingProfile()));
  EXPECT_NE(denies.find("- Deny"), std::string::npos);
  EXPECT_NE(denies.find("[AIA011]"), std::string::npos);
  EXPECT_EQ(denies.find("- Warn"), std::string::npos);
}

TEST(AdmissionPolicyExport, SwitchedOffMutationsAreNotExported) {
  Profile placesNothing = trainingProfile();
  placesNothing.mutations.off = {"tolerations", "placement"};
  const std::string documents = allDocuments(exportOne(placesNothing));
  EXPECT_EQ(documents.find("/spec/tolerations"), std::string::npos);
  EXPECT_EQ(documents.find("/spec/nodeSelector"), std::string::npos);
  EXPECT_NE(documents.find("/spec/priorityClassName"), std::string::npos);
  // With every switch off there is nothing to mutate: no mutating policy,
  // which the API server would refuse without a mutation.
  Profile injectsNothing = trainingProfile();
  for (const MutationSwitch& key : mutationSwitches())
    injectsNothing.mutations.off.emplace(key.key);
  const std::string validatesOnly = allDocuments(exportOne(injectsNothing));
  EXPECT_EQ(validatesOnly.find("kind: MutatingAdmissionPolicy"), std::string::npos);
  EXPECT_NE(validatesOnly.find("kind: ValidatingAdmissionPolicy"), std::string::npos);
  const std::string placed = allDocuments(exportOne(trainingProfile()));
  EXPECT_NE(placed.find("/spec/tolerations"), std::string::npos);
  EXPECT_NE(placed.find("/spec/nodeSelector"), std::string::npos);
}

TEST(AdmissionPolicyExport, JobDefaultsWhereTheProfileHasThem) {
  Profile withDefaults = trainingProfile();
  withDefaults.jobDefaults.backoffLimit = 3;
  withDefaults.jobDefaults.activeDeadlineSeconds = 600;
  const std::string documents = allDocuments(exportOne(withDefaults));
  // A Job's backoffLimit where it is left out, or holds the API server's 6
  // without backoffLimitPerIndex; a CronJob's jobTemplate only where it is
  // left out.
  EXPECT_NE(documents.find("path: '/spec/backoffLimit', value: 3"), std::string::npos);
  EXPECT_NE(documents.find("object.spec.backoffLimit == 6 && "
                           "!has(object.spec.backoffLimitPerIndex)"),
            std::string::npos);
  EXPECT_NE(documents.find("path: '/spec/jobTemplate/spec/activeDeadlineSeconds', value: 600"),
            std::string::npos);
  EXPECT_EQ(documents.find("ttlSecondsAfterFinished"), std::string::npos);
  // A profile whose backoffLimit is the API server's own leaves a Job's 6.
  withDefaults.jobDefaults.backoffLimit = 6;
  EXPECT_EQ(allDocuments(exportOne(withDefaults)).find("op: 'replace'"), std::string::npos);
  // Switched off, nothing of it.
  withDefaults.mutations.off = {"jobDefaults"};
  EXPECT_EQ(allDocuments(exportOne(withDefaults)).find("activeDeadlineSeconds"), std::string::npos);
}

// The API server evaluates every matchCondition of every policy of a
// request's kind, and times, applies and reinvokes each mutation on its own:
// one matchCondition, whose && stops at the first part that fails, and one
// mutation per policy (bench/README.md has what the policies cost in each
// shape). Each part keeps its name, as a comment.
TEST(AdmissionPolicyExport, OneMatchConditionAndOneMutationPerPolicy) {
  const AdmissionPolicyExport exported = exportAdmissionPolicies(*shippedProfiles());
  std::vector<ManifestDocument> documents;
  std::string error;
  ASSERT_TRUE(parseManifests(admissionPolicyFile(exported), documents, &error)) << error;
  size_t mutating = 0;
  size_t validating = 0;
  for (const ManifestDocument& document : documents) {
    const std::string_view kind = stringMember(document.json.get(), "kind");
    if (kind != "MutatingAdmissionPolicy" && kind != "ValidatingAdmissionPolicy") continue;
    const JsonValue* spec = member(document.json.get(), "spec");
    const JsonValue* conditions = member(spec, "matchConditions");
    ASSERT_TRUE(conditions != nullptr && conditions->IsArray());
    ASSERT_EQ(conditions->Size(), 1u) << kind;
    const std::string_view expression = stringMember(&(*conditions)[0], "expression");
    EXPECT_EQ(expression.rfind("// declared-", 0), 0u) << expression;
    EXPECT_NE(expression.find("\n&& // made-by-no-controller\n("), std::string_view::npos);
    if (kind == "ValidatingAdmissionPolicy") {
      ++validating;
      continue;
    }
    ++mutating;
    const JsonValue* mutations = member(spec, "mutations");
    ASSERT_TRUE(mutations != nullptr && mutations->IsArray());
    ASSERT_EQ(mutations->Size(), 1u);
    const std::string_view patch =
        stringMember(member(&(*mutations)[0], "jsonPatch"), "expression");
    EXPECT_EQ(patch.rfind("// gpu-limits\n(", 0), 0u) << patch;
    EXPECT_NE(patch.find("\n+ // stamp\n("), std::string_view::npos) << patch;
  }
  EXPECT_EQ(mutating, 8u);
  EXPECT_EQ(validating, 10u);
}

}  // namespace
}  // namespace aiadmit
