// Which webhooks of the rendered configurations the API server would call
// for an admission request: rules, selectors, then the matchConditions in
// CEL, evaluated by tests/schema/match_conditions.mjs as kube-apiserver
// evaluates them. Shared by the install tests that check the tiers.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "tests/install/rendered_manifests.h"
#include "webhook/model/workload_type.h"

namespace aiadmit::install {

struct Resource {
  std::string group;
  std::string version;
  std::string resource;
};

// The resource the API server names in the request: the table's row of the
// object's group, version and kind.
inline Resource resourceOf(const JsonValue* object) {
  const std::string_view apiVersion = stringMember(object, "apiVersion");
  const size_t slash = apiVersion.find('/');
  // aiadmit's profiles ConfigMap, which only profiles.validate takes.
  if (apiVersion == "v1" && stringMember(object, "kind") == "ConfigMap") {
    return {"", "v1", "configmaps"};
  }
  // DRA claim objects, which only applied.validate takes.
  if (apiVersion.substr(0, slash) == "resource.k8s.io") {
    const std::string_view kind = stringMember(object, "kind");
    return {"resource.k8s.io", std::string(apiVersion.substr(slash + 1)),
            kind == "ResourceClaimTemplate" ? "resourceclaimtemplates" : "resourceclaims"};
  }
  const WorkloadType* type = WorkloadTypeTable::builtIn()->findForObject(*object);
  if (type == nullptr) return {"example.com", "v1", "others"};
  return {type->group,
          std::string(slash == std::string_view::npos ? apiVersion : apiVersion.substr(slash + 1)),
          type->resource};
}

inline bool isKubernetesKind(const Resource& resource) {
  return resource.group.empty() || resource.group == "apps" || resource.group == "batch";
}

struct AdmissionCase {
  std::string id = {};
  std::string object = {};     // JSON
  std::string oldObject = {};  // JSON; empty for CREATE
  std::string operation = "CREATE";
  Labels namespaceLabels = namespaceNamed("team-a", "true");
  std::string subResource = {};
  bool clusterScoped = false;      // no namespace in the request
  std::string username = "alice";  // request.userInfo.username; "" for none
};

// Identities of controllers.yaml's list, as the e2e control plane runs them
// (kube-controller-manager with --use-service-account-credentials).
inline constexpr const char* kReplicaSetController =
    "system:serviceaccount:kube-system:replicaset-controller";
inline constexpr const char* kJobController = "system:serviceaccount:kube-system:job-controller";
inline constexpr const char* kDaemonSetController =
    "system:serviceaccount:kube-system:daemon-set-controller";
inline constexpr const char* kTrainingOperator = "system:serviceaccount:kubeflow:training-operator";
inline constexpr const char* kJobSetController =
    "system:serviceaccount:jobset-system:jobset-controller-manager";
inline constexpr const char* kLwsController =
    "system:serviceaccount:lws-system:lws-controller-manager";
inline constexpr const char* kKserveController =
    "system:serviceaccount:kserve:kserve-controller-manager";
inline constexpr const char* kKueue = "system:serviceaccount:kueue-system:kueue-controller-manager";

// controllers.yaml's list: kind → group → the identities that control it.
// Its value is a CEL map, which is JSON but for single quotes and trailing
// commas.
using ControllerList = std::map<std::string, std::map<std::string, std::vector<std::string>>>;
inline ControllerList controllerList() {
  std::vector<ManifestDocument> documents;
  std::string error;
  EXPECT_TRUE(
      parseManifests(readFile(manifestsDir() + "/base/controllers.yaml"), documents, &error))
      << error;
  ControllerList list;
  if (documents.size() != 1) return list;
  std::string text(stringMember(member(documents[0].json.get(), "data"), "controllers"));
  std::replace(text.begin(), text.end(), '\'', '"');
  text = std::regex_replace(text, std::regex(R"(,(\s*[\]}]))"), "$1");
  const auto map = parseJson(text);
  EXPECT_TRUE(isObject(map.get())) << text;
  if (!isObject(map.get())) return list;
  for (auto kind = map->MemberBegin(); kind != map->MemberEnd(); ++kind) {
    for (auto group = kind->value.MemberBegin(); group != kind->value.MemberEnd(); ++group) {
      auto& identities = list[kind->name.GetString()][group->name.GetString()];
      for (const JsonValue& identity : group->value.GetArray()) {
        identities.emplace_back(identity.GetString());
      }
    }
  }
  return list;
}

// `admission` as `username` asks for it.
inline AdmissionCase by(std::string username, AdmissionCase admission) {
  admission.username = std::move(username);
  return admission;
}

inline std::string jsonString(std::string_view text) {
  JsonDocument doc;
  JsonValue value(text.data(), static_cast<rapidjson::SizeType>(text.size()), doc.GetAllocator());
  return toJson(value);
}

// Webhook name → "call", "skip" or "error: ..." for every case.
inline std::map<std::string, std::map<std::string, std::string>> evaluateMatching(
    const Rendered& rendered, const std::vector<AdmissionCase>& cases) {
  std::string input = R"({"configurations":[)";
  bool first = true;
  for (const char* kind : {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}) {
    for (const JsonValue* configuration : rendered.ofKind(kind)) {
      if (!first) input += ",";
      input += toJson(*configuration);
      first = false;
    }
  }
  input += R"(],"requests":[)";
  for (size_t i = 0; i < cases.size(); ++i) {
    const AdmissionCase& c = cases[i];
    const auto object = parseJson(c.object);
    const Resource resource = resourceOf(object.get());
    std::string labels = "{";
    for (const auto& [key, value] : c.namespaceLabels) {
      if (labels.size() > 1) labels += ",";
      labels += jsonString(key) + ":" + jsonString(value);
    }
    labels += "}";
    if (i > 0) input += ",";
    input +=
        R"({"id":)" + jsonString(c.id) + R"(,"namespaceLabels":)" + labels +
        R"(,"request":{"uid":"u","resource":{"group":)" + jsonString(resource.group) +
        R"(,"version":)" + jsonString(resource.version) + R"(,"resource":)" +
        jsonString(resource.resource) + R"(},"kind":{"group":)" + jsonString(resource.group) +
        R"(,"version":)" + jsonString(resource.version) + R"(,"kind":)" +
        jsonString(stringMember(object.get(), "kind")) + R"(},"subResource":)" +
        jsonString(c.subResource) + R"(,"operation":)" + jsonString(c.operation) +
        (c.clusterScoped ? std::string()
                         : R"(,"namespace":)" +
                               jsonString(c.namespaceLabels.at("kubernetes.io/metadata.name"))) +
        R"(,"userInfo":)" +
        (c.username.empty() ? std::string("{}")
                            : R"({"username":)" + jsonString(c.username) + "}") +
        R"(},"object":)" + c.object + R"(,"oldObject":)" +
        (c.oldObject.empty() ? "null" : c.oldObject) + "}";
  }
  input += "]}";
  TempDir dir;
  writeFile(dir.file("input.json"), input);
  const CommandResult result = runCommand(
      {"node", sourceDir() + "/tests/schema/match_conditions.mjs", dir.file("input.json")});
  std::map<std::string, std::map<std::string, std::string>> outcomes;
  if (result.exitCode != 0) {
    ADD_FAILURE() << "match_conditions.mjs failed: " << result.err;
    return outcomes;
  }
  const auto doc = parseJson(result.out);
  for (const JsonValue& entry : member(doc.get(), "results")->GetArray()) {
    auto& byWebhook = outcomes[std::string(stringMember(&entry, "id"))];
    const JsonValue* webhooks = member(&entry, "webhooks");
    for (auto it = webhooks->MemberBegin(); it != webhooks->MemberEnd(); ++it) {
      byWebhook[it->name.GetString()] = stringOf(&it->value);
    }
  }
  return outcomes;
}

// Expected outcome per webhook, in the order applied.mutate,
// reconciled.mutate, controlled.mutate, applied.validate,
// reconciled.validate, controlled.validate: C call, S skip.
struct Expectation {
  AdmissionCase admission;
  std::string expected;
};

// Each case's outcome at the six webhooks, in that order, against the base's
// configurations.
inline void expectOutcomes(const std::vector<Expectation>& expectations) {
  std::vector<AdmissionCase> cases;
  for (const Expectation& e : expectations) cases.push_back(e.admission);
  const auto outcomes = evaluateMatching(render(manifestsDir() + "/base"), cases);
  const char* order[] = {kAppliedMutate,   kReconciledMutate,   kControlledMutate,
                         kAppliedValidate, kReconciledValidate, kControlledValidate};
  for (const Expectation& e : expectations) {
    const auto& outcome = outcomes.at(e.admission.id);
    std::string got;
    for (const char* webhook : order) {
      const std::string& result = outcome.at(webhook);
      got += result == "call" ? 'C' : result == "skip" ? 'S' : 'E';
      EXPECT_TRUE(result == "call" || result == "skip")
          << e.admission.id << " " << webhook << ": " << result;
    }
    EXPECT_EQ(got, e.expected) << e.admission.id;
  }
}

}  // namespace aiadmit::install
