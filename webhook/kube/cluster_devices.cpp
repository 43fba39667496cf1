// What one node of a pool can hold: nodes matched against a placement
// through their label index, and devices counted from ResourceSlices
// indexed by driver and node when the view is built, so that a request's
// checks cost the nodes of its pool, not every slice for every node.
#include <algorithm>
#include <tuple>
#include <utility>

#include "webhook/kube/cluster_view.h"
#include "webhook/kube/cluster_view_parts.h"

namespace aiadmit {

using namespace view_parts;

namespace {

bool termsMatch(const NodeSelectorTerms& terms, const ClusterNode& node) {
  for (const auto& term : terms) {
    // An empty term selects no node (core/v1 NodeSelectorTerm semantics).
    if (term.empty()) continue;
    bool all = true;
    for (const OwnedRequirement& owned : term) {
      LabelRequirement requirement;
      requirement.key = owned.key;
      requirement.op = owned.op;
      requirement.values = LabelValues(owned.values);
      if (owned.field) {
        all = all && owned.key == "metadata.name" && requirement.matches(true, node.name);
        continue;
      }
      const auto label = node.labels.find(owned.key);
      all = all && requirement.matches(label != node.labels.end(),
                                       label != node.labels.end() ? label->second : "");
    }
    if (all) return true;
  }
  return false;
}

using DeviceKey = std::pair<std::string_view, std::string_view>;  // pool, device

// Where one slice's devices are: on the node it names, or shared by
// selector or allNodes (per device with perDeviceNodeSelection).
void indexSlice(
    const ResourceSliceRecord& slice, uint32_t position, Slices& part,
    std::map<std::pair<std::string_view, std::string_view>, std::vector<DeviceKey>>& local) {
  DriverDevices& driver = part.byDriver[slice.driver];
  std::string_view lastNode;
  auto place = [&](std::string_view nodeName, bool allNodes,
                   const std::optional<NodeSelectorTerms>& selector, const SliceDevice& device) {
    if (allNodes || (nodeName.empty() && selector)) {
      driver.shared.push_back({slice.pool, device.name, allNodes, allNodes ? nullptr : &*selector});
    } else if (!nodeName.empty()) {
      local[{slice.driver, nodeName}].emplace_back(slice.pool, device.name);
      if (nodeName != lastNode) part.byNode[nodeName].push_back(position);
      lastNode = nodeName;
    }
  };
  for (const SliceDevice& device : slice.devices) {
    if (slice.perDeviceNodeSelection) {
      place(device.nodeName, device.allNodes, device.nodeSelector, device);
    } else {
      place(slice.nodeName, slice.allNodes, slice.nodeSelector, device);
    }
  }
}

}  // namespace

namespace view_parts {

std::shared_ptr<const Slices> makeSlices(std::vector<ClusterObjectsPtr> sources) {
  auto part = std::make_shared<Slices>();
  // A consumer must use only the newest generation of each pool.
  std::map<std::pair<std::string_view, std::string_view>, int64_t> newest;
  for (const ClusterObjectsPtr& source : sources) {
    for (const SharedClusterObject& object : *source) {
      const auto* slice = std::get_if<ResourceSliceRecord>(object.get());
      if (slice == nullptr) continue;
      auto [it, added] = newest.try_emplace({slice->driver, slice->pool}, slice->poolGeneration);
      if (!added) it->second = std::max(it->second, slice->poolGeneration);
    }
  }
  for (const ClusterObjectsPtr& source : sources) {
    for (const SharedClusterObject& object : *source) {
      const auto* slice = std::get_if<ResourceSliceRecord>(object.get());
      if (slice != nullptr && slice->poolGeneration == newest.at({slice->driver, slice->pool})) {
        part->newest.push_back(slice);
      }
    }
  }
  std::map<std::pair<std::string_view, std::string_view>, std::vector<DeviceKey>> local;
  for (uint32_t i = 0; i < part->newest.size(); ++i) {
    const ResourceSliceRecord& slice = *part->newest[i];
    part->byPool[{slice.driver, slice.pool}].push_back(i);
    indexSlice(slice, i, *part, local);
  }
  // A pool is complete when all resourceSliceCount slices of its newest
  // generation are there; a driver part-way through publishing one would
  // otherwise look smaller than it is.
  for (const auto& [pool, positions] : part->byPool) {
    int64_t want = 1;
    for (uint32_t i : positions) want = std::max(want, part->newest[i]->resourceSliceCount);
    if (static_cast<int64_t>(positions.size()) < want) {
      part->incompleteDrivers.emplace(pool.first);
    }
  }
  // A device counts once, however many slices of its pool name it.
  for (auto& [driverNode, keys] : local) {
    std::sort(keys.begin(), keys.end());
    const auto distinct = std::unique(keys.begin(), keys.end()) - keys.begin();
    part->byDriver.find(driverNode.first)->second.onNode[driverNode.second] = distinct;
  }
  part->sources = std::move(sources);
  return part;
}

}  // namespace view_parts

bool ClusterView::nodeMatches(const ClusterNode& node, const Placement& pool) {
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
  return tolerates(node.taints, pool);
}

bool ClusterView::nodeInPool(const ClusterNode& node, const Placement& pool) {
  if (!placementDefinesPool(pool) || !nodeMatches(node, pool)) return false;
  if (!pool.nodeSelector.empty() || !pool.requiredNodeAffinity.empty()) return true;
  for (const NodeTaint& taint : node.taints) {
    for (const Toleration& toleration : pool.tolerations) {
      if (!toleration.key.empty() && toleration.key == taint.key) return true;
    }
  }
  return false;
}

template <typename Visit>
void ClusterView::forEachMatchingNode(const Placement& pool, Visit visit) const {
  if (!nodes_) return;
  // The fewest nodes that one of the pool's exact label requirements names:
  // the others only need checking on those.
  const std::vector<uint32_t>* candidates = nullptr;
  auto narrow = [&](const std::string& key, const std::string& value) {
    std::string label = key;
    label += '\0';
    label += value;
    const auto it = nodes_->byLabel.find(label);
    static const std::vector<uint32_t> kNone;
    const std::vector<uint32_t>* named = it == nodes_->byLabel.end() ? &kNone : &it->second;
    if (candidates == nullptr || named->size() < candidates->size()) candidates = named;
  };
  for (const auto& [key, value] : pool.nodeSelector) narrow(key, value);
  for (const NodeSelectorRequirement& requirement : pool.requiredNodeAffinity) {
    if (requirement.op == "In" && requirement.values.size() == 1) {
      narrow(requirement.key, requirement.values[0]);
    }
  }
  const auto& nodes = nodes_->byName;
  auto consider = [&](const ClusterNode& node) { return !nodeMatches(node, pool) || visit(node); };
  if (candidates == nullptr) {
    for (const ClusterNode* node : nodes) {
      if (!consider(*node)) return;
    }
    return;
  }
  for (uint32_t i : *candidates) {
    if (!consider(*nodes[i])) return;
  }
}

// The drivers of a class as the slice index has them; nullopt when a count
// cannot be given (slices not known, no driver read, a pool incomplete).
std::optional<ClusterView::ClassDevices> ClusterView::classDevices(
    const DeviceClassRecord& deviceClass) const {
  if (!knows(ClusterKind::ResourceSlice) || deviceClass.drivers.empty()) return std::nullopt;
  ClassDevices out;
  for (const std::string& driver : deviceClass.drivers) {
    if (slices_ && slices_->incompleteDrivers.count(driver) != 0) return std::nullopt;
    if (!slices_) continue;
    const auto it = slices_->byDriver.find(driver);
    if (it != slices_->byDriver.end()) out.drivers.emplace_back(it->first, &it->second);
  }
  return out;
}

int64_t ClusterView::countOnNode(const ClassDevices& devices, const ClusterNode& node) const {
  int64_t total = 0;
  for (const auto& [driverName, driver] : devices.drivers) {
    const auto local = driver->onNode.find(node.name);
    const int64_t onNode = local == driver->onNode.end() ? 0 : local->second;
    total += onNode;
    if (driver->shared.empty()) continue;
    std::vector<DeviceKey> reaching;
    for (const SharedDevice& shared : driver->shared) {
      if (shared.allNodes || termsMatch(*shared.selector, node)) {
        reaching.emplace_back(shared.pool, shared.device);
      }
    }
    std::sort(reaching.begin(), reaching.end());
    reaching.erase(std::unique(reaching.begin(), reaching.end()), reaching.end());
    if (onNode > 0 && !reaching.empty()) {
      // A device both local and shared (one pool publishing it twice) counts once.
      for (uint32_t position : slices_->byNode.at(node.name)) {
        const ResourceSliceRecord& slice = *slices_->newest[position];
        if (slice.driver != driverName) continue;
        for (const SliceDevice& device : slice.devices) {
          const std::string_view at = slice.perDeviceNodeSelection ? device.nodeName
                                      : slice.allNodes             ? std::string_view()
                                                                   : slice.nodeName;
          if (at != node.name) continue;
          const auto found = std::lower_bound(reaching.begin(), reaching.end(),
                                              DeviceKey{slice.pool, device.name});
          if (found != reaching.end() && *found == DeviceKey{slice.pool, device.name}) {
            reaching.erase(found);
          }
        }
      }
    }
    total += static_cast<int64_t>(reaching.size());
  }
  return total;
}

std::optional<int64_t> ClusterView::devicesOnNode(const DeviceClassRecord& deviceClass,
                                                  const ClusterNode& node) const {
  const std::optional<ClassDevices> devices = classDevices(deviceClass);
  if (!devices) return std::nullopt;
  return countOnNode(*devices, node);
}

std::optional<NodeCapacity> ClusterView::largestNodeForDeviceClass(std::string_view deviceClassName,
                                                                   const Placement& pool) const {
  const DeviceClassRecord* record = deviceClass(deviceClassName);
  if (!knows(ClusterKind::Node) || record == nullptr) return std::nullopt;
  const std::optional<ClassDevices> devices = classDevices(*record);
  if (!devices) return std::nullopt;
  if (summarized(pool)) {
    const auto it = capacity_->byDeviceClass.find(deviceClassName);
    return fromGroups(it == capacity_->byDeviceClass.end() ? nullptr : &it->second, pool);
  }
  NodeCapacity best;
  forEachMatchingNode(pool, [&](const ClusterNode& node) {
    ++best.matchingNodes;
    const int64_t count = countOnNode(*devices, node);
    if (best.node.empty() || count > best.devices) {
      best.devices = count;
      best.node = node.name;
    }
    return true;
  });
  return best;
}

std::optional<NodeCapacity> ClusterView::largestNodeForResourceAnywhere(
    std::string_view resourceName) const {
  Toleration everyTaint;  // an empty key with Exists tolerates every taint
  everyTaint.op = "Exists";
  Placement everywhere;
  everywhere.tolerations.push_back(std::move(everyTaint));
  return largestNodeForResource(resourceName, everywhere);
}

std::optional<NodeCapacity> ClusterView::largestNodeForResource(std::string_view resourceName,
                                                                const Placement& pool) const {
  // Without the DeviceClasses it is not known whether DRA backs the name
  // (KEP-5004), so allocatable alone may be too few. A cluster that serves
  // no DRA API lists them as none.
  if (!knows(ClusterKind::Node) || !knows(ClusterKind::DeviceClass)) return std::nullopt;
  const DeviceClassRecord* backing = deviceClassForResource(resourceName);
  if (summarized(pool)) {
    const auto it = capacity_->byResource.find(resourceName);
    if (it != capacity_->byResource.end()) return fromGroups(&it->second, pool);
    // Neither allocatable anywhere nor declared by a class (a KEP-5004
    // implicit name is counted below).
    if (backing == nullptr) return fromGroups(nullptr, pool);
  }
  const std::optional<ClassDevices> devices =
      backing != nullptr ? classDevices(*backing) : std::nullopt;
  const std::string name(resourceName);
  NodeCapacity best;
  bool unknown = false;
  forEachMatchingNode(pool, [&](const ClusterNode& node) {
    ++best.matchingNodes;
    int64_t count = 0;
    const auto allocatable = node.allocatable.find(name);
    if (allocatable != node.allocatable.end()) count += allocatable->second;
    if (backing != nullptr) {
      // A node offers a name either through a device plugin or through DRA
      // (KEP-5004), so adding both never undercounts.
      if (!devices && count == 0) {
        unknown = true;
        return false;
      }
      if (devices) count += countOnNode(*devices, node);
    }
    if (best.node.empty() || count > best.devices) {
      best.devices = count;
      best.node = node.name;
    }
    return true;
  });
  if (unknown) return std::nullopt;
  return best;
}

}  // namespace aiadmit
