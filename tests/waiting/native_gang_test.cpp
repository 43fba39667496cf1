// explain on the Pods of a PodGroup of Kubernetes' own (scheduling.k8s.io,
// spec.schedulingGroup.podGroupName): a gang that waits whole is judged as
// the scheduler places it, minCount Pods at once, never as each Pod alone;
// a gang partly placed is gang-partial; the group's own condition is the
// scheduler's word. Each case beside its nearby one: the same Pods without
// a group, or a group whose minCount fits. Read as a snapshot is: a pool of
// GKE-shaped nodes of 4 GPUs, tainted gpu=present, and the objects beside it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/waiting/dra_objects.h"
#include "webhook/waiting/explain_output.h"
#include "webhook/waiting/waiting.h"

namespace aiadmit {
namespace {

using nlohmann::json;

json node(const std::string& name, int gpus) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}, {"labels", {{"cloud.google.com/gke-nodepool", "a100"}}}}},
          {"spec",
           {{"taints",
             json::array(
                 {{{"key", "nvidia.com/gpu"}, {"value", "present"}, {"effect", "NoSchedule"}}})}}},
          {"status", {{"allocatable", {{"cpu", "32"}, {"nvidia.com/gpu", std::to_string(gpus)}}}}}};
}

// A Pod of `gpus` (none: a launcher that asks for no GPU), in PodGroup
// `group` when one is named, bound to `nodeName` when one is named.
json pod(const std::string& name, int gpus, const std::string& group,
         const std::string& nodeName = "") {
  json container = {{"name", "main"}};
  if (gpus > 0) container["resources"]["limits"] = {{"nvidia.com/gpu", std::to_string(gpus)}};
  json object = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", name}, {"namespace", "ml"}, {"creationTimestamp", "2026-12-01T10:00:00Z"}}},
      {"spec",
       {{"containers", json::array({container})},
        {"tolerations",
         json::array(
             {{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}})},
        {"priority", 0}}},
      {"status", {{"phase", "Pending"}}}};
  if (!group.empty()) object["spec"]["schedulingGroup"] = {{"podGroupName", group}};
  if (!nodeName.empty()) object["spec"]["nodeName"] = nodeName;
  return object;
}

// PodGroup `name` with a gang of `minCount` (0: the basic policy), as 1.37
// serves it.
json podGroup(const std::string& name, int minCount) {
  const json policy =
      minCount > 0 ? json{{"gang", {{"minCount", minCount}}}} : json{{"basic", json::object()}};
  return {{"apiVersion", "scheduling.k8s.io/v1beta1"},
          {"kind", "PodGroup"},
          {"metadata", {{"name", name}, {"namespace", "ml"}}},
          {"spec", {{"schedulingPolicy", policy}}}};
}

// `pods` Pods named NAME-0... of `gpus` each, in `group`.
std::vector<json> pods(const std::string& name, int count, int gpus, const std::string& group) {
  std::vector<json> out;
  for (int i = 0; i < count; ++i) out.push_back(pod(name + "-" + std::to_string(i), gpus, group));
  return out;
}

std::vector<json> with(std::vector<json> objects, const std::vector<json>& more) {
  objects.insert(objects.end(), more.begin(), more.end());
  return objects;
}

WaitingReport explain(const std::vector<json>& objects) {
  const json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", objects}};
  const WaitingInput input = readWaitingInput(list.dump(), "snapshot");
  EXPECT_EQ(input.error, "");
  return explainWaiting(input, {});
}

bool says(const std::string& text, const std::string& words) {
  return text.find(words) != std::string::npos;
}

// Two nodes of 4; a Pod outside the group holds 3 GPUs of a100-0: 5 idle,
// 4 of them on a100-1.
std::vector<json> poolWithHolder() {
  return {node("a100-0", 4), node("a100-1", 4), pod("holder", 3, "", "a100-0")};
}

TEST(NativeGang, AGangWhoseMinCountExceedsTheIdleGpusIsPoolFullNotUnknown) {
  const WaitingReport report =
      explain(with(poolWithHolder(), with({podGroup("train", 3)}, pods("train", 3, 2, "train"))));
  ASSERT_EQ(report.waiting.size(), 1u);
  const WaitingWorkload& gang = report.waiting[0];
  EXPECT_EQ(gang.kind, "PodGroup");
  EXPECT_EQ(gang.name, "train");
  EXPECT_EQ(gang.pods, 3);
  EXPECT_EQ(gang.gpus, 6);
  EXPECT_EQ(gang.cause, WaitCause::PoolFull) << gang.reason;
  EXPECT_EQ(gang.pool, "a100");
  EXPECT_EQ(gang.reason,
            "kube-scheduler places none of the Pods of PodGroup train until 3 of them (its "
            "minCount) fit at once: 3 Pods of 2 nvidia.com/gpu, 6 GPUs in all; 3 of the 8 GPUs "
            "of pool a100 that it may use are in use: 3 GPUs by Pods of namespace ml (priority "
            "0); none of them has a lower priority than its 0, so preemption cannot help");
  EXPECT_EQ(gang.fix,
            "wait for GPUs of pool a100 to free up, add nodes to pool a100, or run it with a "
            "PriorityClass above theirs");
  ASSERT_EQ(report.idle.size(), 1u);
  EXPECT_EQ(report.idle[0].waitingByCause.at(WaitCause::PoolFull), 3);
}

TEST(NativeGang, TheSamePodsWithoutAGroupEachHaveRoomAndTheCauseIsNotGpus) {
  const WaitingReport report = explain(with(poolWithHolder(), pods("train", 3, 2, "")));
  ASSERT_EQ(report.waiting.size(), 3u);
  for (const WaitingWorkload& alone : report.waiting) {
    EXPECT_EQ(alone.kind, "Pod");
    EXPECT_EQ(alone.cause, WaitCause::Unknown);
    EXPECT_TRUE(says(alone.reason, "node a100-1 (pool a100) has room for its accelerators now"))
        << alone.reason;
  }
}

TEST(NativeGang, AGangWhoseMinCountFitsTheIdleGpusIsNotBlamedOnThem) {
  const WaitingReport report =
      explain(with(poolWithHolder(), with({podGroup("train", 2)}, pods("train", 3, 2, "train"))));
  ASSERT_EQ(report.waiting.size(), 1u);
  const WaitingWorkload& gang = report.waiting[0];
  EXPECT_EQ(gang.cause, WaitCause::Unknown);
  EXPECT_EQ(gang.reason,
            "kube-scheduler places none of the Pods of PodGroup train until 2 of them (its "
            "minCount) fit at once: 2 Pods of 2 nvidia.com/gpu, 4 GPUs in all; they fit the idle "
            "GPUs of pool a100 now, so what holds them is not GPUs, taints or node selection");
  EXPECT_EQ(gang.fix,
            "read the scheduler's words on the group: kubectl get podgroups.scheduling.k8s.io "
            "train -o yaml (status.conditions)");
}

TEST(NativeGang, MinCountMorePodsThanThePoolCouldEverHoldIsNoNodeCanHold) {
  const std::vector<json> pool = {node("a100-0", 4), node("a100-1", 4)};
  const WaitingReport report =
      explain(with(pool, with({podGroup("train", 3)}, pods("train", 3, 4, "train"))));
  ASSERT_EQ(report.waiting.size(), 1u);
  const WaitingWorkload& gang = report.waiting[0];
  EXPECT_EQ(gang.cause, WaitCause::NoNodeCanHold) << gang.reason;
  EXPECT_TRUE(says(gang.reason,
                   "3 Pods of 4 nvidia.com/gpu, 12 GPUs in all; the nodes of pool a100 that they "
                   "may use hold at most 2 such Pods, even with every GPU free"))
      << gang.reason;
  EXPECT_EQ(gang.fix,
            "lower the minCount of PodGroup train to at most 2, ask for fewer GPUs per Pod, or "
            "add nodes to pool a100");
  ASSERT_EQ(report.idle.size(), 1u);
  EXPECT_EQ(report.idle[0].unusableIdleGpus, 0) << "it waits for no room: none will do";

  // Nearby: a minCount of 2 the two idle nodes hold.
  const WaitingReport fits =
      explain(with(pool, with({podGroup("train", 2)}, pods("train", 3, 4, "train"))));
  ASSERT_EQ(fits.waiting.size(), 1u);
  EXPECT_EQ(fits.waiting[0].cause, WaitCause::Unknown) << fits.waiting[0].reason;
}

// Four nodes of 4, three with 2 held: 10 idle, spread 4,2,2,2.
std::vector<json> spreadPool() {
  std::vector<json> objects;
  for (int i = 0; i < 4; ++i) {
    const std::string name = "a100-" + std::to_string(i);
    objects.push_back(node(name, 4));
    if (i > 0) objects.push_back(pod("small-" + std::to_string(i), 2, "", name));
  }
  return objects;
}

TEST(NativeGang, IdleGpusThatHoldTheGangTogetherButNotPerNodeAreFragmented) {
  const WaitingReport report =
      explain(with(spreadPool(), with({podGroup("train", 2)}, pods("train", 2, 3, "train"))));
  ASSERT_EQ(report.waiting.size(), 1u);
  const WaitingWorkload& gang = report.waiting[0];
  EXPECT_EQ(gang.cause, WaitCause::Fragmented) << gang.reason;
  EXPECT_TRUE(says(gang.reason,
                   "2 Pods of 3 nvidia.com/gpu, 6 GPUs in all; the nodes of pool a100 that they "
                   "may use have idle nvidia.com/gpu spread 4,2,2,2: together they would hold "
                   "them, but only 1 such Pod fits at once"))
      << gang.reason;
  EXPECT_TRUE(says(gang.fix, "NodeResourcesFit strategy MostAllocated")) << gang.fix;

  // Nearby: Pods of 2, two of which the node of 4 holds.
  const WaitingReport fits =
      explain(with(spreadPool(), with({podGroup("train", 2)}, pods("train", 2, 2, "train"))));
  ASSERT_EQ(fits.waiting.size(), 1u);
  EXPECT_EQ(fits.waiting[0].cause, WaitCause::Unknown) << fits.waiting[0].reason;
}

TEST(NativeGang, PodsThatAskForNoGpuCountTowardMinCount) {
  // minCount 4: the launcher and 3 workers of 2, more than the 5 idle.
  std::vector<json> group =
      with({podGroup("train", 4), pod("launcher", 0, "train")}, pods("train", 3, 2, "train"));
  const WaitingReport report = explain(with(poolWithHolder(), group));
  ASSERT_EQ(report.waiting.size(), 1u);
  EXPECT_EQ(report.waiting[0].cause, WaitCause::PoolFull) << report.waiting[0].reason;
  EXPECT_TRUE(says(report.waiting[0].reason,
                   "until 4 of them (its minCount) fit at once: its 1 Pod that asks for no GPU "
                   "and 3 Pods of 2 nvidia.com/gpu, 6 GPUs in all"))
      << report.waiting[0].reason;
  EXPECT_EQ(report.waiting[0].pods, 3) << "the launcher waits for no GPU";

  // Nearby: minCount 3 takes the launcher and 2 workers, which fit.
  group[0] = podGroup("train", 3);
  const WaitingReport fits = explain(with(poolWithHolder(), group));
  ASSERT_EQ(fits.waiting.size(), 1u);
  EXPECT_EQ(fits.waiting[0].cause, WaitCause::Unknown) << fits.waiting[0].reason;
  EXPECT_TRUE(says(fits.waiting[0].reason, "2 Pods of 2 nvidia.com/gpu, 4 GPUs in all"))
      << fits.waiting[0].reason;
}

TEST(NativeGang, FewerPodsThanMinCountWaitForTheRest) {
  const WaitingReport report =
      explain(with(poolWithHolder(), with({podGroup("train", 4)}, pods("train", 3, 1, "train"))));
  ASSERT_EQ(report.waiting.size(), 1u);
  const WaitingWorkload& gang = report.waiting[0];
  EXPECT_EQ(gang.cause, WaitCause::Unknown);
  EXPECT_EQ(gang.reason,
            "kube-scheduler places none of the Pods of PodGroup train until 4 of them (its "
            "minCount) fit at once, and 3 exist: it waits for the rest to be made");
  EXPECT_TRUE(says(gang.fix, "lower the minCount of PodGroup train to 3")) << gang.fix;

  // Nearby: the fourth Pod made, and 4 GPUs of 1 fit the 5 idle.
  const WaitingReport whole =
      explain(with(poolWithHolder(), with({podGroup("train", 4)}, pods("train", 4, 1, "train"))));
  ASSERT_EQ(whole.waiting.size(), 1u);
  EXPECT_TRUE(says(whole.waiting[0].reason, "they fit the idle GPUs of pool a100 now"))
      << whole.waiting[0].reason;
}

TEST(NativeGang, PartOfANativeGangPlacedIsGangPartialAndTheGroupComesBeforeLabels) {
  std::vector<json> objects = {node("a100-0", 4), node("a100-1", 4), podGroup("train", 2)};
  for (int i = 0; i < 3; ++i) {
    json rank =
        pod("train-" + std::to_string(i), 3, "train", i < 2 ? "a100-" + std::to_string(i) : "");
    rank["metadata"]["labels"] = {{"jobset.sigs.k8s.io/jobset-name", "llama"}};
    objects.push_back(rank);
  }
  const WaitingReport report = explain(objects);
  ASSERT_EQ(report.waiting.size(), 1u);
  const WaitingWorkload& gang = report.waiting[0];
  EXPECT_EQ(gang.kind, "PodGroup");
  EXPECT_EQ(gang.name, "train");
  EXPECT_EQ(gang.cause, WaitCause::GangPartial);
  EXPECT_EQ(gang.reason,
            "2 GPU Pods of PodGroup train are placed and hold 6 GPUs while this one waits for "
            "pool a100, whose 6 of 8 GPUs are in use; its minCount of 2 let the scheduler place "
            "them without this one");
  EXPECT_EQ(gang.fix,
            "raise the minCount of PodGroup train to the number of its Pods so that the "
            "scheduler places them all at once, or free 3 GPUs in pool a100");

  // Nearby: the same Pods without the group are the JobSet's, its gang.
  for (json& object : objects) {
    if (object["kind"] == "Pod") object["spec"].erase("schedulingGroup");
  }
  const WaitingReport labelled = explain(objects);
  ASSERT_EQ(labelled.waiting.size(), 1u);
  EXPECT_EQ(labelled.waiting[0].kind, "JobSet");
  EXPECT_TRUE(says(labelled.waiting[0].reason, "the placed ones cannot start their work"));
}

TEST(NativeGang, APodGroupOfTheBasicPolicyIsNoGang) {
  std::vector<json> objects = {node("a100-0", 4),
                               node("a100-1", 4),
                               podGroup("serve", 0),
                               pod("serve-0", 3, "serve", "a100-0"),
                               pod("serve-1", 3, "serve", "a100-1"),
                               pod("serve-2", 3, "serve")};
  const WaitingReport report = explain(objects);
  ASSERT_EQ(report.waiting.size(), 1u);
  EXPECT_EQ(report.waiting[0].kind, "PodGroup");
  EXPECT_EQ(report.waiting[0].cause, WaitCause::PoolFull) << report.waiting[0].reason;
  EXPECT_FALSE(says(report.waiting[0].reason, "minCount"));
}

TEST(NativeGang, AGangOfClaimsIsJudgedPodByPodAndSaysWhatItCannotTell) {
  // Three Pods of one claimed device each on a node of 2: each fits alone.
  std::vector<json> objects = {testing::draNode(), testing::draSlice(2), testing::deviceClass()};
  for (int i = 0; i < 3; ++i) {
    const std::string name = "train-" + std::to_string(i);
    objects.push_back(testing::draClaim(name, "gpu.nvidia.com", 1));
    json member = testing::claimingPod(name, name);
    member["spec"]["schedulingGroup"] = {{"podGroupName", "train"}};
    objects.push_back(member);
  }
  const WaitingReport alone = explain(objects);
  ASSERT_EQ(alone.waiting.size(), 1u);
  EXPECT_EQ(alone.waiting[0].cause, WaitCause::Unknown);
  EXPECT_FALSE(says(alone.waiting[0].reason, "minCount")) << "no PodGroup is listed";

  objects.push_back(podGroup("train", 3));
  const WaitingReport gang = explain(objects);
  ASSERT_EQ(gang.waiting.size(), 1u);
  EXPECT_EQ(gang.waiting[0].cause, WaitCause::Unknown) << gang.waiting[0].reason;
  EXPECT_TRUE(says(gang.waiting[0].reason,
                   "; its Pods are a gang of PodGroup train (minCount 3), whose claimed devices "
                   "aiadmit does not add up: kube-scheduler holds them until 3 fit at once"))
      << gang.waiting[0].reason;
}

TEST(NativeGang, AGroupThatDoesNotExistHoldsItsPods) {
  const std::vector<json> objects =
      with(poolWithHolder(), with({podGroup("other", 2)}, pods("train", 2, 1, "train")));
  const WaitingReport report = explain(objects);
  ASSERT_EQ(report.waiting.size(), 1u);
  EXPECT_EQ(report.waiting[0].cause, WaitCause::Unknown);
  EXPECT_EQ(report.waiting[0].reason,
            "its Pods name PodGroup train (spec.schedulingGroup.podGroupName), which does not "
            "exist: kube-scheduler places none of them until it does");

  // Nearby: a snapshot without PodGroups says nothing of whether it exists.
  const WaitingReport unlisted = explain(with(poolWithHolder(), pods("train", 2, 1, "train")));
  ASSERT_EQ(unlisted.waiting.size(), 1u);
  EXPECT_TRUE(says(unlisted.waiting[0].reason, "has room for its accelerators now"));
  EXPECT_TRUE(says(unlisted.waiting[0].reason,
                   "; its Pods belong to PodGroup train, whose policy this input does not show"))
      << unlisted.waiting[0].reason;
}

TEST(NativeGang, APodOf135NamesAPodGroupOfAWorkload) {
  std::vector<json> objects = {node("a100-0", 4)};
  for (const char* replica : {"", "1"}) {
    json member = pod(std::string("train-") + (*replica ? replica : "0"), 1, "");
    member["spec"]["workloadRef"] = {{"name", "train"}, {"podGroup", "workers"}};
    if (*replica) member["spec"]["workloadRef"]["podGroupReplicaKey"] = replica;
    objects.push_back(member);
  }
  const WaitingReport report = explain(objects);
  ASSERT_EQ(report.waiting.size(), 2u);
  EXPECT_EQ(report.waiting[0].kind, "PodGroup");
  EXPECT_EQ(report.waiting[0].name, "train/workers");
  EXPECT_EQ(report.waiting[1].name, "train/workers/1");
}

// The scheduler's condition on a group it could not place, as 1.37 writes
// it (1.36: PodGroupScheduled).
json unschedulable(json group, const std::string& type) {
  group["status"]["conditions"] =
      json::array({{{"type", type},
                    {"status", "False"},
                    {"reason", "Unschedulable"},
                    {"message", "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining"},
                    {"lastTransitionTime", "2026-12-01T10:00:05Z"}}});
  return group;
}

TEST(NativeGang, TheGroupsConditionIsTheSchedulersWord) {
  const WaitingReport report = explain(with(
      poolWithHolder(), with({unschedulable(podGroup("train", 3), "PodGroupInitiallyScheduled")},
                             pods("train", 3, 2, "train"))));
  ASSERT_EQ(report.waiting.size(), 1u);
  const SchedulerWord& word = report.waiting[0].scheduler;
  EXPECT_EQ(word.source, "scheduler");
  EXPECT_EQ(word.condition, "PodGroupInitiallyScheduled");
  EXPECT_EQ(word.status, "False");
  EXPECT_EQ(word.reason, "Unschedulable");
  EXPECT_EQ(word.agrees, std::optional<bool>(true)) << "minCount not met is the pool being full";
  EXPECT_TRUE(says(explainText(report, "2026-12-01T10:01:00Z"),
                   "    scheduler: PodGroupInitiallyScheduled=False (Unschedulable): minCount (3) "
                   "cannot be satisfied: 2 scheduled, 0 remaining (aiadmit agrees)\n"))
      << explainText(report, "2026-12-01T10:01:00Z");

  // 1.36's v1alpha2 names the condition PodGroupScheduled.
  json alpha = unschedulable(podGroup("train", 3), "PodGroupScheduled");
  alpha["apiVersion"] = "scheduling.k8s.io/v1alpha2";
  const WaitingReport older =
      explain(with(poolWithHolder(), with({alpha}, pods("train", 3, 2, "train"))));
  ASSERT_EQ(older.waiting.size(), 1u);
  EXPECT_EQ(older.waiting[0].scheduler.condition, "PodGroupScheduled");

  // Nearby: a group whose minCount fits; aiadmit finds no GPU cause there.
  const WaitingReport fits = explain(with(
      poolWithHolder(), with({unschedulable(podGroup("train", 2), "PodGroupInitiallyScheduled")},
                             pods("train", 3, 2, "train"))));
  ASSERT_EQ(fits.waiting.size(), 1u);
  EXPECT_EQ(fits.waiting[0].scheduler.agrees, std::optional<bool>(false));
}

TEST(NativeGang, AnotherSchedulersPodGroupIsNotKubernetesOwn) {
  json volcano = podGroup("train", 3);
  volcano["apiVersion"] = "scheduling.volcano.sh/v1beta1";
  const WaitingReport report =
      explain(with(poolWithHolder(), with({volcano}, pods("train", 3, 2, "train"))));
  ASSERT_EQ(report.waiting.size(), 1u);
  EXPECT_EQ(report.waiting[0].cause, WaitCause::Unknown) << "no PodGroup of its own is listed";
  EXPECT_TRUE(says(report.waiting[0].reason, "whose policy this input does not show"))
      << report.waiting[0].reason;
}

}  // namespace
}  // namespace aiadmit
