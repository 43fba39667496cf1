// The cluster view's indexes: parts shared between views whose objects did
// not change, ResourceSlices indexed by driver and node giving what a scan
// of every slice for every node gives, and the DeviceClass that backs an
// extended resource name chosen as the scheduler chooses it.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "webhook/cluster/cluster_pools.h"
#include "webhook/cluster/cluster_view.h"

namespace aiadmit {
namespace {

template <typename T>
ClusterObjectsPtr shared(std::vector<T> records) {
  auto objects = std::make_shared<ClusterObjects>();
  for (T& record : records) {
    objects->push_back(std::make_shared<const ClusterObject>(std::move(record)));
  }
  return objects;
}

SliceDevice device(std::string name) {
  SliceDevice out;
  out.name = std::move(name);
  return out;
}

ClusterNode node(const std::string& name, const std::string& pool) {
  ClusterNode out;
  out.name = name;
  out.labels = {{"pool", pool}, {"kubernetes.io/hostname", name}};
  return out;
}

DeviceClassRecord deviceClass(const std::string& name, const std::string& driver,
                              const std::string& resource = "", const std::string& created = "") {
  DeviceClassRecord out;
  out.name = name;
  out.drivers = {driver};
  out.extendedResourceName = resource;
  out.creationTimestamp = created;
  return out;
}

std::shared_ptr<const ClusterView> build(ClusterObjectsPtr nodes, ClusterObjectsPtr slices,
                                         ClusterObjectsPtr classes,
                                         const ClusterView* previous = nullptr) {
  ClusterView::Builder builder;
  builder.addAll(ClusterKind::Node, std::move(nodes));
  builder.addAll(ClusterKind::ResourceSlice, std::move(slices));
  builder.addAll(ClusterKind::DeviceClass, std::move(classes));
  for (ClusterKind kind : kAllClusterKinds) builder.markListed(kind);
  if (previous != nullptr) builder.reuse(*previous);
  return std::move(builder).build();
}

TEST(ClusterViewIndex, AViewSharesThePartsWhoseObjectsDidNotChange) {
  const auto slices = shared(std::vector<ResourceSliceRecord>{});
  const auto classes = shared(std::vector<DeviceClassRecord>{deviceClass("gpu", "gpu.x")});
  const auto first = build(shared(std::vector<ClusterNode>{node("a", "p")}), slices, classes);
  // One Node changed: a new snapshot of Nodes, the same of the rest.
  const auto second = build(shared(std::vector<ClusterNode>{node("a", "p"), node("b", "p")}),
                            slices, classes, first.get());
  EXPECT_FALSE(second->sharesPart(ClusterKind::Node, *first));
  EXPECT_TRUE(second->sharesPart(ClusterKind::ResourceSlice, *first));
  EXPECT_TRUE(second->sharesPart(ClusterKind::DeviceClass, *first));
  EXPECT_EQ(second->nodes().size(), 2u);
  EXPECT_EQ(second->deviceClass("gpu"), first->deviceClass("gpu")) << "the record itself is shared";
  // Without reuse every part is made anew, even of the same objects.
  const auto fresh = build(shared(std::vector<ClusterNode>{}), slices, classes);
  EXPECT_FALSE(fresh->sharesPart(ClusterKind::ResourceSlice, *first));
  // extended() keeps the parts that nothing is added to.
  ClusterView::Builder more = second->extended();
  more.add(PriorityClassRecord{"ai-batch", 1000, false});
  const auto extended = std::move(more).build();
  EXPECT_TRUE(extended->sharesPart(ClusterKind::Node, *second));
  EXPECT_FALSE(extended->sharesPart(ClusterKind::PriorityClass, *second));
  EXPECT_EQ(extended->hasPriorityClass("ai-batch"), Presence::Yes);
}

// What a node can use of a class, by scanning every slice as the view did
// before it had indexes; the index must give the same.
int64_t scanned(const std::vector<ResourceSliceRecord>& slices, const std::string& driver,
                const ClusterNode& node) {
  auto reaches = [&](const std::string& nodeName, bool allNodes,
                     const std::optional<NodeSelectorTerms>& selector) {
    if (allNodes) return true;
    if (!nodeName.empty()) return nodeName == node.name;
    if (!selector) return false;
    for (const auto& term : *selector) {
      bool all = !term.empty();
      for (const OwnedRequirement& requirement : term) {
        const auto label = node.labels.find(requirement.key);
        all = all && label != node.labels.end() && requirement.values.size() == 1 &&
              label->second == requirement.values[0];
      }
      if (all) return true;
    }
    return false;
  };
  std::set<std::tuple<std::string, std::string>> devices;
  for (const ResourceSliceRecord& slice : slices) {
    if (slice.driver != driver) continue;
    for (const SliceDevice& device : slice.devices) {
      const bool reached = slice.perDeviceNodeSelection
                               ? reaches(device.nodeName, device.allNodes, device.nodeSelector)
                               : reaches(slice.nodeName, slice.allNodes, slice.nodeSelector);
      if (reached) devices.emplace(slice.pool, device.name);
    }
  }
  return static_cast<int64_t>(devices.size());
}

TEST(ClusterViewIndex, IndexedSlicesCountWhatAScanOfEverySliceCounts) {
  std::vector<ClusterNode> nodes;
  for (int i = 0; i < 12; ++i) {
    nodes.push_back(node("node-" + std::to_string(i), i % 3 == 0 ? "a100" : "h100"));
  }
  const NodeSelectorTerms h100 = {{{"pool", LabelOperator::In, {"h100"}, false}}};
  std::vector<ResourceSliceRecord> slices;
  for (int i = 0; i < 12; ++i) {
    ResourceSliceRecord local;
    local.driver = "gpu.x";
    local.pool = "node-" + std::to_string(i);
    local.name = local.pool;
    local.nodeName = local.pool;
    for (int d = 0; d < i % 5; ++d) local.devices.push_back(device("gpu-" + std::to_string(d)));
    slices.push_back(local);
  }
  // The same device twice in one pool: it counts once.
  ResourceSliceRecord twice = slices[4];
  twice.name = "node-4-again";
  slices.push_back(twice);
  ResourceSliceRecord fabric;  // network-attached, reaching the h100 nodes
  fabric.driver = "gpu.x";
  fabric.pool = "fabric";
  fabric.name = "fabric";
  fabric.nodeSelector = h100;
  fabric.devices = {device("link-0"), device("link-1")};
  slices.push_back(fabric);
  ResourceSliceRecord everywhere;
  everywhere.driver = "gpu.x";
  everywhere.pool = "cluster";
  everywhere.name = "cluster";
  everywhere.allNodes = true;
  everywhere.devices = {device("shared-0")};
  slices.push_back(everywhere);
  ResourceSliceRecord perDevice;  // one on node-2, one on every h100 node
  perDevice.driver = "gpu.x";
  perDevice.pool = "node-2";
  perDevice.name = "per-device";
  perDevice.perDeviceNodeSelection = true;
  perDevice.devices = {{"gpu-0", "node-2", false, std::nullopt},  // also in node-2's own slice
                       {"mig-0", "", false, h100}};
  slices.push_back(perDevice);
  ResourceSliceRecord other = slices[7];  // another driver on the same node
  other.driver = "nic.x";
  other.name = "node-7-nic";
  slices.push_back(other);

  const auto view = build(shared(nodes), shared(slices),
                          shared(std::vector<DeviceClassRecord>{deviceClass("gpu", "gpu.x")}));
  int64_t most = -1;
  for (const ClusterNode& each : view->nodes()) {
    const int64_t expected = scanned(slices, "gpu.x", each);
    EXPECT_EQ(view->devicesOnNode(*view->deviceClass("gpu"), each), expected) << each.name;
    if (each.labels.at("pool") == "h100") most = std::max(most, expected);
  }
  Placement pool;
  pool.nodeSelector["pool"] = "h100";
  const auto largest = view->largestNodeForDeviceClass("gpu", pool);
  ASSERT_TRUE(largest);
  EXPECT_EQ(largest->devices, most);
  EXPECT_EQ(largest->matchingNodes, 8);
  // node-4: its 4 GPUs (in two slices of its pool) and the 4 that reach it.
  EXPECT_EQ(largest->node, "node-4");
  Placement nowhere;
  nowhere.nodeSelector["pool"] = "tpu";
  EXPECT_EQ(view->largestNodeForDeviceClass("gpu", nowhere)->matchingNodes, 0);
}

// A pool that names no labels is answered from the view's summary of nodes
// grouped by taints; it must say what looking at every node says.
TEST(ClusterViewIndex, APoolOfTolerationsAloneGetsWhatEveryNodeSays) {
  std::vector<ClusterNode> nodes;
  std::vector<ResourceSliceRecord> slices;
  for (int i = 0; i < 9; ++i) {
    ClusterNode each = node("node-" + std::to_string(i), "any");
    if (i % 3 == 1) each.taints.push_back({"nvidia.com/gpu", "present", "NoSchedule"});
    if (i % 3 == 2) each.taints.push_back({"dedicated", "infer", "NoExecute"});
    if (i == 4) each.taints.push_back({"node.kubernetes.io/unreachable", "", "NoExecute"});
    each.allocatable["nvidia.com/gpu"] = (i * 5) % 7;
    nodes.push_back(each);
    ResourceSliceRecord local;
    local.driver = "gpu.x";
    local.pool = each.name;
    local.name = each.name;
    local.nodeName = each.name;
    for (int d = 0; d < (i * 3) % 5; ++d) local.devices.push_back(device("d" + std::to_string(d)));
    slices.push_back(local);
  }
  const auto view =
      build(shared(nodes), shared(slices),
            shared(std::vector<DeviceClassRecord>{deviceClass("gpu", "gpu.x", "nvidia.com/gpu")}));
  Placement gpu;
  gpu.tolerations.push_back({"nvidia.com/gpu", "Exists", "", "NoSchedule", {}});
  Placement everything;
  everything.tolerations.push_back({"", "Exists", "", "", {}});
  for (const Placement& pool : {Placement{}, gpu, everything}) {
    NodeCapacity resource;
    NodeCapacity devices;
    int matching = 0;
    for (const ClusterNode& each : view->nodes()) {
      if (!nodeMatches(each, pool)) continue;
      const int64_t onNode = *view->devicesOnNode(*view->deviceClass("gpu"), each);
      const int64_t both = each.allocatable.at("nvidia.com/gpu") + onNode;
      if (resource.node.empty() || both > resource.devices) resource = {both, each.name, 0};
      if (devices.node.empty() || onNode > devices.devices) devices = {onNode, each.name, 0};
      ++matching;
    }
    const auto byResource = view->largestNodeForResource("nvidia.com/gpu", pool);
    ASSERT_TRUE(byResource);
    EXPECT_EQ(byResource->devices, resource.devices);
    EXPECT_EQ(byResource->node, resource.node);
    EXPECT_EQ(byResource->matchingNodes, matching);
    const auto byClass = view->largestNodeForDeviceClass("gpu", pool);
    ASSERT_TRUE(byClass);
    EXPECT_EQ(byClass->devices, devices.devices);
    EXPECT_EQ(byClass->node, devices.node);
    EXPECT_EQ(byClass->matchingNodes, matching);
  }
  EXPECT_EQ(view->largestNodeForResource("nvidia.com/gpu", Placement{})->matchingNodes, 3);
  EXPECT_EQ(view->largestNodeForResource("nvidia.com/gpu", everything)->matchingNodes, 9);
  // A resource no node has: none, on the first node the pool may land on.
  const auto none = view->largestNodeForResource("example.com/fpga", gpu);
  ASSERT_TRUE(none);
  EXPECT_EQ(none->devices, 0);
  EXPECT_EQ(none->node, "node-0");
  EXPECT_EQ(none->matchingNodes, 6);
}

TEST(ClusterViewIndex, TheNewestDeviceClassOfAnExtendedResourceNameBacksIt) {
  const auto view =
      build(shared(std::vector<ClusterNode>{}), shared(std::vector<ResourceSliceRecord>{}),
            shared(std::vector<DeviceClassRecord>{
                deviceClass("a-old", "gpu.old", "example.com/gpu", "2025-01-01T00:00:00Z"),
                deviceClass("z-new", "gpu.new", "example.com/gpu", "2025-06-01T00:00:00Z"),
                deviceClass("b-tie", "gpu.b", "example.com/tpu", "2025-06-01T00:00:00Z"),
                deviceClass("c-tie", "gpu.c", "example.com/tpu", "2025-06-01T00:00:00Z")}));
  ASSERT_NE(view->deviceClassForResource("example.com/gpu"), nullptr);
  EXPECT_EQ(view->deviceClassForResource("example.com/gpu")->name, "z-new");
  // Created in the same second: the first by name.
  EXPECT_EQ(view->deviceClassForResource("example.com/tpu")->name, "b-tie");
  EXPECT_EQ(view->deviceClassForResource("example.com/npu"), nullptr);
}

TEST(ClusterViewIndex, AnExtendedResourceIsUnknownWhileDeviceClassesAreNot) {
  ClusterNode gpu = node("gpu-a", "h100");
  gpu.allocatable["nvidia.com/gpu"] = 4;
  ClusterView::Builder builder;
  builder.add(gpu);
  builder.markListed(ClusterKind::Node);
  builder.markListed(ClusterKind::ResourceSlice);
  const auto view = std::move(builder).build();
  // A DeviceClass may back the name with DRA devices the count would miss.
  EXPECT_FALSE(view->largestNodeForResource("nvidia.com/gpu", Placement{}));

  ClusterView::Builder known = view->extended();
  known.markListed(ClusterKind::DeviceClass);  // listed: none exist
  const auto withClasses = std::move(known).build();
  const auto largest = withClasses->largestNodeForResource("nvidia.com/gpu", Placement{});
  ASSERT_TRUE(largest);
  EXPECT_EQ(largest->devices, 4);
}

}  // namespace
}  // namespace aiadmit
