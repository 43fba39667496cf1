// The Helm chart, charts/aiadmit, held to the kustomize install: with its
// default values `helm template` renders the objects of manifests/base, and
// with the values that select an overlay or a component, what that overlay
// renders, object for object. The chart carries copies of the shipped files
// it renders (a packaged chart holds no file outside itself); each copy is
// held equal to its original. Beside them: `helm lint --strict`, values of the
// wrong shape refused by values.schema.json, and each value changing what it
// says. Helm is the one scripts/build-helm builds from its Go module.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/install/rendered_manifests.h"
#include "webhook/codec/base64.h"

namespace aiadmit {
namespace {

using namespace install;
namespace fs = std::filesystem;

std::string chartDir() {
  return sourceDir() + "/charts/aiadmit";
}

// build/helm/helm (scripts/build-helm, once per pin).
const std::string& helmBinary() {
  static const std::string binary = [] {
    const std::string out = fs::path(binaryPath()).parent_path().string() + "/helm";
    const CommandResult built = runCommand({sourceDir() + "/scripts/build-helm", out});
    EXPECT_EQ(built.exitCode, 0) << built.out << built.err;
    return out + "/helm";
  }();
  return binary;
}

// `helm template` of the chart with `args` (values), as an admin runs it.
CommandResult helmTemplate(const std::vector<std::string>& args) {
  std::vector<std::string> command = {helmBinary(), "template", "aiadmit", chartDir()};
  command.insert(command.end(), args.begin(), args.end());
  return runCommand(command);
}

Rendered rendered(const std::vector<std::string>& args) {
  Rendered out;
  const CommandResult result = helmTemplate(args);
  if (result.exitCode != 0) {
    ADD_FAILURE() << "helm template failed: " << result.err;
    return out;
  }
  std::vector<ManifestDocument> documents;
  std::string error;
  if (!parseManifests(result.out, documents, &error)) {
    ADD_FAILURE() << "helm template printed invalid YAML: " << error;
    return out;
  }
  for (ManifestDocument& document : documents) {
    if (document.json->IsObject()) out.objects.push_back(document.json);
  }
  return out;
}

std::string objectKey(const JsonValue* object) {
  const JsonValue* metadata = member(object, "metadata");
  return std::string(stringMember(object, "kind")) + " " +
         std::string(stringMember(metadata, "namespace")) + "/" +
         std::string(stringMember(metadata, "name"));
}

std::map<std::string, const JsonValue*> byKey(const Rendered& rendered) {
  std::map<std::string, const JsonValue*> out;
  for (const auto& object : rendered.objects) {
    EXPECT_TRUE(out.emplace(objectKey(object.get()), object.get()).second)
        << "twice: " << objectKey(object.get());
  }
  return out;
}

std::vector<std::string> keysOf(const std::map<std::string, const JsonValue*>& objects) {
  std::vector<std::string> out;
  for (const auto& entry : objects) out.push_back(entry.first);
  return out;
}

// The same objects, each with the same fields and values (in any key order):
// to the letter, so that `helm install --take-ownership` finds nothing to
// change in what `kubectl apply -k` installed. (kubectl kustomize reads the
// line break before a more-indented line of a folded scalar as two, Helm as
// one, as YAML says: multi-line expressions are literal scalars.)
void expectSameObjects(const Rendered& chart, const Rendered& kustomize) {
  ASSERT_FALSE(kustomize.objects.empty());
  const auto fromChart = byKey(chart);
  const auto fromKustomize = byKey(kustomize);
  ASSERT_EQ(keysOf(fromChart), keysOf(fromKustomize));
  for (const auto& [key, object] : fromKustomize) {
    EXPECT_TRUE(*fromChart.at(key) == *object)
        << key << "\nchart:     " << toJson(*fromChart.at(key))
        << "\nkustomize: " << toJson(*object);
  }
}

// A checkout with an overlay of its own, manifests/overlays/test: `resources`
// and `components` as its kustomization lists them.
Rendered renderOverlay(const TempDir& dir, const std::string& kustomization) {
  copyCheckout(dir);
  fs::create_directories(dir.file("manifests/overlays/test"));
  writeFile(dir.file("manifests/overlays/test/kustomization.yaml"),
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n" + kustomization);
  return render(dir.file("manifests/overlays/test"));
}

const JsonValue* deploymentOf(const Rendered& rendered) {
  return rendered.find("Deployment", "aiadmit");
}

const JsonValue* aiadmitContainer(const Rendered& rendered) {
  const JsonValue* spec =
      member(member(member(deploymentOf(rendered), "spec"), "template"), "spec");
  return elementWith(member(spec, "containers"), "name", "aiadmit");
}

std::vector<std::string> argsOf(const Rendered& rendered) {
  std::vector<std::string> out;
  const JsonValue* args = member(aiadmitContainer(rendered), "args");
  if (!isArray(args)) return out;
  for (const JsonValue& arg : args->GetArray()) out.emplace_back(stringOf(&arg));
  return out;
}

bool hasArg(const Rendered& rendered, std::string_view arg) {
  const std::vector<std::string> args = argsOf(rendered);
  return std::find(args.begin(), args.end(), arg) != args.end();
}

const JsonValue* profilesConfigMap(const Rendered& rendered) {
  const std::vector<const JsonValue*> configMaps = rendered.ofKind("ConfigMap");
  for (const JsonValue* configMap : configMaps) {
    if (stringMember(member(configMap, "metadata"), "name").rfind("aiadmit-profiles-", 0) == 0) {
      return configMap;
    }
  }
  return nullptr;
}

std::map<std::string, std::string> profileFiles(const Rendered& rendered) {
  std::map<std::string, std::string> out;
  const JsonValue* data = member(profilesConfigMap(rendered), "data");
  if (!isObject(data)) return out;
  for (auto it = data->MemberBegin(); it != data->MemberEnd(); ++it) {
    out[it->name.GetString()] = std::string(stringOf(&it->value));
  }
  return out;
}

// `aiadmit profiles lint` of the files, as the Pods would mount them.
CommandResult lintProfiles(const std::map<std::string, std::string>& files) {
  TempDir dir;
  for (const auto& [name, text] : files) writeFile(dir.file(name), text);
  return runCommand({binaryPath(), "profiles", "lint", dir.path()});
}

// `aiadmit check` of a batch GPU Job that names the training class (AIA011
// denies it by default) under the files: its exit status.
int checkUrgentBatchJob(const std::map<std::string, std::string>& files) {
  TempDir dir;
  fs::create_directories(dir.file("profiles"));
  for (const auto& [name, text] : files) writeFile(dir.file("profiles/" + name), text);
  writeFile(dir.file("job.yaml"), R"(apiVersion: batch/v1
kind: Job
metadata:
  name: embed-urgent
  annotations:
    aiadmit.dev/workload: batch
spec:
  template:
    spec:
      priorityClassName: ai-training
      restartPolicy: Never
      containers:
        - name: embed
          image: registry.example/embed:1
          resources:
            limits:
              nvidia.com/gpu: 1
)");
  return runCommand(
             {binaryPath(), "check", "--profiles", dir.file("profiles"), dir.file("job.yaml")})
      .exitCode;
}

// The files under charts/aiadmit/files, relative to it.
std::vector<std::string> carriedFiles() {
  std::vector<std::string> out;
  const fs::path root = chartDir() + "/files";
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_regular_file()) out.push_back(fs::relative(entry.path(), root).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The names in the first column of docs/install.md's table of values.
std::vector<std::string> documentedValues() {
  const std::string doc = readFile(sourceDir() + "/docs/install.md");
  const size_t section = doc.find("### With Helm");
  const size_t header = doc.find("| value | default | what it sets |", section);
  std::vector<std::string> out;
  if (section == std::string::npos || header == std::string::npos) return out;
  std::istringstream lines(doc.substr(header));
  std::string line;
  std::getline(lines, line);
  std::getline(lines, line);
  while (std::getline(lines, line) && line.rfind("| ", 0) == 0) {
    const std::string cell = line.substr(2, line.find(" | ", 2) - 2);
    for (size_t at = cell.find('`'); at != std::string::npos; at = cell.find('`', at)) {
      const size_t end = cell.find('`', at + 1);
      out.push_back(cell.substr(at + 1, end - at - 1));
      at = end + 1;
    }
  }
  return out;
}

// Each value's dotted path: a leaf, an empty map or list, or a map that the
// table names whole (resources).
void valuePaths(const JsonValue* value, const std::string& path, std::set<std::string>& out) {
  if (!isObject(value) || value->MemberCount() == 0 || path == "resources") {
    out.insert(path);
    return;
  }
  for (auto it = value->MemberBegin(); it != value->MemberEnd(); ++it) {
    valuePaths(&it->value, path.empty() ? it->name.GetString() : path + "." + it->name.GetString(),
               out);
  }
}

TEST(HelmChart, CarriesTheShippedFilesVerbatim) {
  const std::vector<std::string> files = carriedFiles();
  ASSERT_FALSE(files.empty());
  for (const std::string& file : files) {
    EXPECT_EQ(readFile(chartDir() + "/files/" + file), readFile(sourceDir() + "/" + file))
        << "charts/aiadmit/files/" << file << " differs from " << file << ": cp " << file
        << " charts/aiadmit/files/" << file;
  }
}

TEST(HelmChart, CarriesEveryShippedProfile) {
  for (const auto& entry : fs::directory_iterator(sourceDir() + "/profiles")) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".yaml" && entry.path().extension() != ".yml") continue;
    EXPECT_TRUE(fs::exists(chartDir() + "/files/profiles/" + name))
        << "profiles/" << name << " is not in charts/aiadmit/files/profiles";
  }
}

TEST(HelmChart, VersionIsAiadmits) {
  const std::string chart = readFile(chartDir() + "/Chart.yaml");
  EXPECT_NE(chart.find(std::string("\nversion: ") + AIADMIT_VERSION + "\n"), std::string::npos);
  EXPECT_NE(chart.find(std::string("\nappVersion: \"") + AIADMIT_VERSION + "\"\n"),
            std::string::npos);
}

TEST(HelmChart, InstallDocNamesEveryValue) {
  std::set<std::string> values;
  valuePaths(yamlObject(readFile(chartDir() + "/values.yaml")).get(), "", values);
  ASSERT_GT(values.size(), 10u);
  const std::vector<std::string> documented = documentedValues();
  const std::set<std::string> named(documented.begin(), documented.end());
  for (const std::string& value : values) {
    EXPECT_TRUE(named.count(value)) << value << " is not in docs/install.md's table of values";
  }
  for (const std::string& name : named) {
    EXPECT_TRUE(values.count(name)) << name << " in docs/install.md is no value of the chart";
  }
}

TEST(HelmChart, LintsStrict) {
  for (const std::vector<std::string>& values :
       {std::vector<std::string>{}, {"--set", "tls.source=certManager,monitoring.enabled=true"}}) {
    std::vector<std::string> command = {helmBinary(), "lint", "--strict", chartDir()};
    command.insert(command.end(), values.begin(), values.end());
    const CommandResult result = runCommand(command);
    EXPECT_EQ(result.exitCode, 0) << result.out << result.err;
  }
}

// What `helm package` makes holds every file the chart reads: no link
// outside the chart, nothing left out.
TEST(HelmChart, PackagedChartRendersAsTheFolderDoes) {
  const TempDir dir;
  const CommandResult packaged =
      runCommand({helmBinary(), "package", chartDir(), "--destination", dir.path()});
  ASSERT_EQ(packaged.exitCode, 0) << packaged.out << packaged.err;
  const std::string archive = dir.file(std::string("aiadmit-") + AIADMIT_VERSION + ".tgz");
  const std::vector<std::string> values = {"--set",
                                           "tls.source=certManager,monitoring.enabled=true"};
  std::vector<std::string> command = {helmBinary(), "template", "aiadmit", archive};
  command.insert(command.end(), values.begin(), values.end());
  const CommandResult fromArchive = runCommand(command);
  ASSERT_EQ(fromArchive.exitCode, 0) << fromArchive.err;
  EXPECT_EQ(fromArchive.out, helmTemplate(values).out);
}

TEST(HelmChart, DefaultsRenderTheKustomizeBase) {
  expectSameObjects(rendered({}), render(manifestsDir() + "/base"));
}

TEST(HelmChart, CertManagerValuesRenderTheCertManagerOverlay) {
  expectSameObjects(rendered({"--set", "tls.source=certManager,priorityClasses.create=true"}),
                    render(manifestsDir() + "/overlays/cert-manager"));
}

TEST(HelmChart, SecretValuesRenderTheScriptCertsOverlay) {
  const ScriptCertsCheckout checkout;
  expectSameObjects(rendered({"--set", "tls.source=secret,priorityClasses.create=true",
                              "--set-file", "tls.cert=" + checkout.pki + "/tls.crt", "--set-file",
                              "tls.key=" + checkout.pki + "/tls.key", "--set-file",
                              "tls.ca=" + checkout.pki + "/ca-bundle.crt"}),
                    render(checkout.overlay));
}

TEST(HelmChart, LocalValuesRenderTheLocalOverlay) {
  const TempDir dir;
  copyCheckout(dir);
  const std::string caBundle = base64Encode(readFile(devCertificates().file("ca.crt")));
  writeFile(dir.file("manifests/overlays/local/endpoint.env"),
            "address=127.0.0.1:9443\ncaBundle=" + caBundle + "\n");
  expectSameObjects(rendered({"--set", "local.address=127.0.0.1:9443,priorityClasses.create=true",
                              "--set", "local.caBundle=" + caBundle}),
                    render(dir.file("manifests/overlays/local")));
}

TEST(HelmChart, MonitoringValuesRenderTheMonitoringComponent) {
  const TempDir dir;
  expectSameObjects(
      rendered(
          {"--set", "tls.source=certManager,priorityClasses.create=true,monitoring.enabled=true"}),
      renderOverlay(dir,
                    "resources: [../cert-manager]\ncomponents: [../../components/monitoring]\n"));
}

TEST(HelmChart, ComponentValuesRenderTheirComponents) {
  const TempDir dir;
  expectSameObjects(
      rendered({"--set", "tls.source=certManager,priorityClasses.create=true", "--set",
                "clientCA.enabled=true,waitingMetrics.enabled=true"}),
      renderOverlay(dir,
                    "resources: [../cert-manager]\ncomponents:\n"
                    "  - ../../components/client-ca\n  - ../../components/waiting-metrics\n"));
}

// Each refusal beside the nearest value that is accepted.
TEST(HelmChart, SchemaRefusesValuesOfTheWrongShape) {
  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> cases = {
      {{"--set", "replicas=two"}, {"--set", "replicas=3"}},
      {{"--set", "replicas=-1"}, {"--set", "replicas=0"}},
      {{"--set", "enforcement=block"}, {"--set", "enforcement=warn"}},
      {{"--set", "profiles.ruleActions.AIA010=maybe"},
       {"--set", "profiles.ruleActions.AIA010=warn"}},
      {{"--set", "profiles.ruleActions.AIA10=warn"}, {"--set", "profiles.ruleActions.AIA015=off"}},
      {{"--set", "resources.limits.cpu=lots"}, {"--set", "resources.limits.cpu=2"}},
      {{"--set", "replica=3"}, {"--set", "replicas=3"}},
      {{"--set", "tls.source=vault"}, {"--set", "tls.source=certManager"}},
      {{"--set", "tls.source=secret"}, {"--set", "tls.source="}},
      {{"--set", "local.address=127.0.0.1:8443"},
       {"--set", "local.address=127.0.0.1:8443,local.caBundle=Q0E="}},
      {{"--set", "imagePullSecrets[0]=Registry_Key"},
       {"--set", "imagePullSecrets[0]=registry-key"}},
      {{"--set", "monitoring.enabled=yes"}, {"--set", "monitoring.enabled=true"}},
      {{"--set",
        "webhooks.namespaceSelector.matchExpressions[0].key=team,"
        "webhooks.namespaceSelector.matchExpressions[0].operator=Has"},
       {"--set",
        "webhooks.namespaceSelector.matchExpressions[0].key=team,"
        "webhooks.namespaceSelector.matchExpressions[0].operator=Exists"}},
  };
  for (const auto& [refused, accepted] : cases) {
    const CommandResult no = helmTemplate(refused);
    EXPECT_NE(no.exitCode, 0) << refused.back() << " was accepted";
    EXPECT_NE(no.err.find("values don't meet the specifications of the schema"), std::string::npos)
        << refused.back() << ": " << no.err;
    const CommandResult yes = helmTemplate(accepted);
    EXPECT_EQ(yes.exitCode, 0) << accepted.back() << ": " << yes.err;
  }
}

// `helm install` checks the values before it renders or applies anything
// (a client-side dry run here: no cluster needed).
TEST(HelmChart, InstallRefusesValuesOfTheWrongShape) {
  const auto install = [](const std::string& value) {
    return runCommand(
        {helmBinary(), "install", "--dry-run=client", "aiadmit", chartDir(), "--set", value});
  };
  const CommandResult refused = install("replicas=two");
  EXPECT_NE(refused.exitCode, 0);
  EXPECT_NE(refused.err.find("at '/replicas': got string, want integer"), std::string::npos)
      << refused.err;
  const CommandResult accepted = install("replicas=3");
  EXPECT_EQ(accepted.exitCode, 0) << accepted.err;
}

TEST(HelmChart, ReplicasAndResourcesReachTheDeployment) {
  const Rendered chart = rendered({"--set", "replicas=3,resources.limits.memory=1Gi"});
  EXPECT_EQ(intMember(member(deploymentOf(chart), "spec"), "replicas"), 3);
  const JsonValue* limits = member(member(aiadmitContainer(chart), "resources"), "limits");
  EXPECT_EQ(stringMember(limits, "memory"), "1Gi");
  EXPECT_EQ(stringMember(limits, "cpu"), "1");
}

TEST(HelmChart, EnforcementCapIsServesFlag) {
  EXPECT_TRUE(hasArg(rendered({"--set", "enforcement=warn"}), "--enforcement=warn"));
  EXPECT_TRUE(hasArg(rendered({"--set", "enforcement=audit"}), "--enforcement=audit"));
  for (const std::string& arg : argsOf(rendered({}))) {
    EXPECT_EQ(arg.find("--enforcement"), std::string::npos) << arg;
  }
}

TEST(HelmChart, NamespaceSelectorReachesEveryTierButTheProfilesWebhook) {
  const Rendered chart = rendered({"--set", "webhooks.namespaceSelector.matchLabels.gpu-team=yes"});
  const std::vector<Webhook> tiers = webhooksOf(chart);
  ASSERT_EQ(tiers.size(), kWebhookCount);
  for (const Webhook& webhook : tiers) {
    EXPECT_TRUE(selects(member(webhook.value, "namespaceSelector"),
                        {{"gpu-team", "yes"}, {"kubernetes.io/metadata.name", "ml"}}))
        << webhook.name();
    EXPECT_FALSE(selects(member(webhook.value, "namespaceSelector"),
                         namespaceNamed("ml", std::string("true"))))
        << webhook.name();
  }
  EXPECT_TRUE(selects(member(profilesWebhookOf(chart), "namespaceSelector"),
                      namespaceNamed(std::string(kNamespace), std::nullopt)));
}

TEST(HelmChart, RuleActionsReachEveryProfile) {
  const Rendered chart = rendered({"--set", "profiles.ruleActions.AIA010=warn"});
  const std::map<std::string, std::string> files = profileFiles(chart);
  ASSERT_EQ(files.size(), 3u);
  for (const auto& [name, text] : files) {
    const auto profile = yamlObject(text);
    EXPECT_EQ(stringMember(member(member(profile.get(), "spec"), "rules"), "AIA010"), "warn")
        << name;
  }
  const CommandResult lint = lintProfiles(files);
  EXPECT_EQ(lint.exitCode, 0) << lint.out << lint.err;
  EXPECT_EQ(checkUrgentBatchJob(profileFiles(rendered({}))), 1) << "denied by default";
  EXPECT_EQ(
      checkUrgentBatchJob(profileFiles(rendered({"--set", "profiles.ruleActions.AIA011=warn"}))), 0)
      << "admitted with a warning";
  EXPECT_NE(stringMember(member(profilesConfigMap(chart), "metadata"), "name"),
            stringMember(member(profilesConfigMap(rendered({})), "metadata"), "name"));
}

TEST(HelmChart, ProfilesOfTheirOwnReplaceTheShippedOnes) {
  const TempDir dir;
  const std::string own = readFile(sourceDir() + "/profiles/training.yaml");
  writeFile(dir.file("gpu-training.yaml"), own);
  const Rendered chart = rendered(
      {"--set-file", "profiles.files.gpu-training\\.yaml=" + dir.file("gpu-training.yaml")});
  const std::map<std::string, std::string> files = profileFiles(chart);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files.begin()->first, "gpu-training.yaml");
  EXPECT_EQ(files.begin()->second, own);
  const std::string name(stringMember(member(profilesConfigMap(chart), "metadata"), "name"));
  const JsonValue* volumes =
      member(member(member(member(deploymentOf(chart), "spec"), "template"), "spec"), "volumes");
  EXPECT_EQ(stringMember(member(elementWith(volumes, "name", "profiles"), "configMap"), "name"),
            name);
}

TEST(HelmChart, ImageAndPullSecretsReachThePods) {
  const Rendered chart = rendered(
      {"--set",
       "image.repository=registry.example/aiadmit,image.tag=0.1.1,imagePullSecrets[0]=pull"});
  EXPECT_EQ(stringMember(aiadmitContainer(chart), "image"), "registry.example/aiadmit:0.1.1");
  const JsonValue* spec = member(member(member(deploymentOf(chart), "spec"), "template"), "spec");
  EXPECT_NE(elementWith(member(spec, "imagePullSecrets"), "name", "pull"), nullptr);
  EXPECT_EQ(stringMember(aiadmitContainer(rendered({})), "image"),
            std::string("aiadmit:") + AIADMIT_VERSION);
}

TEST(HelmChart, MonitoringTogglesLeaveOutTheirPart) {
  const Rendered all = rendered({"--set", "monitoring.enabled=true,monitoring.labels.release=kps"});
  EXPECT_EQ(
      stringMember(member(member(all.find("ServiceMonitor", "aiadmit"), "metadata"), "labels"),
                   "release"),
      "kps");
  EXPECT_NE(all.find("PrometheusRule", "aiadmit"), nullptr);
  EXPECT_NE(all.find("ConfigMap", "aiadmit-dashboard"), nullptr);
  const Rendered some = rendered(
      {"--set",
       "monitoring.enabled=true,monitoring.serviceMonitor=false,monitoring.dashboard=false"});
  EXPECT_EQ(some.find("ServiceMonitor", "aiadmit"), nullptr);
  EXPECT_EQ(some.find("ConfigMap", "aiadmit-dashboard"), nullptr);
  EXPECT_NE(some.find("PrometheusRule", "aiadmit"), nullptr);
  EXPECT_NE(some.find("Service", "aiadmit-metrics"), nullptr);
  EXPECT_EQ(rendered({}).find("Service", "aiadmit-metrics"), nullptr);
}

TEST(HelmChart, NamespaceLeftToAnExistingOne) {
  EXPECT_EQ(rendered({"--set", "namespace.create=false"}).find("Namespace", kNamespace), nullptr);
  EXPECT_NE(rendered({}).find("Namespace", kNamespace), nullptr);
}

}  // namespace
}  // namespace aiadmit
