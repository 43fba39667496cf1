#include <algorithm>
#include <tuple>
#include <utility>

#include "webhook/cluster/cluster_devices.h"

namespace aiadmit::view_parts {

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

std::optional<ClassDevices> classDevices(const Slices* slices, bool slicesKnown,
                                         const DeviceClassRecord& deviceClass) {
  if (!slicesKnown || deviceClass.drivers.empty()) return std::nullopt;
  ClassDevices out;
  for (const std::string& driver : deviceClass.drivers) {
    if (slices && slices->incompleteDrivers.count(driver) != 0) return std::nullopt;
    if (!slices) continue;
    const auto it = slices->byDriver.find(driver);
    if (it != slices->byDriver.end()) out.drivers.emplace_back(it->first, &it->second);
  }
  return out;
}

int64_t countOnNode(const Slices* slices, const ClassDevices& devices, const ClusterNode& node) {
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
      for (uint32_t position : slices->byNode.at(node.name)) {
        const ResourceSliceRecord& slice = *slices->newest[position];
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

}  // namespace aiadmit::view_parts
