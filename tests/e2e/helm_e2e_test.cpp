// aiadmit installed as platform teams install add-ons: the kustomize install
// removed, charts/aiadmit installed with Helm (built from its Go module by
// scripts/build-helm), upgraded with changed profiles while workloads are
// created, and uninstalled; then the kustomize install restored as `up` made
// it, for the tests that follow.
//
// No kubelet runs here, so aiadmit is the process `up` started, and the chart
// runs in local mode: its webhooks call that process by URL with its CA. What
// the kubelet would do for the Deployment's profiles volume the test does:
// it lays the chart's profiles ConfigMap out as a ConfigMap volume
// (ProjectedVolume) and serve watches it, as it watches the mounted one.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/support/e2e_cluster.h"
#include "tests/e2e/support/workloads.h"
#include "webhook/codec/base64.h"

namespace aiadmit::e2e {
namespace {

namespace fs = std::filesystem;
using testing::ProjectedVolume;

std::string chartDir() {
  return testing::sourceDir() + "/charts/aiadmit";
}

// build/helm/helm (scripts/build-helm, once per pin).
const std::string& helmBinary() {
  static const std::string binary = [] {
    const std::string out = fs::path(testing::binaryPath()).parent_path().string() + "/helm";
    const CommandResult built =
        testing::runCommand({testing::sourceDir() + "/scripts/build-helm", out});
    EXPECT_EQ(built.exitCode, 0) << built.out << built.err;
    return out + "/helm";
  }();
  return binary;
}

// helm ARGS... against the cluster; the release is kept in namespace default,
// since the chart makes aiadmit-system itself.
CommandResult helm(std::vector<std::string> args) {
  args.insert(args.begin(), helmBinary());
  for (const char* flag :
       {"--kubeconfig", cluster().kubeconfig.c_str(), "--namespace", "default"}) {
    args.emplace_back(flag);
  }
  return testing::runCommand(args);
}

// The values of local mode: every webhook calls the aiadmit process.
std::vector<std::string> localValues() {
  const std::string caBundle = base64Encode(testing::readFile(cluster().aiadmitCa));
  return {"--set", "local.address=127.0.0.1:" + std::to_string(cluster().aiadmitPort),
          "--set", "local.caBundle=" + caBundle,
          "--set", "priorityClasses.create=true"};
}

// The chart's profiles ConfigMaps in aiadmit-system.
std::vector<json> profilesConfigMaps() {
  const json list = kubectlJson({"get", "configmaps", "-n", "aiadmit-system"});
  std::vector<json> out;
  if (!list.is_object()) return out;
  for (const json& item : list.value("items", json::array())) {
    if (item["metadata"].value("name", "").rfind("aiadmit-profiles-", 0) == 0) out.push_back(item);
  }
  return out;
}

// What the kubelet does for the Deployment's volume: the one profiles
// ConfigMap's files, swapped in at once. Its name, "" when there is not
// exactly one.
std::string publishProfiles(ProjectedVolume& volume) {
  const std::vector<json> configMaps = profilesConfigMaps();
  if (configMaps.size() != 1) return "";
  std::map<std::string, std::string> files;
  const json data = configMaps[0].value("data", json::object());
  for (const auto& [key, text] : data.items()) {
    files[key] = text.get<std::string>();
  }
  volume.publish(files);
  return configMaps[0]["metadata"].value("name", "");
}

std::string gpuJob(const std::string& name, const std::string& priorityClass = "") {
  json job = {{"apiVersion", "batch/v1"},
              {"kind", "Job"},
              {"metadata", {{"name", name}, {"annotations", {{"aiadmit.dev/workload", "batch"}}}}},
              {"spec",
               {{"suspend", true},
                {"template",
                 {{"spec",
                   {{"restartPolicy", "Never"},
                    {"containers",
                     {{{"name", "embed"},
                       {"image", "registry.example/embed:1"},
                       {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}}}}}}}}}}};
  if (!priorityClass.empty()) {
    job["spec"]["template"]["spec"]["priorityClassName"] = priorityClass;
  }
  return job.dump();
}

// Creates GPU Jobs from a few clients at once until stopped; counts what
// was created and what failed.
class CreatingClients {
 public:
  CreatingClients(const std::string& namespaceName, int clients) {
    for (int client = 0; client < clients; ++client) {
      threads_.emplace_back([this, namespaceName, client] {
        for (int i = 0; !stop_ || i < 2; ++i) {
          const std::string name = "flow-" + std::to_string(client) + "-" + std::to_string(i);
          const CommandResult created =
              kubectl({"create", "-n", namespaceName, "-f", "-"}, gpuJob(name));
          if (created.exitCode == 0) {
            ++created_;
            continue;
          }
          ++failed_;
          const std::lock_guard<std::mutex> lock(mutex_);
          lastError_ = created.err;
        }
      });
    }
  }
  ~CreatingClients() { stop(); }
  CreatingClients(const CreatingClients&) = delete;
  CreatingClients& operator=(const CreatingClients&) = delete;

  void stop() {
    stop_ = true;
    for (std::thread& thread : threads_) {
      if (thread.joinable()) thread.join();
    }
  }
  int created() const { return created_; }
  int failed() const { return failed_; }
  std::string lastError() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return lastError_;
  }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<int> created_{0};
  std::atomic<int> failed_{0};
  mutable std::mutex mutex_;
  std::string lastError_;
  std::vector<std::thread> threads_;
};

// aiadmit-system deleted, and its deletion finished.
bool namespaceGone() {
  return kubectl({"get", "namespace", "aiadmit-system"}).exitCode != 0;
}

// The kustomize install back as `up` made it, and aiadmit serving the
// shipped profiles with a token of the ServiceAccount that install makes.
struct KustomizeRestoredAtExit {
  ~KustomizeRestoredAtExit() {
    const CommandResult uninstalled = helm({"uninstall", "aiadmit", "--ignore-not-found"});
    EXPECT_EQ(uninstalled.exitCode, 0) << uninstalled.out << uninstalled.err;
    EXPECT_TRUE(waitUntil(namespaceGone, std::chrono::minutes(2)));
    const CommandResult applied = e2eCluster("aiadmit", {"manifests", "apply"});
    EXPECT_EQ(applied.exitCode, 0) << applied.out << applied.err;
    const CommandResult restarted = e2eCluster("aiadmit", {"restart"});
    EXPECT_EQ(restarted.exitCode, 0) << restarted.out << restarted.err;
  }
};

// ARGS... followed by the values of local mode.
std::vector<std::string> withLocalValues(std::vector<std::string> args) {
  for (const std::string& value : localValues()) args.push_back(value);
  return args;
}

bool mentions(const std::vector<std::string>& lines, const std::string& text) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& line) { return line.find(text) != std::string::npos; });
}

TEST(E2eHelmSerial, InstallsUpgradesAndUninstallsTheChartInPlaceOfTheKustomizeInstall) {
  ASSERT_FALSE(helmBinary().empty());
  Namespace ns("helm");
  ProjectedVolume profiles;
  const KustomizeRestoredAtExit restored;

  const CommandResult removed =
      e2eCluster("aiadmit", {"manifests", "delete", "--ignore-not-found"});
  ASSERT_EQ(removed.exitCode, 0) << removed.out << removed.err;
  ASSERT_TRUE(waitUntil(namespaceGone, std::chrono::minutes(2)));

  const CommandResult installed = helm(withLocalValues({"install", "aiadmit", chartDir()}));
  ASSERT_EQ(installed.exitCode, 0) << installed.out << installed.err;
  const std::string installedProfiles = publishProfiles(profiles);
  ASSERT_FALSE(installedProfiles.empty());
  const CommandResult restarted =
      e2eCluster("aiadmit", {"restart", "--profiles=" + profiles.path()});
  ASSERT_EQ(restarted.exitCode, 0) << restarted.out << restarted.err;

  // Admitted and mutated as the shipped batch profile says.
  ASSERT_EQ(kubectl({"create", "-n", ns.name(), "-f", "-"}, gpuJob("embed")).exitCode, 0);
  const json job = stored("jobs", ns.name(), "embed");
  ASSERT_TRUE(job.is_object());
  EXPECT_EQ(job["metadata"]["annotations"].value("aiadmit.dev/class", ""), "batch");
  const json& pod = job["spec"]["template"]["spec"];
  EXPECT_EQ(pod.value("nodeSelector", json::object()).value("accelerator", ""), "nvidia");
  EXPECT_EQ(pod.value("priorityClassName", ""), "ai-batch");
  // Refused: batch work may not take the training class.
  const CommandResult refused =
      kubectl({"create", "-n", ns.name(), "-f", "-"}, gpuJob("urgent", "ai-training"));
  EXPECT_NE(refused.exitCode, 0);
  EXPECT_NE(refused.err.find("[AIA011]"), std::string::npos) << refused.err;

  // The upgrade lets AIA011 only warn, while creates flow.
  CreatingClients clients(ns.name(), 3);
  std::vector<std::string> upgrade = {"upgrade",  "aiadmit",
                                      chartDir(), "--reuse-values",
                                      "--set",    "profiles.ruleActions.AIA011=warn"};
  const CommandResult upgraded = helm(upgrade);
  ASSERT_EQ(upgraded.exitCode, 0) << upgraded.out << upgraded.err;
  std::string upgradedProfiles;
  ASSERT_TRUE(waitUntil(
      [&] {
        upgradedProfiles = publishProfiles(profiles);
        return !upgradedProfiles.empty() && upgradedProfiles != installedProfiles;
      },
      std::chrono::minutes(1)));
  const auto warnsOnly = [&] {
    return kubectl({"create", "--dry-run=server", "-n", ns.name(), "-f", "-"},
                   gpuJob("urgent", "ai-training"))
               .exitCode == 0;
  };
  EXPECT_TRUE(waitUntil(warnsOnly, std::chrono::minutes(1)));
  clients.stop();
  EXPECT_EQ(clients.failed(), 0) << clients.lastError();
  EXPECT_GT(clients.created(), 0);

  const CommandResult admitted =
      kubectl({"create", "-n", ns.name(), "-f", "-"}, gpuJob("urgent", "ai-training"));
  ASSERT_EQ(admitted.exitCode, 0) << admitted.err;
  EXPECT_TRUE(mentions(aiadmitWarnings(admitted.err), "AIA011")) << admitted.err;

  // A set that does not load fails the upgrade at the profiles webhook, and
  // the last good one stays.
  const CommandResult broken = helm({"upgrade", "aiadmit", chartDir(), "--reuse-values", "--set",
                                     "profiles.ruleActions.AIA099=warn"});
  EXPECT_NE(broken.exitCode, 0);
  EXPECT_NE(broken.err.find("spec.rules.AIA099: unknown rule"), std::string::npos) << broken.err;
  EXPECT_EQ(publishProfiles(profiles), upgradedProfiles);

  // Uninstalled: aiadmit is no longer called, and what it admitted stays as
  // it left it.
  const CommandResult uninstalled = helm({"uninstall", "aiadmit"});
  ASSERT_EQ(uninstalled.exitCode, 0) << uninstalled.out << uninstalled.err;
  ASSERT_TRUE(waitUntil(namespaceGone, std::chrono::minutes(2)));
  EXPECT_NE(kubectl({"get", "mutatingwebhookconfiguration", "mutate.aiadmit.dev"}).exitCode, 0);
  ASSERT_EQ(kubectl({"create", "-n", ns.name(), "-f", "-"}, gpuJob("after")).exitCode, 0);
  EXPECT_EQ(stored("jobs", ns.name(), "after")["metadata"]
                .value("annotations", json::object())
                .count("aiadmit.dev/class"),
            0u);
  const json kept = stored("jobs", ns.name(), "embed");
  ASSERT_TRUE(kept.is_object());
  EXPECT_EQ(kept["metadata"]["annotations"].value("aiadmit.dev/class", ""), "batch");
  EXPECT_EQ(kept["spec"]["template"]["spec"].value("priorityClassName", ""), "ai-batch");
  const json jobs = kubectlJson({"get", "jobs", "-n", ns.name()});
  EXPECT_EQ(jobs.value("items", json::array()).size(), static_cast<size_t>(clients.created()) + 3u);
}

// docs/install.md, "From a kustomize install": the chart rendered with the
// values that match the overlay changes nothing live (`kubectl diff`), and
// `helm install --take-ownership` adopts every object of the install while
// workloads are created, none of them failing or going unmutated.
TEST(E2eHelmSerial, TakesOverTheKustomizeInstallInPlace) {
  ASSERT_FALSE(helmBinary().empty());
  Namespace ns("helm-adopt");
  const KustomizeRestoredAtExit restored;

  const CommandResult rendered = helm(withLocalValues({"template", "aiadmit", chartDir()}));
  ASSERT_EQ(rendered.exitCode, 0) << rendered.err;
  const CommandResult diff = kubectl({"diff", "-f", "-"}, rendered.out);
  EXPECT_EQ(diff.exitCode, 0) << diff.out << diff.err;
  const std::vector<json> before = profilesConfigMaps();
  ASSERT_EQ(before.size(), 1u);

  CreatingClients clients(ns.name(), 3);
  const CommandResult adopted =
      helm(withLocalValues({"install", "aiadmit", chartDir(), "--take-ownership"}));
  clients.stop();
  ASSERT_EQ(adopted.exitCode, 0) << adopted.out << adopted.err;
  EXPECT_EQ(clients.failed(), 0) << clients.lastError();
  EXPECT_GT(clients.created(), 0);

  // Every object of the install is the release's now, the profiles
  // ConfigMap the same one.
  const json live = kubectlJson({"get", "-f", "-", "-o", "json"}, rendered.out);
  ASSERT_TRUE(live.is_object());
  const json& objects = live["items"];
  EXPECT_GT(objects.size(), 10u);
  for (const json& object : objects) {
    const json& metadata = object["metadata"];
    const std::string what = object.value("kind", "") + " " + metadata.value("name", "");
    EXPECT_EQ(metadata.value("annotations", json::object()).value("meta.helm.sh/release-name", ""),
              "aiadmit")
        << what;
    EXPECT_EQ(metadata.value("labels", json::object()).value("app.kubernetes.io/managed-by", ""),
              "Helm")
        << what;
  }
  const std::vector<json> after = profilesConfigMaps();
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0]["metadata"]["uid"], before[0]["metadata"]["uid"]);

  // aiadmit was called for each create, before, during and after.
  ASSERT_EQ(kubectl({"create", "-n", ns.name(), "-f", "-"}, gpuJob("after")).exitCode, 0);
  const json jobs = kubectlJson({"get", "jobs", "-n", ns.name()});
  ASSERT_EQ(jobs.value("items", json::array()).size(), static_cast<size_t>(clients.created()) + 1u);
  for (const json& job : jobs["items"]) {
    EXPECT_EQ(job["metadata"].value("annotations", json::object()).value("aiadmit.dev/class", ""),
              "batch")
        << job["metadata"].value("name", "");
  }
}

}  // namespace
}  // namespace aiadmit::e2e
