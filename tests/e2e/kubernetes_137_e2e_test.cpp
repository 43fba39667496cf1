// What Kubernetes 1.37 adds to an AI workload's path, on the 1.37 control
// plane with aiadmit registered: a gang of Kubernetes' own (a PodGroup of
// scheduling.k8s.io/v1beta1 with a gang policy, GenericWorkload on) satisfies
// a profile that requires gang scheduling, beside the same Job without one,
// which is refused; and GPUs asked for as nvidia.com/gpu but served by a DRA
// driver through a DeviceClass's extendedResourceName (KEP-5004) on a node
// that lists no nvidia.com/gpu are admitted and placed there, the claim the
// scheduler makes for them left to it. Serial: both
// change what aiadmit or the scheduler sees cluster-wide. And `explain` on a
// native gang that waits whole, in a pool of the test's own (not Serial).
#include <gtest/gtest.h>

#include "tests/e2e/support/e2e_cluster.h"
#include "tests/e2e/support/workloads.h"
#include "tests/support/test_support.h"

namespace aiadmit::e2e {
namespace {

// The shipped training profile's pool, requiring gang scheduling by Volcano
// (which this cluster does not run) in the test's namespaces: only Kubernetes'
// own gang can satisfy it here.
constexpr const char* kGangProfile = R"(apiVersion: aiadmit.dev/v1
kind: Profile
metadata:
  name: training-gang
spec:
  class: training
  scope:
    namespaces: ["native-gang-*"]
  gpu:
    resourceName: nvidia.com/gpu
    gpusPerNode: 8
  placement:
    nodeSelector: {accelerator: nvidia}
    tolerations: [{key: accelerator, operator: Equal, value: gpu, effect: NoSchedule}]
  scheduling:
    priorityClassName: ai-training
    gangScheduling: {required: true, schedulerName: volcano}
)";

// A training Job of two parallel Pods of one GPU each; in `podGroup` when one
// is named.
json trainingJob(const std::string& name, const std::string& podGroup) {
  json podSpec = {{"restartPolicy", "Never"},
                  {"containers",
                   {{{"name", "train"},
                     {"image", "trainer:1"},
                     {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}}}}};
  if (!podGroup.empty()) podSpec["schedulingGroup"] = {{"podGroupName", podGroup}};
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata", {{"name", name}, {"annotations", {{"aiadmit.dev/workload", "training"}}}}},
          {"spec", {{"parallelism", 2}, {"completions", 2}, {"template", {{"spec", podSpec}}}}}};
}

json gangPodGroup(const std::string& name, int minCount) {
  return {{"apiVersion", "scheduling.k8s.io/v1beta1"},
          {"kind", "PodGroup"},
          {"metadata", {{"name", name}}},
          {"spec", {{"schedulingPolicy", {{"gang", {{"minCount", minCount}}}}}}}};
}

TEST(E2eKubernetes137Serial, ANativeGangSatisfiesAia010AndTheSchedulerPlacesItWhole) {
  AiadmitRestoredAtExit restored;
  testing::TempDir dir;
  const std::string profiles =
      testing::shippedProfilesWith(dir, {{"training-gang.yaml", kGangProfile}});
  ASSERT_EQ(e2eCluster("aiadmit", {"stop"}).exitCode, 0);
  const CommandResult started = e2eCluster("aiadmit", {"start", "--profiles=" + profiles});
  ASSERT_EQ(started.exitCode, 0) << started.out << started.err;

  Namespace ns("native-gang");
  // The nearby case: two GPU workers that no gang holds together.
  const CommandResult refused =
      kubectl({"apply", "-n", ns.name(), "-f", "-"}, toText(trainingJob("loose", "")));
  EXPECT_NE(refused.exitCode, 0);
  EXPECT_NE(refused.err.find("[AIA010] spec.parallelism: 2 GPU workers (parallelism 2) without "
                             "gang scheduling"),
            std::string::npos)
      << refused.err;

  const CommandResult group =
      kubectl({"apply", "-n", ns.name(), "-f", "-"}, toText(gangPodGroup("workers", 2)));
  ASSERT_EQ(group.exitCode, 0) << group.err;
  const CommandResult applied =
      kubectl({"apply", "-n", ns.name(), "-f", "-"}, toText(trainingJob("ganged", "workers")));
  ASSERT_EQ(applied.exitCode, 0) << applied.err;

  ASSERT_TRUE(podsBound(ns.name(), 2)) << kubectl({"get", "events", "-n", ns.name()}).out;
  for (const json& pod : podsOf(ns.name())) {
    EXPECT_EQ(pod["spec"]["schedulingGroup"].value("podGroupName", ""), "workers");
    EXPECT_TRUE(isGpuNode(pod["spec"].value("nodeName", ""))) << pod["spec"];
    // The group's priority is the Pods' (the scheduler places no Pod whose
    // priority differs from its group's): the profile's class is left out.
    EXPECT_FALSE(pod["spec"].contains("priorityClassName")) << pod["spec"];
  }
  json placed;
  ASSERT_TRUE(waitUntil(
      [&] {
        placed = kubectlJson({"get", "podgroup", "workers", "-n", ns.name()});
        for (const json& condition : placed["status"].value("conditions", json::array())) {
          if (condition.value("type", "") == "PodGroupInitiallyScheduled") {
            return condition.value("status", "") == "True";
          }
        }
        return false;
      },
      std::chrono::seconds(60)))
      << placed;
}

// A DeviceClass that serves nvidia.com/gpu from the DRA driver's devices
// (gpu.nvidia.com, published for kDraGpuNode only), deleted at exit.
struct ExtendedResourceClass {
  ExtendedResourceClass() {
    const json deviceClass = {
        {"apiVersion", "resource.k8s.io/v1"},
        {"kind", "DeviceClass"},
        {"metadata", {{"name", "extended.gpu.nvidia.com"}}},
        {"spec",
         {{"selectors", {{{"cel", {{"expression", "device.driver == \"gpu.nvidia.com\""}}}}}},
          {"extendedResourceName", "nvidia.com/gpu"}}}};
    made = kubectl({"apply", "-f", "-"}, toText(deviceClass));
  }
  ~ExtendedResourceClass() {
    kubectl({"delete", "deviceclass", "extended.gpu.nvidia.com", "--wait=false"});
  }
  CommandResult made;
};

TEST(E2eKubernetes137Serial, NvidiaGpusServedByDraOnANodeThatListsNoneArePlacedThere) {
  const ExtendedResourceClass deviceClass;
  ASSERT_EQ(deviceClass.made.exitCode, 0) << deviceClass.made.err;
  const json node = kubectlJson({"get", "node", kDraGpuNode});
  ASSERT_FALSE(node["status"]["allocatable"].contains("nvidia.com/gpu")) << node["status"];

  Namespace ns("dra-extended");
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "on-dra"}}},
              {"spec",
               {{"restartPolicy", "Never"},
                {"nodeSelector", {{"kubernetes.io/hostname", kDraGpuNode}}},
                {"containers",
                 {{{"name", "cuda"},
                   {"image", "cuda:12"},
                   {"resources", {{"limits", {{"nvidia.com/gpu", "2"}}}}}}}}}}};
  // The class reaches aiadmit's view by watch; until then no node it may
  // land on has the resource, which it says as a warning.
  std::string answer;
  EXPECT_TRUE(waitUntil(
      [&] {
        const CommandResult dryRun =
            kubectl({"create", "--dry-run=server", "-n", ns.name(), "-f", "-"}, toText(pod));
        answer = dryRun.err;
        return dryRun.exitCode == 0 && answer.find("[AIA016]") == std::string::npos;
      },
      std::chrono::seconds(20)))
      << answer;
  const CommandResult applied = kubectl({"apply", "-n", ns.name(), "-f", "-"}, toText(pod));
  ASSERT_EQ(applied.exitCode, 0) << applied.err;

  ASSERT_TRUE(podsBound(ns.name(), 1)) << kubectl({"get", "events", "-n", ns.name()}).out;
  json stored;
  ASSERT_TRUE(waitUntil(
      [&] {
        stored = kubectlJson({"get", "pod", "on-dra", "-n", ns.name()});
        return stored["status"].contains("extendedResourceClaimStatus");
      },
      std::chrono::seconds(30)))
      << stored["status"];
  EXPECT_EQ(stored["spec"]["nodeName"], kDraGpuNode);
  EXPECT_EQ(stored["spec"]["nodeSelector"].value("accelerator", ""), "nvidia")
      << "placed on the pool like any nvidia.com/gpu Pod";
  const json claims = kubectlJson({"get", "resourceclaims", "-n", ns.name()});
  ASSERT_EQ(claims["items"].size(), 1u);
  const json& results = claims["items"][0]["status"]["allocation"]["devices"]["results"];
  EXPECT_EQ(results.size(), 2u) << claims["items"][0]["status"];
}

// A pool of the test's own: two GKE-shaped nodes of 4 GPUs named after the
// namespace, tainted so that only the test's Pods land there; deleted at exit.
class GangPool {
 public:
  static constexpr int kNodes = 2;
  static constexpr int kGpusPerNode = 4;
  static constexpr const char* kLabel = "cloud.google.com/gke-nodepool";
  static constexpr const char* kTaint = "aiadmit.dev/e2e-native-gang";

  explicit GangPool(const Namespace& ns) : name_(ns.name() + "-pool") {
    for (int i = 0; i < kNodes; ++i) {
      NodeShape node = gpuNode(name_ + "-" + std::to_string(i), kGpusPerNode);
      node.labels.erase("accelerator");
      node.labels[kLabel] = name_;
      node.taints = json::array({{{"key", kTaint}, {"value", name_}, {"effect", "NoSchedule"}}});
      EXPECT_TRUE(applyNode(node));
      nodes_.push_back(node.name);
    }
  }
  ~GangPool() {
    for (const std::string& node : nodes_) kubectl({"delete", "node", node, "--wait=false"});
  }
  GangPool(const GangPool&) = delete;
  GangPool& operator=(const GangPool&) = delete;
  const std::string& name() const { return name_; }

  // A bare Pod of `gpus` on the pool, in PodGroup `group` when one is named.
  json pod(const std::string& name, int gpus, const std::string& group = "") const {
    json spec = {
        {"restartPolicy", "Never"},
        {"nodeSelector", {{kLabel, name_}}},
        {"tolerations", json::array({{{"key", kTaint},
                                      {"operator", "Equal"},
                                      {"value", name_},
                                      {"effect", "NoSchedule"}}})},
        {"containers",
         json::array({{{"name", "train"},
                       {"image", "trainer:1"},
                       {"resources", {{"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}}})}};
    if (!group.empty()) spec["schedulingGroup"] = {{"podGroupName", group}};
    json labels = {{"e2e-member", group.empty() ? name : group}};
    return {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata", {{"name", name}, {"labels", labels}}},
            {"spec", spec}};
  }

 private:
  std::string name_;
  std::vector<std::string> nodes_;
};

// PodGroup `name` of a gang of `minCount`, and its `pods` Pods of `gpus` each.
bool createGang(const GangPool& pool, const Namespace& ns, const std::string& name, int minCount,
                int pods, int gpus) {
  bool made = kubectl({"create", "-n", ns.name(), "-f", "-"}, toText(gangPodGroup(name, minCount)))
                  .exitCode == 0;
  for (int i = 0; i < pods; ++i) {
    const json member = pool.pod(name + "-" + std::to_string(i), gpus, name);
    made = made && kubectl({"create", "-n", ns.name(), "-f", "-"}, toText(member)).exitCode == 0;
  }
  return made;
}

// `aiadmit explain` of the namespace, live, as JSON; null when it fails.
json explained(const Namespace& ns) {
  const CommandResult result =
      testing::runCommand({testing::binaryPath(), "explain", "--kubeconfig", cluster().kubeconfig,
                           "-n", ns.name(), "-o", "json"});
  return result.exitCode <= 1 ? json::parse(result.out, nullptr, false) : json(nullptr);
}

json recordOf(const json& report, const std::string& name) {
  if (!report.is_object()) return nullptr;
  for (const json& record : report["waiting"]) {
    if (record.value("name", "") == name) return record;
  }
  return nullptr;
}

TEST(E2eKubernetes137, ANativeGangThatCannotFitWaitsWholeAndExplainNamesItsGroupAndCause) {
  Namespace ns("gang-explain", false);
  GangPool pool(ns);
  // 3 of the pool's 8 GPUs held: 5 idle, at least 4 of them on one node.
  ASSERT_EQ(kubectl({"create", "-n", ns.name(), "-f", "-"}, toText(pool.pod("holder", 3))).exitCode,
            0);
  ASSERT_TRUE(podsBound(ns.name(), 1, "e2e-member=holder"))
      << kubectl({"get", "pods,events", "-n", ns.name()}).out;

  // minCount 3 of 2 GPUs: 6, more than the 5 idle, though each fits alone;
  // and minCount 3 of 4 GPUs: 12, more than the pool could ever hold at once.
  ASSERT_TRUE(createGang(pool, ns, "blocked", 3, 3, 2));
  ASSERT_TRUE(createGang(pool, ns, "never", 3, 3, 4));
  // The scheduler has tried the groups and said so on them.
  json report;
  ASSERT_TRUE(waitUntil(
      [&] {
        report = explained(ns);
        const json blocked = recordOf(report, "blocked");
        return blocked.is_object() && recordOf(report, "never").is_object() &&
               blocked["scheduler"].value("condition", "") == "PodGroupInitiallyScheduled";
      },
      std::chrono::seconds(120)))
      << report.dump(2) << kubectl({"get", "pods,podgroups,events", "-n", ns.name()}).out;

  // The nearby gang that fits (minCount 2 of 1 GPU) is placed beside them:
  // the gangs that wait hold no GPU.
  ASSERT_TRUE(createGang(pool, ns, "fits", 2, 2, 1));
  ASSERT_TRUE(podsBound(ns.name(), 2, "e2e-member=fits"))
      << kubectl({"get", "pods,podgroups,events", "-n", ns.name()}).out;
  for (const json& member : podsOf(ns.name(), "e2e-member in (blocked,never)")) {
    EXPECT_EQ(member["spec"].value("nodeName", ""), "") << member["metadata"]["name"];
  }

  // Now 3 idle, and still a node with room for one Pod of 2: judged alone,
  // a Pod of the blocked gang would look unknown, not GPUs.
  report = explained(ns);
  ASSERT_TRUE(report.is_object());
  EXPECT_EQ(report["waiting"].size(), 2u) << report.dump(2);
  const json blocked = recordOf(report, "blocked");
  ASSERT_TRUE(blocked.is_object()) << report.dump(2);
  EXPECT_EQ(blocked["kind"], "PodGroup");
  EXPECT_EQ(blocked["cause"], "pool-full") << blocked.dump(2);
  EXPECT_EQ(blocked["gpus"], 6);
  EXPECT_EQ(blocked["pods"], 3);
  EXPECT_EQ(blocked["pool"], pool.name());
  const std::string reason = blocked.value("reason", "");
  EXPECT_NE(reason.find("kube-scheduler places none of the Pods of PodGroup blocked until 3 of "
                        "them (its minCount) fit at once: 3 Pods of 2 nvidia.com/gpu, 6 GPUs in "
                        "all; 5 of the 8 GPUs of pool " +
                        pool.name()),
            std::string::npos)
      << reason;
  EXPECT_EQ(blocked["scheduler"]["condition"], "PodGroupInitiallyScheduled") << blocked.dump(2);
  EXPECT_EQ(blocked["scheduler"]["status"], "False");
  EXPECT_EQ(blocked["scheduler"]["agrees"], true) << blocked.dump(2);

  const json never = recordOf(report, "never");
  ASSERT_TRUE(never.is_object()) << report.dump(2);
  EXPECT_EQ(never["cause"], "no-node-can-hold") << never.dump(2);
  EXPECT_NE(never.value("reason", "").find("hold at most 2 such Pods, even with every GPU free"),
            std::string::npos)
      << never.dump(2);
  EXPECT_EQ(
      never["fix"].get<std::string>().rfind("lower the minCount of PodGroup never to at most 2", 0),
      0u)
      << never.dump(2);
  std::cout << testing::runCommand({testing::binaryPath(), "explain", "--kubeconfig",
                                    cluster().kubeconfig, "-n", ns.name()})
                   .out;
}

}  // namespace
}  // namespace aiadmit::e2e
