// The webhook on aiadmit's own profiles ConfigMap (profiles.validate), as an
// admin installs it: it takes that ConfigMap alone, by namespace and by name
// (with the hash kustomize's generators give it), at creation and at updates
// that change its files; never a delete; it fails open so that an admin can
// fix the profiles while aiadmit is down; and the workload tiers never see a
// ConfigMap. Which webhooks the API server would call is decided by the CEL
// of tests/schema/match_conditions.mjs.
#include <gtest/gtest.h>

#include "tests/install/admission_matching.h"
#include "tests/install/rendered_manifests.h"

namespace aiadmit {
namespace {

using namespace install;

std::string configMap(const std::string& name, const std::string& data = "gpu: 8",
                      const std::string& extraMetadata = "") {
  return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name +
         R"(","namespace":"aiadmit-system")" + extraMetadata + R"(},"data":{"training.yaml":")" +
         data + R"("}})";
}

AdmissionCase inAiadmitSystem(std::string id, std::string object, std::string operation = "CREATE",
                              std::string oldObject = "") {
  AdmissionCase c{std::move(id), std::move(object), std::move(oldObject), std::move(operation)};
  c.namespaceLabels = namespaceNamed("aiadmit-system", std::nullopt);
  return c;
}

TEST(ProfilesWebhook, ChecksTheProfilesAndFailsOpen) {
  const Rendered base = render(manifestsDir() + "/base");
  const JsonValue* webhook = profilesWebhookOf(base);
  ASSERT_NE(webhook, nullptr);
  // An admin can still fix the profiles while aiadmit is down; its replicas
  // check them again as they start.
  EXPECT_EQ(stringMember(webhook, "failurePolicy"), "Ignore");
  EXPECT_EQ(stringMember(webhook, "sideEffects"), "None");
  EXPECT_EQ(stringSet(member(webhook, "admissionReviewVersions")), std::set<std::string>{"v1"});
  EXPECT_LE(intMember(webhook, "timeoutSeconds"), 5);
  const JsonValue* service = member(member(webhook, "clientConfig"), "service");
  EXPECT_EQ(stringMember(service, "name"), "aiadmit");
  EXPECT_EQ(stringMember(service, "namespace"), kNamespace);
  EXPECT_EQ(stringMember(service, "path"), "/validate-profiles");
  EXPECT_EQ(intMember(service, "port"), 443);
  // ConfigMaps, created or updated; a delete is never sent, so never refused.
  const JsonValue* rules = member(webhook, "rules");
  ASSERT_TRUE(isArray(rules) && rules->Size() == 1);
  EXPECT_EQ(stringSet(member(&(*rules)[0], "apiGroups")), std::set<std::string>{""});
  EXPECT_EQ(stringSet(member(&(*rules)[0], "resources")), std::set<std::string>{"configmaps"});
  EXPECT_EQ(stringSet(member(&(*rules)[0], "operations")),
            (std::set<std::string>{"CREATE", "UPDATE"}));
  // aiadmit-system alone, whatever labels the namespaces carry.
  const JsonValue* selector = member(webhook, "namespaceSelector");
  EXPECT_TRUE(selects(selector, namespaceNamed(std::string(kNamespace), std::nullopt)));
  EXPECT_FALSE(selects(selector, namespaceNamed("team-a", "true")));
  EXPECT_FALSE(selects(selector, namespaceNamed("kube-system", "true")));
}

TEST(ProfilesWebhook, TheApiServerSendsItTheProfilesConfigMapAlone) {
  const Rendered base = render(manifestsDir() + "/base");
  const std::vector<const JsonValue*> generated = base.ofKind("ConfigMap");
  ASSERT_EQ(generated.size(), 1u);
  const std::string shipped = toJson(*generated[0]);
  const std::string relabelled = configMap("aiadmit-profiles", "gpu: 8", R"(,"labels":{"a":"b"})");
  AdmissionCase elsewhere{"aiadmit-profiles in team-a", configMap("aiadmit-profiles")};
  elsewhere.namespaceLabels = namespaceNamed("team-a", "true");
  const std::vector<std::pair<AdmissionCase, std::string>> cases = {
      {inAiadmitSystem("the base's generated ConfigMap", shipped), "call"},
      {inAiadmitSystem("aiadmit-profiles without a hash", configMap("aiadmit-profiles")), "call"},
      {inAiadmitSystem("an edit of its files", configMap("aiadmit-profiles", "gpu: 4"), "UPDATE",
                       configMap("aiadmit-profiles")),
       "call"},
      {inAiadmitSystem("a label added", relabelled, "UPDATE", configMap("aiadmit-profiles")),
       "skip"},
      {inAiadmitSystem("a delete", configMap("aiadmit-profiles"), "DELETE"), "skip"},
      {inAiadmitSystem("one being deleted",
                       configMap("aiadmit-profiles", "gpu: 4",
                                 R"(,"deletionTimestamp":"2025-01-01T00:00:00Z")"),
                       "UPDATE", configMap("aiadmit-profiles")),
       "skip"},
      {inAiadmitSystem("the dashboard", configMap("aiadmit-dashboard")), "skip"},
      {inAiadmitSystem("a look-alike", configMap("aiadmit-profiles-backup-of-monday")), "skip"},
      {inAiadmitSystem("the cluster's CA", configMap("kube-root-ca.crt")), "skip"},
      {elsewhere, "skip"},
  };
  std::vector<AdmissionCase> admissions;
  for (const auto& [admission, expected] : cases) admissions.push_back(admission);
  const auto outcomes = evaluateMatching(base, admissions);
  for (const auto& [admission, expected] : cases) {
    SCOPED_TRACE(admission.id);
    const auto& byWebhook = outcomes.at(admission.id);
    EXPECT_EQ(byWebhook.at(kProfilesValidate), expected);
    // The workload tiers never take a ConfigMap.
    for (const Webhook& tier : webhooksOf(base)) EXPECT_EQ(byWebhook.at(tier.name()), "skip");
  }
}

TEST(ProfilesWebhook, WorkloadsNeverReachIt) {
  const Rendered base = render(manifestsDir() + "/base");
  AdmissionCase gpuPod{
      "a GPU Pod",
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"team-a"},)"
      R"("spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})"};
  AdmissionCase inAiadmitsNamespace = gpuPod;
  inAiadmitsNamespace.id = "a GPU Pod in aiadmit-system";
  inAiadmitsNamespace.namespaceLabels = namespaceNamed("aiadmit-system", "true");
  const auto outcomes = evaluateMatching(base, {gpuPod, inAiadmitsNamespace});
  EXPECT_EQ(outcomes.at(gpuPod.id).at(kAppliedMutate), "call");
  EXPECT_EQ(outcomes.at(gpuPod.id).at(kProfilesValidate), "skip");
  EXPECT_EQ(outcomes.at(inAiadmitsNamespace.id).at(kProfilesValidate), "skip");
}

}  // namespace
}  // namespace aiadmit
