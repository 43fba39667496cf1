// manifests/components/monitoring as docs/install.md tells a platform team to
// add it: rendered by `kubectl kustomize` with the doc's own overlay; its
// ServiceMonitor and PrometheusRule valid by the prometheus-operator's CRDs;
// the rules as `promtool check rules` checks them; each alert firing on the
// series it is for and not on its near miss (tests/install/monitoring_alerts.yaml,
// evaluated by Prometheus' PromQL engine); and every metric an alert or a
// dashboard panel reads exported by aiadmit's /metrics, read from a real
// scrape of the plain-HTTP metrics port with the labels the queries match
// on. The tool and the CRDs come from scripts/build-promcheck.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "tests/install/rendered_manifests.h"
#include "tests/support/api_standin.h"
#include "tests/support/test_support.h"

namespace aiadmit {
namespace {

using namespace install;
namespace fs = std::filesystem;

// build/promcheck: promcheck and crds/ (scripts/build-promcheck, once per pin).
const std::string& promcheckDir() {
  static const std::string dir = [] {
    const std::string out = fs::path(binaryPath()).parent_path().string() + "/promcheck";
    const CommandResult built = runCommand({sourceDir() + "/scripts/build-promcheck", out});
    EXPECT_EQ(built.exitCode, 0) << built.out << built.err;
    return out;
  }();
  return dir;
}

// The YAML block of docs/install.md that adds the monitoring component.
std::string docsOverlay() {
  const std::string doc = readFile(sourceDir() + "/docs/install.md");
  const std::regex block(
      "```yaml\n(# my-aiadmit/kustomization.yaml\n[^`]*components/monitoring[^`]*)```");
  std::smatch found;
  EXPECT_TRUE(std::regex_search(doc, found, block))
      << "docs/install.md lost its monitoring overlay";
  return found.size() > 1 ? found[1].str() : "";
}

// The doc's overlay rendered in the layout it assumes: this repository beside my-aiadmit.
Rendered renderDocsOverlay() {
  TempDir dir;
  fs::create_symlink(sourceDir(), dir.file("aiadmit"));
  fs::create_directories(dir.file("my-aiadmit"));
  writeFile(dir.file("my-aiadmit/kustomization.yaml"), docsOverlay());
  return render(dir.file("my-aiadmit"));
}

// What a real scrape of aiadmit's /metrics holds: each sample's name (the
// families it declares with their histogram series, whether or not they
// have samples yet) and each name's label pairs ("action=deny").
struct Exported {
  std::set<std::string> names;
  std::map<std::string, std::set<std::string>> labels;
};

Exported exportedBy(const std::string& text) {
  Exported out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream words(line.substr(7));
      std::string name, type;
      words >> name >> type;
      out.names.insert(name);
      if (type == "histogram") {
        for (const char* suffix : {"_bucket", "_sum", "_count"}) out.names.insert(name + suffix);
      }
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    const size_t brace = line.find('{');
    const std::string name = line.substr(0, std::min(brace, line.find(' ')));
    out.names.insert(name);
    if (brace == std::string::npos) continue;
    static const std::regex pair(R"re(([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)")re");
    const std::string labels = line.substr(brace, line.find('}') - brace);
    for (auto it = std::sregex_iterator(labels.begin(), labels.end(), pair);
         it != std::sregex_iterator(); ++it) {
      out.labels[name].insert((*it)[1].str() + "=" + (*it)[2].str());
    }
  }
  return out;
}

constexpr const char* kGpuPod =
    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ml"},)"
    R"("spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"i",)"
    R"("resources":{"limits":{"nvidia.com/gpu":"GPUS"}}}]}})";

std::string gpuPod(const std::string& gpus) {
  std::string pod = kGpuPod;
  pod.replace(pod.find("GPUS"), 4, gpus);
  return pod;
}

// A scrape of the plain-HTTP metrics port of a server with a synced cluster
// view, after answers of every kind: patched, denied, errored, and a review
// of the profiles ConfigMap.
const Exported& scrape() {
  static const Exported exported = [] {
    ApiStandIn api;
    api.serve("/api/v1/nodes", "v1", "Node");
    api.serve("/apis/scheduling.k8s.io/v1/priorityclasses", "scheduling.k8s.io/v1",
              "PriorityClass");
    api.serve("/api/v1/namespaces", "v1", "Namespace");
    api.serve("/apis/node.k8s.io/v1/runtimeclasses", "node.k8s.io/v1", "RuntimeClass");
    TempDir dir;
    writeFile(dir.file("kubeconfig"), standInKubeconfig(api.port()));
    WebhookServer::Options options;
    options.extraArgs = {"--kubeconfig", dir.file("kubeconfig"), "--metrics-listen", "127.0.0.1:0"};
    WebhookServer server(options);
    EXPECT_TRUE(server.waitForOutput("\"msg\":\"cluster view: synced\"", 20)) << server.output();
    EXPECT_EQ(server.post("/mutate", makeReview(gpuPod("1"), "CREATE", "m")).status, 200);
    EXPECT_FALSE(
        parseReviewResponse(server.post("/validate", makeReview(gpuPod("0.5"), "CREATE", "v")).body)
            .allowed);
    EXPECT_EQ(server.post("/validate", "{").status, 400);
    EXPECT_EQ(server.post("/validate-profiles", "{").status, 400);
    const HttpResponse metrics = server.getPlain("/metrics");
    EXPECT_EQ(metrics.status, 200);
    return exportedBy(metrics.body);
  }();
  return exported;
}

// Labels Prometheus gives the series of a target (the ServiceMonitor's),
// which aiadmit does not export.
const std::set<std::string> kTargetLabels = {"job",     "namespace", "pod",     "instance",
                                             "service", "container", "endpoint"};

// promcheck MODE over `content` (and `tests`, a file, for MODE test): its
// JSON report, after checking it found no error.
std::shared_ptr<JsonDocument> promcheck(const std::string& mode, const std::string& content,
                                        const std::string& tests = "") {
  TempDir dir;
  writeFile(dir.file("input"), content);
  std::vector<std::string> command = {promcheckDir() + "/promcheck", mode, dir.file("input")};
  if (!tests.empty()) command.push_back(tests);
  const CommandResult result = runCommand(command);
  EXPECT_EQ(result.exitCode, 0) << result.out << result.err;
  auto report = parseJson(result.out);
  EXPECT_TRUE(isArray(member(report.get(), "errors")) && member(report.get(), "errors")->Empty())
      << result.out;
  return report;
}

// Every selector of the report names a metric the scrape has, with the label
// values it matches on; `up` (Prometheus' own) names the ServiceMonitor's job.
void expectSelectorsExported(const JsonValue* report, const std::string& job) {
  const Exported& exported = scrape();
  const JsonValue* selectors = member(report, "selectors");
  ASSERT_TRUE(isArray(selectors) && !selectors->Empty());
  for (const JsonValue& selector : selectors->GetArray()) {
    const std::string metric(stringMember(&selector, "metric"));
    SCOPED_TRACE(std::string(stringMember(&selector, "expr")));
    const JsonValue* labels = member(&selector, "labels");
    if (metric == "up") {
      EXPECT_EQ(stringMember(labels, "job"), job);
      continue;
    }
    ASSERT_TRUE(exported.names.count(metric)) << metric << " is not in aiadmit's /metrics";
    const auto found = exported.labels.find(metric);
    const std::set<std::string> none;
    const std::set<std::string>& pairs = found == exported.labels.end() ? none : found->second;
    for (auto it = labels->MemberBegin(); it != labels->MemberEnd(); ++it) {
      const std::string name = it->name.GetString();
      const bool aiadmits = std::any_of(pairs.begin(), pairs.end(), [&](const std::string& p) {
        return p.rfind(name + "=", 0) == 0;
      });
      if (!aiadmits && kTargetLabels.count(name)) continue;
      const std::string pair = name + "=" + std::string(stringOf(&it->value));
      EXPECT_TRUE(pairs.count(pair)) << metric << " has no series with " << pair;
    }
  }
}

const JsonValue* only(const Rendered& rendered, std::string_view kind) {
  const std::vector<const JsonValue*> found = rendered.ofKind(kind);
  EXPECT_EQ(found.size(), 1u) << kind;
  return found.size() == 1 ? found[0] : nullptr;
}

TEST(Monitoring, TheDocsOverlayRendersAServiceMonitorAndRulesTheOperatorsCrdsAccept) {
  const Rendered rendered = renderDocsOverlay();
  const JsonValue* monitor = only(rendered, "ServiceMonitor");
  const JsonValue* rules = only(rendered, "PrometheusRule");
  ASSERT_TRUE(monitor != nullptr && rules != nullptr);
  const std::map<std::string, std::string> valid =
      validateCustomResources({toJson(*monitor), toJson(*rules)}, promcheckDir() + "/crds");
  EXPECT_EQ(valid, (std::map<std::string, std::string>{{"PrometheusRule/aiadmit", "ok"},
                                                       {"ServiceMonitor/aiadmit", "ok"}}));
  // The CRDs are read: a field the ServiceMonitor's schema lacks is refused.
  std::string misspelt = toJson(*monitor);
  misspelt.replace(misspelt.find("\"honorLabels\""), 13, "\"honourLabels\"");
  EXPECT_NE(validateCustomResources({misspelt}, promcheckDir() + "/crds")
                .at("ServiceMonitor/aiadmit")
                .find("honourLabels"),
            std::string::npos);
  for (const JsonValue* object : {monitor, rules}) {
    const JsonValue* metadata = member(object, "metadata");
    EXPECT_EQ(stringMember(metadata, "namespace"), kNamespace);
    // What the doc's patch adds: the label the Prometheus selects them by.
    EXPECT_EQ(stringMember(member(metadata, "labels"), "release"), "kube-prometheus-stack");
  }
  // The Service and the dashboard's ConfigMap, as Kubernetes' schemas have them.
  const JsonValue* service = rendered.find("Service", "aiadmit-metrics");
  const JsonValue* dashboard = rendered.find("ConfigMap", "aiadmit-dashboard");
  ASSERT_TRUE(service != nullptr && dashboard != nullptr);
  const CommandResult schema = validateSchemas({toJson(*service), toJson(*dashboard)});
  EXPECT_EQ(schema.exitCode, 0) << schema.out << schema.err;
}

TEST(Monitoring, TheServiceMonitorScrapesTheDeploymentsMetricsPort) {
  const Rendered rendered = renderDocsOverlay();
  const JsonValue* monitorSpec = member(only(rendered, "ServiceMonitor"), "spec");
  const JsonValue* service = rendered.find("Service", "aiadmit-metrics");
  const JsonValue* deployment = rendered.find("Deployment", "aiadmit");
  ASSERT_TRUE(monitorSpec != nullptr && service != nullptr && deployment != nullptr);
  // ServiceMonitor → Service → the Deployment's Pods.
  EXPECT_TRUE(selects(member(monitorSpec, "selector"),
                      labelMap(member(member(service, "metadata"), "labels"))));
  EXPECT_FALSE(
      selects(member(monitorSpec, "selector"),
              labelMap(member(member(rendered.find("Service", "aiadmit"), "metadata"), "labels"))))
      << "the webhook's own Service is not scraped";
  const JsonValue* podTemplate = member(member(deployment, "spec"), "template");
  EXPECT_TRUE(selects(member(member(deployment, "spec"), "selector"),
                      labelMap(member(member(podTemplate, "metadata"), "labels"))));
  const Labels podLabels = labelMap(member(member(podTemplate, "metadata"), "labels"));
  for (const auto& [key, value] : labelMap(member(member(service, "spec"), "selector"))) {
    EXPECT_EQ(podLabels.at(key), value);
  }
  const JsonValue* endpoints = member(monitorSpec, "endpoints");
  ASSERT_TRUE(isArray(endpoints) && endpoints->Size() == 1);
  const JsonValue& endpoint = (*endpoints)[0];
  const JsonValue& servicePort = (*member(member(service, "spec"), "ports"))[0];
  EXPECT_EQ(stringMember(&endpoint, "port"), stringMember(&servicePort, "name"));
  EXPECT_EQ(stringMember(&endpoint, "path"), "/metrics");
  EXPECT_EQ(stringMember(&endpoint, "scheme"), "http");
  // aiadmit's endpoint and namespace labels are not renamed exported_*.
  EXPECT_TRUE(boolMember(&endpoint, "honorLabels"));
  // The Service's target port is the container's metrics port, where
  // --metrics-listen listens.
  const JsonValue* container = &(*member(member(podTemplate, "spec"), "containers"))[0];
  const JsonValue* containerPort =
      elementWith(member(container, "ports"), "name", stringMember(&servicePort, "targetPort"));
  ASSERT_NE(containerPort, nullptr);
  const std::set<std::string> args = stringSet(member(container, "args"));
  EXPECT_TRUE(args.count("--metrics-listen=[::]:" +
                         std::to_string(intMember(containerPort, "containerPort"))));
  // Grafana's sidecar loads the dashboard by its label.
  const JsonValue* dashboard = rendered.find("ConfigMap", "aiadmit-dashboard");
  EXPECT_EQ(stringMember(member(member(dashboard, "metadata"), "labels"), "grafana_dashboard"),
            "1");
}

TEST(Monitoring, AlertsPassPromtoolsChecksAndReadOnlyWhatAiadmitExports) {
  const Rendered rendered = renderDocsOverlay();
  const JsonValue* rules = only(rendered, "PrometheusRule");
  ASSERT_NE(rules, nullptr);
  // The spec is a rule file: {groups: [...]} (JSON is YAML).
  const auto report = promcheck("rules", toJson(*member(rules, "spec")));
  EXPECT_GE(intMember(report.get(), "rules"), 10);
  expectSelectorsExported(report.get(), "aiadmit-metrics");
  // The job the alerts name is the metrics Service's: the ServiceMonitor sets no other.
  EXPECT_NE(rendered.find("Service", "aiadmit-metrics"), nullptr);
  EXPECT_EQ(member(member(only(rendered, "ServiceMonitor"), "spec"), "jobLabel"), nullptr);

  std::set<std::string> alerts;
  for (const JsonValue& group : member(member(rules, "spec"), "groups")->GetArray()) {
    for (const JsonValue& rule : member(&group, "rules")->GetArray()) {
      const std::string alert(stringMember(&rule, "alert"));
      SCOPED_TRACE(alert);
      alerts.insert(alert);
      EXPECT_TRUE(std::set<std::string>({"warning", "critical"})
                      .count(std::string(stringMember(member(&rule, "labels"), "severity"))));
      EXPECT_FALSE(stringMember(member(&rule, "annotations"), "summary").empty());
      EXPECT_FALSE(stringMember(member(&rule, "annotations"), "description").empty());
    }
  }
  for (const char* wanted : {"AiadmitCertificateExpiresSoon", "AiadmitProfileReloadFailing",
                             "AiadmitCertificateReloadFailing", "AiadmitDenialRateJump",
                             "AiadmitSlowAnswers", "AiadmitClusterViewStale", "AiadmitDown"}) {
    EXPECT_TRUE(alerts.count(wanted)) << wanted;
  }
}

TEST(Monitoring, EachAlertFiresOnTheSeriesItIsForAndNotOnItsNearMiss) {
  const Rendered rendered = renderDocsOverlay();
  const JsonValue* rules = only(rendered, "PrometheusRule");
  ASSERT_NE(rules, nullptr);
  const std::string rulesFile = toJson(*member(rules, "spec"));
  const std::string tests = sourceDir() + "/tests/install/monitoring_alerts.yaml";
  const auto report = promcheck("test", rulesFile, tests);
  EXPECT_GE(intMember(report.get(), "rules"), 14) << "alert checks run";
  // Every alert of the rule file has a case.
  const std::string cases = readFile(tests);
  for (const JsonValue& group : member(member(rules, "spec"), "groups")->GetArray()) {
    for (const JsonValue& rule : member(&group, "rules")->GetArray()) {
      const std::string alert(stringMember(&rule, "alert"));
      EXPECT_NE(cases.find("alertname: " + alert + "\n"), std::string::npos) << alert;
    }
  }
  // A case the rules do not meet fails: the checks are not vacuous.
  const std::string right = "{severity: critical, namespace: aiadmit-system, pod: c}";
  std::string wrong = cases;
  wrong.replace(wrong.find(right), right.size(),
                "{severity: critical, namespace: aiadmit-system, pod: a}");
  TempDir dir;
  writeFile(dir.file("rules.json"), rulesFile);
  writeFile(dir.file("wrong.yaml"), wrong);
  const CommandResult failed = runCommand(
      {promcheckDir() + "/promcheck", "test", dir.file("rules.json"), dir.file("wrong.yaml")});
  EXPECT_EQ(failed.exitCode, 1) << failed.out;
  EXPECT_NE(failed.out.find("AiadmitCertificateExpiresVerySoon at 2h"), std::string::npos)
      << failed.out;
}

// Every target of the dashboard's panels, and of its variables.
void collectQueries(const JsonValue* node, std::vector<std::string>& out) {
  if (isArray(node)) {
    for (const JsonValue& item : node->GetArray()) collectQueries(&item, out);
    return;
  }
  if (!isObject(node)) return;
  for (auto it = node->MemberBegin(); it != node->MemberEnd(); ++it) {
    const std::string_view key(it->name.GetString());
    if ((key == "expr" || key == "query") && it->value.IsString()) {
      out.emplace_back(stringOf(&it->value));
    } else {
      collectQueries(&it->value, out);
    }
  }
}

TEST(Monitoring, DashboardQueriesParseAndReadOnlyWhatAiadmitExports) {
  const Rendered rendered = renderDocsOverlay();
  const JsonValue* configMap = rendered.find("ConfigMap", "aiadmit-dashboard");
  ASSERT_NE(configMap, nullptr);
  const auto dashboard =
      parseJson(std::string(stringMember(member(configMap, "data"), "aiadmit.json")));
  ASSERT_TRUE(isObject(dashboard.get()));
  EXPECT_EQ(stringMember(dashboard.get(), "uid"), "aiadmit");
  std::vector<std::string> queries;
  collectQueries(member(dashboard.get(), "panels"), queries);
  const size_t panelQueries = queries.size();
  EXPECT_GE(panelQueries, 12u);
  // label_values() is Grafana's, not PromQL: its metric is what it reads.
  std::vector<std::string> variables;
  collectQueries(member(dashboard.get(), "templating"), variables);
  for (const std::string& variable : variables) {
    static const std::regex labelValues(R"(^label_values\(([a-z_]+), *[a-z_]+\)$)");
    std::smatch found;
    if (std::regex_match(variable, found, labelValues)) queries.push_back(found[1].str());
  }
  EXPECT_GT(queries.size(), panelQueries) << "the namespace variable's query";
  std::string lines;
  for (const std::string& query : queries) {
    EXPECT_EQ(query.find('\n'), std::string::npos) << query;
    lines += query + "\n";
  }
  const auto report = promcheck("exprs", lines);
  EXPECT_EQ(static_cast<size_t>(intMember(report.get(), "rules")), queries.size());
  expectSelectorsExported(report.get(), "aiadmit-metrics");
}

}  // namespace
}  // namespace aiadmit
