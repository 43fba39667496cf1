// The parts of a ClusterView, one per kind: the kind's records, by pointer
// into the shared objects of its sources, and the indexes its questions
// need. Immutable once built, and shared by every view built from the same
// sources, so that publishing a view after one Node changed rebuilds the
// Node part alone. Only webhook/kube's cluster view files include this.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "webhook/kube/cluster_view.h"

namespace aiadmit::view_parts {

struct Part {
  std::vector<ClusterObjectsPtr> sources;  // keeps the records alive
};

// Records found by "NAME" or "NAMESPACE/NAME"; a later source's record of a
// key replaces an earlier one's (the input of `check` over its snapshot).
template <typename T>
struct Keyed : Part {
  std::map<std::string, const T*, std::less<>> byKey;
  std::vector<const T*> ordered;  // byKey's records, in its order

  const T* find(std::string_view key) const {
    const auto it = byKey.find(key);
    return it == byKey.end() ? nullptr : it->second;
  }
};

struct Nodes : Part {
  std::vector<const ClusterNode*> byName;
  // "KEY\0VALUE" -> positions in byName, ascending: the nodes a nodeSelector
  // entry names, so that a pool is matched against its own nodes only.
  std::unordered_map<std::string, std::vector<uint32_t>> byLabel;
};

// A device that reaches nodes by selector or allNodes rather than by name:
// network-attached devices, usually few.
struct SharedDevice {
  std::string_view pool;
  std::string_view device;
  bool allNodes = false;
  const NodeSelectorTerms* selector = nullptr;  // when not allNodes
};

struct DriverDevices {
  // Distinct devices of node-local slices (and of per-device slices' devices
  // that name their node), by node name.
  std::unordered_map<std::string_view, int64_t> onNode;
  std::vector<SharedDevice> shared;
};

struct Slices : Part {
  std::vector<const ResourceSliceRecord*> newest;        // each pool's newest generation only
  std::set<std::string, std::less<>> incompleteDrivers;  // with a pool still being published
  std::map<std::string, DriverDevices, std::less<>> byDriver;
  // Node name -> positions in `newest` of the slices with devices local to it.
  std::unordered_map<std::string_view, std::vector<uint32_t>> byNode;
  // (driver, pool) -> positions in `newest`.
  std::map<std::pair<std::string_view, std::string_view>, std::vector<uint32_t>> byPool;
};

struct DeviceClasses : Keyed<DeviceClassRecord> {
  // spec.extendedResourceName -> the class that backs it: the newest by
  // creationTimestamp, then the first by name, as the scheduler picks.
  std::map<std::string, const DeviceClassRecord*, std::less<>> byExtendedResource;
};

// Nodes with the same lasting taints (NoSchedule and NoExecute, not those
// of node conditions), which a pool's tolerations admit or not together.
struct TaintGroup {
  std::vector<NodeTaint> taints;
  std::vector<uint32_t> nodes;  // positions in Nodes::byName, ascending
};

// The node of a group that offers the most of something, the first by name
// among equals.
struct GroupBest {
  static constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
  int64_t devices = 0;
  uint32_t node = kNone;
  // A node of the group has none allocatable and its DRA devices cannot be
  // counted: the group gives no answer.
  bool unknown = false;
};

// For pools that name no labels: each taint group's best node per extended
// resource and per device class (cluster_pools.cpp). Built again when the
// Nodes, the ResourceSlices or the DeviceClasses change.
struct Capacity {
  std::shared_ptr<const Nodes> nodes;
  std::shared_ptr<const Slices> slices;
  std::shared_ptr<const DeviceClasses> deviceClasses;
  bool slicesKnown = false;
  std::vector<TaintGroup> groups;
  std::map<std::string, std::vector<GroupBest>, std::less<>> byResource;     // per group
  std::map<std::string, std::vector<GroupBest>, std::less<>> byDeviceClass;  // per group
};

// Indexes the newest generation of each pool (cluster_devices.cpp).
std::shared_ptr<const Slices> makeSlices(std::vector<ClusterObjectsPtr> sources);

}  // namespace aiadmit::view_parts
