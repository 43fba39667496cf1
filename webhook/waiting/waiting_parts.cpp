// The small facts explain's steps share: counts in words, scopes, what a
// scheduler's message says, a node's DRA devices.
#include "webhook/waiting/waiting_parts.h"

#include <algorithm>

#include "webhook/model/resources.h"

namespace aiadmit::waiting {

std::string gpuCount(int64_t gpus) {
  return std::to_string(gpus) + (gpus == 1 ? " GPU" : " GPUs");
}

bool inScope(const WaitingScope& scope, std::string_view namespaceName) {
  return scope.namespaces.empty() || std::find(scope.namespaces.begin(), scope.namespaces.end(),
                                               namespaceName) != scope.namespaces.end();
}

std::optional<bool> messageAgrees(std::string_view message, WaitCause cause) {
  if (message.empty()) return std::nullopt;
  const auto says = [&](std::string_view words) {
    return message.find(words) != std::string_view::npos;
  };
  switch (cause) {
    case WaitCause::NoNodeCanHold:
    case WaitCause::PoolFull:
    case WaitCause::GangPartial:
      return says("Insufficient") || says("cannot allocate all claims");
    case WaitCause::ClaimUnallocatable:
      return says("cannot allocate all claims") || says("resourceclaim") || says("device class") ||
             says("DeviceClass");
    case WaitCause::UntoleratedTaint:
      return says("untolerated taint");
    case WaitCause::SelectorExcludes:
      return says("didn't match Pod's node affinity/selector");
    case WaitCause::Quota:
      return says("quota") || says("LocalQueue") || says("ClusterQueue");
    case WaitCause::Unknown:
      return false;
  }
  return false;
}

NodeDevices nodeDevices(const ClusterView& view, const ClusterNode& node,
                        const Occupancy& occupancy) {
  NodeDevices devices;
  for (const ResourceSliceRecord& slice : view.resourceSlices()) {
    if (!looksLikeAcceleratorDriver(slice.driver)) continue;
    for (const SliceDevice& device : slice.devices) {
      const std::string& where = slice.perDeviceNodeSelection ? device.nodeName : slice.nodeName;
      if (where != node.name) continue;
      ++devices.total;
      if (occupancy.allocatedDevices.contains(
              AllocatedDevice{slice.driver, slice.pool, device.name})) {
        ++devices.allocated;
      }
    }
  }
  return devices;
}

}  // namespace aiadmit::waiting
