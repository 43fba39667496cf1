#include "webhook/waiting/node_groups.h"

#include <algorithm>
#include <tuple>

#include "webhook/model/accelerator_vendors.h"
#include "webhook/model/resources.h"
#include "webhook/waiting/waiting.h"

namespace aiadmit {

namespace {

// Accelerator devices DRA drivers publish for `node`, by driver.
std::map<std::string, int64_t> draDevices(const ClusterView& view, const ClusterNode& node) {
  std::map<std::string, int64_t> devices;
  for (const ResourceSliceRecord& slice : view.resourceSlices()) {
    if (!looksLikeAcceleratorDriver(slice.driver)) continue;
    for (const SliceDevice& device : slice.devices) {
      const std::string& where = slice.perDeviceNodeSelection ? device.nodeName : slice.nodeName;
      if (where == node.name) ++devices[slice.driver];
    }
  }
  return devices;
}

std::vector<NodeTaint> lastingTaints(const ClusterNode& node) {
  std::vector<NodeTaint> taints;
  for (const NodeTaint& taint : node.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    if (taint.key.rfind("node.kubernetes.io/", 0) == 0) continue;
    taints.push_back(taint);
  }
  std::sort(taints.begin(), taints.end(), [](const NodeTaint& a, const NodeTaint& b) {
    return std::tie(a.key, a.value, a.effect) < std::tie(b.key, b.value, b.effect);
  });
  return taints;
}

bool sameTaint(const NodeTaint& a, const NodeTaint& b) {
  return a.key == b.key && a.value == b.value && a.effect == b.effect;
}

// Whose accelerators a node holds: the family of the whole-device resource
// it has the most of, else of the first DRA driver of a known vendor.
std::string familyOf(const std::map<std::string, int64_t>& accelerators,
                     const std::map<std::string, int64_t>& devices) {
  std::string family;
  int64_t most = 0;
  for (const auto& [resource, count] : accelerators) {
    if (count > most && !isSharedGpuResource(resource)) {
      family = acceleratorFamily(resource);
      most = count;
    }
  }
  if (!family.empty()) return family;
  for (const auto& [driver, count] : devices) {
    if (const AcceleratorVendor* vendor = vendorOfDeviceClass(driver))
      return std::string(vendor->key);
  }
  return "";
}

}  // namespace

bool hasGpuNodes(const ClusterView& view) {
  for (const ClusterNode& node : view.nodes()) {
    for (const auto& [resource, count] : node.allocatable) {
      if (count > 0 && looksLikeAccelerator(resource)) return true;
    }
    if (!draDevices(view, node).empty()) return true;
  }
  return false;
}

std::vector<NodeGroup> gpuNodeGroups(const ClusterView& view, std::string_view labelKey) {
  std::map<std::tuple<std::string, std::string, std::string>, NodeGroup> groups;
  for (const ClusterNode& node : view.nodes()) {
    std::map<std::string, int64_t> accelerators;
    for (const auto& [resource, count] : node.allocatable) {
      if (count > 0 && looksLikeAccelerator(resource)) accelerators[resource] = count;
    }
    const std::map<std::string, int64_t> devices = draDevices(view, node);
    if (accelerators.empty() && devices.empty()) continue;
    std::pair<std::string, std::string> label = poolLabelOf(node);
    if (!labelKey.empty()) {
      const auto named = node.labels.find(std::string(labelKey));
      label = named == node.labels.end() ? std::pair<std::string, std::string>{}
                                         : std::pair<std::string, std::string>(*named);
    }
    const std::string family = familyOf(accelerators, devices);
    NodeGroup& group = groups[{label.first, label.second, family}];
    const bool first = group.nodes.empty();
    group.labelKey = label.first;
    group.labelValue = label.second;
    group.family = family;
    group.nodes.push_back(node.name);
    const std::vector<NodeTaint> taints = lastingTaints(node);
    if (first) {
      group.taints = taints;
    } else {
      std::erase_if(group.taints, [&](const NodeTaint& kept) {
        return std::none_of(taints.begin(), taints.end(),
                            [&](const NodeTaint& taint) { return sameTaint(kept, taint); });
      });
    }
    for (const auto& [resource, count] : accelerators) {
      group.mostPerNode[resource] = std::max(group.mostPerNode[resource], count);
    }
    int64_t total = 0;
    for (const auto& [driver, count] : devices) {
      group.draDrivers.insert(driver);
      total += count;
    }
    group.mostDraDevicesPerNode = std::max(group.mostDraDevicesPerNode, total);
  }
  std::vector<NodeGroup> out;
  for (auto& [label, group] : groups) out.push_back(std::move(group));
  return out;
}

}  // namespace aiadmit
