// What Kubernetes 1.37 adds to an AI workload's path, on the 1.37 control
// plane with aiadmit registered: a gang of Kubernetes' own (a PodGroup of
// scheduling.k8s.io/v1beta1 with a gang policy, GenericWorkload on) satisfies
// a profile that requires gang scheduling, beside the same Job without one,
// which is refused; and GPUs asked for as nvidia.com/gpu but served by a DRA
// driver through a DeviceClass's extendedResourceName (KEP-5004) on a node
// that lists no nvidia.com/gpu are admitted and placed there, the claim the
// scheduler makes for them left to it. Serial: both
// change what aiadmit or the scheduler sees cluster-wide.
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

}  // namespace
}  // namespace aiadmit::e2e
