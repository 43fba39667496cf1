// explain's causes, one input each, read as a snapshot is: a pool of two
// GKE-shaped nodes of 4 GPUs tainted gpu=present, and the Pods beside it.
#include "webhook/waiting/waiting.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace aiadmit {
namespace {

using nlohmann::json;

json node(const std::string& name, const std::string& pool, int gpus) {
  return {
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata",
       {{"name", name},
        {"labels", {{"cloud.google.com/gke-nodepool", pool}, {"kubernetes.io/hostname", name}}}}},
      {"spec",
       {{"taints",
         json::array(
             {{{"key", "nvidia.com/gpu"}, {"value", "present"}, {"effect", "NoSchedule"}}})}}},
      {"status", {{"allocatable", {{"cpu", "32"}, {"nvidia.com/gpu", std::to_string(gpus)}}}}}};
}

json tolerations() {
  return json::array(
      {{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}});
}

json gpuPod(const std::string& name, int gpus, const std::string& nodeName = "") {
  json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", name}, {"namespace", "ml"}, {"creationTimestamp", "2026-12-01T10:00:00Z"}}},
      {"spec",
       {{"containers",
         json::array({{{"name", "main"},
                       {"resources", {{"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}}})},
        {"tolerations", tolerations()},
        {"priority", 0}}},
      {"status", {{"phase", "Pending"}}}};
  if (!nodeName.empty()) pod["spec"]["nodeName"] = nodeName;
  return pod;
}

// Two nodes of pool a100 with 4 GPUs each.
std::vector<json> pool() {
  return {node("a100-0", "a100", 4), node("a100-1", "a100", 4)};
}

WaitingReport explain(std::vector<json> objects, WaitingScope scope = {}) {
  json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", objects}};
  const WaitingInput input = readWaitingInput(list.dump(), "snapshot");
  EXPECT_EQ(input.error, "");
  return explainWaiting(input, scope);
}

const WaitingWorkload* find(const WaitingReport& report, const std::string& name) {
  for (const WaitingWorkload& workload : report.waiting) {
    if (workload.name == name) return &workload;
  }
  return nullptr;
}

std::vector<json> with(std::vector<json> objects, std::initializer_list<json> more) {
  objects.insert(objects.end(), more.begin(), more.end());
  return objects;
}

TEST(Waiting, APodAskingForMoreGpusThanAnyNodeHasCanNeverBeHeld) {
  const WaitingReport report = explain(with(pool(), {gpuPod("big", 8)}));
  ASSERT_EQ(report.waiting.size(), 1u);
  const WaitingWorkload& big = report.waiting[0];
  EXPECT_EQ(big.cause, WaitCause::NoNodeCanHold);
  EXPECT_EQ(big.kind, "Pod");
  EXPECT_EQ(big.gpus, 8);
  EXPECT_EQ(big.pool, "a100");
  EXPECT_NE(big.reason.find("the most any node has is 4 (a100-0, pool a100)"), std::string::npos)
      << big.reason;
  EXPECT_NE(big.fix.find("at most 4 nvidia.com/gpu per Pod"), std::string::npos);
}

TEST(Waiting, AResourceNoNodeOffersCanNeverBeHeld) {
  json pod = gpuPod("mig", 1);
  pod["spec"]["containers"][0]["resources"]["limits"] = {{"nvidia.com/mig-1g.10gb", "1"}};
  const WaitingReport report = explain(with(pool(), {pod}));
  ASSERT_EQ(report.waiting.size(), 1u);
  EXPECT_EQ(report.waiting[0].cause, WaitCause::NoNodeCanHold);
  EXPECT_NE(report.waiting[0].reason.find("no node offers nvidia.com/mig-1g.10gb"),
            std::string::npos);
}

TEST(Waiting, APodWithoutThePoolsTolerationIsKeptOffByTheTaint) {
  json pod = gpuPod("untolerated", 1);
  pod["spec"].erase("tolerations");
  const WaitingReport report = explain(with(pool(), {pod}));
  ASSERT_EQ(report.waiting.size(), 1u);
  EXPECT_EQ(report.waiting[0].cause, WaitCause::UntoleratedTaint);
  EXPECT_EQ(report.waiting[0].fix,
            "add the toleration {key: nvidia.com/gpu, operator: Equal, value: present, effect: "
            "NoSchedule} to its Pod template");
}

TEST(Waiting, ASelectorOfAnotherPoolExcludesEveryNodeThatFits) {
  json pod = gpuPod("elsewhere", 1);
  pod["spec"]["nodeSelector"] = {{"cloud.google.com/gke-nodepool", "h100"}};
  const WaitingReport report = explain(with(pool(), {pod}));
  ASSERT_EQ(report.waiting.size(), 1u);
  EXPECT_EQ(report.waiting[0].cause, WaitCause::SelectorExcludes);
  EXPECT_NE(report.waiting[0].reason.find("nodeSelector (cloud.google.com/gke-nodepool=h100)"),
            std::string::npos);
  EXPECT_EQ(report.waiting[0].fix,
            "select the pool by a label its nodes carry, such as nodeSelector "
            "cloud.google.com/gke-nodepool: a100");
}

TEST(Waiting, ARequiredAffinityTermThatNoNodeMatchesExcludesToo) {
  json pod = gpuPod("affinity", 1);
  pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = {
      {"nodeSelectorTerms",
       json::array(
           {{{"matchExpressions", json::array({{{"key", "cloud.google.com/gke-nodepool"},
                                                {"operator", "In"},
                                                {"values", json::array({"h100", "b200"})}}})}}})}};
  const WaitingReport report = explain(with(pool(), {pod}));
  ASSERT_EQ(report.waiting.size(), 1u);
  EXPECT_EQ(report.waiting[0].cause, WaitCause::SelectorExcludes);
  EXPECT_NE(report.waiting[0].reason.find("required node affinity"), std::string::npos);
}

TEST(Waiting, AFullPoolNamesWhoHoldsItsGpusAndWhetherPreemptionHelps) {
  json low = gpuPod("low", 4, "a100-0");
  json other = gpuPod("other", 4, "a100-1");
  other["metadata"]["namespace"] = "team-b";
  other["spec"]["priority"] = 1000;
  other["spec"]["priorityClassName"] = "high";
  json waiting = gpuPod("waiting", 2);
  waiting["spec"]["priority"] = 100;
  const WaitingReport report = explain(with(pool(), {low, other, waiting}));
  ASSERT_EQ(report.waiting.size(), 1u);
  const WaitingWorkload& full = report.waiting[0];
  EXPECT_EQ(full.cause, WaitCause::PoolFull);
  EXPECT_NE(full.reason.find("8 of the 8 GPUs of pool a100"), std::string::npos) << full.reason;
  EXPECT_NE(full.reason.find("4 GPUs by Pods of namespace ml (priority 0)"), std::string::npos);
  EXPECT_NE(full.reason.find("4 GPUs by Pods of namespace team-b (priority 1000, high)"),
            std::string::npos);
  EXPECT_NE(full.reason.find("hold 4 GPUs of them, so the scheduler may preempt them"),
            std::string::npos);

  waiting["spec"]["preemptionPolicy"] = "Never";
  const WaitingReport never = explain(with(pool(), {low, other, waiting}));
  EXPECT_NE(never.waiting[0].reason.find("preemptionPolicy is Never"), std::string::npos);
  EXPECT_NE(never.waiting[0].fix.find("PriorityClass above theirs"), std::string::npos);
}

TEST(Waiting, PartOfAJobSetPlacedAndTheRestWaitingIsAPartialGang) {
  std::vector<json> objects = pool();
  for (int i = 0; i < 3; ++i) {
    json rank = gpuPod("trainer-" + std::to_string(i), 3, i < 2 ? "a100-" + std::to_string(i) : "");
    rank["metadata"]["labels"] = {{"jobset.sigs.k8s.io/jobset-name", "llama"}};
    objects.push_back(rank);
  }
  const WaitingReport report = explain(objects);
  ASSERT_EQ(report.waiting.size(), 1u);
  EXPECT_EQ(report.waiting[0].cause, WaitCause::GangPartial);
  EXPECT_EQ(report.waiting[0].kind, "JobSet");
  EXPECT_EQ(report.waiting[0].name, "llama");
  EXPECT_EQ(report.waiting[0].podNames, std::vector<std::string>{"trainer-2"});
  EXPECT_NE(report.waiting[0].reason.find("2 GPU Pods of JobSet llama are placed and hold 6 GPUs"),
            std::string::npos);
}

TEST(Waiting, ReplicasOfADeploymentAreOneWorkloadAndNoGang) {
  std::vector<json> objects = pool();
  for (int i = 0; i < 3; ++i) {
    json replica =
        gpuPod("vllm-7d9f-" + std::to_string(i), 4, i < 2 ? "a100-" + std::to_string(i) : "");
    replica["metadata"]["labels"] = {{"pod-template-hash", "7d9f"}};
    replica["metadata"]["ownerReferences"] =
        json::array({{{"kind", "ReplicaSet"}, {"name", "vllm-7d9f"}, {"controller", true}}});
    objects.push_back(replica);
  }
  const WaitingReport report = explain(objects);
  ASSERT_EQ(report.waiting.size(), 1u);
  EXPECT_EQ(report.waiting[0].kind, "Deployment");
  EXPECT_EQ(report.waiting[0].name, "vllm");
  EXPECT_EQ(report.waiting[0].cause, WaitCause::PoolFull);
}

TEST(Waiting, APodWithRoomOnANodeItMayUseIsUnknownNotBlamedOnGpus) {
  const WaitingReport report = explain(with(pool(), {gpuPod("roomy", 1)}));
  ASSERT_EQ(report.waiting.size(), 1u);
  EXPECT_EQ(report.waiting[0].cause, WaitCause::Unknown);
  EXPECT_NE(report.waiting[0].reason.find("has room for its accelerators now"), std::string::npos);
}

TEST(Waiting, TheSchedulersMessageIsReadAndComparedWithTheCause) {
  json pod = gpuPod("big", 8);
  pod["status"]["conditions"] =
      json::array({{{"type", "PodScheduled"},
                    {"status", "False"},
                    {"reason", "Unschedulable"},
                    {"lastTransitionTime", "2026-12-01T10:05:00Z"},
                    {"message", "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."}}});
  json untolerated = gpuPod("untolerated", 1);
  untolerated["spec"].erase("tolerations");
  const json event = {
      {"apiVersion", "v1"},
      {"kind", "Event"},
      {"metadata", {{"name", "e1"}, {"namespace", "ml"}}},
      {"involvedObject", {{"kind", "Pod"}, {"namespace", "ml"}, {"name", "untolerated"}}},
      {"reason", "FailedScheduling"},
      {"lastTimestamp", "2026-12-01T10:01:00Z"},
      {"message", "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."}};
  const WaitingReport report = explain(with(pool(), {pod, untolerated, event}));
  const WaitingWorkload* big = find(report, "big");
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(big->scheduler.agrees, std::optional<bool>(true));
  EXPECT_EQ(big->since, "2026-12-01T10:05:00Z");
  EXPECT_EQ(big->scheduler.source, "scheduler");
  EXPECT_EQ(big->scheduler.condition, "PodScheduled");
  EXPECT_EQ(big->scheduler.reason, "Unschedulable");
  const WaitingWorkload* other = find(report, "untolerated");
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->scheduler.message, "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.");
  EXPECT_EQ(other->scheduler.agrees, std::optional<bool>(false));
  EXPECT_EQ(other->scheduler.condition, "") << "an event's words name no condition";
}

TEST(Waiting, CausesAreGroupedAndTheGroupsRankedByTheGpusThatWait) {
  json untolerated = gpuPod("untolerated", 1);
  untolerated["spec"].erase("tolerations");
  const WaitingReport report =
      explain(with(pool(), {untolerated, gpuPod("big-a", 6), gpuPod("big-b", 16)}));
  ASSERT_EQ(report.waiting.size(), 3u);
  EXPECT_EQ(report.waiting[0].name, "big-b");
  EXPECT_EQ(report.waiting[1].name, "big-a");
  EXPECT_EQ(report.waiting[2].name, "untolerated");
}

TEST(Waiting, IdleGpusArePerPoolAllocatableLessWhatBoundPodsRequest) {
  const WaitingReport report = explain(
      with(pool(), {node("t4-0", "t4", 1), gpuPod("bound", 3, "a100-0"), gpuPod("big", 8)}));
  ASSERT_EQ(report.idle.size(), 2u);
  EXPECT_EQ(report.idle[0].pool, "a100");
  EXPECT_EQ(report.idle[0].nodes, 2);
  EXPECT_EQ(report.idle[0].gpus, 8);
  EXPECT_EQ(report.idle[0].idleGpus, 5);
  EXPECT_EQ(report.idle[0].waitingPods, 1);
  EXPECT_EQ(report.idle[0].waitingByCause.at(WaitCause::NoNodeCanHold), 1);
  EXPECT_EQ(report.idle[1].pool, "t4");
  EXPECT_EQ(report.idle[1].idleGpus, 1);
}

TEST(Waiting, TheScopeTakesItsNamespacesAndNames) {
  json other = gpuPod("big", 8);
  other["metadata"]["namespace"] = "team-b";
  const std::vector<json> objects = with(pool(), {gpuPod("big", 8), gpuPod("huge", 16), other});
  EXPECT_EQ(explain(objects, {{"ml"}, {}}).waiting.size(), 2u);
  EXPECT_EQ(explain(objects, {{}, {}}).waiting.size(), 3u);
  const WaitingReport named = explain(objects, {{"ml"}, {"huge"}});
  ASSERT_EQ(named.waiting.size(), 1u);
  EXPECT_EQ(named.waiting[0].name, "huge");
  EXPECT_TRUE(explain(pool(), {{"ml"}, {}}).waiting.empty());
}

TEST(Waiting, TerminalPodsHoldNothingAndDoNotWait) {
  json done = gpuPod("done", 4, "a100-0");
  done["status"]["phase"] = "Succeeded";
  json failed = gpuPod("failed", 8);
  failed["status"]["phase"] = "Failed";
  const WaitingReport report = explain(with(pool(), {done, failed}));
  EXPECT_TRUE(report.waiting.empty());
  EXPECT_EQ(report.idle[0].idleGpus, 8);
}

// Six nodes of 4 GPUs, each with 2 held by a small Pod: 12 idle, 2 on each.
std::vector<json> spreadPool(int priority = 0) {
  std::vector<json> objects;
  for (int i = 0; i < 6; ++i) {
    const std::string name = "a100-" + std::to_string(i);
    objects.push_back(node(name, "a100", 4));
    json small = gpuPod("small-" + std::to_string(i), 2, name);
    small["spec"]["priority"] = priority;
    objects.push_back(small);
  }
  return objects;
}

TEST(Waiting, IdleGpusSpreadThinOverThePoolAreFragmentedNotFull) {
  const WaitingReport report = explain(with(spreadPool(), {gpuPod("wide", 4)}));
  ASSERT_EQ(report.waiting.size(), 1u);
  const WaitingWorkload& wide = report.waiting[0];
  EXPECT_EQ(wide.cause, WaitCause::Fragmented);
  EXPECT_EQ(wide.pool, "a100");
  EXPECT_EQ(wide.reason,
            "pool a100 has 12 idle GPUs on 6 nodes that it may use: 2,2,2,2,2,2; together they "
            "would hold its 4 nvidia.com/gpu, but the largest free block is 2, and one Pod's GPUs "
            "must all be on one node");
  EXPECT_NE(wide.fix.find("MostAllocated or RequestedToCapacityRatio for nvidia.com/gpu"),
            std::string::npos)
      << wide.fix;
  EXPECT_NE(wide.fix.find("HighNodeUtilization"), std::string::npos);
  ASSERT_EQ(report.idle.size(), 1u);
  EXPECT_EQ(report.idle[0].idleGpus, 12);
  EXPECT_EQ(report.idle[0].unusableIdleGpus, 12) << "no node has room for the one Pod that waits";
  EXPECT_EQ(report.idle[0].waitingByCause.at(WaitCause::Fragmented), 1);
}

TEST(Waiting, FewerIdleGpusThanItAsksIsPoolFullInTheSamePool) {
  // 12 idle, spread as before, and a Pod of 16: no packing would hold it.
  std::vector<json> objects = spreadPool();
  for (int i = 0; i < 3; ++i) {
    objects.push_back(node("a100-big-" + std::to_string(i), "a100", 16));
    objects.push_back(gpuPod("holder-" + std::to_string(i), 16, "a100-big-" + std::to_string(i)));
  }
  const WaitingReport report = explain(with(objects, {gpuPod("huge", 16)}));
  ASSERT_EQ(report.waiting.size(), 1u);
  EXPECT_EQ(report.waiting[0].cause, WaitCause::PoolFull) << report.waiting[0].reason;
}

TEST(Waiting, MoreThanAnyNodeOfTheSamePoolHasIsNoNodeCanHoldNotFragmented) {
  const WaitingReport report = explain(with(spreadPool(), {gpuPod("too-wide", 8)}));
  ASSERT_EQ(report.waiting.size(), 1u);
  EXPECT_EQ(report.waiting[0].cause, WaitCause::NoNodeCanHold);
}

TEST(Waiting, AFragmentedPoolWithSmallerPodsOfLowerPriorityNamesWhereToPreempt) {
  json wide = gpuPod("wide", 4);
  wide["spec"]["priority"] = 1000;
  const WaitingReport report = explain(with(spreadPool(0), {wide}));
  ASSERT_EQ(report.waiting.size(), 1u);
  EXPECT_EQ(report.waiting[0].cause, WaitCause::Fragmented);
  EXPECT_NE(report.waiting[0].reason.find("on node a100-0 Pods of lower priority than its 1000 "
                                          "hold enough of the rest"),
            std::string::npos)
      << report.waiting[0].reason;
  EXPECT_EQ(report.waiting[0].fix.rfind("wait for the scheduler to preempt the lower-priority "
                                        "Pods on node a100-0",
                                        0),
            0u)
      << report.waiting[0].fix;
}

TEST(Waiting, IdleGpusAreUnusableOnlyWhereNoWaitingPodFits) {
  // A Pod of 2 would fit the 2 idle GPUs of any node, but its selector
  // keeps it off them all: it does not wait for the pool's GPUs.
  json narrow = gpuPod("narrow", 2);
  narrow["spec"]["nodeSelector"] = {{"kubernetes.io/hostname", "elsewhere"}};
  const WaitingReport report = explain(with(spreadPool(), {narrow, gpuPod("wide", 4)}));
  ASSERT_EQ(report.idle.size(), 1u);
  EXPECT_EQ(report.idle[0].unusableIdleGpus, 12) << "the narrow Pod may use no node of it";
  json small = gpuPod("small", 2);
  const WaitingReport fits = explain(with(spreadPool(), {small, gpuPod("wide", 4)}));
  EXPECT_EQ(fits.idle[0].unusableIdleGpus, 0) << "a Pod of 2 fits every node's 2";
  const WaitingReport nothingWaits = explain(spreadPool());
  EXPECT_EQ(nothingWaits.idle[0].unusableIdleGpus, 0) << "no Pod waits for the pool";
}

}  // namespace
}  // namespace aiadmit
