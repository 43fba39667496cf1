#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include "webhook/cluster/cluster_pools.h"

namespace aiadmit {

using view_parts::GroupBest;

namespace {

using TaintKey = std::vector<std::tuple<std::string, std::string, std::string>>;

// The taints that keep a Pod off a node for good: NoSchedule and NoExecute,
// not those of node conditions and cordons (node.kubernetes.io/).
TaintKey lastingTaints(const ClusterNode& node) {
  TaintKey key;
  for (const NodeTaint& taint : node.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    if (taint.key.rfind("node.kubernetes.io/", 0) == 0) continue;
    key.emplace_back(taint.key, taint.value, taint.effect);
  }
  std::sort(key.begin(), key.end());
  key.erase(std::unique(key.begin(), key.end()), key.end());
  return key;
}

// Keeps the better of two: more devices, else the first node by name.
void keepBest(GroupBest& best, int64_t devices, uint32_t node) {
  if (best.node == GroupBest::kNone || devices > best.devices ||
      (devices == best.devices && node < best.node)) {
    best.devices = devices;
    best.node = node;
  }
}

}  // namespace

bool toleratesTaints(const std::vector<NodeTaint>& taints, const Placement& pool) {
  for (const NodeTaint& taint : taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    // Taints of node conditions and cordons (not-ready, unreachable,
    // unschedulable, pressure) come and go; they do not make a node one a
    // Pod can never use.
    if (taint.key.rfind("node.kubernetes.io/", 0) == 0) continue;
    bool tolerated = false;
    for (const Toleration& toleration : pool.tolerations) {
      const bool effect = toleration.effect.empty() || toleration.effect == taint.effect;
      const bool key =
          toleration.key.empty() ? toleration.op == "Exists" : toleration.key == taint.key;
      const bool value = toleration.op == "Exists" || toleration.value == taint.value;
      tolerated = tolerated || (effect && key && value);
    }
    if (!tolerated) return false;
  }
  return true;
}

bool nodeMatches(const ClusterNode& node, const Placement& pool) {
  for (const auto& [key, value] : pool.nodeSelector) {
    const auto label = node.labels.find(key);
    if (label == node.labels.end() || label->second != value) return false;
  }
  for (const NodeSelectorRequirement& requirement : pool.requiredNodeAffinity) {
    const auto label = node.labels.find(requirement.key);
    if (!LabelRequirement::fromProfile(requirement)
             .matches(label != node.labels.end(),
                      label != node.labels.end() ? label->second : "")) {
      return false;
    }
  }
  return toleratesTaints(node.taints, pool);
}

bool nodeInPool(const ClusterNode& node, const Placement& pool) {
  if (!placementDefinesPool(pool) || !nodeMatches(node, pool)) return false;
  if (!pool.nodeSelector.empty() || !pool.requiredNodeAffinity.empty()) return true;
  for (const NodeTaint& taint : node.taints) {
    for (const Toleration& toleration : pool.tolerations) {
      if (!toleration.key.empty() && toleration.key == taint.key) return true;
    }
  }
  return false;
}

namespace view_parts {

std::shared_ptr<const Capacity> makeCapacity(std::shared_ptr<const Nodes> nodes,
                                             std::shared_ptr<const Slices> slices,
                                             std::shared_ptr<const DeviceClasses> deviceClasses,
                                             bool slicesKnown) {
  auto part = std::make_shared<Capacity>();
  part->nodes = nodes;
  part->slices = slices;
  part->deviceClasses = deviceClasses;
  part->slicesKnown = slicesKnown;
  if (!nodes) return part;
  std::map<TaintKey, size_t> groupOf;
  for (uint32_t i = 0; i < nodes->byName.size(); ++i) {
    const ClusterNode& node = *nodes->byName[i];
    const auto [it, added] = groupOf.try_emplace(lastingTaints(node), part->groups.size());
    if (added) part->groups.push_back({node.taints, {}});
    part->groups[it->second].nodes.push_back(i);
  }
  const size_t groups = part->groups.size();
  // Every resource a node has allocatable, and every one a class declares.
  std::set<std::string, std::less<>> resources;
  for (const ClusterNode* node : nodes->byName) {
    for (const auto& [name, count] : node->allocatable) resources.insert(name);
  }
  if (deviceClasses) {
    for (const auto& [name, record] : deviceClasses->byExtendedResource) resources.insert(name);
  }
  for (const std::string& resource : resources) {
    std::vector<GroupBest>& best = part->byResource[resource];
    best.resize(groups);
    const DeviceClassRecord* backing = deviceClasses ? deviceClasses->backing(resource) : nullptr;
    const std::optional<ClassDevices> devices =
        backing != nullptr ? classDevices(slices.get(), slicesKnown, *backing) : std::nullopt;
    for (size_t g = 0; g < groups; ++g) {
      for (uint32_t i : part->groups[g].nodes) {
        const ClusterNode& node = *nodes->byName[i];
        const auto allocatable = node.allocatable.find(resource);
        int64_t count = allocatable != node.allocatable.end() ? allocatable->second : 0;
        if (backing != nullptr && !devices && count == 0) best[g].unknown = true;
        if (devices) count += countOnNode(slices.get(), *devices, node);
        keepBest(best[g], count, i);
      }
    }
  }
  if (deviceClasses) {
    for (const auto& [name, record] : deviceClasses->byKey) {
      const std::optional<ClassDevices> devices = classDevices(slices.get(), slicesKnown, *record);
      if (!devices) continue;  // no count: the slow path says so
      std::vector<GroupBest>& best = part->byDeviceClass[name];
      best.resize(groups);
      for (size_t g = 0; g < groups; ++g) {
        for (uint32_t i : part->groups[g].nodes) {
          keepBest(best[g], countOnNode(slices.get(), *devices, *nodes->byName[i]), i);
        }
      }
    }
  }
  return part;
}

std::optional<NodeCapacity> Capacity::fromGroups(const std::vector<GroupBest>* best,
                                                 const Placement& pool) const {
  GroupBest most;
  NodeCapacity out;
  for (size_t g = 0; g < groups.size(); ++g) {
    const TaintGroup& group = groups[g];
    if (!toleratesTaints(group.taints, pool)) continue;
    out.matchingNodes += static_cast<int>(group.nodes.size());
    if (best == nullptr) {
      // Nothing of it anywhere: the first node offers none.
      keepBest(most, 0, group.nodes.front());
      continue;
    }
    if ((*best)[g].unknown) return std::nullopt;
    keepBest(most, (*best)[g].devices, (*best)[g].node);
  }
  if (most.node != GroupBest::kNone) {
    out.devices = most.devices;
    out.node = nodes->byName[most.node]->name;
  }
  return out;
}

}  // namespace view_parts

}  // namespace aiadmit
