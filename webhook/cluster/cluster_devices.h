// ResourceSlices indexed by driver and node when a view is built, and the
// devices of a DeviceClass that one node can use counted from that index, so
// that a request's checks cost the nodes of its pool, not every slice for
// every node.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "webhook/cluster/cluster_view_parts.h"

namespace aiadmit::view_parts {

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

// Indexes the newest generation of each pool (cluster_devices.cpp).
std::shared_ptr<const Slices> makeSlices(std::vector<ClusterObjectsPtr> sources);

// The slice index's entries of a class's drivers.
struct ClassDevices {
  std::vector<std::pair<std::string_view, const DriverDevices*>> drivers;
};
// nullopt when no count can be given: ResourceSlices not known
// (`slicesKnown`; `slices` is null when none was listed), no driver read
// from the class, or a pool of its drivers incomplete.
std::optional<ClassDevices> classDevices(const Slices* slices, bool slicesKnown,
                                         const DeviceClassRecord& deviceClass);
// The devices of `devices` that `node` can use: its own and the shared ones
// that reach it, each once.
int64_t countOnNode(const Slices* slices, const ClassDevices& devices, const ClusterNode& node);

}  // namespace aiadmit::view_parts
