// The install as a cluster admin gets it: the kustomize base and overlays
// rendered by `kubectl kustomize`, every object checked against the
// Kubernetes schema, the Deployment, the certificates of each overlay, and
// the container image definition checked against the binary. The webhook
// configurations are held to their properties in webhooks_test.cpp and
// match_conditions_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "tests/install/rendered_manifests.h"
#include "webhook/codec/base64.h"
#include "webhook/engine/admission.h"

namespace aiadmit {
namespace {

using namespace install;
namespace fs = std::filesystem;

const JsonValue* podTemplateSpec(const JsonValue* deployment) {
  return member(member(member(deployment, "spec"), "template"), "spec");
}

const JsonValue* containerNamed(const JsonValue* podSpec, std::string_view name) {
  return elementWith(member(podSpec, "containers"), "name", name);
}

// "--flag=value" from a container's args.
std::string argValue(const JsonValue* container, std::string_view flag) {
  const std::string prefix = std::string(flag) + "=";
  for (const std::string& arg : stringSet(member(container, "args"))) {
    if (arg.rfind(prefix, 0) == 0) return arg.substr(prefix.size());
  }
  return "";
}

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
  // It names the release its profiles are for: this build's, so that the
  // previous release's replicas admit it during an upgrade instead of
  // refusing fields they do not know.
  EXPECT_EQ(
      stringMember(member(member(configMaps[0], "metadata"), "annotations"), "aiadmit.dev/release"),
      AIADMIT_VERSION);

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

  // Probes over HTTPS on the serving port; /metrics over plain HTTP on a
  // port of its own as well.
  const JsonValue* port = member(container, "ports");
  ASSERT_TRUE(isArray(port) && port->Size() == 2);
  const std::string portName((stringMember(&(*port)[0], "name")));
  EXPECT_EQ(intMember(&(*port)[0], "containerPort"), 8443);
  EXPECT_EQ(stringMember(&(*port)[1], "name"), "metrics");
  EXPECT_EQ(intMember(&(*port)[1], "containerPort"), 8080);
  EXPECT_EQ(argValue(container, "--metrics-listen"), "[::]:8080");
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
  // Dual-stack: an IPv6-only cluster reaches it, and so does IPv4.
  EXPECT_EQ(argValue(container, "--listen"), "[::]:8443");
  EXPECT_EQ(stringMember(pod, "priorityClassName"), "system-cluster-critical");
  EXPECT_EQ(stringMember(member(pod, "nodeSelector"), "kubernetes.io/arch"), "amd64");
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
      // The three tiers, and the profiles ConfigMap's own among the validating.
      const size_t expected = kWebhookCount / 2 + (kind[0] == 'V' ? 1 : 0);
      EXPECT_EQ(member(configuration, "webhooks")->Size(), expected)
          << "the patch keeps the webhooks";
    }
  }
}

TEST(Manifests, ScriptCertsOverlayPutsTheCaBundleIntoEveryWebhook) {
  ScriptCertsCheckout checkout;
  const Rendered overlay = render(checkout.overlay);
  const std::string bundle = readFile(checkout.pki + "/ca-bundle.crt");
  ASSERT_NE(bundle.find("BEGIN CERTIFICATE"), std::string::npos);
  const std::vector<Webhook> webhooks = allWebhooksOf(overlay);
  ASSERT_EQ(webhooks.size(), kWebhookCount + 1) << "the tiers' and the profiles ConfigMap's";
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

// Mutual TLS as docs/install.md writes the overlay: serve trusts callers by
// the ca.crt of the mounted Secret aiadmit-tls, which both ways of issuing
// certificates fill with aiadmit's own CA, and cert-manager issues the API
// server's client certificate from that CA.
TEST(Manifests, DocumentedClientCaOverlayTrustsTheCaOfTheServingSecret) {
  std::string overlay = documentedYaml("the component `manifests/components/client-ca` passes it");
  TempDir dir;
  for (const std::string& part :
       {std::string("overlays/cert-manager"), std::string("components/client-ca")}) {
    const std::string relative = "../aiadmit/manifests/" + part;
    const size_t at = overlay.find(relative);
    ASSERT_NE(at, std::string::npos) << overlay;
    overlay.replace(at, relative.size(),
                    fs::relative(manifestsDir() + "/" + part, dir.path()).string());
  }
  writeFile(dir.file("kustomization.yaml"), overlay);
  const Rendered rendered = render(dir.path());
  const JsonValue* pod = podTemplateSpec(rendered.find("Deployment", "aiadmit"));
  const JsonValue* container = containerNamed(pod, "aiadmit");
  ASSERT_NE(container, nullptr);
  std::string tlsMount;
  for (const JsonValue& mount : member(container, "volumeMounts")->GetArray()) {
    if (stringMember(&mount, "name") == "tls") tlsMount = stringMember(&mount, "mountPath");
  }
  ASSERT_FALSE(tlsMount.empty());
  EXPECT_EQ(argValue(container, "--client-ca"), tlsMount + "/ca.crt");
  EXPECT_EQ(argValue(container, "--tls-cert"), tlsMount + "/tls.crt") << "the same Secret";
  // The probes stay on the serving port, which answers them without a certificate.
  EXPECT_EQ(stringMember(member(member(container, "readinessProbe"), "httpGet"), "path"),
            "/readyz");

  const JsonValue* client = rendered.find("Certificate", "aiadmit-apiserver-client");
  ASSERT_NE(client, nullptr);
  const JsonValue* spec = member(client, "spec");
  EXPECT_TRUE(stringSet(member(spec, "usages")).count("client auth"));
  EXPECT_FALSE(stringSet(member(spec, "usages")).count("server auth"));
  const JsonValue* serving = rendered.find("Certificate", "aiadmit-serving-cert");
  ASSERT_NE(serving, nullptr);
  EXPECT_EQ(stringMember(member(spec, "issuerRef"), "name"),
            stringMember(member(member(serving, "spec"), "issuerRef"), "name"))
      << "the CA in aiadmit-tls's ca.crt";

  // Without the component, no client certificate is asked for.
  const Rendered plain = render(manifestsDir() + "/overlays/cert-manager");
  EXPECT_EQ(
      argValue(containerNamed(podTemplateSpec(plain.find("Deployment", "aiadmit")), "aiadmit"),
               "--client-ca"),
      "");
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
  ASSERT_EQ(webhooks.size(), kWebhookCount);
  for (const Webhook& webhook : webhooks) {
    EXPECT_EQ(stringMember(webhook.value, "failurePolicy"), "Ignore") << webhook.name();
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

// The stage that gathers the runtime's files: Debian 12 slim with the
// packages of every library the binary loads.
std::string filesStage(const Dockerfile& dockerfile) {
  for (const std::string& stage : dockerfile.stages) {
    const std::string from = stage.substr(0, stage.find('\n'));
    const std::string_view name = " AS files";
    if (from.rfind("FROM debian:12-slim@", 0) == 0 && from.size() > name.size() &&
        from.compare(from.size() - name.size(), name.size(), name) == 0) {
      return stage;
    }
  }
  return "";
}

TEST(Image, RuntimeStageIsTheBinaryItsLibrariesAndProfilesWithoutAShell) {
  const Dockerfile dockerfile = readDockerfile();
  ASSERT_EQ(dockerfile.stages.size(), 3u) << "build, gather the runtime's files, run";
  const std::string& runtime = dockerfile.stages.back();
  EXPECT_EQ(runtime.rfind("FROM scratch\n", 0), 0u) << runtime;
  std::istringstream lines(runtime);
  int copies = 0;
  for (std::string line; std::getline(lines, line);) {
    EXPECT_NE(line.rfind("RUN ", 0), 0u) << "nothing runs in the runtime stage: " << line;
    if (line.rfind("COPY ", 0) != 0) continue;
    ++copies;
    EXPECT_EQ(line, "COPY --from=files /rootfs/ /") << "only the gathered files";
  }
  EXPECT_EQ(copies, 1);
  // What the gathering copies: ldd's resolution of the binary, the loader
  // included, and nothing that would be a shell.
  const std::string files = filesStage(dockerfile);
  ASSERT_FALSE(files.empty());
  EXPECT_NE(files.find("ldd /rootfs/usr/local/bin/aiadmit"), std::string::npos) << files;
  for (const char* shell : {"/bin/sh", "/bin/bash", "/bin/dash", "busybox"}) {
    EXPECT_EQ(files.find(std::string("cp --parents --dereference ") + shell), std::string::npos);
  }
}

// Every base image is pinned by digest: a rebuild uses the base that was
// tested until the Dockerfile says otherwise. scratch is no image.
TEST(Image, EveryBaseImageIsPinnedByDigest) {
  const Dockerfile dockerfile = readDockerfile();
  ASSERT_FALSE(dockerfile.stages.empty());
  const std::regex pinned(R"(^FROM [a-z0-9./-]+:[A-Za-z0-9._-]+@sha256:[0-9a-f]{64}( AS \w+)?$)");
  for (const std::string& stage : dockerfile.stages) {
    const std::string from = stage.substr(0, stage.find('\n'));
    if (from == "FROM scratch") continue;
    EXPECT_TRUE(std::regex_match(from, pinned)) << from;
  }
}

TEST(Image, FilesStageInstallsEveryLibraryTheBinaryNeeds) {
  const Dockerfile dockerfile = readDockerfile();
  const std::string runtime = filesStage(dockerfile);
  ASSERT_FALSE(runtime.empty()) << "a stage FROM debian:12-slim AS files";

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

// The files stage's gathering, run on the built binary into a directory:
// the binary then runs with no library but those gathered (the loader told
// to search only there, as it searches the image's /lib in the runtime),
// and the gathered tree holds no shell.
TEST(Image, GatheredFilesAloneRunTheBinary) {
  const std::string files = filesStage(readDockerfile());
  std::string gather;
  std::istringstream lines(files);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("RUN ldd ", 0) == 0) gather = line.substr(4);
  }
  ASSERT_FALSE(gather.empty()) << files;
  TempDir dir;
  const std::string root = dir.file("rootfs");
  for (size_t at = gather.find("/rootfs"); at != std::string::npos;
       at = gather.find("/rootfs", at + root.size())) {
    gather.replace(at, 7, root);
  }
  fs::create_directories(root + "/usr/local/bin");
  fs::copy_file(binaryPath(), root + "/usr/local/bin/aiadmit");
  fs::create_directories(root + "/usr/local/share/aiadmit");
  fs::copy(sourceDir() + "/profiles", root + "/usr/local/share/aiadmit/profiles");
  const CommandResult gathered = runCommand({"bash", "-c", gather});
  ASSERT_EQ(gathered.exitCode, 0) << gather << "\n" << gathered.err;

  std::string loader, libraryPath;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    const std::string name = entry.path().filename().string();
    EXPECT_TRUE(name != "sh" && name != "bash" && name != "dash" && name != "busybox")
        << entry.path();
    if (name.rfind("ld-linux", 0) == 0) loader = entry.path().string();
    if (entry.is_directory() && name.find("-linux-gnu") != std::string::npos) {
      libraryPath += (libraryPath.empty() ? "" : ":") + entry.path().string();
    }
  }
  ASSERT_FALSE(loader.empty()) << "the dynamic loader is gathered";
  const CommandResult run =
      runCommand({"env", "LD_DEBUG=libs", loader, "--inhibit-cache", "--library-path", libraryPath,
                  root + "/usr/local/bin/aiadmit", "profiles", "lint",
                  root + "/usr/local/share/aiadmit/profiles"});
  EXPECT_EQ(run.exitCode, 0) << run.out << run.err.substr(0, 4000);
  const std::regex initialised(R"(calling init: (\S+))");
  int libraries = 0;
  for (auto it = std::sregex_iterator(run.err.begin(), run.err.end(), initialised);
       it != std::sregex_iterator(); ++it) {
    ++libraries;
    EXPECT_EQ((*it)[1].str().rfind(root, 0), 0u) << (*it)[1] << " is not among the gathered files";
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
  // Gathered under /rootfs, which the runtime stage copies to /.
  const std::string files = filesStage(dockerfile);
  ASSERT_TRUE(std::regex_search(files, match,
                                std::regex(R"(\nCOPY --from=build \S+/aiadmit /rootfs(\S+)\n)")));
  EXPECT_EQ(match[1], entrypoint);
  ASSERT_TRUE(std::regex_search(files, match,
                                std::regex(R"(\nCOPY --from=build \S+/profiles/ /rootfs(\S+)\n)")));
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
