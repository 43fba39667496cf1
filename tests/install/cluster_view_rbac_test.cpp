// The cluster view's RBAC and credentials as an admin installs them: rendered
// by `kubectl kustomize`, valid by kubernetes-models' schemas, read-only,
// granting exactly the resources the reflectors watch, and the token mounted
// where `serve --cluster-view=auto` looks for it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <span>
#include <utility>

#include "tests/support/test_support.h"
#include "webhook/cluster/api_config.h"
#include "webhook/cluster/reflector.h"
#include "webhook/codec/yaml_json.h"

namespace aiadmit {
namespace {

using namespace testing;

std::vector<std::shared_ptr<JsonDocument>> render(const std::string& dir) {
  std::vector<std::shared_ptr<JsonDocument>> objects;
  const CommandResult result = runCommand({"kubectl", "kustomize", sourceDir() + "/" + dir});
  EXPECT_EQ(result.exitCode, 0) << result.err;
  std::vector<ManifestDocument> documents;
  std::string error;
  EXPECT_TRUE(parseManifests(result.out, documents, &error)) << error;
  for (const ManifestDocument& document : documents) objects.push_back(document.json);
  return objects;
}

const JsonValue* find(const std::vector<std::shared_ptr<JsonDocument>>& objects,
                      std::string_view kind, std::string_view name) {
  for (const auto& object : objects) {
    if (stringMember(object.get(), "kind") == kind &&
        stringMember(member(object.get(), "metadata"), "name") == name) {
      return object.get();
    }
  }
  return nullptr;
}

std::set<std::string> strings(const JsonValue* array) {
  std::set<std::string> out;
  if (!isArray(array)) return out;
  for (const JsonValue& item : array->GetArray()) out.emplace(stringOf(&item));
  return out;
}

// What a ClusterRole grants, as (group, resource); every rule read-only and
// by name.
std::set<std::pair<std::string, std::string>> grantedBy(const JsonValue* role) {
  std::set<std::pair<std::string, std::string>> granted;
  const JsonValue* rules = member(role, "rules");
  EXPECT_TRUE(isArray(rules));
  if (!isArray(rules)) return granted;
  for (const JsonValue& rule : rules->GetArray()) {
    EXPECT_EQ(strings(member(&rule, "verbs")), (std::set<std::string>{"get", "list", "watch"}))
        << toJson(rule);
    EXPECT_EQ(member(&rule, "resourceNames"), nullptr);
    EXPECT_EQ(member(&rule, "nonResourceURLs"), nullptr);
    for (const std::string& group : strings(member(&rule, "apiGroups"))) {
      for (const std::string& resource : strings(member(&rule, "resources"))) {
        EXPECT_NE(group, "*");
        EXPECT_NE(resource, "*");
        granted.emplace(group, resource);
      }
    }
  }
  return granted;
}

std::set<std::pair<std::string, std::string>> watchedOf(std::span<const ClusterKind> kinds) {
  std::set<std::pair<std::string, std::string>> watched;
  for (const ResourceType& type : clusterResourceTypes()) {
    if (std::find(kinds.begin(), kinds.end(), type.kind) != kinds.end()) {
      watched.emplace(type.group, type.plural);
    }
  }
  return watched;
}

TEST(ClusterViewRbac, GrantsReadingExactlyWhatTheReflectorsWatch) {
  const auto objects = render("manifests/base");
  const JsonValue* role = find(objects, "ClusterRole", "aiadmit-cluster-view");
  ASSERT_NE(role, nullptr);
  EXPECT_EQ(grantedBy(role), watchedOf(kAdmissionClusterKinds));
  EXPECT_EQ(find(objects, "ClusterRole", "aiadmit-waiting-metrics"), nullptr)
      << "Pods are read only with the waiting-metrics component";
}

TEST(ClusterViewRbac, TheWaitingMetricsComponentGrantsWhatItWatchesAndTurnsTheFlagOn) {
  TempDir dir;
  // An overlay of the base with the component, as a platform team writes one.
  const auto relative = [&](const std::string& path) {
    return std::filesystem::relative(sourceDir() + "/" + path, dir.path()).string();
  };
  writeFile(dir.file("kustomization.yaml"),
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n"
            "  - " +
                relative("manifests/base") + "\ncomponents:\n  - " +
                relative("manifests/components/waiting-metrics") + "\n");
  const CommandResult result =
      runCommand({"kubectl", "kustomize", "--load-restrictor", "LoadRestrictionsNone", dir.path()});
  ASSERT_EQ(result.exitCode, 0) << result.err;
  std::vector<ManifestDocument> documents;
  std::string error;
  ASSERT_TRUE(parseManifests(result.out, documents, &error)) << error;
  std::vector<std::shared_ptr<JsonDocument>> objects;
  for (const ManifestDocument& document : documents) objects.push_back(document.json);
  const JsonValue* role = find(objects, "ClusterRole", "aiadmit-waiting-metrics");
  ASSERT_NE(role, nullptr);
  EXPECT_EQ(grantedBy(role), watchedOf(kWaitingClusterKinds));
  const JsonValue* binding = find(objects, "ClusterRoleBinding", "aiadmit-waiting-metrics");
  ASSERT_NE(binding, nullptr);
  EXPECT_EQ(stringMember(&(*member(binding, "subjects"))[0], "name"), "aiadmit");
  const JsonValue* deployment = find(objects, "Deployment", "aiadmit");
  ASSERT_NE(deployment, nullptr);
  const JsonValue* container =
      &(*member(member(member(member(deployment, "spec"), "template"), "spec"), "containers"))[0];
  EXPECT_EQ(strings(member(container, "args")).count("--waiting-metrics"), 1u);
  std::vector<std::string> rbac = {toJson(*role), toJson(*binding)};
  const CommandResult valid = validateSchemas(rbac);
  EXPECT_EQ(valid.exitCode, 0) << valid.out << valid.err;
}

TEST(ClusterViewRbac, BindsTheRoleToTheWebhooksServiceAccount) {
  const auto objects = render("manifests/base");
  const JsonValue* binding = find(objects, "ClusterRoleBinding", "aiadmit-cluster-view");
  ASSERT_NE(binding, nullptr);
  const JsonValue* roleRef = member(binding, "roleRef");
  EXPECT_EQ(stringMember(roleRef, "kind"), "ClusterRole");
  EXPECT_EQ(stringMember(roleRef, "name"), "aiadmit-cluster-view");
  EXPECT_EQ(stringMember(roleRef, "apiGroup"), "rbac.authorization.k8s.io");
  const JsonValue* subjects = member(binding, "subjects");
  ASSERT_TRUE(isArray(subjects));
  ASSERT_EQ(subjects->Size(), 1u);
  const JsonValue* subject = &(*subjects)[0];
  EXPECT_EQ(stringMember(subject, "kind"), "ServiceAccount");
  const JsonValue* account = find(objects, "ServiceAccount", stringMember(subject, "name"));
  ASSERT_NE(account, nullptr) << "the subject is the ServiceAccount the base installs";
  EXPECT_EQ(stringMember(subject, "namespace"),
            stringMember(member(account, "metadata"), "namespace"));
  const JsonValue* deployment = find(objects, "Deployment", "aiadmit");
  ASSERT_NE(deployment, nullptr);
  EXPECT_EQ(stringMember(member(member(member(deployment, "spec"), "template"), "spec"),
                         "serviceAccountName"),
            stringMember(subject, "name"));
}

TEST(ClusterViewRbac, IsSchemaValidInEveryOverlay) {
  // overlays/script-certs needs certificates made first (manifests_test.cpp
  // renders it that way); it takes the base unchanged, as cert-manager does.
  for (const char* dir : {"manifests/base", "manifests/overlays/cert-manager"}) {
    const auto objects = render(dir);
    std::vector<std::string> rbac;
    for (const char* kind : {"ClusterRole", "ClusterRoleBinding"}) {
      const JsonValue* object = find(objects, kind, "aiadmit-cluster-view");
      ASSERT_NE(object, nullptr) << dir << " " << kind;
      rbac.push_back(toJson(*object));
    }
    const CommandResult valid = validateSchemas(rbac);
    EXPECT_EQ(valid.exitCode, 0) << dir << ":\n" << valid.out << valid.err;
    EXPECT_NE(valid.out.find("ok ClusterRole/aiadmit-cluster-view"), std::string::npos)
        << valid.out;
  }
  // The schema check refuses a role that is not one.
  const CommandResult invalid = validateSchemas({R"({"apiVersion":"rbac.authorization.k8s.io/v1",
      "kind":"ClusterRole","metadata":{"name":"x"},"rules":[{"apiGroups":[""]}]})"});
  EXPECT_NE(invalid.exitCode, 0) << invalid.out;
}

TEST(ClusterViewRbac, TheDeploymentMountsTheTokenWhereServeLooksForIt) {
  const auto objects = render("manifests/base");
  const JsonValue* deployment = find(objects, "Deployment", "aiadmit");
  ASSERT_NE(deployment, nullptr);
  const JsonValue* pod = member(member(member(deployment, "spec"), "template"), "spec");
  const JsonValue* containers = member(pod, "containers");
  ASSERT_TRUE(isArray(containers));
  const JsonValue* container = nullptr;
  for (const JsonValue& candidate : containers->GetArray()) {
    if (stringMember(&candidate, "name") == "aiadmit") container = &candidate;
  }
  ASSERT_NE(container, nullptr);
  const std::set<std::string> args = strings(member(container, "args"));
  EXPECT_EQ(args.count("--cluster-view=off"), 0u);
  EXPECT_EQ(args.count("--cluster-view=auto") + args.count("--cluster-view=on"), 1u);

  std::string volumeName;
  for (const JsonValue& mount : member(container, "volumeMounts")->GetArray()) {
    if (stringMember(&mount, "mountPath") == InClusterEnvironment{}.serviceAccountDir) {
      volumeName = stringMember(&mount, "name");
      const JsonValue* readOnly = member(&mount, "readOnly");
      EXPECT_TRUE(readOnly != nullptr && readOnly->IsBool() && readOnly->GetBool());
    }
  }
  ASSERT_FALSE(volumeName.empty()) << "no mount at " << InClusterEnvironment{}.serviceAccountDir;
  const JsonValue* projected = nullptr;
  for (const JsonValue& volume : member(pod, "volumes")->GetArray()) {
    if (stringMember(&volume, "name") == volumeName) projected = member(&volume, "projected");
  }
  ASSERT_TRUE(isArray(member(projected, "sources")));
  std::set<std::string> files;
  for (const JsonValue& source : member(projected, "sources")->GetArray()) {
    if (const JsonValue* token = member(&source, "serviceAccountToken")) {
      files.emplace(stringMember(token, "path"));
      EXPECT_EQ(member(token, "audience"), nullptr) << "the API server's own audience";
    }
    if (const JsonValue* configMap = member(&source, "configMap")) {
      EXPECT_EQ(stringMember(configMap, "name"), "kube-root-ca.crt");
      for (const JsonValue& item : member(configMap, "items")->GetArray()) {
        files.emplace(stringMember(&item, "path"));
      }
    }
  }
  EXPECT_EQ(files, (std::set<std::string>{"token", "ca.crt"}));

  const CommandResult valid = validateSchemas({toJson(*deployment)});
  EXPECT_EQ(valid.exitCode, 0) << valid.out << valid.err;
  EXPECT_NE(valid.out.find("ok Deployment/aiadmit"), std::string::npos) << valid.out;
}

}  // namespace
}  // namespace aiadmit
