// explain's Kueue Workloads and DRA claims: quota that can never admit, quota
// in use, a LocalQueue that is not there; a claim of a missing class, one of
// more devices than a node has, devices allocated to others.
#include <gtest/gtest.h>

#include "tests/waiting/dra_objects.h"
#include "webhook/waiting/explain_output.h"

namespace aiadmit {
namespace {

using namespace testing;

json workload(const std::string& queue, int count, int gpusEach, bool admitted = false) {
  json object = {
      {"apiVersion", "kueue.x-k8s.io/v1beta2"},
      {"kind", "Workload"},
      {"metadata",
       {{"name", "job-train-1a2b3"},
        {"namespace", "ml"},
        {"ownerReferences",
         json::array({{{"kind", "Job"}, {"name", "train"}, {"controller", true}}})}}},
      {"spec",
       {{"queueName", queue},
        {"podSets",
         json::array(
             {{{"name", "main"},
               {"count", count},
               {"template",
                {{"spec",
                  {{"containers", json::array({{{"name", "main"},
                                                {"resources",
                                                 {{"requests", {{"cpu", "1"}}},
                                                  {"limits",
                                                   {{"nvidia.com/gpu",
                                                     std::to_string(gpusEach)}}}}}}})}}}}}}})}}},
      {"status",
       {{"conditions",
         json::array({{{"type", "QuotaReserved"},
                       {"status", "False"},
                       {"reason", "Pending"},
                       {"lastTransitionTime", "2026-12-01T10:00:05Z"},
                       {"message",
                        "couldn't assign flavors to pod set main: insufficient unused quota for "
                        "nvidia.com/gpu in flavor a100, 4 more needed"}},
                      {{"type", "Admitted"},
                       {"status", "False"},
                       {"reason", "NoReservation"},
                       {"lastTransitionTime", "2026-12-01T10:00:05Z"},
                       {"message", "The workload has no reservation"}}})}}}};
  if (admitted) {
    object["status"]["conditions"][0]["status"] = "True";
    object["status"]["conditions"][0]["reason"] = "QuotaReserved";
    object["status"]["conditions"][1] = {{"type", "Admitted"},
                                         {"status", "True"},
                                         {"reason", "Admitted"},
                                         {"message", "The workload is admitted"}};
  }
  return object;
}

json localQueue() {
  return {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
          {"kind", "LocalQueue"},
          {"metadata", {{"name", "team"}, {"namespace", "ml"}}},
          {"spec", {{"clusterQueue", "gpus"}}}};
}

json clusterQueue(int nominal, int reserved, const std::string& cohort = "") {
  json queue = {
      {"apiVersion", "kueue.x-k8s.io/v1beta2"},
      {"kind", "ClusterQueue"},
      {"metadata", {{"name", "gpus"}}},
      {"spec",
       {{"resourceGroups",
         json::array(
             {{{"coveredResources", json::array({"cpu", "nvidia.com/gpu"})},
               {"flavors",
                json::array({{{"name", "a100"},
                              {"resources", json::array({{{"name", "cpu"}, {"nominalQuota", "100"}},
                                                         {{"name", "nvidia.com/gpu"},
                                                          {"nominalQuota", nominal}}})}}})}}})}}},
      {"status",
       {{"flavorsReservation",
         json::array({{{"name", "a100"},
                       {"resources", json::array({{{"name", "nvidia.com/gpu"},
                                                   {"total", std::to_string(reserved)}}})}}})}}}};
  if (!cohort.empty()) queue["spec"]["cohortName"] = cohort;
  return queue;
}

TEST(WaitingQueue, AWorkloadOverItsClusterQueuesWholeQuotaCanNeverBeAdmitted) {
  const WaitingReport report =
      explainObjects({workload("team", 2, 4), localQueue(), clusterQueue(4, 0)});
  ASSERT_EQ(report.waiting.size(), 1u);
  const WaitingWorkload& queued = report.waiting[0];
  EXPECT_EQ(queued.cause, WaitCause::Quota);
  EXPECT_EQ(queued.kind, "Job");
  EXPECT_EQ(queued.name, "train");
  EXPECT_EQ(queued.gpus, 8);
  EXPECT_EQ(queued.pods, 2);
  EXPECT_NE(queued.reason.find("nominal quota of 4 and no cohort to borrow from, so it can never "
                               "be admitted there"),
            std::string::npos)
      << queued.reason;
  EXPECT_EQ(queued.fix,
            "ask for at most 4 nvidia.com/gpu, or raise the nominalQuota of nvidia.com/gpu in "
            "ClusterQueue gpus");
  EXPECT_EQ(queued.scheduler.agrees, std::optional<bool>(true));
}

TEST(WaitingQueue, QuotaInUseWaitsForTheAdmittedWork) {
  const WaitingReport report =
      explainObjects({workload("team", 1, 4), localQueue(), clusterQueue(8, 6, "research")});
  ASSERT_EQ(report.waiting.size(), 1u);
  EXPECT_NE(report.waiting[0].reason.find("of which 6 are in use; it may borrow from cohort "
                                          "research"),
            std::string::npos)
      << report.waiting[0].reason;
  EXPECT_NE(report.waiting[0].fix.find("wait for the admitted work of ClusterQueue gpus"),
            std::string::npos);
}

TEST(WaitingQueue, ALocalQueueThatDoesNotExistIsNamed) {
  const WaitingReport report =
      explainObjects({workload("tema", 1, 1), localQueue(), clusterQueue(8, 0)});
  ASSERT_EQ(report.waiting.size(), 1u);
  EXPECT_NE(report.waiting[0].reason.find("LocalQueue tema, which does not exist in namespace ml"),
            std::string::npos)
      << report.waiting[0].reason;
}

TEST(WaitingQueue, AdmittedWorkloadsAndOnesWithoutGpusDoNotWait) {
  json cpuOnly = workload("team", 1, 0);
  EXPECT_TRUE(
      explainObjects({workload("team", 1, 4, true), cpuOnly, localQueue(), clusterQueue(8, 4)})
          .waiting.empty());
}

TEST(WaitingQueue, KueuesOwnWordsAreShownBesideTheCause) {
  const WaitingReport report =
      explainObjects({workload("team", 1, 4), localQueue(), clusterQueue(8, 6)});
  ASSERT_EQ(report.waiting.size(), 1u);
  const SchedulerWord& word = report.waiting[0].scheduler;
  EXPECT_EQ(word.source, "kueue");
  EXPECT_EQ(word.condition, "QuotaReserved");
  EXPECT_EQ(word.status, "False");
  EXPECT_EQ(word.reason, "Pending");
  EXPECT_EQ(word.agrees, std::optional<bool>(true));
  const std::string text = explainText(report, "2026-12-01T10:01:00Z");
  EXPECT_NE(text.find("\n    kueue: QuotaReserved=False (Pending): couldn't assign flavors to pod "
                      "set main: insufficient unused quota for nvidia.com/gpu in flavor a100, 4 "
                      "more needed (aiadmit agrees)\n"),
            std::string::npos)
      << text;
  const json out = json::parse(explainJson(report));
  EXPECT_EQ(out["waiting"][0]["scheduler"]["source"], "kueue");
  EXPECT_EQ(out["waiting"][0]["scheduler"]["condition"], "QuotaReserved");
  EXPECT_EQ(out["waiting"][0]["scheduler"]["reason"], "Pending");
}

TEST(WaitingQueue, InadmissibleIsKueuesWordForAQueueThatIsNotThere) {
  json queued = workload("tema", 1, 1);
  queued["status"]["conditions"][0]["reason"] = "Inadmissible";
  queued["status"]["conditions"][0]["message"] = "LocalQueue tema doesn't exist";
  const WaitingReport report = explainObjects({queued, localQueue(), clusterQueue(8, 0)});
  ASSERT_EQ(report.waiting.size(), 1u);
  EXPECT_EQ(report.waiting[0].scheduler.reason, "Inadmissible");
  EXPECT_EQ(report.waiting[0].scheduler.agrees, std::optional<bool>(true));
}

// Kueue 0.19 with UnadmittedWorkloadsObservability names the kind of wait in
// QuotaReserved's reason (ExceedsMaxQuota, WaitingForQuota, Misconfigured,
// ...) and sets Admitted False beside it: its words are still the
// QuotaReserved condition, as written.
TEST(WaitingQueue, KueuesTieredReasonsAreItsWords) {
  json never = workload("team", 1, 12);
  never["status"]["conditions"][0]["reason"] = "ExceedsMaxQuota";
  never["status"]["conditions"][0]["message"] =
      "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in flavor "
      "a100, previously considered podsets requests (0) + current podset request (12) > maximum "
      "capacity (8)";
  WaitingReport report = explainObjects({never, localQueue(), clusterQueue(8, 0)});
  ASSERT_EQ(report.waiting.size(), 1u);
  EXPECT_EQ(report.waiting[0].scheduler.condition, "QuotaReserved");
  EXPECT_EQ(report.waiting[0].scheduler.reason, "ExceedsMaxQuota");
  EXPECT_EQ(report.waiting[0].scheduler.agrees, std::optional<bool>(true));
  EXPECT_NE(report.waiting[0].reason.find("so it can never be admitted there"), std::string::npos)
      << report.waiting[0].reason;
  EXPECT_NE(explainText(report, "2026-12-01T10:01:00Z")
                .find("kueue: QuotaReserved=False (ExceedsMaxQuota): couldn't assign flavors"),
            std::string::npos);

  json lost = workload("tema", 1, 1);
  lost["status"]["conditions"][0]["reason"] = "Misconfigured";
  lost["status"]["conditions"][0]["message"] = "LocalQueue tema doesn't exist";
  report = explainObjects({lost, localQueue(), clusterQueue(8, 0)});
  ASSERT_EQ(report.waiting.size(), 1u);
  EXPECT_EQ(report.waiting[0].scheduler.reason, "Misconfigured");
  EXPECT_EQ(report.waiting[0].scheduler.agrees, std::optional<bool>(true));
  EXPECT_NE(report.waiting[0].reason.find("does not exist in namespace ml"), std::string::npos)
      << report.waiting[0].reason;
}

TEST(WaitingQueue, QuotaReservedButNotAdmittedShowsTheAdmittedCondition) {
  json checking = workload("team", 1, 4);
  checking["status"]["conditions"][0] = {{"type", "QuotaReserved"},
                                         {"status", "True"},
                                         {"reason", "QuotaReserved"},
                                         {"message", "Quota reserved in ClusterQueue gpus"}};
  checking["status"]["conditions"][1] = {{"type", "Admitted"},
                                         {"status", "False"},
                                         {"reason", "UnsatisfiedChecks"},
                                         {"message", "The workload has not all checks ready"}};
  const WaitingReport report = explainObjects({checking, localQueue(), clusterQueue(8, 4)});
  ASSERT_EQ(report.waiting.size(), 1u);
  const SchedulerWord& word = report.waiting[0].scheduler;
  EXPECT_EQ(word.condition, "Admitted");
  EXPECT_EQ(word.reason, "UnsatisfiedChecks");
  EXPECT_EQ(word.message, "The workload has not all checks ready");
}

TEST(WaitingQueue, AWorkloadKueueHasNotTriedYetHasNoWords) {
  json fresh = workload("team", 1, 4);
  fresh["status"].erase("conditions");
  const WaitingReport report = explainObjects({fresh, localQueue(), clusterQueue(8, 6)});
  ASSERT_EQ(report.waiting.size(), 1u);
  EXPECT_EQ(report.waiting[0].scheduler.condition, "");
  EXPECT_EQ(report.waiting[0].scheduler.agrees, std::nullopt);
  EXPECT_EQ(explainText(report, "2026-12-01T10:01:00Z").find("kueue:"), std::string::npos);
}

TEST(WaitingClaims, AClaimOfADeviceClassThatDoesNotExistIsUnallocatable) {
  const WaitingReport report =
      explainObjects({draNode(), draSlice(8), deviceClass(), draClaim("c", "gpu.example.com", 1),
                      claimingPod("p", "c")});
  ASSERT_EQ(report.waiting.size(), 1u);
  EXPECT_EQ(report.waiting[0].cause, WaitCause::ClaimUnallocatable);
  EXPECT_NE(report.waiting[0].reason.find("DeviceClass gpu.example.com, which does not exist"),
            std::string::npos);
}

TEST(WaitingClaims, MoreDevicesThanANodeOffersCanNeverBeHeld) {
  const WaitingReport report =
      explainObjects({draNode(), draSlice(8), deviceClass(), draClaim("c", "gpu.nvidia.com", 16),
                      claimingPod("p", "c")});
  ASSERT_EQ(report.waiting.size(), 1u);
  EXPECT_EQ(report.waiting[0].cause, WaitCause::NoNodeCanHold);
  EXPECT_EQ(report.waiting[0].gpus, 16);
  EXPECT_NE(report.waiting[0].reason.find("the most one node it may use offers is 8 (dra-0)"),
            std::string::npos)
      << report.waiting[0].reason;
}

TEST(WaitingClaims, DevicesAllocatedToOtherClaimsLeaveNoneFree) {
  const WaitingReport report =
      explainObjects({draNode(), draSlice(8), deviceClass(),
                      draClaim("held", "gpu.nvidia.com", 8, json::array(), 8),
                      claimingPod("holder", "held", "dra-0"), draClaim("c", "gpu.nvidia.com", 2),
                      claimingPod("p", "c")});
  ASSERT_EQ(report.waiting.size(), 1u);
  EXPECT_EQ(report.waiting[0].name, "p");
  EXPECT_EQ(report.waiting[0].cause, WaitCause::ClaimUnallocatable);
  EXPECT_NE(report.waiting[0].reason.find("at most 0 free on one node"), std::string::npos)
      << report.waiting[0].reason;
  ASSERT_EQ(report.idle.size(), 1u);
  EXPECT_EQ(report.idle[0].pool, "dra");
  EXPECT_EQ(report.idle[0].gpus, 8);
  EXPECT_EQ(report.idle[0].idleGpus, 0);
}

}  // namespace
}  // namespace aiadmit
