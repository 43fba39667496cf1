// manifests/components/monitoring against a real API server that serves the
// prometheus-operator's CRDs (scripts/build-promcheck takes them from its Go
// module): the ServiceMonitor, the PrometheusRule, the metrics Service and
// the dashboard's ConfigMap are accepted by a server-side dry run, which
// applies the CRDs' schemas and their CEL rules as an install would.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/e2e/support/e2e_cluster.h"

namespace aiadmit::e2e {
namespace {

namespace fs = std::filesystem;

std::string crdsDir() {
  const std::string out = fs::path(testing::binaryPath()).parent_path().string() + "/promcheck";
  const CommandResult built =
      testing::runCommand({testing::sourceDir() + "/scripts/build-promcheck", out});
  EXPECT_EQ(built.exitCode, 0) << built.out << built.err;
  return out + "/crds";
}

bool established(const std::string& crd) {
  const CommandResult status =
      kubectl({"get", "crd", crd, "-o",
               "jsonpath={.status.conditions[?(@.type==\"Established\")].status}"});
  return status.out == "True";
}

// The base with the component, rendered as an overlay of a platform team's.
std::vector<json> componentObjects() {
  testing::TempDir dir;
  fs::create_symlink(testing::sourceDir(), dir.file("aiadmit"));
  fs::create_directories(dir.file("my-aiadmit"));
  testing::writeFile(dir.file("my-aiadmit/kustomization.yaml"),
                     "resources:\n  - ../aiadmit/manifests/base\n"
                     "components:\n  - ../aiadmit/manifests/components/monitoring\n");
  const CommandResult rendered = kubectl({"kustomize", dir.file("my-aiadmit")});
  EXPECT_EQ(rendered.exitCode, 0) << rendered.err;
  const CommandResult asJson =
      kubectl({"create", "--dry-run=client", "-o", "json", "-f", "-"}, rendered.out);
  std::vector<json> objects;
  for (const json& object : jsonObjects(asJson.out)) {
    const std::string name = object["metadata"].value("name", "");
    const std::string kind = object.value("kind", "");
    if (kind == "ServiceMonitor" || kind == "PrometheusRule" || name == "aiadmit-metrics" ||
        name == "aiadmit-dashboard") {
      objects.push_back(object);
    }
  }
  return objects;
}

std::string list(const std::vector<json>& objects) {
  return json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", objects}}.dump();
}

TEST(E2eMonitoring, TheApiServerAcceptsTheComponentWithTheOperatorsCrds) {
  const std::string crds = crdsDir();
  const CommandResult installed = kubectl({"apply", "--server-side", "-f", crds});
  ASSERT_EQ(installed.exitCode, 0) << installed.err;
  for (const char* crd :
       {"servicemonitors.monitoring.coreos.com", "prometheusrules.monitoring.coreos.com"}) {
    ASSERT_TRUE(waitUntil([&] { return established(crd); }, std::chrono::seconds(60))) << crd;
  }
  const std::vector<json> objects = componentObjects();
  ASSERT_EQ(objects.size(), 4u);
  const CommandResult accepted = kubectl({"apply", "--dry-run=server", "-f", "-"}, list(objects));
  EXPECT_EQ(accepted.exitCode, 0) << accepted.err;
  for (const char* what : {"servicemonitor.monitoring.coreos.com/aiadmit created (server dry run)",
                           "prometheusrule.monitoring.coreos.com/aiadmit created (server dry run)",
                           "service/aiadmit-metrics created (server dry run)",
                           "configmap/aiadmit-dashboard created (server dry run)"}) {
    EXPECT_NE(accepted.out.find(what), std::string::npos) << accepted.out;
  }
  // The schemas are applied: a rule without its expression is refused.
  std::vector<json> broken = objects;
  for (json& object : broken) {
    if (object["kind"] == "PrometheusRule") object["spec"]["groups"][0]["rules"][0].erase("expr");
  }
  const CommandResult refused = kubectl({"apply", "--dry-run=server", "-f", "-"}, list(broken));
  EXPECT_NE(refused.exitCode, 0);
  EXPECT_NE(refused.err.find("expr"), std::string::npos) << refused.err;
}

}  // namespace
}  // namespace aiadmit::e2e
