// Where explain finds each accelerator device and what keeps requests off
// it: the newest generation of each pool's ResourceSlices, the claims'
// allocations, and the taints of the devices and of DeviceTaintRules.
#include "webhook/waiting/waiting_devices.h"

#include <algorithm>

#include "webhook/model/resources.h"

namespace aiadmit::waiting {

namespace {

// The taints of one device that keep requests off it: its driver's, then
// those of the DeviceTaintRules that select it (the scheduler adds them
// likewise).
std::vector<DeviceTaintOf> taintsOf(const ResourceSliceRecord& slice, const SliceDevice& device,
                                    const ClusterView& view) {
  std::vector<DeviceTaintOf> taints;
  for (const DeviceTaint& taint : device.taints) {
    if (keepsRequestsOff(taint)) taints.push_back({&taint, {}, slice.name});
  }
  for (const DeviceTaintRuleRecord& rule : view.deviceTaintRules()) {
    if (keepsRequestsOff(rule.taint) && rule.appliesTo(slice.driver, slice.pool, device.name)) {
      taints.push_back({&rule.taint, rule.name, slice.name});
    }
  }
  return taints;
}

bool named(const std::vector<std::string>& drivers, std::string_view driver) {
  return std::find(drivers.begin(), drivers.end(), driver) != drivers.end();
}

const std::vector<NodeDevice>& devicesOn(const Occupancy& occupancy, const ClusterNode& node) {
  static const std::vector<NodeDevice> kNone;
  const auto found = occupancy.devices.find(node.name);
  return found == occupancy.devices.end() ? kNone : found->second;
}

}  // namespace

std::map<std::string, std::vector<NodeDevice>, std::less<>> indexDevices(
    const ClusterView& view, const std::set<AllocatedDevice>& allocated) {
  std::map<std::string, std::vector<NodeDevice>, std::less<>> byNode;
  for (const ResourceSliceRecord& slice : view.resourceSlices()) {
    if (!looksLikeAcceleratorDriver(slice.driver)) continue;
    for (const SliceDevice& device : slice.devices) {
      const std::string& where = slice.perDeviceNodeSelection ? device.nodeName : slice.nodeName;
      if (where.empty()) continue;
      const bool held = allocated.contains(AllocatedDevice{slice.driver, slice.pool, device.name});
      byNode[where].push_back(
          {slice.driver, slice.pool, device.name, held, taintsOf(slice, device, view)});
    }
  }
  return byNode;
}

NodeDevices nodeDevices(const Occupancy& occupancy, const ClusterNode& node) {
  NodeDevices devices;
  for (const NodeDevice& device : devicesOn(occupancy, node)) {
    ++devices.total;
    if (device.allocated) {
      ++devices.allocated;
    } else if (!device.taints.empty()) {
      ++devices.tainted;
    }
  }
  return devices;
}

const DeviceTaintOf* keptOffBy(const NodeDevice& device,
                               const std::vector<Toleration>& tolerations) {
  for (const DeviceTaintOf& taint : device.taints) {
    if (!toleratesDeviceTaint(tolerations, *taint.taint)) return &taint;
  }
  return nullptr;
}

int64_t usableDevices(const Occupancy& occupancy, const ClusterNode& node,
                      const std::vector<Toleration>& tolerations) {
  int64_t usable = 0;
  for (const NodeDevice& device : devicesOn(occupancy, node)) {
    if (!device.allocated && keptOffBy(device, tolerations) == nullptr) ++usable;
  }
  return usable;
}

FreeDevices freeDevices(const Occupancy& occupancy, const ClusterNode& node,
                        const std::vector<std::string>& drivers,
                        const std::vector<Toleration>& tolerations) {
  FreeDevices free;
  for (const NodeDevice& device : devicesOn(occupancy, node)) {
    if (!named(drivers, device.driver)) continue;
    ++free.local;
    if (device.allocated) {
      ++free.allocated;
    } else if (const DeviceTaintOf* taint = keptOffBy(device, tolerations)) {
      free.keptOff.emplace_back(&device, taint);
    }
  }
  return free;
}

std::string describeDeviceTaint(const DeviceTaint& taint) {
  return taint.key + (taint.value.empty() ? "" : "=" + taint.value) + ":" + taint.effect;
}

}  // namespace aiadmit::waiting
