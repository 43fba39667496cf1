// Device taints as the view keeps them: a device's own (v1 and v1beta1's
// `basic`), DeviceTaintRules with the devices they select, and the
// capacity the rules read, which no taint changes.
#include <gtest/gtest.h>

#include "webhook/cluster/cluster_snapshot.h"
#include "webhook/cluster/cluster_view.h"

namespace aiadmit {
namespace {

// A node of 2 GPUs whose driver taints one, in v1, a v1beta1 slice of
// another driver, and two DeviceTaintRules as `kubectl get -o yaml` prints
// them.
constexpr const char* kTainted = R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: gpu-a}
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {name: gpu-a-gpu.nvidia.com-k2x9q}
  spec:
    driver: gpu.nvidia.com
    nodeName: gpu-a
    pool: {name: gpu-a, generation: 1, resourceSliceCount: 1}
    devices:
    - name: gpu-0
      taints:
      - key: gpu.nvidia.com/unhealthy
        value: xid-79
        effect: NoExecute
        timeAdded: "2026-12-01T09:00:00Z"
    - name: gpu-1
- apiVersion: resource.k8s.io/v1beta1
  kind: ResourceSlice
  metadata: {name: gpu-a-gpu.amd.com-p4s8d}
  spec:
    driver: gpu.amd.com
    nodeName: gpu-a
    pool: {name: gpu-a, generation: 1, resourceSliceCount: 1}
    devices:
    - name: gpu-0
      basic:
        taints: [{key: amd.com/maintenance, effect: NoSchedule}]
- apiVersion: resource.k8s.io/v1
  kind: DeviceClass
  metadata: {name: gpu.nvidia.com}
  spec:
    selectors: [{cel: {expression: "device.driver == 'gpu.nvidia.com'"}}]
- apiVersion: resource.k8s.io/v1
  kind: DeviceTaintRule
  metadata: {name: firmware-upgrade, generation: 1}
  spec:
    deviceSelector: {driver: gpu.nvidia.com, pool: gpu-a}
    taint: {key: example.com/maintenance, value: firmware, effect: NoSchedule,
            timeAdded: "2026-12-01T09:30:00Z"}
  status:
    conditions:
    - type: EvictionInProgress
      status: "False"
      reason: NoEffect
      message: "0 pods need to be evicted"
      lastTransitionTime: "2026-12-01T09:30:00Z"
      observedGeneration: 1
- apiVersion: resource.k8s.io/v1
  kind: DeviceTaintRule
  metadata: {name: no-selector}
  spec:
    taint: {key: example.com/all, effect: NoExecute}
- apiVersion: resource.k8s.io/v1alpha3
  kind: DeviceTaintRule
  metadata: {name: by-class}
  spec:
    deviceSelector:
      deviceClassName: gpu.nvidia.com
      selectors: [{cel: {expression: "device.attributes['gpu.nvidia.com'].model == 'A100'"}}]
    taint: {key: example.com/a100, effect: NoSchedule}
)";

std::shared_ptr<const ClusterView> viewOf(const std::string& text) {
  const ClusterSnapshot snapshot = readClusterSnapshot(text, "cluster.yaml");
  EXPECT_TRUE(snapshot.error.empty()) << snapshot.error;
  EXPECT_TRUE(snapshot.skippedKinds.empty());
  return snapshot.view;
}

const SliceDevice* deviceOf(const ClusterView& view, std::string_view driver,
                            std::string_view name) {
  for (const ResourceSliceRecord& slice : view.resourceSlices()) {
    if (slice.driver != driver) continue;
    for (const SliceDevice& device : slice.devices) {
      if (device.name == name) return &device;
    }
  }
  return nullptr;
}

TEST(DeviceTaints, ADevicesTaintsAreKeptInEveryShape) {
  const auto view = viewOf(kTainted);
  const SliceDevice* unhealthy = deviceOf(*view, "gpu.nvidia.com", "gpu-0");
  ASSERT_NE(unhealthy, nullptr);
  ASSERT_EQ(unhealthy->taints.size(), 1u);
  EXPECT_EQ(unhealthy->taints[0].key, "gpu.nvidia.com/unhealthy");
  EXPECT_EQ(unhealthy->taints[0].value, "xid-79");
  EXPECT_EQ(unhealthy->taints[0].effect, "NoExecute");
  EXPECT_EQ(unhealthy->taints[0].timeAdded, "2026-12-01T09:00:00Z");
  EXPECT_TRUE(deviceOf(*view, "gpu.nvidia.com", "gpu-1")->taints.empty());
  const SliceDevice* v1beta1 = deviceOf(*view, "gpu.amd.com", "gpu-0");
  ASSERT_NE(v1beta1, nullptr);
  ASSERT_EQ(v1beta1->taints.size(), 1u);
  EXPECT_EQ(v1beta1->taints[0].key, "amd.com/maintenance");
}

TEST(DeviceTaints, ARuleSelectsTheDevicesOfEveryFieldItSets) {
  const auto view = viewOf(kTainted);
  EXPECT_TRUE(view->knows(ClusterKind::DeviceTaintRule));
  ASSERT_EQ(view->deviceTaintRules().size(), 3u);
  const DeviceTaintRuleRecord& firmware = view->deviceTaintRules()[1];
  EXPECT_EQ(firmware.name, "firmware-upgrade");
  EXPECT_EQ(firmware.taint.key, "example.com/maintenance");
  EXPECT_EQ(firmware.taint.effect, "NoSchedule");
  EXPECT_TRUE(firmware.appliesTo("gpu.nvidia.com", "gpu-a", "gpu-0"));
  EXPECT_TRUE(firmware.appliesTo("gpu.nvidia.com", "gpu-a", "gpu-7"));
  EXPECT_FALSE(firmware.appliesTo("gpu.amd.com", "gpu-a", "gpu-0"));
  EXPECT_FALSE(firmware.appliesTo("gpu.nvidia.com", "gpu-b", "gpu-0"));
  const DeviceTaintRuleRecord& byClass = view->deviceTaintRules()[0];
  EXPECT_EQ(byClass.name, "by-class");
  EXPECT_FALSE(byClass.appliesTo("gpu.nvidia.com", "gpu-a", "gpu-0"))
      << "v1alpha3's class and CEL selectors are not evaluated: the rule is not counted";
  const DeviceTaintRuleRecord& none = view->deviceTaintRules()[2];
  EXPECT_FALSE(none.appliesTo("gpu.nvidia.com", "gpu-a", "gpu-0"))
      << "without a selector a rule selects no device";
}

TEST(DeviceTaints, TaintedDevicesAreStillCapacity) {
  const auto view = viewOf(kTainted);
  const auto largest = view->largestNodeForDeviceClass("gpu.nvidia.com", Placement{});
  ASSERT_TRUE(largest);
  EXPECT_EQ(largest->devices, 2) << "a taint passes; the node's size does not";
  EXPECT_EQ(view->devicesOnNode(*view->deviceClass("gpu.nvidia.com"), *view->node("gpu-a")), 2);
}

TEST(DeviceTaints, WithoutDeviceTaintRulesTheKindIsNotKnown) {
  const auto view = viewOf(R"(apiVersion: v1
kind: Node
metadata: {name: gpu-a}
)");
  EXPECT_FALSE(view->knows(ClusterKind::DeviceTaintRule));
  EXPECT_TRUE(view->deviceTaintRules().empty());
  EXPECT_EQ(kindName(ClusterKind::DeviceTaintRule), "DeviceTaintRule");
  EXPECT_EQ(clusterKindOf("DeviceTaintRule"), ClusterKind::DeviceTaintRule);
}

}  // namespace
}  // namespace aiadmit
