// `aiadmit explain` on work the real scheduler, Kueue and the DRA allocator
// leave waiting: each cause made for real in a pool of the test's own (two
// GKE-shaped nodes of 4 GPUs, tainted), and explained alike from the live
// cluster and from a snapshot of it; the pool's idle GPUs against its Nodes'
// allocatable less what its bound Pods request; Kueue's own words beside the
// quota cause, as Kueue wrote them on the Workload; and a DRA claim that a
// DeviceTaintRule keeps off its devices, beside the same claim allocated on
// devices no rule taints.
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
             "metadata": {"name": ")" +
         queue + R"("}}
    {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": ")" +
         queue + R"("},
     "spec": {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ")" +
         ns.name() + R"("}},
              "resourceGroups": [{"coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                "flavors": [{"name": ")" +
         queue + R"(", "resources": [
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
  if (!report.is_object()) return false;
  for (const std::string& name : names) {
    const json record = recordOf(report, name);
    if (!record.is_object()) return false;
    // Each has been tried: the scheduler, or Kueue for a queued Job, has
    // said why.
    if (record["scheduler"].value("message", "").empty()) return false;
  }
  return true;
}

// The QuotaReserved condition Kueue wrote on the Workload it made for Job
// `job`, as the API server stores it; null while there is none.
json quotaReservedOf(const std::string& ns, const std::string& job) {
  const json workloads = kubectlJson({"get", "workloads.kueue.x-k8s.io", "-n", ns});
  if (!workloads.is_object()) return nullptr;
  for (const json& workload : workloads["items"]) {
    const json owners =
        workload.value("metadata", json::object()).value("ownerReferences", json::array());
    if (owners.empty() || owners[0].value("kind", "") != "Job" ||
        owners[0].value("name", "") != job) {
      continue;
    }
    const json status = workload.value("status", json::object());
    for (const json& condition : status.value("conditions", json::array())) {
      if (condition.value("type", "") == "QuotaReserved") return condition;
    }
  }
  return nullptr;
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
    ~QueueDeletedAtExit() {
      kubectl({"delete", "clusterqueue", name, "--wait=false"});
      kubectl({"delete", "resourceflavor", name, "--wait=false"});
    }
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
    EXPECT_EQ(record["scheduler"]["agrees"], true) << record.dump(2);
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

  // Beside the quota cause, Kueue's own words: the QuotaReserved condition
  // it wrote on the Workload of Job queued, read back here as the API server
  // stores it (Kueue's wording is its own; it rewrites the condition when it
  // tries again, so the three are read until they are of one moment).
  json kueueSaid;
  json queued;
  CommandResult queuedText;
  const auto kueueLine = [&] {
    return "\n    kueue: QuotaReserved=" + kueueSaid.value("status", "") + " (" +
           kueueSaid.value("reason", "") + "): " + kueueSaid.value("message", "") +
           " (aiadmit agrees)\n";
  };
  EXPECT_TRUE(waitUntil(
      [&] {
        kueueSaid = quotaReservedOf(ns.name(), "queued");
        const json now = json::parse(explain({"--kubeconfig", cluster().kubeconfig}, ns.name()).out,
                                     nullptr, false);
        queued = now.is_object() ? recordOf(now, "queued") : json(nullptr);
        queuedText = testing::runCommand({testing::binaryPath(), "explain", "--kubeconfig",
                                          cluster().kubeconfig, "-n", ns.name()});
        return kueueSaid.is_object() && queued.is_object() &&
               queued["scheduler"].value("message", "") == kueueSaid.value("message", "") &&
               queuedText.out.find(kueueLine()) != std::string::npos;
      },
      std::chrono::seconds(60)))
      << "Kueue wrote " << kueueSaid.dump(2) << "\nexplain: " << queued.dump(2) << "\n"
      << queuedText.out;
  ASSERT_TRUE(kueueSaid.is_object())
      << kubectl({"get", "workloads.kueue.x-k8s.io", "-n", ns.name(), "-o", "yaml"}).out;
  EXPECT_EQ(kueueSaid.value("status", ""), "False") << kueueSaid.dump(2);
  // Kueue 0.19's own kind of wait (UnadmittedWorkloadsObservability, on in
  // tests/e2e/operators/kueue/operator.conf): 4 GPUs of a queue of 2, for good.
  EXPECT_EQ(kueueSaid.value("reason", ""), "ExceedsMaxQuota") << kueueSaid.dump(2);
  EXPECT_FALSE(kueueSaid.value("message", "").empty()) << kueueSaid.dump(2);
  ASSERT_TRUE(queued.is_object());
  const json& word = queued["scheduler"];
  EXPECT_EQ(word["source"], "kueue") << word.dump(2);
  EXPECT_EQ(word["condition"], "QuotaReserved") << word.dump(2);
  EXPECT_EQ(word["status"], "False") << word.dump(2);
  EXPECT_EQ(word["reason"], kueueSaid.value("reason", "")) << word.dump(2);
  EXPECT_EQ(word["message"], kueueSaid.value("message", "")) << word.dump(2);
  EXPECT_EQ(word["agrees"], true) << word.dump(2);
  EXPECT_NE(queuedText.out.find(kueueLine()), std::string::npos) << queuedText.out;

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

namespace aiadmit::e2e {
namespace {

constexpr int kDraDevicesPerNode = 2;
constexpr const char* kMaintenanceKey = "example.com/maintenance";
constexpr const char* kMaintenanceValue = "firmware";

// DRA GPUs of the test's own: a driver named after the namespace, its
// DeviceClass, and Nodes (tainted, as ExplainPool's, so that only the test's
// Pods land there; each its own GKE node pool) whose kDraDevicesPerNode
// devices the driver publishes in one ResourceSlice per Node, its pool
// named after the Node as drivers of node-local devices name them. No
// driver runs: the scheduler allocates claims from the slices. Deleted at
// exit.
class DraGpus {
 public:
  explicit DraGpus(const Namespace& ns)
      : taintValue_(ns.name()), driver_("gpu." + ns.name() + ".example.com") {
    const json deviceClass = {
        {"apiVersion", "resource.k8s.io/v1"},
        {"kind", "DeviceClass"},
        {"metadata", {{"name", driver_}}},
        {"spec",
         {{"selectors", {{{"cel", {{"expression", "device.driver == \"" + driver_ + "\""}}}}}}}}};
    const CommandResult made = kubectl({"apply", "-f", "-"}, toText(deviceClass));
    EXPECT_EQ(made.exitCode, 0) << made.err;
  }
  ~DraGpus() {
    for (const std::string& node : nodes_) {
      kubectl({"delete", "resourceslice", sliceOf(node), "--wait=false"});
      kubectl({"delete", "node", node, "--wait=false"});
    }
    kubectl({"delete", "deviceclass", driver_, "--wait=false"});
  }
  DraGpus(const DraGpus&) = delete;
  DraGpus& operator=(const DraGpus&) = delete;

  // A Node named `node` and the slice of its devices gpu-0, gpu-1, ...
  bool addNode(const std::string& node) {
    NodeShape shape = gpuNode(node, 0);
    shape.labels.erase("accelerator");
    shape.labels[kPoolLabel] = node;
    shape.allocatable.erase("nvidia.com/gpu");
    shape.taints =
        json::array({{{"key", kTaintKey}, {"value", taintValue_}, {"effect", "NoSchedule"}}});
    nodes_.push_back(node);
    if (!applyNode(shape)) return false;
    json devices = json::array();
    for (int i = 0; i < kDraDevicesPerNode; ++i) {
      devices.push_back(
          {{"name", "gpu-" + std::to_string(i)}, {"attributes", {{"type", {{"string", "gpu"}}}}}});
    }
    const json slice = {{"apiVersion", "resource.k8s.io/v1"},
                        {"kind", "ResourceSlice"},
                        {"metadata", {{"name", sliceOf(node)}}},
                        {"spec",
                         {{"driver", driver_},
                          {"nodeName", node},
                          {"pool", {{"name", node}, {"generation", 1}, {"resourceSliceCount", 1}}},
                          {"devices", devices}}}};
    const CommandResult published = kubectl({"apply", "-f", "-"}, toText(slice));
    EXPECT_EQ(published.exitCode, 0) << published.err;
    return published.exitCode == 0;
  }
  const std::string& driver() const { return driver_; }
  // The DeviceClass is named as the driver, as NVIDIA's is.
  const std::string& deviceClass() const { return driver_; }
  json toleration() const {
    return {{"key", kTaintKey},
            {"operator", "Equal"},
            {"value", taintValue_},
            {"effect", "NoSchedule"}};
  }

 private:
  static std::string sliceOf(const std::string& node) { return node + "-gpus"; }
  std::string taintValue_;
  std::string driver_;
  std::vector<std::string> nodes_;
};

// A resource.k8s.io/v1 DeviceTaintRule that takes device `device` of the
// driver's pool `pool` out of service for new Pods (NoSchedule); deleted at
// exit.
struct MaintenanceRule {
  MaintenanceRule(std::string ruleName, const std::string& driver, const std::string& pool,
                  const std::string& device)
      : name(std::move(ruleName)) {
    const json rule = {
        {"apiVersion", "resource.k8s.io/v1"},
        {"kind", "DeviceTaintRule"},
        {"metadata", {{"name", name}}},
        {"spec",
         {{"deviceSelector", {{"driver", driver}, {"pool", pool}, {"device", device}}},
          {"taint",
           {{"key", kMaintenanceKey}, {"value", kMaintenanceValue}, {"effect", "NoSchedule"}}}}}};
    made = kubectl({"apply", "-f", "-"}, toText(rule));
  }
  ~MaintenanceRule() { kubectl({"delete", "devicetaintrule", name, "--wait=false"}); }
  MaintenanceRule(const MaintenanceRule&) = delete;
  MaintenanceRule& operator=(const MaintenanceRule&) = delete;
  // The controller manager's device taint controller has read the rule: it
  // writes the EvictionInProgress condition for each generation, False for
  // a NoSchedule taint, which evicts nothing.
  bool seen() const {
    const json stored = kubectlJson({"get", "devicetaintrule", name});
    if (!stored.is_object()) return false;
    const json status = stored.value("status", json::object());
    for (const json& condition : status.value("conditions", json::array())) {
      if (condition.value("type", "") == "EvictionInProgress" &&
          condition.value("observedGeneration", 0) == stored["metadata"].value("generation", -1)) {
        return true;
      }
    }
    return false;
  }
  std::string name;
  CommandResult made;
};

// A Pod of a claim of `templateName`, on the node pool `pool`.
json draPodOn(const std::string& name, const std::string& templateName, const std::string& pool,
              const DraGpus& gpus) {
  json pod = podClaiming(name, templateName);
  pod["spec"]["nodeSelector"] = {{kPoolLabel, pool}};
  pod["spec"]["tolerations"] = json::array({gpus.toleration()});
  return pod;
}

// The ResourceClaim the Pod's claim "gpu" was made as; null while there is
// none.
json claimOf(const std::string& ns, const std::string& podName) {
  const json pod = kubectlJson({"get", "pod", podName, "-n", ns});
  if (!pod.is_object()) return nullptr;
  const json status = pod.value("status", json::object());
  for (const json& made : status.value("resourceClaimStatuses", json::array())) {
    if (made.value("name", "") != "gpu" || made.value("resourceClaimName", "").empty()) continue;
    return kubectlJson({"get", "resourceclaim", made["resourceClaimName"], "-n", ns});
  }
  return nullptr;
}

// The entry of `pool` among the report's idle GPUs; null when absent.
json idleOf(const json& report, const std::string& pool) {
  for (const json& entry : report["idle"]) {
    if (entry.value("pool", "") == pool) return entry;
  }
  return nullptr;
}

TEST(E2eExplain, ADeviceTaintRuleKeepsAClaimOffItsDevicesAndTheSameClaimRunsBesideIt) {
  Namespace ns("explain-taint", false);
  DraGpus gpus(ns);
  const std::string tainted = ns.name() + "-tainted";
  const std::string clean = ns.name() + "-clean";
  // The rule first, seen by the control plane (the controller manager
  // writes its status) before the devices it takes out of service are
  // published: the scheduler, which watches the rules too, has it before it
  // can allocate any of them.
  const MaintenanceRule rule(ns.name() + "-maintenance", gpus.driver(), tainted, "gpu-0");
  ASSERT_EQ(rule.made.exitCode, 0) << rule.made.err;
  ASSERT_TRUE(waitUntil([&] { return rule.seen(); }, std::chrono::seconds(30)))
      << kubectl({"get", "devicetaintrule", rule.name, "-o", "yaml"}).out;
  ASSERT_TRUE(gpus.addNode(tainted));
  ASSERT_TRUE(gpus.addNode(clean));

  // One claim template of 2 devices; one Pod of it on each pool. On the
  // tainted one gpu-0 is out of service and gpu-1 alone is too few.
  json twoGpus = claimTemplate("two-gpus", kDraDevicesPerNode);
  twoGpus["spec"]["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] =
      gpus.deviceClass();
  const CommandResult made = kubectl({"create", "-n", ns.name(), "-f", "-"}, toText(twoGpus));
  ASSERT_EQ(made.exitCode, 0) << made.err;
  for (const auto& [name, pool] :
       {std::pair{"on-clean", clean}, std::pair{"on-tainted", tainted}}) {
    const CommandResult created = kubectl({"create", "-n", ns.name(), "-f", "-"},
                                          toText(draPodOn(name, "two-gpus", pool, gpus)));
    ASSERT_EQ(created.exitCode, 0) << created.err;
  }

  // The nearby case runs: the scheduler allocates the clean pool's devices
  // to its claim and binds the Pod there.
  json cleanPod;
  ASSERT_TRUE(waitUntil(
      [&] {
        cleanPod = kubectlJson({"get", "pod", "on-clean", "-n", ns.name()});
        return cleanPod.is_object() && !cleanPod["spec"].value("nodeName", "").empty();
      },
      std::chrono::seconds(90)))
      << kubectl({"get", "pods,resourceclaims,events", "-n", ns.name()}).out;
  EXPECT_EQ(cleanPod["spec"]["nodeName"], clean);
  const json cleanClaim = claimOf(ns.name(), "on-clean");
  ASSERT_TRUE(cleanClaim.is_object()) << cleanPod["status"].dump(2);
  const json results = cleanClaim.value("status", json::object())
                           .value("allocation", json::object())
                           .value("devices", json::object())
                           .value("results", json::array());
  ASSERT_EQ(results.size(), static_cast<size_t>(kDraDevicesPerNode)) << cleanClaim.dump(2);
  for (const json& result : results) {
    EXPECT_EQ(result["driver"], gpus.driver());
    EXPECT_EQ(result["pool"], clean);
  }

  // The other waits: the scheduler cannot allocate its claim on the tainted
  // pool, and says so.
  const auto schedulerSaid = [&](const std::string& words) {
    const json pod = kubectlJson({"get", "pod", "on-tainted", "-n", ns.name()});
    if (!pod.is_object()) return false;
    const json status = pod.value("status", json::object());
    for (const json& condition : status.value("conditions", json::array())) {
      if (condition.value("type", "") == "PodScheduled" &&
          condition.value("status", "") == "False" &&
          condition.value("message", "").find(words) != std::string::npos) {
        return true;
      }
    }
    return false;
  };
  ASSERT_TRUE(waitUntil([&] { return schedulerSaid("cannot allocate all claims"); },
                        std::chrono::seconds(90)))
      << kubectl({"get", "pods,resourceclaims,events", "-n", ns.name(), "-o", "wide"}).out;
  const json taintedPod = kubectlJson({"get", "pod", "on-tainted", "-n", ns.name()});
  EXPECT_EQ(taintedPod["spec"].value("nodeName", ""), "") << "the rule kept it off gpu-0";
  const json taintedClaim = claimOf(ns.name(), "on-tainted");
  ASSERT_TRUE(taintedClaim.is_object());
  EXPECT_FALSE(taintedClaim.value("status", json::object()).contains("allocation"))
      << taintedClaim.dump(2);

  // explain, live: the one Pod that waits, its cause, the rule, the fix.
  const CommandResult live = explain({"--kubeconfig", cluster().kubeconfig}, ns.name());
  EXPECT_EQ(live.exitCode, 1) << live.err;
  const json report = json::parse(live.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << live.out << live.err;
  EXPECT_EQ(report["waiting"].size(), 1u) << live.out;
  EXPECT_TRUE(recordOf(report, "on-clean").is_null()) << "a bound Pod waits for nothing";
  const json record = recordOf(report, "on-tainted");
  ASSERT_TRUE(record.is_object()) << live.out;
  EXPECT_EQ(record["kind"], "Pod");
  EXPECT_EQ(record["cause"], "device-tainted") << record.dump(2);
  EXPECT_EQ(record["gpus"], kDraDevicesPerNode);
  EXPECT_EQ(record["pool"], tainted);
  const std::string reason = record.value("reason", "");
  const std::string claimName = taintedClaim["metadata"]["name"];
  EXPECT_NE(reason.find("claim " + claimName + " asks for 2 devices of class " +
                        gpus.deviceClass() + "; free devices of node " + tainted +
                        " (gpu-0) carry the taint " + kMaintenanceKey + "=" + kMaintenanceValue +
                        ":NoSchedule (set by DeviceTaintRule " + rule.name + ")"),
            std::string::npos)
      << reason;
  const std::string fix = record.value("fix", "");
  EXPECT_NE(fix.find(std::string("add the toleration {key: ") + kMaintenanceKey +
                     ", operator: Equal, value: " + kMaintenanceValue +
                     ", effect: NoSchedule} to spec.spec.devices.requests[0].exactly.tolerations "
                     "of ResourceClaimTemplate two-gpus"),
            std::string::npos)
      << fix;
  EXPECT_NE(fix.find("delete DeviceTaintRule " + rule.name), std::string::npos) << fix;
  EXPECT_EQ(record["scheduler"]["source"], "scheduler") << record.dump(2);
  EXPECT_EQ(record["scheduler"]["agrees"], true) << record.dump(2);

  // The tainted pool's one free, untainted device is idle; the other is
  // counted as kept off. The clean pool's are the running claim's.
  const json taintedIdle = idleOf(report, tainted);
  ASSERT_TRUE(taintedIdle.is_object()) << live.out;
  EXPECT_EQ(taintedIdle["gpus"], kDraDevicesPerNode);
  EXPECT_EQ(taintedIdle["idleGpus"], 1);
  EXPECT_EQ(taintedIdle["taintedGpus"], 1);
  EXPECT_EQ(taintedIdle["waitingByCause"], (json{{"device-tainted", 1}}));
  const json cleanIdle = idleOf(report, clean);
  ASSERT_TRUE(cleanIdle.is_object()) << live.out;
  EXPECT_EQ(cleanIdle["gpus"], kDraDevicesPerNode);
  EXPECT_EQ(cleanIdle["idleGpus"], 0);
  EXPECT_EQ(cleanIdle["taintedGpus"], 0);

  // From a snapshot taken with the command docs/explain.md gives: the same.
  testing::TempDir dir;
  const std::string line = snapshotCommandOf("docs/explain.md");
  ASSERT_NE(line.find("devicetaintrules"), std::string::npos) << line;
  const CommandResult taken = runAsDocumented(line, dir.path());
  ASSERT_EQ(taken.exitCode, 0) << line << "\n" << taken.err;
  const std::string snapshot = testing::readFile(dir.file("snapshot.yaml"));
  EXPECT_NE(snapshot.find("kind: DeviceTaintRule"), std::string::npos);
  const CommandResult offline = explain({"--cluster", dir.file("snapshot.yaml")}, ns.name());
  EXPECT_EQ(offline.exitCode, 1) << offline.err;
  const json fromSnapshot = json::parse(offline.out, nullptr, false);
  ASSERT_TRUE(fromSnapshot.is_object()) << offline.out << offline.err;
  const json offlineRecord = recordOf(fromSnapshot, "on-tainted");
  ASSERT_TRUE(offlineRecord.is_object()) << offline.out;
  EXPECT_EQ(offlineRecord["cause"], "device-tainted") << offline.out;
  EXPECT_EQ(stable(fromSnapshot, tainted), stable(report, tainted)) << offline.out << "\n"
                                                                    << live.out;

  // The text names the cause, the rule and its fix.
  const CommandResult text = testing::runCommand(
      {testing::binaryPath(), "explain", "--kubeconfig", cluster().kubeconfig, "-n", ns.name()});
  EXPECT_EQ(text.exitCode, 1);
  EXPECT_NE(text.out.find("\ndevice-tainted: 1 workload, 2 GPUs\n  Pod " + ns.name() +
                          "/on-tainted: 2 GPUs in 1 Pod, "),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("\n    fix: " + fix + "\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("\n  " + tainted +
                          ": 1 of 2 GPUs idle on 1 node, 1 GPU free but kept off by device "
                          "taints, while 1 Pod waits for it: 1 device-tainted\n"),
            std::string::npos)
      << text.out;
  std::cout << text.out;
}

}  // namespace
}  // namespace aiadmit::e2e
