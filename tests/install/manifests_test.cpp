// The install as a cluster admin gets it: the kustomize base and overlays
// rendered by `kubectl kustomize`, every object checked against the
// Kubernetes schema, the webhook configurations held to the safety
// properties that others learned the hard way, their CEL matchConditions
// evaluated against real requests and compared with what the real server
// does, and the container image definition checked against the binary.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "tests/support/test_support.h"
#include "webhook/kube/yaml_json.h"

namespace aiadmit {
namespace {

using namespace testing;
namespace fs = std::filesystem;

using Labels = std::map<std::string, std::string>;

constexpr std::string_view kNamespace = "aiadmit-system";
constexpr const char* kAppliedMutate = "applied.mutate.aiadmit.dev";
constexpr const char* kControlledMutate = "controlled.mutate.aiadmit.dev";
constexpr const char* kAppliedValidate = "applied.validate.aiadmit.dev";
constexpr const char* kControlledValidate = "controlled.validate.aiadmit.dev";

std::string manifestsDir() {
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
Rendered render(const std::string& dir) {
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

std::set<std::string> stringSet(const JsonValue* array) {
  std::set<std::string> out;
  if (!isArray(array)) return out;
  for (const JsonValue& item : array->GetArray()) out.emplace(stringOf(&item));
  return out;
}

Labels labelMap(const JsonValue* object) {
  Labels out;
  if (!isObject(object)) return out;
  for (auto it = object->MemberBegin(); it != object->MemberEnd(); ++it) {
    out[it->name.GetString()] = std::string(stringOf(&it->value));
  }
  return out;
}

// metav1.LabelSelector semantics.
bool selects(const JsonValue* selector, const Labels& labels) {
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

Labels namespaceNamed(const std::string& name, std::optional<std::string> enabled) {
  Labels labels{{"kubernetes.io/metadata.name", name}};
  if (enabled) labels["aiadmit.dev/enabled"] = *enabled;
  return labels;
}

struct Webhook {
  std::string configurationKind;
  const JsonValue* value = nullptr;
  std::string name() const { return std::string(stringMember(value, "name")); }
};

std::vector<Webhook> webhooksOf(const Rendered& rendered) {
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

std::set<std::string> conditionNames(const JsonValue* webhook) {
  std::set<std::string> names;
  const JsonValue* conditions = member(webhook, "matchConditions");
  if (!isArray(conditions)) return names;
  for (const JsonValue& condition : conditions->GetArray()) {
    names.emplace(stringMember(&condition, "name"));
  }
  return names;
}

const JsonValue* podTemplateSpec(const JsonValue* deployment) {
  return member(member(member(deployment, "spec"), "template"), "spec");
}

const JsonValue* containerNamed(const JsonValue* podSpec, std::string_view name) {
  const JsonValue* containers = member(podSpec, "containers");
  if (!isArray(containers)) return nullptr;
  for (const JsonValue& container : containers->GetArray()) {
    if (stringMember(&container, "name") == name) return &container;
  }
  return nullptr;
}

// "--flag=value" from a container's args.
std::string argValue(const JsonValue* container, std::string_view flag) {
  const std::string prefix = std::string(flag) + "=";
  for (const std::string& arg : stringSet(member(container, "args"))) {
    if (arg.rfind(prefix, 0) == 0) return arg.substr(prefix.size());
  }
  return "";
}

int intMember(const JsonValue* object, std::string_view key, int fallback = -1) {
  const JsonValue* value = member(object, key);
  return value != nullptr && value->IsInt() ? value->GetInt() : fallback;
}

bool boolMember(const JsonValue* object, std::string_view key) {
  const JsonValue* value = member(object, key);
  return value != nullptr && value->IsBool() && value->GetBool();
}

std::string base64Encode(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t n = (static_cast<uint8_t>(bytes[i]) << 16) |
                       (static_cast<uint8_t>(bytes[i + 1]) << 8) |
                       static_cast<uint8_t>(bytes[i + 2]);
    for (int shift : {18, 12, 6, 0}) out.push_back(kAlphabet[(n >> shift) & 63]);
  }
  if (i < bytes.size()) {
    uint32_t n = static_cast<uint8_t>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) n |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    out.push_back(kAlphabet[(n >> 18) & 63]);
    out.push_back(kAlphabet[(n >> 12) & 63]);
    out.push_back(i + 1 < bytes.size() ? kAlphabet[(n >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

// What kustomize reads of a checkout: manifests/ and the profiles/ it generates from.
void copyCheckout(const TempDir& dir) {
  fs::copy(manifestsDir(), dir.file("manifests"), fs::copy_options::recursive);
  fs::copy(sourceDir() + "/profiles", dir.file("profiles"), fs::copy_options::recursive);
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

TEST(Manifests, BaseRendersTheWholeInstallInItsNamespace) {
  const Rendered base = render(manifestsDir() + "/base");
  ASSERT_FALSE(base.objects.empty());
  EXPECT_NE(base.find("Namespace", kNamespace), nullptr);
  EXPECT_NE(base.find("ServiceAccount", "aiadmit"), nullptr);
  EXPECT_NE(base.find("Deployment", "aiadmit"), nullptr);
  EXPECT_NE(base.find("PodDisruptionBudget", "aiadmit"), nullptr);
  EXPECT_NE(base.find("Service", "aiadmit"), nullptr);
  EXPECT_NE(base.find("MutatingWebhookConfiguration", "mutate.aiadmit.dev"), nullptr);
  EXPECT_NE(base.find("ValidatingWebhookConfiguration", "validate.aiadmit.dev"), nullptr);
  ASSERT_EQ(base.ofKind("ConfigMap").size(), 1u);
  for (const auto& object : base.objects) {
    const std::string_view kind = stringMember(object.get(), "kind");
    const std::string_view ns = stringMember(member(object.get(), "metadata"), "namespace");
    if (kind == "Namespace" || kind.find("WebhookConfiguration") != std::string_view::npos ||
        kind == "ClusterRole" || kind == "ClusterRoleBinding") {
      EXPECT_TRUE(ns.empty()) << kind << " is cluster-scoped";
    } else {
      EXPECT_EQ(ns, kNamespace) << kind;
    }
  }
  // Pod Security admission holds aiadmit's own namespace to "restricted".
  const Labels labels =
      labelMap(member(member(base.find("Namespace", kNamespace), "metadata"), "labels"));
  EXPECT_EQ(labels.count("aiadmit.dev/enabled"), 0u);
  EXPECT_EQ(labels.at("pod-security.kubernetes.io/enforce"), "restricted");
}

TEST(Manifests, EveryRenderedObjectMatchesTheKubernetesSchema) {
  ScriptCertsCheckout checkout;
  for (const std::string& dir :
       {manifestsDir() + "/base", manifestsDir() + "/overlays/cert-manager", checkout.overlay}) {
    SCOPED_TRACE(dir);
    const Rendered rendered = render(dir);
    ASSERT_GE(rendered.objects.size(), 8u);
    const CommandResult schema = validateSchemas(rendered.jsons());
    EXPECT_EQ(schema.exitCode, 0) << schema.out << schema.err;
    // One "ok" line per object: nothing was skipped for want of a schema.
    const auto oks = std::count(schema.out.begin(), schema.out.end(), '\n');
    EXPECT_EQ(static_cast<size_t>(oks), rendered.objects.size()) << schema.out;
    EXPECT_EQ(schema.out.find("FAIL"), std::string::npos) << schema.out;
  }
}

TEST(Manifests, ProfilesConfigMapIsGeneratedFromTheRepositoryProfiles) {
  // profiles/Kustomization lists exactly the profile files aiadmit reads.
  std::set<std::string> listed;
  {
    std::vector<ManifestDocument> documents;
    std::string error;
    ASSERT_TRUE(
        parseManifests(readFile(sourceDir() + "/profiles/Kustomization"), documents, &error))
        << error;
    ASSERT_EQ(documents.size(), 1u);
    const JsonValue* generators = member(documents[0].json.get(), "configMapGenerator");
    ASSERT_TRUE(isArray(generators) && generators->Size() == 1);
    const JsonValue* files = member(&(*generators)[0], "files");
    ASSERT_TRUE(isArray(files));
    for (const JsonValue& file : files->GetArray()) listed.emplace(stringOf(&file));
  }

  const Rendered base = render(manifestsDir() + "/base");
  const std::vector<const JsonValue*> configMaps = base.ofKind("ConfigMap");
  ASSERT_EQ(configMaps.size(), 1u);
  const std::string name(stringMember(member(configMaps[0], "metadata"), "name"));
  EXPECT_EQ(name.rfind("aiadmit-profiles-", 0), 0u)
      << "hashed name, so a change rolls out: " << name;

  std::set<std::string> repositoryFiles;
  for (const auto& entry : fs::directory_iterator(sourceDir() + "/profiles")) {
    const std::string ext = entry.path().extension().string();
    if (ext == ".yaml" || ext == ".yml") repositoryFiles.insert(entry.path().filename().string());
  }
  const JsonValue* data = member(configMaps[0], "data");
  ASSERT_TRUE(isObject(data));
  std::set<std::string> keys;
  TempDir extracted;
  for (auto it = data->MemberBegin(); it != data->MemberEnd(); ++it) {
    const std::string key = it->name.GetString();
    keys.insert(key);
    EXPECT_EQ(std::string(stringOf(&it->value)), readFile(sourceDir() + "/profiles/" + key)) << key;
    writeFile(extracted.file(key), stringOf(&it->value));
  }
  EXPECT_EQ(keys, repositoryFiles);
  EXPECT_EQ(listed, repositoryFiles);
  const CommandResult lint = runCommand({binaryPath(), "profiles", "lint", extracted.path()});
  EXPECT_EQ(lint.exitCode, 0) << lint.out;

  // The Deployment mounts this very ConfigMap and serves from it.
  const JsonValue* spec = podTemplateSpec(base.find("Deployment", "aiadmit"));
  std::string mountedConfigMap;
  for (const JsonValue& volume : member(spec, "volumes")->GetArray()) {
    if (stringMember(&volume, "name") == "profiles") {
      mountedConfigMap = stringMember(member(&volume, "configMap"), "name");
    }
  }
  EXPECT_EQ(mountedConfigMap, name);
}

TEST(Manifests, WebhooksAreCalledOnlyForOptedInNamespacesNeverTheSystemOnes) {
  const Rendered base = render(manifestsDir() + "/base");
  const std::vector<Webhook> webhooks = webhooksOf(base);
  ASSERT_EQ(webhooks.size(), 4u);
  for (const Webhook& webhook : webhooks) {
    SCOPED_TRACE(webhook.name());
    const JsonValue* selector = member(webhook.value, "namespaceSelector");
    ASSERT_TRUE(isObject(selector));
    EXPECT_TRUE(selects(selector, namespaceNamed("team-a", "true")));
    EXPECT_FALSE(selects(selector, namespaceNamed("team-b", std::nullopt)));
    EXPECT_FALSE(selects(selector, namespaceNamed("team-c", "false")));
    EXPECT_FALSE(selects(selector, namespaceNamed("kube-system", "true")));
    EXPECT_FALSE(selects(selector, namespaceNamed(std::string(kNamespace), "true")));
    EXPECT_EQ(member(webhook.value, "objectSelector"), nullptr);
  }
}

TEST(Manifests, WebhooksAreSafeToCall) {
  const Rendered base = render(manifestsDir() + "/base");
  std::set<std::string> names;
  for (const Webhook& webhook : webhooksOf(base)) {
    const std::string name = webhook.name();
    SCOPED_TRACE(name);
    names.insert(name);
    const bool mutating = webhook.configurationKind == "MutatingWebhookConfiguration";
    const bool applied = name.rfind("applied.", 0) == 0;
    EXPECT_EQ(stringSet(member(webhook.value, "admissionReviewVersions")),
              std::set<std::string>{"v1"});
    EXPECT_EQ(member(webhook.value, "admissionReviewVersions")->Size(), 1u);
    EXPECT_EQ(stringMember(webhook.value, "sideEffects"), "None");
    const int timeout = intMember(webhook.value, "timeoutSeconds");
    EXPECT_GE(timeout, 1);
    EXPECT_LE(timeout, 5);
    EXPECT_EQ(stringMember(webhook.value, "matchPolicy"), "Equivalent");
    if (mutating) {
      EXPECT_EQ(stringMember(webhook.value, "reinvocationPolicy"), "IfNeeded");
    }
    const JsonValue* service = member(member(webhook.value, "clientConfig"), "service");
    EXPECT_EQ(stringMember(service, "name"), "aiadmit");
    EXPECT_EQ(stringMember(service, "namespace"), kNamespace);
    EXPECT_EQ(intMember(service, "port"), 443);
    EXPECT_EQ(stringMember(service, "path"), mutating ? "/mutate" : "/validate");
    EXPECT_EQ(member(member(webhook.value, "clientConfig"), "url"), nullptr);

    // Fail closed only for what people apply; controllers' objects fail open.
    EXPECT_EQ(stringMember(webhook.value, "failurePolicy"), applied ? "Fail" : "Ignore");
    const std::set<std::string> conditions = conditionNames(webhook.value);
    EXPECT_TRUE(conditions.count("not-a-mirror-pod"));
    if (applied) {
      EXPECT_TRUE(conditions.count("not-made-by-a-controller"));
      EXPECT_TRUE(conditions.count("not-being-deleted"));
    } else {
      EXPECT_TRUE(conditions.count("made-by-a-controller") ||
                  conditions.count("made-by-a-custom-controller"));
    }
  }
  EXPECT_EQ(names, (std::set<std::string>{kAppliedMutate, kControlledMutate, kAppliedValidate,
                                          kControlledValidate}));
}

TEST(Manifests, WebhookRulesCoverTheSixWorkloadKindsAndNothingElse) {
  const std::set<std::string> workloads = {
      "/v1/pods",      "apps/v1/deployments", "apps/v1/statefulsets", "apps/v1/replicasets",
      "batch/v1/jobs", "batch/v1/cronjobs"};
  const Rendered base = render(manifestsDir() + "/base");
  for (const Webhook& webhook : webhooksOf(base)) {
    const std::string name = webhook.name();
    SCOPED_TRACE(name);
    std::map<std::string, std::set<std::string>> operationsByResource;
    const JsonValue* rules = member(webhook.value, "rules");
    ASSERT_TRUE(isArray(rules));
    for (const JsonValue& rule : rules->GetArray()) {
      EXPECT_EQ(stringMember(&rule, "scope"), "Namespaced");
      for (const std::string& group : stringSet(member(&rule, "apiGroups"))) {
        for (const std::string& version : stringSet(member(&rule, "apiVersions"))) {
          for (const std::string& resource : stringSet(member(&rule, "resources"))) {
            // No wildcards and no subresources (status, binding, exec, ...).
            EXPECT_EQ(resource.find_first_of("*/"), std::string::npos) << resource;
            const std::string key = group + "/" + version + "/" + resource;
            EXPECT_TRUE(workloads.count(key)) << key;
            for (const std::string& op : stringSet(member(&rule, "operations"))) {
              operationsByResource[key].insert(op);
            }
          }
        }
      }
    }
    if (name == kControlledMutate) {
      EXPECT_EQ(operationsByResource.size(), 1u);
      EXPECT_EQ(operationsByResource["/v1/pods"], std::set<std::string>{"CREATE"});
      continue;
    }
    EXPECT_EQ(operationsByResource.size(), workloads.size());
    for (const std::string& key : workloads) {
      EXPECT_EQ(operationsByResource[key], (std::set<std::string>{"CREATE", "UPDATE"})) << key;
    }
  }
}

TEST(Manifests, DeploymentIsHardenedAndAlwaysHasAReplicaServing) {
  const Rendered base = render(manifestsDir() + "/base");
  const JsonValue* deployment = base.find("Deployment", "aiadmit");
  ASSERT_NE(deployment, nullptr);
  const JsonValue* spec = member(deployment, "spec");
  EXPECT_EQ(intMember(spec, "replicas"), 2);
  EXPECT_EQ(intMember(member(member(spec, "strategy"), "rollingUpdate"), "maxUnavailable"), 0);
  const Labels podLabels = labelMap(member(member(member(spec, "template"), "metadata"), "labels"));
  EXPECT_TRUE(selects(member(spec, "selector"), podLabels));

  const JsonValue* pod = podTemplateSpec(deployment);
  const JsonValue* antiAffinity = member(member(pod, "affinity"), "podAntiAffinity");
  ASSERT_TRUE(isObject(antiAffinity));
  bool spreadOverNodes = false;
  for (const JsonValue& term :
       member(antiAffinity, "preferredDuringSchedulingIgnoredDuringExecution")->GetArray()) {
    const JsonValue* affinityTerm = member(&term, "podAffinityTerm");
    if (stringMember(affinityTerm, "topologyKey") == "kubernetes.io/hostname" &&
        selects(member(affinityTerm, "labelSelector"), podLabels)) {
      spreadOverNodes = true;
    }
  }
  EXPECT_TRUE(spreadOverNodes);

  const JsonValue* budget = base.find("PodDisruptionBudget", "aiadmit");
  ASSERT_NE(budget, nullptr);
  EXPECT_EQ(intMember(member(budget, "spec"), "minAvailable"), 1);
  EXPECT_TRUE(selects(member(member(budget, "spec"), "selector"), podLabels));

  const JsonValue* podSecurity = member(pod, "securityContext");
  EXPECT_TRUE(boolMember(podSecurity, "runAsNonRoot"));
  EXPECT_GT(intMember(podSecurity, "runAsUser"), 0);
  EXPECT_EQ(stringMember(member(podSecurity, "seccompProfile"), "type"), "RuntimeDefault");
  EXPECT_FALSE(boolMember(pod, "automountServiceAccountToken"));
  EXPECT_NE(member(pod, "automountServiceAccountToken"), nullptr);

  const JsonValue* container = containerNamed(pod, "aiadmit");
  ASSERT_NE(container, nullptr);
  const JsonValue* security = member(container, "securityContext");
  EXPECT_TRUE(boolMember(security, "runAsNonRoot"));
  EXPECT_TRUE(boolMember(security, "readOnlyRootFilesystem"));
  EXPECT_FALSE(boolMember(security, "allowPrivilegeEscalation"));
  EXPECT_NE(member(security, "allowPrivilegeEscalation"), nullptr);
  EXPECT_FALSE(boolMember(security, "privileged"));
  EXPECT_EQ(stringSet(member(member(security, "capabilities"), "drop")),
            std::set<std::string>{"ALL"});
  EXPECT_EQ(member(member(security, "capabilities"), "add"), nullptr);
  EXPECT_EQ(stringMember(member(security, "seccompProfile"), "type"), "RuntimeDefault");

  for (const char* kind : {"requests", "limits"}) {
    const JsonValue* resources = member(member(container, "resources"), kind);
    EXPECT_NE(member(resources, "cpu"), nullptr) << kind;
    EXPECT_NE(member(resources, "memory"), nullptr) << kind;
  }

  // Probes over HTTPS on the serving port.
  const JsonValue* port = member(container, "ports");
  ASSERT_TRUE(isArray(port) && port->Size() == 1);
  const std::string portName((stringMember(&(*port)[0], "name")));
  EXPECT_EQ(intMember(&(*port)[0], "containerPort"), 8443);
  for (const auto& [probe, path] :
       {std::pair{"livenessProbe", "/healthz"}, std::pair{"readinessProbe", "/readyz"}}) {
    const JsonValue* get = member(member(container, probe), "httpGet");
    EXPECT_EQ(stringMember(get, "path"), path) << probe;
    EXPECT_EQ(stringMember(get, "scheme"), "HTTPS") << probe;
    EXPECT_EQ(stringMember(get, "port"), portName) << probe;
  }

  // Graceful termination: the grace period outlasts the server's own delay
  // between failing /readyz and closing the listener.
  const int shutdownDelay = std::atoi(argValue(container, "--shutdown-delay").c_str());
  EXPECT_GT(shutdownDelay, 0);
  EXPECT_GE(intMember(pod, "terminationGracePeriodSeconds"), shutdownDelay + 10);

  // Certificate and profiles come from whole-directory mounts (a subPath
  // mount never sees an updated Secret), and the args point into them.
  std::map<std::string, std::string> mountPaths;
  for (const JsonValue& mount : member(container, "volumeMounts")->GetArray()) {
    EXPECT_EQ(member(&mount, "subPath"), nullptr);
    EXPECT_TRUE(boolMember(&mount, "readOnly"));
    mountPaths[std::string(stringMember(&mount, "name"))] = stringMember(&mount, "mountPath");
  }
  EXPECT_EQ(argValue(container, "--tls-cert"), mountPaths["tls"] + "/tls.crt");
  EXPECT_EQ(argValue(container, "--tls-key"), mountPaths["tls"] + "/tls.key");
  EXPECT_EQ(argValue(container, "--profiles"), mountPaths["profiles"]);
  EXPECT_EQ(argValue(container, "--listen"), "0.0.0.0:8443");
  std::string secretName;
  for (const JsonValue& volume : member(pod, "volumes")->GetArray()) {
    if (stringMember(&volume, "name") == "tls") {
      secretName = stringMember(member(&volume, "secret"), "secretName");
    }
  }
  EXPECT_EQ(secretName, "aiadmit-tls");

  // The Service sends 443 to the serving port of these Pods.
  const JsonValue* service = base.find("Service", "aiadmit");
  ASSERT_NE(service, nullptr);
  const Labels serviceSelector = labelMap(member(member(service, "spec"), "selector"));
  for (const auto& [key, value] : serviceSelector) EXPECT_EQ(podLabels.at(key), value);
  const JsonValue& servicePort = (*member(member(service, "spec"), "ports"))[0];
  EXPECT_EQ(intMember(&servicePort, "port"), 443);
  EXPECT_EQ(stringMember(&servicePort, "targetPort"), portName);
}

TEST(Manifests, CertManagerOverlayIssuesTheServingCertificateAndInjectsItsCa) {
  const Rendered overlay = render(manifestsDir() + "/overlays/cert-manager");
  const JsonValue* serving = overlay.find("Certificate", "aiadmit-serving-cert");
  ASSERT_NE(serving, nullptr);
  EXPECT_EQ(stringMember(member(serving, "metadata"), "namespace"), kNamespace);
  const JsonValue* servingSpec = member(serving, "spec");
  EXPECT_EQ(stringMember(servingSpec, "secretName"), "aiadmit-tls");
  const std::set<std::string> dnsNames = stringSet(member(servingSpec, "dnsNames"));
  EXPECT_TRUE(dnsNames.count("aiadmit.aiadmit-system.svc"));
  EXPECT_TRUE(stringSet(member(servingSpec, "usages")).count("server auth"));

  // Serving certificate ← CA issuer ← CA certificate ← self-signed issuer.
  const JsonValue* caIssuer =
      overlay.find("Issuer", stringMember(member(servingSpec, "issuerRef"), "name"));
  ASSERT_NE(caIssuer, nullptr);
  const std::string_view caSecret =
      stringMember(member(member(caIssuer, "spec"), "ca"), "secretName");
  const JsonValue* caCertificate = nullptr;
  for (const JsonValue* certificate : overlay.ofKind("Certificate")) {
    if (stringMember(member(certificate, "spec"), "secretName") == caSecret)
      caCertificate = certificate;
  }
  ASSERT_NE(caCertificate, nullptr);
  const JsonValue* caSpec = member(caCertificate, "spec");
  EXPECT_TRUE(boolMember(caSpec, "isCA"));
  // Renewing the CA with the same key keeps every issued certificate valid.
  EXPECT_EQ(stringMember(member(caSpec, "privateKey"), "rotationPolicy"), "Never");
  const JsonValue* bootstrap =
      overlay.find("Issuer", stringMember(member(caSpec, "issuerRef"), "name"));
  ASSERT_NE(bootstrap, nullptr);
  EXPECT_TRUE(isObject(member(member(bootstrap, "spec"), "selfSigned")));

  for (const char* kind : {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}) {
    for (const JsonValue* configuration : overlay.ofKind(kind)) {
      const JsonValue* annotations = member(member(configuration, "metadata"), "annotations");
      EXPECT_EQ(stringMember(annotations, "cert-manager.io/inject-ca-from"),
                std::string(kNamespace) + "/aiadmit-serving-cert")
          << kind;
      EXPECT_EQ(member(configuration, "webhooks")->Size(), 2u) << "the patch keeps the webhooks";
    }
  }
}

TEST(Manifests, ScriptCertsOverlayPutsTheCaBundleIntoEveryWebhook) {
  ScriptCertsCheckout checkout;
  const Rendered overlay = render(checkout.overlay);
  const std::string bundle = readFile(checkout.pki + "/ca-bundle.crt");
  ASSERT_NE(bundle.find("BEGIN CERTIFICATE"), std::string::npos);
  const std::vector<Webhook> webhooks = webhooksOf(overlay);
  ASSERT_EQ(webhooks.size(), 4u);
  for (const Webhook& webhook : webhooks) {
    EXPECT_EQ(stringMember(member(webhook.value, "clientConfig"), "caBundle"), base64Encode(bundle))
        << webhook.name();
  }
  const JsonValue* secret = overlay.find("Secret", "aiadmit-tls");
  ASSERT_NE(secret, nullptr);
  EXPECT_EQ(stringMember(secret, "type"), "kubernetes.io/tls");
  EXPECT_EQ(stringMember(member(secret, "metadata"), "namespace"), kNamespace);
  const JsonValue* data = member(secret, "data");
  EXPECT_EQ(base64Decode(stringMember(data, "tls.crt")), readFile(checkout.pki + "/tls.crt"));
  EXPECT_EQ(base64Decode(stringMember(data, "tls.key")), readFile(checkout.pki + "/tls.key"));
  EXPECT_EQ(base64Decode(stringMember(data, "ca.crt")), bundle);
}

TEST(Manifests, ScriptCertsOverlayNamesTheMissingSecretBeforeTheScriptRan) {
  TempDir dir;
  copyCheckout(dir);
  fs::remove(dir.file("manifests/overlays/script-certs/tls-secret.yaml"));
  const CommandResult result =
      runCommand({"kubectl", "kustomize", dir.file("manifests/overlays/script-certs")});
  EXPECT_NE(result.exitCode, 0);
  EXPECT_NE(result.err.find("tls-secret.yaml"), std::string::npos) << result.err;
  // The secret, holding a private key, is kept out of git.
  EXPECT_NE(readFile(manifestsDir() + "/overlays/script-certs/.gitignore").find("tls-secret.yaml"),
            std::string::npos);
}

// The ```yaml block of docs/install.md that follows `marker`.
std::string documentedYaml(std::string_view marker) {
  const std::string doc = readFile(sourceDir() + "/docs/install.md");
  const size_t at = doc.find(marker);
  if (at == std::string::npos) return "";
  const size_t begin = doc.find("```yaml\n", at);
  const size_t end = doc.find("```\n", begin + 8);
  if (begin == std::string::npos || end == std::string::npos) return "";
  return doc.substr(begin + 8, end - begin - 8);
}

TEST(Manifests, DocumentedOverlayOfYourOwnSetsTheImage) {
  std::string overlay = documentedYaml("The manifests name the image");
  const std::string relative = "../aiadmit/manifests/overlays/cert-manager";
  const size_t at = overlay.find(relative);
  ASSERT_NE(at, std::string::npos) << overlay;
  TempDir dir;
  // kustomize takes bases by relative path only.
  overlay.replace(at, relative.size(),
                  fs::relative(manifestsDir() + "/overlays/cert-manager", dir.path()).string());
  writeFile(dir.file("kustomization.yaml"), overlay);
  const Rendered rendered = render(dir.path());
  const JsonValue* container =
      containerNamed(podTemplateSpec(rendered.find("Deployment", "aiadmit")), "aiadmit");
  EXPECT_EQ(stringMember(container, "image"), "REGISTRY/aiadmit:0.1.0");
}

TEST(Manifests, DocumentedFailOpenPatchChangesOnlyTheAppliedWebhooks) {
  const std::string patches = documentedYaml("To fail open everywhere");
  ASSERT_NE(patches.find("patches:"), std::string::npos);
  TempDir dir;
  writeFile(dir.file("kustomization.yaml"),
            "resources:\n  - " + fs::relative(manifestsDir() + "/base", dir.path()).string() +
                "\n" + patches);
  const Rendered rendered = render(dir.path());
  const std::vector<Webhook> webhooks = webhooksOf(rendered);
  ASSERT_EQ(webhooks.size(), 4u);
  for (const Webhook& webhook : webhooks) {
    EXPECT_EQ(stringMember(webhook.value, "failurePolicy"), "Ignore") << webhook.name();
  }
}

// --- matchConditions, evaluated the way kube-apiserver does -----------------

struct Resource {
  std::string group;
  std::string version;
  std::string resource;
};

Resource resourceOf(const JsonValue* object) {
  const std::string_view apiVersion = stringMember(object, "apiVersion");
  const std::string_view kind = stringMember(object, "kind");
  if (apiVersion == "v1" && kind == "Pod") return {"", "v1", "pods"};
  if (apiVersion == "apps/v1" && kind == "Deployment") return {"apps", "v1", "deployments"};
  if (apiVersion == "apps/v1" && kind == "StatefulSet") return {"apps", "v1", "statefulsets"};
  if (apiVersion == "apps/v1" && kind == "ReplicaSet") return {"apps", "v1", "replicasets"};
  if (apiVersion == "batch/v1" && kind == "Job") return {"batch", "v1", "jobs"};
  if (apiVersion == "batch/v1" && kind == "CronJob") return {"batch", "v1", "cronjobs"};
  return {"example.com", "v1", "others"};
}

struct AdmissionCase {
  std::string id = {};
  std::string object = {};     // JSON
  std::string oldObject = {};  // JSON; empty for CREATE
  std::string operation = "CREATE";
  Labels namespaceLabels = namespaceNamed("team-a", "true");
  std::string subResource = {};
};

std::string jsonString(std::string_view text) {
  JsonDocument doc;
  JsonValue value(text.data(), static_cast<rapidjson::SizeType>(text.size()), doc.GetAllocator());
  return toJson(value);
}

// Webhook name → "call", "skip" or "error: ..." for every case.
std::map<std::string, std::map<std::string, std::string>> evaluateMatching(
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
    input += R"({"id":)" + jsonString(c.id) + R"(,"namespaceLabels":)" + labels +
             R"(,"request":{"uid":"u","resource":{"group":)" + jsonString(resource.group) +
             R"(,"version":)" + jsonString(resource.version) + R"(,"resource":)" +
             jsonString(resource.resource) + R"(},"subResource":)" + jsonString(c.subResource) +
             R"(,"operation":)" + jsonString(c.operation) + R"(,"namespace":)" +
             jsonString(c.namespaceLabels.at("kubernetes.io/metadata.name")) +
             R"(,"userInfo":{"username":"alice"}},"object":)" + c.object + R"(,"oldObject":)" +
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

// A Pod as a controller makes it from a workload's pod template.
std::string podFromTemplate(const JsonValue& workload, std::string_view ownerApiVersion,
                            std::string_view ownerKind) {
  const JsonValue* spec = member(&workload, "spec");
  const JsonValue* jobTemplate = member(spec, "jobTemplate");
  const JsonValue* podTemplate =
      member(jobTemplate != nullptr ? member(jobTemplate, "spec") : spec, "template");
  const JsonValue* metadata = member(podTemplate, "metadata");
  if (!isObject(member(podTemplate, "spec"))) {
    ADD_FAILURE() << "no pod template in " << toJson(workload).substr(0, 200);
    return "{}";
  }
  std::string pod =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"made","labels":)" +
      (isObject(member(metadata, "labels")) ? toJson(*member(metadata, "labels")) : "{}") +
      R"(,"annotations":)" +
      (isObject(member(metadata, "annotations")) ? toJson(*member(metadata, "annotations"))
                                                 : "{}") +
      R"(,"ownerReferences":[{"apiVersion":)" + jsonString(ownerApiVersion) + R"(,"kind":)" +
      jsonString(ownerKind) + R"(,"name":"owner","uid":"1","controller":true}]},"spec":)" +
      toJson(*member(podTemplate, "spec")) + "}";
  return pod;
}

bool mutateActs(const ReviewResponse& response) {
  return !response.patch.empty() || !response.warnings.empty() || !response.allowed;
}
bool validateActs(const ReviewResponse& response) {
  return !response.allowed || !response.warnings.empty();
}

TEST(Manifests, MatchConditionsSendEveryObjectAiadmitActsOn) {
  const Rendered base = render(manifestsDir() + "/base");
  WebhookServer server;
  std::vector<AdmissionCase> cases;
  std::map<std::string, std::pair<bool, bool>> acts;  // id → (mutate acts, validate acts)
  auto addCase = [&](AdmissionCase c) {
    const std::string review = makeReview(c.object, c.operation, c.id, c.oldObject, "team-a");
    const HttpResponse mutated = server.post("/mutate", review);
    const HttpResponse validated = server.post("/validate", review);
    ASSERT_EQ(mutated.status, 200) << c.id << mutated.body;
    ASSERT_EQ(validated.status, 200) << c.id << validated.body;
    acts[c.id] = {mutateActs(parseReviewResponse(mutated.body)),
                  validateActs(parseReviewResponse(validated.body))};
    cases.push_back(std::move(c));
  };
  int workloads = 0;
  for (const CorpusObject& object : corpusObjects()) {
    const auto parsed = parseJson(object.json);
    if (resourceOf(parsed.get()).resource == "others") continue;
    ++workloads;
    const std::string id = object.file + "#" + std::to_string(object.index);
    addCase({id, object.json});
    // Its Pods: made by a built-in controller, or by an operator.
    if (object.kind == "Pod") continue;
    addCase(
        {id + " pod of an operator", podFromTemplate(*parsed, "kubeflow.org/v1", "PyTorchJob")});
    addCase({id + " pod of a ReplicaSet", podFromTemplate(*parsed, "apps/v1", "ReplicaSet")});
  }
  ASSERT_GE(workloads, 10);

  const auto outcomes = evaluateMatching(base, cases);
  int sentToMutate = 0;
  for (const AdmissionCase& c : cases) {
    SCOPED_TRACE(c.id);
    const auto& outcome = outcomes.at(c.id);
    for (const auto& [webhook, result] : outcome) {
      EXPECT_TRUE(result == "call" || result == "skip") << webhook << ": " << result;
    }
    const bool controlled = c.id.find(" pod of ") != std::string::npos;
    const bool builtInOwner = c.id.find(" pod of a ReplicaSet") != std::string::npos;
    const auto [mutates, validates] = acts.at(c.id);
    if (mutates) {
      ++sentToMutate;
      EXPECT_EQ(outcome.at(controlled ? kControlledMutate : kAppliedMutate), "call");
    }
    if (validates && !builtInOwner) {
      EXPECT_EQ(outcome.at(controlled ? kControlledValidate : kAppliedValidate), "call");
    }
    // Pods of built-in controllers are never validated again: their template
    // was, when it was applied.
    if (builtInOwner) {
      EXPECT_EQ(outcome.at(kAppliedValidate), "skip");
      EXPECT_EQ(outcome.at(kControlledValidate), "skip");
    }
    // Exactly one webhook of each configuration at most.
    EXPECT_FALSE(outcome.at(kAppliedMutate) == "call" && outcome.at(kControlledMutate) == "call");
    EXPECT_FALSE(outcome.at(kAppliedValidate) == "call" &&
                 outcome.at(kControlledValidate) == "call");
  }
  EXPECT_GE(sentToMutate, 8) << "the GPU workloads of the corpus are acted on";
}

// Expected outcome per webhook, in the order applied.mutate,
// controlled.mutate, applied.validate, controlled.validate: C call, S skip.
struct Expectation {
  AdmissionCase admission;
  std::string expected;
};

std::string gpuPod(std::string_view metadataExtra = "", std::string_view specExtra = "") {
  return std::string(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p")") +
         std::string(metadataExtra) +
         R"(},"spec":{"containers":[{"name":"main","image":"vllm","resources":{"limits":{"nvidia.com/gpu":"1"}}}])" +
         std::string(specExtra) + "}}";
}

std::string plainPod(std::string_view metadataExtra = "", std::string_view specExtra = "") {
  return std::string(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p")") +
         std::string(metadataExtra) +
         R"(},"spec":{"containers":[{"name":"web","image":"nginx","resources":{"requests":{"cpu":"100m","memory":"64Mi","hugepages-2Mi":"8Mi"}}}],)"
         R"("tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}])" +
         std::string(specExtra) + "}}";
}

std::string gpuDeployment(std::string_view metadataExtra = "", int replicas = 1) {
  return std::string(R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d")") +
         std::string(metadataExtra) + R"(},"spec":{"replicas":)" + std::to_string(replicas) +
         R"(,"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},)"
         R"("spec":{"containers":[{"name":"main","image":"vllm","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}}})";
}

constexpr const char* kReplicaSetOwner =
    R"(,"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"1","controller":true}])";
constexpr const char* kOperatorOwner =
    R"(,"ownerReferences":[{"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","name":"t","uid":"1","controller":true}])";

TEST(Manifests, MatchConditionsSkipWhatAiadmitHasNoReasonToSee) {
  const std::string aiPool = R"(,"nodeSelector":{"accelerator":"nvidia"})";
  const std::vector<Expectation> expectations = {
      {{"gpu pod", gpuPod()}, "CSCS"},
      {{"mirror pod",
        gpuPod(
            R"(,"annotations":{"kubernetes.io/config.mirror":"abc"},"ownerReferences":[{"apiVersion":"v1","kind":"Node","name":"n","uid":"1","controller":true}])")},
       "SSSS"},
      {{"mirror pod without owner",
        gpuPod(R"(,"annotations":{"kubernetes.io/config.mirror":"abc"})")},
       "SSSS"},
      {{"plain pod",
        plainPod(R"(,"labels":{"app":"web"})", R"(,"nodeSelector":{"kubernetes.io/os":"linux"})")},
       "SSSS"},
      {{"pod aimed at the GPU pool without a GPU", plainPod("", aiPool)}, "SSCS"},
      {{"pod with node affinity", plainPod("", R"(,"affinity":{"nodeAffinity":{}})")}, "SSCS"},
      {{"pod tolerating every taint", plainPod("", R"(,"tolerations":[{"operator":"Exists"}])")},
       "SSCS"},
      {{"pod tolerating the GPU taint",
        plainPod(
            "",
            R"(,"tolerations":[{"key":"accelerator","operator":"Equal","value":"gpu","effect":"NoSchedule"}])")},
       "SSCS"},
      {{"pod asking for a mistyped GPU",
        R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"m","resources":{"requests":{"gpu":"1"}}}]}})"},
       "CSCS"},
      {{"pod with a GPU init container",
        R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"initContainers":[{"name":"i","resources":{"limits":{"amd.com/gpu":"1"}}}],"containers":[{"name":"m"}]}})"},
       "CSCS"},
      {{"pod annotated as a workload",
        plainPod(R"(,"annotations":{"aiadmit.dev/workload":"training"})")},
       "CSCS"},
      {{"pod with a non-controlling owner",
        gpuPod(
            R"(,"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"c","uid":"1"}])")},
       "CSCS"},
      {{"pod of a ReplicaSet", gpuPod(kReplicaSetOwner)}, "SCSS"},
      {{"pod of an operator", gpuPod(kOperatorOwner)}, "SCSC"},
      {{"plain pod of an operator", plainPod(kOperatorOwner)}, "SSSS"},
      {{"pod of a DaemonSet aimed at GPU nodes",
        plainPod(
            R"(,"ownerReferences":[{"apiVersion":"apps/v1","kind":"DaemonSet","name":"ds","uid":"1","controller":true}])",
            aiPool)},
       "SSSS"},
      {{"pod of a ReplicaSet, updated", gpuPod(kReplicaSetOwner, R"(,"activeDeadlineSeconds":5)"),
        gpuPod(kReplicaSetOwner), "UPDATE"},
       "SSSS"},
      {{"pod spec updated", gpuPod("", R"(,"activeDeadlineSeconds":5)"), gpuPod(), "UPDATE"},
       "SSCS"},
      {{"pod status written", gpuPod(), gpuPod(), "UPDATE", namespaceNamed("team-a", "true"),
        "status"},
       "SSSS"},
      {{"gpu deployment", gpuDeployment()}, "CSCS"},
      {{"replicaset of a deployment",
        R"({"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"rs","ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"d","uid":"1","controller":true}]},)"
        R"("spec":{"template":{"spec":{"containers":[{"name":"m","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}}})"},
       "SSSS"},
      {{"job of a cronjob",
        R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j","ownerReferences":[{"apiVersion":"batch/v1","kind":"CronJob","name":"c","uid":"1","controller":true}]},)"
        R"("spec":{"template":{"spec":{"containers":[{"name":"m","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}}})"},
       "SSSS"},
      {{"deployment of an operator",
        R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","ownerReferences":[{"apiVersion":"serving.kserve.io/v1beta1","kind":"InferenceService","name":"i","uid":"1","controller":true}]},)"
        R"("spec":{"template":{"spec":{"containers":[{"name":"m","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}}})"},
       "SSSC"},
      {{"deployment applied again unchanged", gpuDeployment(), gpuDeployment(), "UPDATE"}, "SSSS"},
      {{"deployment revision written by its controller",
        gpuDeployment(R"(,"annotations":{"deployment.kubernetes.io/revision":"2"})"),
        gpuDeployment(R"(,"annotations":{"deployment.kubernetes.io/revision":"1"})"), "UPDATE"},
       "SSSS"},
      {{"deployment scaled in its manifest", gpuDeployment("", 3), gpuDeployment("", 1), "UPDATE"},
       "CSCS"},
      {{"deployment relabelled", gpuDeployment(R"(,"labels":{"team":"b"})"),
        gpuDeployment(R"(,"labels":{"team":"a"})"), "UPDATE"},
       "CSCS"},
      {{"deployment given a profile",
        gpuDeployment(R"(,"annotations":{"aiadmit.dev/profile":"x"})"), gpuDeployment(), "UPDATE"},
       "CSCS"},
      {{"deployment losing its profile", gpuDeployment(),
        gpuDeployment(R"(,"annotations":{"aiadmit.dev/profile":"x"})"), "UPDATE"},
       "CSCS"},
      {{"deployment being deleted",
        gpuDeployment(R"(,"deletionTimestamp":"2026-01-01T00:00:00Z","finalizers":[])"),
        gpuDeployment(R"(,"deletionTimestamp":"2026-01-01T00:00:00Z","finalizers":["x"])"),
        "UPDATE"},
       "SSSS"},
      {{"deployment asking for GPUs by template annotation",
        R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"template":{"metadata":{"annotations":{"aiadmit.dev/gpus":"2"}},"spec":{"containers":[{"name":"m"}]}}}})"},
       "CSCS"},
      {{"deployment without a template",
        R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{}})"},
       "CSCS"},
      {{"plain statefulset",
        R"({"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"s"},"spec":{"template":{"metadata":{},"spec":{"containers":[{"name":"db"}]}}}})"},
       "SSSS"},
      {{"gpu cronjob",
        R"({"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"c"},"spec":{"schedule":"@daily","jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"m","resources":{"limits":{"nvidia.com/gpu":"8"}}}]}}}}}})"},
       "CSCS"},
      {{"cronjob aimed at the GPU pool",
        R"({"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"c"},"spec":{"schedule":"@daily","jobTemplate":{"spec":{"template":{"spec":{"nodeSelector":{"accelerator":"nvidia"},"containers":[{"name":"m"}]}}}}}})"},
       "SSCS"},
      {{"cronjob without a job template",
        R"({"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"c"},"spec":{"schedule":"@daily"}})"},
       "CSCS"},
      {{"gpu pod in kube-system", gpuPod(), "", "CREATE", namespaceNamed("kube-system", "true")},
       "SSSS"},
      {{"gpu pod in aiadmit-system", gpuPod(), "", "CREATE",
        namespaceNamed(std::string(kNamespace), "true")},
       "SSSS"},
      {{"gpu pod in a namespace not opted in", gpuPod(), "", "CREATE",
        namespaceNamed("team-b", std::nullopt)},
       "SSSS"},
      {{"gpu pod in a namespace opted out", gpuPod(), "", "CREATE",
        namespaceNamed("team-c", "false")},
       "SSSS"},
  };
  std::vector<AdmissionCase> cases;
  for (const Expectation& e : expectations) cases.push_back(e.admission);
  const auto outcomes = evaluateMatching(render(manifestsDir() + "/base"), cases);
  const char* order[] = {kAppliedMutate, kControlledMutate, kAppliedValidate, kControlledValidate};
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

// --- the image ---------------------------------------------------------------

struct Dockerfile {
  std::vector<std::string> stages;  // the lines of each stage, FROM first
};

Dockerfile readDockerfile() {
  Dockerfile dockerfile;
  std::istringstream in(readFile(sourceDir() + "/Dockerfile"));
  std::string line, logical;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\\') {
      logical += line.substr(0, line.size() - 1) + " ";
      continue;
    }
    logical += line;
    if (logical.rfind("FROM ", 0) == 0) dockerfile.stages.emplace_back();
    if (!dockerfile.stages.empty() && !logical.empty() && logical[0] != '#') {
      dockerfile.stages.back() += logical + "\n";
    }
    logical.clear();
  }
  return dockerfile;
}

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

std::string trimmed(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t\n");
  const size_t end = text.find_last_not_of(" \t\n");
  return begin == std::string::npos ? "" : text.substr(begin, end - begin + 1);
}

// The Debian package that owns a file, through the /usr merge either way.
std::string owningPackage(const std::string& path) {
  std::vector<std::string> candidates = {path, fs::canonical(path).string()};
  for (const std::string& p : std::vector<std::string>(candidates)) {
    if (p.rfind("/usr/", 0) == 0)
      candidates.push_back(p.substr(4));
    else
      candidates.push_back("/usr" + p);
  }
  for (const std::string& candidate : candidates) {
    const CommandResult owner = runCommand({"dpkg", "-S", candidate});
    if (owner.exitCode == 0) {
      std::string package = owner.out.substr(0, owner.out.find(':'));
      return package;
    }
  }
  return "";
}

std::set<std::string> dependencyClosure(std::set<std::string> packages) {
  std::vector<std::string> pending(packages.begin(), packages.end());
  while (!pending.empty()) {
    const std::string package = pending.back();
    pending.pop_back();
    const CommandResult depends =
        runCommand({"dpkg-query", "-W", "-f=${Depends},${Pre-Depends}", package});
    static const std::regex name(R"((?:^|[,|]\s*)([a-z0-9][a-z0-9+.-]+))");
    for (auto it = std::sregex_iterator(depends.out.begin(), depends.out.end(), name);
         it != std::sregex_iterator(); ++it) {
      const std::string dependency = (*it)[1];
      if (packages.insert(dependency).second) pending.push_back(dependency);
    }
  }
  return packages;
}

TEST(Image, RuntimeStageIsDebianSlimWithEveryLibraryTheBinaryNeeds) {
  const Dockerfile dockerfile = readDockerfile();
  ASSERT_EQ(dockerfile.stages.size(), 2u) << "a build stage and a runtime stage";
  const std::string& runtime = dockerfile.stages.back();
  EXPECT_EQ(runtime.rfind("FROM debian:12-slim\n", 0), 0u) << runtime;

  std::set<std::string> installed;
  std::smatch match;
  const std::regex aptInstall(R"(apt-get install -y --no-install-recommends ([^&]+))");
  ASSERT_TRUE(std::regex_search(runtime, match, aptInstall)) << runtime;
  for (const std::string& package : words(match[1])) installed.insert(package);
  const std::set<std::string> available = dependencyClosure(installed);
  // A Debian image, slim too, holds the essential and required packages and
  // what they depend on.
  std::set<std::string> base;
  const CommandResult all =
      runCommand({"dpkg-query", "-W", "-f=${Package} ${Essential}:${Priority}\n"});
  std::istringstream rows(all.out);
  for (std::string row; std::getline(rows, row);) {
    const size_t space = row.find(' ');
    const std::string how = row.substr(space + 1);
    if (how.starts_with("yes:") || how.ends_with(":required")) {
      base.insert(row.substr(0, space));
    }
  }
  ASSERT_TRUE(base.count("libc-bin")) << all.out.substr(0, 300);
  base = dependencyClosure(base);

  const CommandResult ldd = runCommand({"ldd", binaryPath()});
  ASSERT_EQ(ldd.exitCode, 0) << ldd.err;
  const std::regex library(R"(=> (/\S+))");
  int libraries = 0;
  for (auto it = std::sregex_iterator(ldd.out.begin(), ldd.out.end(), library);
       it != std::sregex_iterator(); ++it) {
    const std::string path = (*it)[1];
    // Sanitizer runtimes come with instrumented test builds, never the image.
    const std::string file = fs::path(path).filename().string();
    if (std::regex_search(file, std::regex("^lib[altu]san"))) continue;
    ++libraries;
    const std::string package = owningPackage(path);
    ASSERT_FALSE(package.empty()) << path;
    EXPECT_TRUE(base.count(package) || available.count(package))
        << path << " comes from " << package << ", which the runtime stage does not install";
  }
  EXPECT_GE(libraries, 5);
}

TEST(Image, RunsAsTheDeploymentsUserAndFindsItsProfiles) {
  const Dockerfile dockerfile = readDockerfile();
  ASSERT_FALSE(dockerfile.stages.empty());
  const std::string& runtime = dockerfile.stages.back();
  std::smatch match;
  ASSERT_TRUE(std::regex_search(runtime, match, std::regex(R"re(\nUSER (\d+):(\d+)\n)re")))
      << runtime;
  const int user = std::stoi(match[1]);
  const int group = std::stoi(match[2]);
  EXPECT_NE(user, 0);

  const Rendered base = render(manifestsDir() + "/base");
  const JsonValue* podSecurity =
      member(podTemplateSpec(base.find("Deployment", "aiadmit")), "securityContext");
  EXPECT_EQ(intMember(podSecurity, "runAsUser"), user);
  EXPECT_EQ(intMember(podSecurity, "runAsGroup"), group);

  ASSERT_TRUE(std::regex_search(runtime, match, std::regex(R"re(\nENTRYPOINT \["([^"]+)"\])re")));
  const std::string entrypoint = match[1];
  ASSERT_TRUE(
      std::regex_search(runtime, match, std::regex(R"(\nCOPY --from=build \S+/aiadmit (\S+)\n)")));
  EXPECT_EQ(match[1], entrypoint);
  ASSERT_TRUE(std::regex_search(runtime, match,
                                std::regex(R"(\nCOPY --from=build \S+/profiles/ (\S+)\n)")));
  std::string profilesDir = match[1];
  if (profilesDir.back() == '/') profilesDir.pop_back();

  // The image's layout, rebuilt in a directory: the binary finds the
  // profiles beside it without being told.
  TempDir root;
  fs::create_directories(root.path() + fs::path(entrypoint).parent_path().string());
  fs::copy_file(binaryPath(), root.path() + entrypoint);
  fs::create_directories(root.path() + profilesDir);
  for (const auto& entry : fs::directory_iterator(sourceDir() + "/profiles")) {
    fs::copy_file(entry.path(), root.path() + profilesDir + "/" + entry.path().filename().string());
  }
  unsetenv("AIADMIT_PROFILES");
  const CommandResult lint = runCommand({root.path() + entrypoint, "profiles", "lint"});
  EXPECT_EQ(lint.exitCode, 0) << lint.out << lint.err;
  EXPECT_NE(lint.out.find(root.path() + profilesDir), std::string::npos) << lint.out;
}

TEST(Image, BuildContextHoldsWhatTheDockerfileCopiesAndNothingElse) {
  std::vector<std::string> patterns;
  std::istringstream in(readFile(sourceDir() + "/.dockerignore"));
  for (std::string line; std::getline(in, line);) {
    line = trimmed(line);
    if (!line.empty() && line[0] != '#') patterns.push_back(line);
  }
  ASSERT_FALSE(patterns.empty());
  EXPECT_EQ(patterns.front(), "*") << "everything is left out unless listed";
  std::set<std::string> included;
  for (const std::string& pattern : patterns) {
    if (pattern[0] == '!') included.insert(pattern.substr(1));
  }
  const Dockerfile dockerfile = readDockerfile();
  int copies = 0;
  for (const std::string& stage : dockerfile.stages) {
    std::istringstream lines(stage);
    for (std::string line; std::getline(lines, line);) {
      const std::vector<std::string> parts = words(line);
      if (parts.size() < 3 || parts[0] != "COPY" || parts[1].rfind("--from=", 0) == 0) continue;
      for (size_t i = 1; i + 1 < parts.size(); ++i) {
        ++copies;
        EXPECT_TRUE(included.count(parts[i]))
            << parts[i] << " is copied but left out of the context";
      }
    }
  }
  EXPECT_GE(copies, 4);
  for (const char* never : {"build", "tests", "certs", "node_modules"}) {
    EXPECT_FALSE(included.count(never) || included.count(std::string(never) + "/")) << never;
  }
}

}  // namespace
}  // namespace aiadmit
