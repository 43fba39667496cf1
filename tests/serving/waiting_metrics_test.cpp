// serve's waiting gauges: counted from a view that knows its Nodes and Pods,
// silent before, and made on their own thread from the newest view given.
#include "webhook/serving/waiting_metrics.h"

#include <gtest/gtest.h>

#include <chrono>

#include "webhook/cluster/cluster_snapshot.h"

namespace aiadmit {
namespace {

constexpr const char* kCluster = R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: a100-0, labels: {cloud.google.com/gke-nodepool: a100}}
  status: {allocatable: {nvidia.com/gpu: "4"}}
- apiVersion: v1
  kind: Pod
  metadata: {name: bound, namespace: ml}
  spec:
    nodeName: a100-0
    containers: [{name: main, resources: {limits: {nvidia.com/gpu: "1"}}}]
  status: {phase: Running}
- apiVersion: v1
  kind: Pod
  metadata: {name: big, namespace: "ml\"x"}
  spec:
    containers: [{name: main, resources: {limits: {nvidia.com/gpu: "8"}}}]
  status: {phase: Pending}
)";

std::shared_ptr<const ClusterView> viewOf(const char* text) {
  const ClusterSnapshot snapshot = readClusterSnapshot(text, "cluster");
  EXPECT_EQ(snapshot.error, "");
  return snapshot.view;
}

TEST(WaitingGauges, CountsWaitingWorkByCauseAndNamespaceAndIdleGpusByPool) {
  const std::optional<WaitingCounts> counts = countWaiting(viewOf(kCluster));
  ASSERT_TRUE(counts);
  EXPECT_EQ(counts->waiting.at({"no-node-can-hold", "ml\"x"}), 1);
  EXPECT_EQ(counts->idleGpus.at("a100"), 3);
}

TEST(WaitingGauges, AViewThatHasNotListedPodsCountsNothing) {
  ClusterView::Builder builder;
  builder.markListed(ClusterKind::Node);
  EXPECT_FALSE(countWaiting(std::move(builder).build()));
  EXPECT_FALSE(countWaiting(nullptr));
}

TEST(WaitingGauges, RendersTheNewestViewsCountsWithEscapedLabels) {
  WaitingGauges gauges(std::chrono::milliseconds(10));
  std::string before;
  gauges.render(before);
  EXPECT_NE(before.find("# TYPE aiadmit_gpu_workloads_waiting gauge"), std::string::npos);
  EXPECT_EQ(before.find("aiadmit_gpus_idle{"), std::string::npos) << "no samples before a count";
  gauges.update(viewOf(kCluster));
  ASSERT_TRUE(gauges.awaitCount(std::chrono::seconds(10))) << "no count of the view";
  std::string out;
  gauges.render(out);
  EXPECT_NE(
      out.find(
          "aiadmit_gpu_workloads_waiting{cause=\"no-node-can-hold\",namespace=\"ml\\\"x\"} 1\n"),
      std::string::npos)
      << out;
  EXPECT_NE(out.find("aiadmit_gpus_idle{pool=\"a100\"} 3\n"), std::string::npos) << out;
  gauges.stop();
}

// Two nodes of 4 GPUs with 2 held on each, and a Pod of 4 that waits: the 4
// idle GPUs are of no use to it.
constexpr const char* kFragmented = R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: a100-0, labels: {cloud.google.com/gke-nodepool: a100}}
  status: {allocatable: {nvidia.com/gpu: "4"}}
- apiVersion: v1
  kind: Node
  metadata: {name: a100-1, labels: {cloud.google.com/gke-nodepool: a100}}
  status: {allocatable: {nvidia.com/gpu: "4"}}
- apiVersion: v1
  kind: Pod
  metadata: {name: small-0, namespace: ml}
  spec:
    nodeName: a100-0
    containers: [{name: main, resources: {limits: {nvidia.com/gpu: "2"}}}]
  status: {phase: Running}
- apiVersion: v1
  kind: Pod
  metadata: {name: small-1, namespace: ml}
  spec:
    nodeName: a100-1
    containers: [{name: main, resources: {limits: {nvidia.com/gpu: "2"}}}]
  status: {phase: Running}
- apiVersion: v1
  kind: Pod
  metadata: {name: wide, namespace: ml}
  spec:
    containers: [{name: main, resources: {limits: {nvidia.com/gpu: "4"}}}]
  status: {phase: Pending}
)";

TEST(WaitingGauges, IdleGpusNoWaitingPodCanUseAreUnusable) {
  const std::optional<WaitingCounts> counts = countWaiting(viewOf(kFragmented));
  ASSERT_TRUE(counts);
  EXPECT_EQ(counts->waiting.at({"fragmented", "ml"}), 1);
  EXPECT_EQ(counts->idleGpus.at("a100"), 4);
  EXPECT_EQ(counts->unusableIdleGpus.at("a100"), 4);
  const std::optional<WaitingCounts> fits = countWaiting(viewOf(kCluster));
  ASSERT_TRUE(fits);
  EXPECT_EQ(fits->unusableIdleGpus.at("a100"), 0) << "no Pod waits for room in the pool";

  WaitingGauges gauges(std::chrono::milliseconds(10));
  gauges.update(viewOf(kFragmented));
  ASSERT_TRUE(gauges.awaitCount(std::chrono::seconds(10))) << "no count of the view";
  std::string out;
  gauges.render(out);
  const size_t idle = out.find("# TYPE aiadmit_gpus_idle gauge\n");
  const size_t unusable = out.find(
      "# HELP aiadmit_gpus_idle_unusable Idle accelerators of each "
      "pool that no Pod waiting for the pool can use");
  ASSERT_NE(idle, std::string::npos) << out;
  ASSERT_NE(unusable, std::string::npos) << out;
  EXPECT_LT(idle, unusable) << "beside aiadmit_gpus_idle";
  EXPECT_NE(out.find("# TYPE aiadmit_gpus_idle_unusable gauge\n"
                     "aiadmit_gpus_idle_unusable{pool=\"a100\"} 4\n"),
            std::string::npos)
      << out;
  gauges.stop();
}

}  // namespace
}  // namespace aiadmit
