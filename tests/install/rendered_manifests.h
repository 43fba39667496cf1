// What the install tests share: the manifests rendered by `kubectl
// kustomize` as an admin runs it, and readers of what it prints (webhooks,
// label selectors, the YAML blocks of docs/install.md).
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "tests/support/test_support.h"
#include "webhook/codec/yaml_json.h"

namespace aiadmit::install {

using namespace ::aiadmit::testing;

using Labels = std::map<std::string, std::string>;

inline constexpr std::string_view kNamespace = "aiadmit-system";
inline constexpr const char* kAppliedMutate = "applied.mutate.aiadmit.dev";
inline constexpr const char* kReconciledMutate = "reconciled.mutate.aiadmit.dev";
inline constexpr const char* kControlledMutate = "controlled.mutate.aiadmit.dev";
inline constexpr const char* kAppliedValidate = "applied.validate.aiadmit.dev";
inline constexpr const char* kReconciledValidate = "reconciled.validate.aiadmit.dev";
inline constexpr const char* kControlledValidate = "controlled.validate.aiadmit.dev";
// Three tiers (applied, reconciled, controlled), each with a mutating and a
// validating webhook.
inline constexpr size_t kWebhookCount = 6;
// Beside them, in the validating configuration: aiadmit's own profiles
// ConfigMap, checked before it is stored.
inline constexpr const char* kProfilesValidate = "profiles.validate.aiadmit.dev";

inline std::string manifestsDir() {
  return sourceDir() + "/manifests";
}

struct Rendered {
  std::vector<std::shared_ptr<JsonDocument>> objects;

  const JsonValue* find(std::string_view kind, std::string_view name) const {
    for (const auto& object : objects) {
      if (stringMember(object.get(), "kind") == kind &&
          stringMember(member(object.get(), "metadata"), "name") == name) {
        return object.get();
      }
    }
    return nullptr;
  }
  std::vector<const JsonValue*> ofKind(std::string_view kind) const {
    std::vector<const JsonValue*> out;
    for (const auto& object : objects) {
      if (stringMember(object.get(), "kind") == kind) out.push_back(object.get());
    }
    return out;
  }
  std::vector<std::string> jsons() const {
    std::vector<std::string> out;
    for (const auto& object : objects) out.push_back(toJson(*object));
    return out;
  }
};

// `kubectl kustomize DIR`, the way an admin runs it: no flags.
inline Rendered render(const std::string& dir) {
  Rendered rendered;
  const CommandResult result = runCommand({"kubectl", "kustomize", dir});
  if (result.exitCode != 0) {
    ADD_FAILURE() << "kubectl kustomize " << dir << " failed: " << result.err;
    return rendered;
  }
  std::vector<ManifestDocument> documents;
  std::string error;
  if (!parseManifests(result.out, documents, &error)) {
    ADD_FAILURE() << "kubectl kustomize " << dir << " printed invalid YAML: " << error;
    return rendered;
  }
  for (ManifestDocument& document : documents) rendered.objects.push_back(document.json);
  return rendered;
}

inline std::set<std::string> stringSet(const JsonValue* array) {
  std::set<std::string> out;
  if (!isArray(array)) return out;
  for (const JsonValue& item : array->GetArray()) out.emplace(stringOf(&item));
  return out;
}

inline Labels labelMap(const JsonValue* object) {
  Labels out;
  if (!isObject(object)) return out;
  for (auto it = object->MemberBegin(); it != object->MemberEnd(); ++it) {
    out[it->name.GetString()] = std::string(stringOf(&it->value));
  }
  return out;
}

// metav1.LabelSelector semantics.
inline bool selects(const JsonValue* selector, const Labels& labels) {
  if (selector == nullptr) return true;
  for (const auto& [key, value] : labelMap(member(selector, "matchLabels"))) {
    const auto it = labels.find(key);
    if (it == labels.end() || it->second != value) return false;
  }
  const JsonValue* expressions = member(selector, "matchExpressions");
  if (!isArray(expressions)) return true;
  for (const JsonValue& expression : expressions->GetArray()) {
    const std::string key(stringMember(&expression, "key"));
    const std::string_view op = stringMember(&expression, "operator");
    const std::set<std::string> values = stringSet(member(&expression, "values"));
    const auto it = labels.find(key);
    const bool present = it != labels.end();
    if (op == "In" && !(present && values.count(it->second))) return false;
    if (op == "NotIn" && present && values.count(it->second)) return false;
    if (op == "Exists" && !present) return false;
    if (op == "DoesNotExist" && present) return false;
  }
  return true;
}

inline Labels namespaceNamed(const std::string& name, std::optional<std::string> enabled) {
  Labels labels{{"kubernetes.io/metadata.name", name}};
  if (enabled) labels["aiadmit.dev/enabled"] = *enabled;
  return labels;
}

struct Webhook {
  std::string configurationKind;
  const JsonValue* value = nullptr;
  std::string name() const { return std::string(stringMember(value, "name")); }
};

// Every webhook of both configurations.
inline std::vector<Webhook> allWebhooksOf(const Rendered& rendered) {
  std::vector<Webhook> out;
  for (const char* kind : {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}) {
    for (const JsonValue* configuration : rendered.ofKind(kind)) {
      const JsonValue* webhooks = member(configuration, "webhooks");
      if (!isArray(webhooks)) continue;
      for (const JsonValue& webhook : webhooks->GetArray()) out.push_back({kind, &webhook});
    }
  }
  return out;
}

// The webhooks of the three tiers: those the workloads go through.
inline std::vector<Webhook> webhooksOf(const Rendered& rendered) {
  std::vector<Webhook> out;
  for (const Webhook& webhook : allWebhooksOf(rendered)) {
    if (webhook.name() != kProfilesValidate) out.push_back(webhook);
  }
  return out;
}

// The profiles ConfigMap's own webhook; null when there is none, or several.
inline const JsonValue* profilesWebhookOf(const Rendered& rendered) {
  const JsonValue* found = nullptr;
  size_t count = 0;
  for (const Webhook& webhook : allWebhooksOf(rendered)) {
    if (webhook.name() != kProfilesValidate) continue;
    EXPECT_EQ(webhook.configurationKind, "ValidatingWebhookConfiguration");
    found = webhook.value;
    ++count;
  }
  EXPECT_EQ(count, 1u) << kProfilesValidate;
  return count == 1 ? found : nullptr;
}

inline std::set<std::string> conditionNames(const JsonValue* webhook) {
  std::set<std::string> names;
  const JsonValue* conditions = member(webhook, "matchConditions");
  if (!isArray(conditions)) return names;
  for (const JsonValue& condition : conditions->GetArray()) {
    names.emplace(stringMember(&condition, "name"));
  }
  return names;
}

inline int intMember(const JsonValue* object, std::string_view key, int fallback = -1) {
  const JsonValue* value = member(object, key);
  return value != nullptr && value->IsInt() ? value->GetInt() : fallback;
}

inline bool boolMember(const JsonValue* object, std::string_view key) {
  const JsonValue* value = member(object, key);
  return value != nullptr && value->IsBool() && value->GetBool();
}

// What kustomize reads of a checkout: manifests/ and the profiles/ it generates from.
inline void copyCheckout(const TempDir& dir) {
  std::filesystem::copy(manifestsDir(), dir.file("manifests"),
                        std::filesystem::copy_options::recursive);
  std::filesystem::copy(sourceDir() + "/profiles", dir.file("profiles"),
                        std::filesystem::copy_options::recursive);
}

// A copy of manifests/ with a certificate from certs/webhook-certs.sh in the
// script-certs overlay, as an admin's checkout would have after running it.
struct ScriptCertsCheckout {
  TempDir dir;
  std::string overlay;
  std::string pki;
  ScriptCertsCheckout() {
    copyCheckout(dir);
    overlay = dir.file("manifests/overlays/script-certs");
    pki = dir.file("pki");
    const CommandResult result = runCommand(
        {sourceDir() + "/certs/webhook-certs.sh", "--secret", overlay + "/tls-secret.yaml", pki});
    EXPECT_EQ(result.exitCode, 0) << result.out << result.err;
  }
};

// The ```yaml block of docs/install.md that follows `marker`.
inline std::string documentedYaml(std::string_view marker) {
  const std::string doc = readFile(sourceDir() + "/docs/install.md");
  const size_t at = doc.find(marker);
  if (at == std::string::npos) return "";
  const size_t begin = doc.find("```yaml\n", at);
  const size_t end = doc.find("```\n", begin + 8);
  if (begin == std::string::npos || end == std::string::npos) return "";
  return doc.substr(begin + 8, end - begin - 8);
}

}  // namespace aiadmit::install
