// The kinds of the cluster view that only say what exists, what the API
// server adds to a Pod and what a Pod's claims hold: RuntimeClasses and
// ResourceClaims, read from a snapshot as kubectl prints them, kept by
// extended(), and unknown when the snapshot has none.
#include <gtest/gtest.h>

#include "webhook/cluster/cluster_snapshot.h"
#include "webhook/cluster/cluster_view.h"

namespace aiadmit {
namespace {

// As `kubectl get runtimeclasses -o yaml` prints the GPU Operator's class
// with the scheduling a platform team adds to it.
constexpr const char* kRuntimeClasses = R"(apiVersion: v1
kind: List
items:
- apiVersion: node.k8s.io/v1
  kind: RuntimeClass
  metadata:
    name: nvidia
    creationTimestamp: "2025-01-10T09:00:00Z"
  handler: nvidia
  overhead:
    podFixed:
      memory: 120Mi
  scheduling:
    nodeSelector:
      nvidia.com/gpu.present: "true"
      pool: h100
    tolerations:
    - key: nvidia.com/gpu
      operator: Exists
      effect: NoSchedule
    - key: dedicated
      value: gpu
      effect: NoExecute
      tolerationSeconds: 300
- apiVersion: node.k8s.io/v1
  kind: RuntimeClass
  metadata:
    name: runc
  handler: runc
)";

std::shared_ptr<const ClusterView> viewOf(const std::string& text) {
  ClusterSnapshot snapshot = readClusterSnapshot(text, "cluster.yaml");
  EXPECT_TRUE(snapshot.error.empty()) << snapshot.error;
  return snapshot.view ? snapshot.view : std::move(ClusterView::Builder{}).build();
}

TEST(ClusterViewRuntimeClass, KeepsHandlerAndWhatItAddsToAPodsPlacement) {
  const auto view = viewOf(kRuntimeClasses);
  EXPECT_TRUE(view->knows(ClusterKind::RuntimeClass));
  const RuntimeClassRecord* nvidia = view->runtimeClass("nvidia");
  ASSERT_NE(nvidia, nullptr);
  EXPECT_EQ(nvidia->handler, "nvidia");
  EXPECT_EQ(nvidia->nodeSelector, (std::map<std::string, std::string>{
                                      {"nvidia.com/gpu.present", "true"}, {"pool", "h100"}}));
  ASSERT_EQ(nvidia->tolerations.size(), 2u);
  EXPECT_EQ(nvidia->tolerations[0].key, "nvidia.com/gpu");
  EXPECT_EQ(nvidia->tolerations[0].op, "Exists");
  EXPECT_EQ(nvidia->tolerations[0].effect, "NoSchedule");
  EXPECT_FALSE(nvidia->tolerations[0].tolerationSeconds);
  // No operator is Equal, as the API defaults it.
  EXPECT_EQ(nvidia->tolerations[1].op, "Equal");
  EXPECT_EQ(nvidia->tolerations[1].value, "gpu");
  EXPECT_EQ(nvidia->tolerations[1].tolerationSeconds, 300);

  const RuntimeClassRecord* runc = view->runtimeClass("runc");
  ASSERT_NE(runc, nullptr);
  EXPECT_TRUE(runc->nodeSelector.empty());
  EXPECT_TRUE(runc->tolerations.empty());
}

TEST(ClusterViewRuntimeClass, ExistsIsNoOnlyWhenRuntimeClassesWereListed) {
  const auto view = viewOf(kRuntimeClasses);
  EXPECT_EQ(view->hasRuntimeClass("nvidia"), Presence::Yes);
  EXPECT_EQ(view->hasRuntimeClass("kata"), Presence::No);

  const auto withoutThem = viewOf(R"(apiVersion: v1
kind: Node
metadata:
  name: gpu-a
)");
  EXPECT_FALSE(withoutThem->knows(ClusterKind::RuntimeClass));
  EXPECT_EQ(withoutThem->hasRuntimeClass("nvidia"), Presence::Unknown);
  EXPECT_EQ(withoutThem->runtimeClass("nvidia"), nullptr);
}

TEST(ClusterViewRuntimeClass, AnotherGroupsKindOfTheSameNameIsSkipped) {
  ClusterSnapshot snapshot = readClusterSnapshot(R"(apiVersion: example.com/v1
kind: RuntimeClass
metadata:
  name: nvidia
handler: nvidia
)",
                                                 "cluster.yaml");
  ASSERT_TRUE(snapshot.error.empty()) << snapshot.error;
  EXPECT_EQ(snapshot.skippedKinds, std::vector<std::string>{"example.com/v1 RuntimeClass"});
  EXPECT_EQ(snapshot.view->hasRuntimeClass("nvidia"), Presence::Unknown);
}

TEST(ClusterViewRuntimeClass, ExtendedKeepsThem) {
  const auto view = viewOf(kRuntimeClasses);
  const auto extended = view->extended().build();
  EXPECT_EQ(extended->hasRuntimeClass("nvidia"), Presence::Yes);
  EXPECT_EQ(extended->runtimeClass("nvidia")->tolerations.size(), 2u);
  EXPECT_EQ(extended->hasRuntimeClass("kata"), Presence::No);
}

TEST(ClusterViewRuntimeClass, ARuntimeClassWithoutANameIsAnError) {
  const ClusterSnapshot snapshot = readClusterSnapshot(R"(apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {}
handler: nvidia
)",
                                                       "cluster.yaml");
  EXPECT_EQ(snapshot.error, "cluster.yaml:1: RuntimeClass: metadata.name is required");
}

// ResourceClaims in two versions' shapes, as `kubectl get resourceclaims -A
// -o yaml` prints them from clusters that serve them.
constexpr const char* kClaims = R"(apiVersion: v1
kind: List
items:
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaim
  metadata: {name: shared-gpu, namespace: ml}
  spec:
    devices:
      requests:
      - name: gpus
        exactly: {deviceClassName: gpu.nvidia.com, count: 4}
- apiVersion: resource.k8s.io/v1beta1
  kind: ResourceClaim
  metadata: {name: old-shape, namespace: ml}
  spec:
    devices:
      requests:
      - name: gpu
        deviceClassName: gpu.nvidia.com
        count: 2
)";

TEST(ClusterViewResourceClaim, KeepsEachClaimsRequestsInTheShapeOfItsVersion) {
  const auto view = viewOf(kClaims);
  EXPECT_TRUE(view->knows(ClusterKind::ResourceClaim));
  const ClaimRecord* shared = view->claim("ml", "shared-gpu");
  ASSERT_NE(shared, nullptr);
  ASSERT_EQ(shared->spec.requests.size(), 1u);
  EXPECT_EQ(shared->spec.requests[0].alternatives.at(0).deviceClassName, "gpu.nvidia.com");
  EXPECT_EQ(shared->spec.requests[0].alternatives.at(0).count, 4);
  const ClaimRecord* old = view->claim("ml", "old-shape");
  ASSERT_NE(old, nullptr);
  EXPECT_EQ(old->spec.requests.at(0).alternatives.at(0).count, 2);
  EXPECT_TRUE(old->spec.problems.empty());
  // Claims are not templates: neither answers for the other.
  EXPECT_EQ(view->hasClaimTemplate("ml", "shared-gpu"), Presence::Unknown);
}

TEST(ClusterViewResourceClaim, ExistsIsNoOnlyWhenClaimsWereListed) {
  const auto view = viewOf(kClaims);
  EXPECT_EQ(view->hasClaim("ml", "shared-gpu"), Presence::Yes);
  EXPECT_EQ(view->hasClaim("default", "shared-gpu"), Presence::No);
  EXPECT_EQ(view->extended().build()->hasClaim("ml", "old-shape"), Presence::Yes);
  EXPECT_EQ(viewOf(kRuntimeClasses)->hasClaim("ml", "shared-gpu"), Presence::Unknown);
  const ClusterSnapshot noNamespace = readClusterSnapshot(R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared-gpu}
spec: {}
)",
                                                          "cluster.yaml");
  EXPECT_EQ(noNamespace.error,
            "cluster.yaml:1: ResourceClaim shared-gpu: metadata.namespace is required");
}

}  // namespace
}  // namespace aiadmit
