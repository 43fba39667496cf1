// The shipped NetworkPolicy: the webhook port open to every source (the API
// server is not a Pod, so no selector names it), the plain-HTTP metrics
// port only to the monitoring stack's Prometheus; the ports it names are
// the Deployment's, and the documented patch moves the metrics rule alone.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/install/rendered_manifests.h"

namespace aiadmit {
namespace {

namespace fs = std::filesystem;
using namespace install;

// The Deployment's container ports by name.
std::map<std::string, int> containerPorts(const Rendered& rendered) {
  std::map<std::string, int> ports;
  const JsonValue* spec = member(
      member(member(member(rendered.find("Deployment", "aiadmit"), "spec"), "template"), "spec"),
      "containers");
  if (!isArray(spec)) return ports;
  for (const JsonValue& container : spec->GetArray()) {
    const JsonValue* list = member(&container, "ports");
    if (!isArray(list)) continue;
    for (const JsonValue& port : list->GetArray()) {
      ports[std::string(stringMember(&port, "name"))] = intMember(&port, "containerPort");
    }
  }
  return ports;
}

// The named ports of one ingress rule.
std::vector<std::string> rulePorts(const JsonValue& rule) {
  std::vector<std::string> names;
  const JsonValue* ports = member(&rule, "ports");
  if (!isArray(ports)) return names;
  for (const JsonValue& port : ports->GetArray()) names.emplace_back(stringMember(&port, "port"));
  return names;
}

const JsonValue* ingressOf(const Rendered& rendered) {
  return member(member(rendered.find("NetworkPolicy", "aiadmit"), "spec"), "ingress");
}

TEST(NetworkPolicy, WebhookPortIsOpenAndMetricsPortOnlyToMonitoring) {
  const Rendered base = render(manifestsDir() + "/base");
  ASSERT_EQ(base.ofKind("NetworkPolicy").size(), 1u);
  const JsonValue* policy = base.find("NetworkPolicy", "aiadmit");
  ASSERT_NE(policy, nullptr);
  EXPECT_EQ(stringMember(member(policy, "metadata"), "namespace"), kNamespace);
  // It selects the Deployment's Pods, and restricts their ingress alone.
  const JsonValue* spec = member(policy, "spec");
  const Labels selector = labelMap(member(member(spec, "podSelector"), "matchLabels"));
  Labels podLabels = labelMap(member(
      member(member(member(base.find("Deployment", "aiadmit"), "spec"), "template"), "metadata"),
      "labels"));
  ASSERT_FALSE(selector.empty());
  for (const auto& [key, value] : selector) EXPECT_EQ(podLabels[key], value) << key;
  const JsonValue* types = member(spec, "policyTypes");
  ASSERT_TRUE(isArray(types));
  ASSERT_EQ(types->Size(), 1u);
  EXPECT_EQ(stringOf(&(*types)[0]), "Ingress");

  const std::map<std::string, int> ports = containerPorts(base);
  ASSERT_EQ(ports.at("https"), 8443);
  ASSERT_EQ(ports.at("metrics"), 8080);
  const JsonValue* ingress = ingressOf(base);
  ASSERT_TRUE(isArray(ingress));
  ASSERT_EQ(ingress->Size(), 2u);
  std::map<std::string, const JsonValue*> ruleOfPort;
  for (const JsonValue& rule : ingress->GetArray()) {
    for (const std::string& port : rulePorts(rule)) {
      EXPECT_TRUE(ports.count(port)) << port << " is a port of the Deployment";
      ruleOfPort[port] = &rule;
    }
  }
  // The webhook port from anywhere: no peers.
  ASSERT_TRUE(ruleOfPort.count("https"));
  EXPECT_EQ(member(ruleOfPort.at("https"), "from"), nullptr);
  // The metrics port from one peer that is both a namespace and a Pod
  // selector (both must match), never from anywhere.
  ASSERT_TRUE(ruleOfPort.count("metrics"));
  EXPECT_NE(ruleOfPort.at("metrics"), ruleOfPort.at("https"));
  const JsonValue* from = member(ruleOfPort.at("metrics"), "from");
  ASSERT_TRUE(isArray(from));
  ASSERT_EQ(from->Size(), 1u);
  EXPECT_EQ(labelMap(member(member(&(*from)[0], "namespaceSelector"), "matchLabels")),
            (Labels{{"kubernetes.io/metadata.name", "monitoring"}}));
  EXPECT_EQ(labelMap(member(member(&(*from)[0], "podSelector"), "matchLabels")),
            (Labels{{"app.kubernetes.io/name", "prometheus"}}));
  EXPECT_EQ(member(&(*from)[0], "ipBlock"), nullptr);
}

// The port the metrics listener serves and the monitoring component scrapes
// is the one the policy opens to monitoring.
TEST(NetworkPolicy, MetricsRuleCoversWhatTheMonitoringComponentScrapes) {
  TempDir dir;
  writeFile(dir.file("kustomization.yaml"),
            "resources:\n  - " + fs::relative(manifestsDir() + "/base", dir.path()).string() +
                "\ncomponents:\n  - " +
                fs::relative(manifestsDir() + "/components/monitoring", dir.path()).string() +
                "\n");
  const Rendered rendered = render(dir.path());
  const JsonValue* service = rendered.find("Service", "aiadmit-metrics");
  ASSERT_NE(service, nullptr);
  const JsonValue& servicePort = (*member(member(service, "spec"), "ports"))[0];
  EXPECT_EQ(stringMember(&servicePort, "targetPort"), "metrics");
  bool opened = false;
  for (const JsonValue& rule : ingressOf(rendered)->GetArray()) {
    for (const std::string& port : rulePorts(rule)) opened = opened || port == "metrics";
  }
  EXPECT_TRUE(opened);
}

TEST(NetworkPolicy, DocumentedPatchMovesTheMetricsRuleAlone) {
  const std::string patches = documentedYaml("For a Prometheus elsewhere");
  ASSERT_NE(patches.find("patches:"), std::string::npos);
  TempDir dir;
  writeFile(dir.file("kustomization.yaml"),
            "resources:\n  - " + fs::relative(manifestsDir() + "/base", dir.path()).string() +
                "\n" + patches);
  const Rendered rendered = render(dir.path());
  const JsonValue* ingress = ingressOf(rendered);
  ASSERT_TRUE(isArray(ingress));
  ASSERT_EQ(ingress->Size(), 2u);
  EXPECT_EQ(member(&(*ingress)[0], "from"), nullptr);
  EXPECT_EQ(rulePorts((*ingress)[1]), std::vector<std::string>{"metrics"});
  EXPECT_EQ(labelMap(member(member(&(*member(&(*ingress)[1], "from"))[0], "namespaceSelector"),
                            "matchLabels")),
            (Labels{{"kubernetes.io/metadata.name", "observability"}}));
}

}  // namespace
}  // namespace aiadmit
