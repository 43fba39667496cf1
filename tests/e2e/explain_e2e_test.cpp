// `aiadmit explain` on work the real scheduler, Kueue and the DRA allocator
// leave waiting: each cause made for real in a pool of the test's own (two
// GKE-shaped nodes of 4 GPUs, tainted), and explained alike from the live
// cluster and from a snapshot of it; the pool's idle GPUs against its Nodes'
// allocatable less what its bound Pods request.
#include <gtest/gtest.h>

#include "tests/e2e/support/e2e_cluster.h"
#include "tests/e2e/support/workloads.h"

namespace aiadmit::e2e {
namespace {

constexpr int kPoolNodes = 2;
constexpr int kGpusPerNode = 4;
constexpr const char* kPoolLabel = "cloud.google.com/gke-nodepool";
constexpr const char* kTaintKey = "aiadmit.dev/e2e-explain";

// Two nodes of a GKE node pool named after the namespace, tainted so that
// only the test's Pods land there; deleted at exit.
class ExplainPool {
 public:
  explicit ExplainPool(const Namespace& ns) : pool_(ns.name() + "-a100") {
    for (int i = 0; i < kPoolNodes; ++i) {
      NodeShape node = gpuNode(pool_ + "-" + std::to_string(i), kGpusPerNode);
      node.labels.erase("accelerator");
      node.labels[kPoolLabel] = pool_;
      node.taints = json::array({{{"key", kTaintKey}, {"value", pool_}, {"effect", "NoSchedule"}}});
      EXPECT_TRUE(applyNode(node));
      nodes_.push_back(node.name);
    }
  }
  ~ExplainPool() {
    for (const std::string& node : nodes_) kubectl({"delete", "node", node, "--wait=false"});
  }
  ExplainPool(const ExplainPool&) = delete;
  ExplainPool& operator=(const ExplainPool&) = delete;
  const std::string& name() const { return pool_; }
  json toleration() const {
    return {{"key", kTaintKey}, {"operator", "Equal"}, {"value", pool_}, {"effect", "NoSchedule"}};
  }

 private:
  std::string pool_;
  std::vector<std::string> nodes_;
};

json gpuContainer(int gpus) {
  return {{"name", "main"},
          {"image", "registry.example/cuda:12"},
          {"resources", {{"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}};
}

// A PodSpec asking for `gpus` on the pool: its selector and toleration
// unless left out.
json podSpec(const ExplainPool& pool, int gpus, bool select = true, bool tolerate = true) {
  json spec = {{"containers", json::array({gpuContainer(gpus)})}, {"restartPolicy", "Never"}};
  if (select) spec["nodeSelector"] = {{kPoolLabel, pool.name()}};
  if (tolerate) spec["tolerations"] = json::array({pool.toleration()});
  return spec;
}

json pod(const std::string& name, json spec) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}}},
          {"spec", std::move(spec)}};
}

// An Indexed Job of `pods` ranks of `gpus` each: a gang.
json gangJob(const ExplainPool& pool, int pods, int gpus) {
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata", {{"name", "train"}}},
          {"spec",
           {{"completionMode", "Indexed"},
            {"parallelism", pods},
            {"completions", pods},
            {"template", {{"spec", podSpec(pool, gpus)}}}}}};
}

// A Job for Kueue's LocalQueue `queue`, asking for more GPUs than its
// ClusterQueue's quota.
json queuedJob(const ExplainPool& pool, int gpus) {
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata", {{"name", "queued"}, {"labels", {{"kueue.x-k8s.io/queue-name", "gpus"}}}}},
          {"spec",
           {{"parallelism", 1},
            {"completions", 1},
            {"suspend", true},
            {"template", {{"spec", podSpec(pool, gpus)}}}}}};
}

std::string kueueObjects(const Namespace& ns, int gpuQuota) {
  const std::string queue = "explain-" + ns.name();
  return R"({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
             "metadata": {"name": "e2e-explain-flavor"}}
    {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": ")" +
         queue + R"("},
     "spec": {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ")" +
         ns.name() + R"("}},
              "resourceGroups": [{"coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                "flavors": [{"name": "e2e-explain-flavor", "resources": [
                  {"name": "cpu", "nominalQuota": "100"},
                  {"name": "memory", "nominalQuota": "1000Gi"},
                  {"name": "nvidia.com/gpu", "nominalQuota": )" +
         std::to_string(gpuQuota) + R"(}]}]}]}}
    {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
     "metadata": {"name": "gpus", "namespace": ")" +
         ns.name() + R"("}, "spec": {"clusterQueue": ")" + queue + R"("}})";
}

// A claim template for a DeviceClass that does not exist, and a Pod using it.
std::string missingClassClaim() {
  json claimTemplate = {
      {"apiVersion", "resource.k8s.io/v1"},
      {"kind", "ResourceClaimTemplate"},
      {"metadata", {{"name", "gpu-from-nowhere"}}},
      {"spec",
       {{"spec",
         {{"devices",
           {{"requests",
             json::array({{{"name", "gpu"},
                           {"exactly", {{"deviceClassName", "gpu.example.com"}}}}})}}}}}}}};
  return toText(claimTemplate);
}

json claimingPod(const ExplainPool& pool) {
  json spec = podSpec(pool, 0);
  spec["containers"][0] = {{"name", "main"},
                           {"image", "registry.example/cuda:12"},
                           {"resources", {{"claims", json::array({{{"name", "gpu"}}})}}}};
  spec["resourceClaims"] =
      json::array({{{"name", "gpu"}, {"resourceClaimTemplateName", "gpu-from-nowhere"}}});
  return pod("claims", spec);
}

CommandResult explain(const std::vector<std::string>& source, const std::string& ns) {
  std::vector<std::string> argv = {testing::binaryPath(), "explain"};
  argv.insert(argv.end(), source.begin(), source.end());
  argv.insert(argv.end(), {"-n", ns, "-o", "json"});
  return testing::runCommand(argv);
}

// The record of workload `name`, or null.
json recordOf(const json& report, const std::string& name) {
  for (const json& record : report["waiting"]) {
    if (record.value("name", "") == name) return record;
  }
  return nullptr;
}

// The records without what the scheduler's next retry may reword (its
// message counts the cluster's nodes, which parallel tests add).
// What two reports taken one after the other agree on: the scheduler's
// messages are left out (it tries again meanwhile), and so are the idle GPUs
// of pools other than `pool`, which tests running beside this one fill and
// free.
json stable(json report, const std::string& pool) {
  for (json& record : report["waiting"]) record.erase("scheduler");
  json idle = json::array();
  for (const json& entry : report["idle"]) {
    if (entry["pool"] == pool) idle.push_back(entry);
  }
  report["idle"] = idle;
  return report;
}

bool allWait(const std::string& ns, const std::vector<std::string>& names) {
  const CommandResult live = explain({"--kubeconfig", cluster().kubeconfig}, ns);
  if (live.exitCode != 1) return false;
  const json report = json::parse(live.out, nullptr, false);
  for (const std::string& name : names) {
    const json record = recordOf(report, name);
    if (!record.is_object()) return false;
    // Each Pod has been tried: the scheduler has said why.
    if (record["cause"] != "quota" && record["scheduler"].value("message", "").empty()) {
      return false;
    }
  }
  return true;
}

TEST(E2eExplain, EveryCauseTheSchedulerAndKueueMakeIsExplainedAliveAndFromASnapshot) {
  Namespace ns("explain", false);
  ExplainPool pool(ns);

  // A gang of 3 ranks of 3 GPUs on two nodes of 4: two are placed, one waits.
  ASSERT_EQ(kubectl({"create", "-n", ns.name(), "-f", "-"}, toText(gangJob(pool, 3, 3))).exitCode,
            0);
  ASSERT_TRUE(waitUntil(
      [&] {
        size_t bound = 0;
        for (const json& p : podsOf(ns.name(), "batch.kubernetes.io/job-name=train")) {
          bound += p["spec"].value("nodeName", "").empty() ? 0 : 1;
        }
        return bound == 2;
      },
      std::chrono::seconds(90)))
      << kubectl({"get", "pods,events", "-n", ns.name()}).out;
  ASSERT_EQ(kubectl({"apply", "-f", "-"}, kueueObjects(ns, 2)).exitCode, 0);
  const struct QueueDeletedAtExit {
    std::string name;
    ~QueueDeletedAtExit() { kubectl({"delete", "clusterqueue", name, "--wait=false"}); }
  } queue{"explain-" + ns.name()};
  ASSERT_EQ(kubectl({"create", "-n", ns.name(), "-f", "-"}, missingClassClaim()).exitCode, 0);
  const std::vector<json> objects = {
      pod("too-big", podSpec(pool, 16)),                    // more than any node has
      pod("no-toleration", podSpec(pool, 1, true, false)),  // the pool's taint
      pod("elsewhere",
          [&] {  // a pool that is not there
            json spec = podSpec(pool, 1, false);
            spec["nodeSelector"] = {{kPoolLabel, pool.name() + "-b"}};
            return spec;
          }()),
      pod("late", podSpec(pool, 2)),  // 1 GPU free on each node: 2, but apart
      queuedJob(pool, 4),             // over the ClusterQueue's 2
      claimingPod(pool),
  };
  for (const json& object : objects) {
    const CommandResult created = kubectl({"create", "-n", ns.name(), "-f", "-"}, toText(object));
    ASSERT_EQ(created.exitCode, 0) << created.err;
  }
  const std::vector<std::string> names = {"too-big", "no-toleration", "elsewhere", "late",
                                          "train",   "queued",        "claims"};
  ASSERT_TRUE(waitUntil([&] { return allWait(ns.name(), names); }, std::chrono::seconds(120)))
      << explain({"--kubeconfig", cluster().kubeconfig}, ns.name()).out
      << kubectl({"get", "pods,workloads.kueue.x-k8s.io,events", "-n", ns.name()}).out;

  const CommandResult live = explain({"--kubeconfig", cluster().kubeconfig}, ns.name());
  const json report = json::parse(live.out);
  const std::map<std::string, std::pair<std::string, int>> expected = {
      {"too-big", {"no-node-can-hold", 16}},   {"no-toleration", {"untolerated-taint", 1}},
      {"elsewhere", {"selector-excludes", 1}}, {"late", {"fragmented", 2}},
      {"train", {"gang-partial", 3}},          {"queued", {"quota", 4}},
      {"claims", {"claim-unallocatable", 1}}};
  EXPECT_EQ(report["waiting"].size(), expected.size()) << live.out;
  for (const auto& [name, want] : expected) {
    const json record = recordOf(report, name);
    ASSERT_TRUE(record.is_object()) << name << "\n" << live.out;
    EXPECT_EQ(record["cause"], want.first) << record.dump(2);
    EXPECT_EQ(record["gpus"], want.second) << record.dump(2);
    if (want.first != "quota") {
      EXPECT_EQ(record["scheduler"]["agrees"], true) << record.dump(2);
    }
  }
  EXPECT_NE(
      recordOf(report, "too-big")["reason"].get<std::string>().find("the most any node has is 8"),
      std::string::npos);
  EXPECT_NE(recordOf(report, "no-toleration")["fix"].get<std::string>().find(
                std::string("key: ") + kTaintKey + ", operator: Equal, value: " + pool.name()),
            std::string::npos);
  EXPECT_NE(recordOf(report, "elsewhere")["fix"].get<std::string>().find(
                std::string("nodeSelector ") + kPoolLabel + ": " + pool.name()),
            std::string::npos);
  EXPECT_NE(recordOf(report, "late")["reason"].get<std::string>().find(
                "2 idle GPUs on 2 nodes that it may use: 1,1;"),
            std::string::npos);
  EXPECT_EQ(recordOf(report, "train")["kind"], "Job");
  EXPECT_NE(recordOf(report, "queued")["reason"].get<std::string>().find(
                "nominal quota of 2 and no cohort to borrow from, so it can never be admitted"),
            std::string::npos);
  EXPECT_NE(recordOf(report, "claims")["reason"].get<std::string>().find(
                "DeviceClass gpu.example.com, which does not exist"),
            std::string::npos);

  // The pool's GPUs: its Nodes' allocatable, less the 2 ranks' 3 each.
  bool seen = false;
  for (const json& idle : report["idle"]) {
    if (idle["pool"] != pool.name()) continue;
    seen = true;
    EXPECT_EQ(idle["gpus"], kPoolNodes * kGpusPerNode);
    EXPECT_EQ(idle["idleGpus"], kPoolNodes * kGpusPerNode - 2 * 3);
    EXPECT_EQ(idle["nodes"], kPoolNodes);
  }
  EXPECT_TRUE(seen) << live.out;

  // A snapshot of the same cluster, as the help says to take one.
  testing::TempDir dir;
  const CommandResult snapshot =
      kubectl({"get",
               "pods,nodes,events,resourceslices,resourceclaims,deviceclasses,priorityclasses,"
               "localqueues,clusterqueues,workloads.kueue.x-k8s.io",
               "-A", "-o", "yaml"});
  ASSERT_EQ(snapshot.exitCode, 0) << snapshot.err;
  testing::writeFile(dir.file("snapshot.yaml"), snapshot.out);
  const CommandResult offline = explain({"--cluster", dir.file("snapshot.yaml")}, ns.name());
  EXPECT_EQ(offline.exitCode, 1) << offline.err;
  const json fromSnapshot = json::parse(offline.out, nullptr, false);
  const CommandResult again = explain({"--kubeconfig", cluster().kubeconfig}, ns.name());
  EXPECT_EQ(stable(fromSnapshot, pool.name()),
            stable(json::parse(again.out, nullptr, false), pool.name()))
      << offline.out << "\n"
      << again.out;

  // The text names each cause with its fix.
  const CommandResult text = testing::runCommand(
      {testing::binaryPath(), "explain", "--kubeconfig", cluster().kubeconfig, "-n", ns.name()});
  EXPECT_EQ(text.exitCode, 1);
  for (const auto& [name, want] : expected) {
    EXPECT_NE(text.out.find("\n" + want.first + ": "), std::string::npos) << text.out;
  }
  std::cout << text.out;
}

TEST(E2eExplain, NothingWaitsInANamespaceWithoutGpuWork) {
  Namespace ns("explain-empty", false);
  const CommandResult live = explain({"--kubeconfig", cluster().kubeconfig}, ns.name());
  EXPECT_EQ(live.exitCode, 0) << live.out << live.err;
  EXPECT_TRUE(json::parse(live.out)["waiting"].empty());
}

}  // namespace
}  // namespace aiadmit::e2e

namespace aiadmit::e2e {
namespace {

// The sample of `line` ("NAME{LABELS}") in the metrics text; -1 when absent.
long long sampleOf(const std::string& metrics, const std::string& line) {
  const size_t at = metrics.find("\n" + line + " ");
  if (at == std::string::npos) return -1;
  return std::stoll(metrics.substr(at + line.size() + 2));
}

// The idle GPUs `explain` gives pool `pool` now.
long long explainedIdle(const std::string& pool) {
  const CommandResult result = testing::runCommand(
      {testing::binaryPath(), "explain", "--kubeconfig", cluster().kubeconfig, "-A", "-o", "json"});
  const json report = json::parse(result.out, nullptr, false);
  if (!report.is_object()) return -2;
  for (const json& idle : report["idle"]) {
    if (idle["pool"] == pool) return idle["idleGpus"].get<long long>();
  }
  return -2;
}

TEST(E2eExplainSerial, ServeWithWaitingMetricsCountsWhatExplainDoes) {
  const std::string rbac = testing::sourceDir() + "/manifests/components/waiting-metrics/rbac.yaml";
  ASSERT_EQ(kubectl({"apply", "-f", rbac}).exitCode, 0);
  AiadmitRestoredAtExit restored;
  ASSERT_EQ(e2eCluster("aiadmit", {"stop"}).exitCode, 0);
  const CommandResult started = e2eCluster("aiadmit", {"start", "--waiting-metrics"});
  ASSERT_EQ(started.exitCode, 0) << started.out << started.err;

  Namespace ns("explain-gauges", false);
  json big = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", "too-big"}}},
      {"spec",
       {{"containers", json::array({{{"name", "main"},
                                     {"image", "registry.example/cuda:12"},
                                     {"resources", {{"limits", {{"nvidia.com/gpu", "16"}}}}}}})},
        {"tolerations", json::array({{{"operator", "Exists"}}})}}}};
  ASSERT_EQ(kubectl({"create", "-n", ns.name(), "-f", "-"}, toText(big)).exitCode, 0);
  const std::string waiting =
      "aiadmit_gpu_workloads_waiting{cause=\"no-node-can-hold\",namespace=\"" + ns.name() + "\"}";
  EXPECT_TRUE(
      waitUntil([&] { return sampleOf(aiadmitMetrics(), waiting) == 1; }, std::chrono::seconds(60)))
      << aiadmitMetrics();
  // The idle GPUs of the suite's GPU pool, as explain counts them from the
  // same cluster (nothing else runs beside a Serial test).
  EXPECT_TRUE(waitUntil(
      [&] {
        const long long served =
            sampleOf(aiadmitMetrics(), "aiadmit_gpus_idle{pool=\"e2e-gpu-8\"}");
        return served >= 0 && served == explainedIdle("e2e-gpu-8");
      },
      std::chrono::seconds(60)))
      << aiadmitMetrics();
  ASSERT_EQ(kubectl({"delete", "pod", "-n", ns.name(), "too-big", "--grace-period=0", "--force"})
                .exitCode,
            0);
  EXPECT_TRUE(waitUntil([&] { return sampleOf(aiadmitMetrics(), waiting) == -1; },
                        std::chrono::seconds(60)))
      << "a Pod that is gone waits no more\n"
      << aiadmitMetrics();
  kubectl({"delete", "-f", rbac, "--wait=false"});
}

}  // namespace
}  // namespace aiadmit::e2e

namespace aiadmit::e2e {
namespace {

// The `kubectl get $(kubectl api-resources ...)` line of a doc's sh block.
std::string snapshotCommandOf(const std::string& doc) {
  const std::string text = testing::readFile(testing::sourceDir() + "/" + doc);
  const size_t at = text.find("kubectl get $(kubectl api-resources");
  if (at == std::string::npos) return "";
  return text.substr(at, text.find('\n', at) - at);
}

// Runs a documented command line as a user would: bash, in `dir`, with the
// cluster's kubeconfig and its kubectl first on the PATH.
CommandResult runAsDocumented(const std::string& line, const std::string& dir) {
  const std::string kubectlDir = cluster().kubectl.substr(0, cluster().kubectl.rfind('/'));
  return testing::runCommand({"/bin/bash", "-c",
                              "set -o pipefail; cd " + dir +
                                  " && export KUBECONFIG=" + cluster().kubeconfig +
                                  " PATH=" + kubectlDir + ":$PATH && " + line});
}

TEST(E2eExplain, TheDocumentedSnapshotCommandsRunAndTheirSnapshotsAreRead) {
  testing::TempDir dir;
  for (const char* doc : {"docs/explain.md", "docs/cluster-view.md", "docs/install.md"}) {
    const std::string line = snapshotCommandOf(doc);
    ASSERT_FALSE(line.empty()) << doc;
    const CommandResult taken = runAsDocumented(line, dir.path());
    EXPECT_EQ(taken.exitCode, 0) << doc << ": " << line << "\n" << taken.err;
  }
  const std::string snapshot = testing::readFile(dir.file("snapshot.yaml"));
  for (const char* kind :
       {"kind: Node", "kind: PriorityClass", "kind: ResourceSlice", "kind: ClusterQueue"}) {
    EXPECT_NE(snapshot.find(kind), std::string::npos) << kind;
  }
  const CommandResult explained = testing::runCommand(
      {testing::binaryPath(), "explain", "--cluster", dir.file("snapshot.yaml"), "-A"});
  EXPECT_LE(explained.exitCode, 1) << explained.err;
  EXPECT_NE(explained.out.find("\n  e2e-gpu-8: "), std::string::npos) << explained.out;
  const CommandResult fitted =
      testing::runCommand({testing::binaryPath(), "profiles", "init", "--cluster",
                           dir.file("cluster.yaml"), "-o", dir.file("profiles")});
  EXPECT_EQ(fitted.exitCode, 0) << fitted.err;
  const CommandResult linted =
      testing::runCommand({testing::binaryPath(), "profiles", "lint", "--cluster",
                           dir.file("cluster.yaml"), testing::sourceDir() + "/profiles"});
  EXPECT_EQ(linted.exitCode, 0) << "the shipped pool is the suite's own GPU nodes':\n"
                                << linted.out;
}

}  // namespace
}  // namespace aiadmit::e2e
