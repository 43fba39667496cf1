// Which nodes a pool (a profile's placement, or a Pod's) reaches, and what
// the largest node offers, summed up when the view is built for the pools
// that name no labels (a Pod with only tolerations, as most Pods a
// controller makes before aiadmit's pool is injected): nodes grouped by the
// taints that count, each group's best node per resource and per device
// class. Such a request then costs the few groups, not every node.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "webhook/cluster/cluster_devices.h"
#include "webhook/cluster/cluster_view.h"
#include "webhook/cluster/cluster_view_parts.h"
#include "webhook/model/scheduling.h"

namespace aiadmit {

// Whether a Pod with this placement may land on `node`: its labels and the
// lasting taints (NoSchedule, NoExecute; not node.kubernetes.io/ ones).
bool nodeMatches(const ClusterNode& node, const Placement& pool);
// Whether `node` is one of the pool's own: it matches and carries a label the
// pool selects, or, for a pool that only tolerates, a taint the pool
// tolerates by key. A node any Pod may land on is not the pool's.
bool nodeInPool(const ClusterNode& node, const Placement& pool);
// Whether a node with `taints` admits a Pod with the pool's tolerations.
bool toleratesTaints(const std::vector<NodeTaint>& taints, const Placement& pool);

namespace view_parts {

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
// resource and per device class. Built again when the
// Nodes, the ResourceSlices or the DeviceClasses change.
struct Capacity {
  std::shared_ptr<const Nodes> nodes;
  std::shared_ptr<const Slices> slices;
  std::shared_ptr<const DeviceClasses> deviceClasses;
  bool slicesKnown = false;
  std::vector<TaintGroup> groups;
  std::map<std::string, std::vector<GroupBest>, std::less<>> byResource;     // per group
  std::map<std::string, std::vector<GroupBest>, std::less<>> byDeviceClass;  // per group

  // The best of the groups `pool` tolerates; `best` null: none has any.
  // nullopt when a group the pool reaches cannot be counted.
  std::optional<NodeCapacity> fromGroups(const std::vector<GroupBest>* best,
                                         const Placement& pool) const;
};

std::shared_ptr<const Capacity> makeCapacity(std::shared_ptr<const Nodes> nodes,
                                             std::shared_ptr<const Slices> slices,
                                             std::shared_ptr<const DeviceClasses> deviceClasses,
                                             bool slicesKnown);

}  // namespace view_parts
}  // namespace aiadmit
