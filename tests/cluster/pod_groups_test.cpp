// PodGroups of Kubernetes' own as the view keeps them: the gang policy's
// minCount and the scheduler's condition in each version served (1.37's
// v1beta1 and PodGroupInitiallyScheduled, 1.36's v1alpha2 and
// PodGroupScheduled), another scheduler's PodGroup left out, and a Pod of a
// group kept even when it asks for no GPU.
#include <gtest/gtest.h>

#include "webhook/cluster/cluster_snapshot.h"
#include "webhook/cluster/cluster_view.h"

namespace aiadmit {
namespace {

constexpr const char* kGroups = R"(apiVersion: v1
kind: List
items:
- apiVersion: scheduling.k8s.io/v1beta1
  kind: PodGroup
  metadata: {name: train, namespace: ml}
  spec:
    schedulingPolicy: {gang: {minCount: 4}}
  status:
    conditions:
    - type: PodGroupInitiallyScheduled
      status: "False"
      reason: Unschedulable
      message: "minCount (4) cannot be satisfied: 3 scheduled, 0 remaining"
      lastTransitionTime: "2026-12-01T10:00:00Z"
- apiVersion: scheduling.k8s.io/v1alpha2
  kind: PodGroup
  metadata: {name: older, namespace: ml}
  spec:
    schedulingPolicy: {gang: {minCount: 2}}
  status:
    conditions:
    - {type: PodGroupScheduled, status: "True", reason: Scheduled, message: ""}
- apiVersion: scheduling.k8s.io/v1beta1
  kind: PodGroup
  metadata: {name: serve, namespace: ml}
  spec:
    schedulingPolicy: {basic: {}}
- apiVersion: scheduling.volcano.sh/v1beta1
  kind: PodGroup
  metadata: {name: volcano, namespace: ml}
  spec: {minMember: 8}
)";

std::shared_ptr<const ClusterView> viewOf(const std::string& text,
                                          std::vector<std::string>* skipped = nullptr) {
  const ClusterSnapshot snapshot = readClusterSnapshot(text, "cluster.yaml");
  EXPECT_TRUE(snapshot.error.empty()) << snapshot.error;
  if (skipped != nullptr) *skipped = snapshot.skippedKinds;
  return snapshot.view;
}

TEST(PodGroups, TheGangsMinCountAndTheSchedulersConditionAreKeptInEachVersion) {
  std::vector<std::string> skipped;
  const auto view = viewOf(kGroups, &skipped);
  EXPECT_TRUE(view->knows(ClusterKind::PodGroup));
  const PodGroupRecord* train = view->podGroup("ml", "train");
  ASSERT_NE(train, nullptr);
  EXPECT_EQ(train->minCount, std::optional<int64_t>(4));
  EXPECT_EQ(train->scheduled.type, "PodGroupInitiallyScheduled");
  EXPECT_EQ(train->scheduled.status, "False");
  EXPECT_EQ(train->scheduled.reason, "Unschedulable");
  EXPECT_EQ(train->scheduled.message, "minCount (4) cannot be satisfied: 3 scheduled, 0 remaining");
  const PodGroupRecord* older = view->podGroup("ml", "older");
  ASSERT_NE(older, nullptr);
  EXPECT_EQ(older->minCount, std::optional<int64_t>(2));
  EXPECT_EQ(older->scheduled.type, "PodGroupScheduled");
  EXPECT_EQ(older->scheduled.status, "True");
  const PodGroupRecord* serve = view->podGroup("ml", "serve");
  ASSERT_NE(serve, nullptr);
  EXPECT_EQ(serve->minCount, std::nullopt) << "the basic policy is no gang";
  EXPECT_EQ(serve->scheduled.type, "");
  EXPECT_EQ(view->podGroup("ml", "volcano"), nullptr);
  EXPECT_EQ(view->podGroup("other", "train"), nullptr) << "a PodGroup is its namespace's";
  EXPECT_EQ(skipped, std::vector<std::string>{"scheduling.volcano.sh/v1beta1 PodGroup"});
}

TEST(PodGroups, TheKindsRowNamesKubernetesOwnGroupInItsServedVersions) {
  const ResourceType& type = resourceType(ClusterKind::PodGroup);
  EXPECT_EQ(type.qualifiedPlural(), "podgroups.scheduling.k8s.io");
  EXPECT_EQ(type.versions, (std::vector<std::string>{"v1beta1", "v1alpha3", "v1alpha2"}));
  EXPECT_TRUE(type.namespaced);
  EXPECT_EQ(type.whenAbsent, ResourceType::WhenAbsent::Empty);
  EXPECT_EQ(clusterKindOf("PodGroup"), ClusterKind::PodGroup);
  // Without one, the kind is not known: a group a Pod names may exist.
  EXPECT_FALSE(
      viewOf("apiVersion: v1\nkind: Node\nmetadata: {name: a}\n")->knows(ClusterKind::PodGroup));
}

TEST(PodGroups, APodOfAGroupIsKeptThoughItAsksForNoGpu) {
  const auto view = viewOf(R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: launcher, namespace: ml}
  spec:
    schedulingGroup: {podGroupName: train}
    containers: [{name: main, image: i, env: [{name: TOKEN, value: t}]}]
- apiVersion: v1
  kind: Pod
  metadata: {name: launcher-135, namespace: ml}
  spec:
    workloadRef: {name: train, podGroup: workers}
    containers: [{name: main, image: i}]
- apiVersion: v1
  kind: Pod
  metadata: {name: web, namespace: ml}
  spec:
    containers: [{name: nginx, image: i}]
)");
  ASSERT_EQ(view->pods().size(), 2u);
  const std::string launcher = toJson(*view->pods()[0].object);
  EXPECT_NE(launcher.find(R"("schedulingGroup":{"podGroupName":"train"})"), std::string::npos)
      << launcher;
  EXPECT_EQ(launcher.find("TOKEN"), std::string::npos) << launcher;
  const std::string older = toJson(*view->pods()[1].object);
  EXPECT_NE(older.find(R"("workloadRef":{"name":"train","podGroup":"workers"})"), std::string::npos)
      << older;
}

}  // namespace
}  // namespace aiadmit
