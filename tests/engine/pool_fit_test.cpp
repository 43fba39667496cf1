// A profile whose pool matches none of the cluster's GPU nodes: found once
// per profile set and set of Nodes (fitPools), remembered by the engine
// until the profiles or the Nodes change, and said on each request it
// places, as a warning beside what it injected.
#include "webhook/policy/pool_fit.h"

#include <gtest/gtest.h>

#include "tests/support/mutator_harness.h"
#include "tests/support/test_support.h"
#include "webhook/cluster/cluster_snapshot.h"
#include "webhook/engine/engine.h"

namespace aiadmit {
namespace {

// A GKE node pool: GPUs, the cloud's label and taint, not the seed pool's.
constexpr const char* kGkeNode = R"(
- apiVersion: v1
  kind: Node
  metadata: {name: gke-a100-0, labels: {cloud.google.com/gke-nodepool: a100}}
  spec: {taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]}
  status: {allocatable: {nvidia.com/gpu: "8"}})";
constexpr const char* kSeedNode = R"(
- apiVersion: v1
  kind: Node
  metadata: {name: gpu-0, labels: {accelerator: nvidia}}
  spec: {taints: [{key: accelerator, value: gpu, effect: NoSchedule}]}
  status: {allocatable: {nvidia.com/gpu: "8"}})";
constexpr const char* kCpuNode = R"(
- apiVersion: v1
  kind: Node
  metadata: {name: cpu-0}
  status: {allocatable: {cpu: "32"}})";

std::shared_ptr<const ProfileSet> shipped() {
  ProfileLoadResult result =
      loadProfileDirectory(testing::sourceDir() + "/profiles", mutationSwitches());
  EXPECT_TRUE(result.ok());
  return result.set;
}

std::shared_ptr<const ClusterView> clusterOf(const std::string& items) {
  const ClusterSnapshot snapshot =
      readClusterSnapshot("apiVersion: v1\nkind: List\nitems:" + items + "\n", "cluster");
  EXPECT_EQ(snapshot.error, "");
  return snapshot.view;
}

TEST(PoolFit, EveryShippedPoolMatchesNoNodeOfAnotherCloudsGpuGroups) {
  const PoolFit fit = fitPools(*shipped(), *clusterOf(std::string(kGkeNode) + kCpuNode));
  ASSERT_EQ(fit.unmatched.size(), 3u);
  const UnmatchedPool* training = fit.find("training");
  ASSERT_NE(training, nullptr);
  EXPECT_EQ(training->sourceFile, testing::sourceDir() + "/profiles/training.yaml");
  EXPECT_EQ(training->sourceLine, shipped()->find("training")->sourceLine);
  EXPECT_EQ(training->problem(),
            "the pool of profile training matches none of the cluster's 1 GPU nodes (node "
            "groups: cloud.google.com/gke-nodepool=a100), so every workload it places would "
            "stay Pending");
}

TEST(PoolFit, NothingIsUnmatchedWhereAPoolNodeIsOrNoGpuNodeAtAll) {
  EXPECT_TRUE(
      fitPools(*shipped(), *clusterOf(std::string(kGkeNode) + kSeedNode)).unmatched.empty());
  // GPU groups scaled to zero: nothing to match, nothing to say.
  EXPECT_TRUE(fitPools(*shipped(), *clusterOf(kCpuNode)).unmatched.empty());
  // A view that has not listed its Nodes knows nothing of them.
  EXPECT_TRUE(fitPools(*shipped(), ClusterView()).unmatched.empty());
}

const std::string kGpuPod =
    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ml"},)"
    R"("spec":{"restartPolicy":"Never","containers":[{"name":"main","image":"cuda",)"
    R"("resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})";

std::vector<std::string> noticesOf(const Engine& engine) {
  JsonDocument pod;
  pod.Parse(kGpuPod.c_str());
  AdmissionSubject subject = AdmissionSubject::ofObject(pod, "ml");
  return engine.mutate(subject).record.notices;
}

TEST(PoolFit, TheEngineWarnsEachRequestItsProfilePlacesAndTellsEachChangeOnce) {
  Engine engine(shipped());
  std::vector<size_t> changes;
  engine.onPoolFitChange(
      [&](std::shared_ptr<const PoolFit> fit) { changes.push_back(fit->unmatched.size()); });
  const auto gke = clusterOf(std::string(kGkeNode) + kCpuNode);
  engine.replaceClusterView(gke);
  ASSERT_EQ(changes, std::vector<size_t>{3});
  for (int request = 0; request < 2; ++request) {
    const std::vector<std::string> notices = noticesOf(engine);
    ASSERT_EQ(notices.size(), 1u) << ::testing::PrintToString(notices);
    EXPECT_EQ(notices[0],
              "no GPU node of this cluster matches the pool: its Pods would stay Pending; run "
              "profiles init");
  }
  // A view rebuilt with the very same Nodes, and the same profiles again:
  // nothing new to say.
  ClusterView::Builder rebuilt = gke->extended();
  engine.replaceClusterView(std::move(rebuilt).build());
  engine.replaceProfiles(engine.profiles());
  EXPECT_EQ(changes, std::vector<size_t>{3});
  engine.replaceClusterView(clusterOf(std::string(kGkeNode) + kSeedNode));
  EXPECT_EQ(changes, (std::vector<size_t>{3, 0}));
  EXPECT_TRUE(noticesOf(engine).empty());
  engine.replaceClusterView(nullptr);
  EXPECT_EQ(engine.poolFit()->unmatched.size(), 0u);
}

}  // namespace
}  // namespace aiadmit
