// The DRA devices of accelerator drivers as explain counts them: the node
// each is local to, whether a claim holds it, and the taints that keep
// requests off it for now, its driver's and DeviceTaintRules' alike. Only
// explain reads the taints: they pass, so the rules count the devices.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "webhook/waiting/waiting_parts.h"

namespace aiadmit::waiting {

// The devices local to each node (node-local slices, and per-device node
// names), with `allocated` marked; they point into `view`.
std::map<std::string, std::vector<NodeDevice>, std::less<>> indexDevices(
    const ClusterView& view, const std::set<AllocatedDevice>& allocated);

// A node's accelerator devices: all, those claims hold, and the free ones
// that a taint keeps requests off unless they tolerate it.
struct NodeDevices {
  int64_t total = 0;
  int64_t allocated = 0;
  int64_t tainted = 0;
};
NodeDevices nodeDevices(const Occupancy& occupancy, const ClusterNode& node);

// The first taint of `device` that `tolerations` do not tolerate; null when
// it may be given to a request with them.
const DeviceTaintOf* keptOffBy(const NodeDevice& device,
                               const std::vector<Toleration>& tolerations);

// The free devices local to `node` that a request with `tolerations` may be
// given.
int64_t usableDevices(const Occupancy& occupancy, const ClusterNode& node,
                      const std::vector<Toleration>& tolerations);

// The devices of `drivers` local to `node`, those claims hold, and the free
// ones that a taint keeps a request with `tolerations` off.
struct FreeDevices {
  int64_t local = 0;
  int64_t allocated = 0;
  std::vector<std::pair<const NodeDevice*, const DeviceTaintOf*>> keptOff;
};
FreeDevices freeDevices(const Occupancy& occupancy, const ClusterNode& node,
                        const std::vector<std::string>& drivers,
                        const std::vector<Toleration>& tolerations);

// "example.com/maintenance=firmware:NoSchedule", as kubectl prints a taint.
std::string describeDeviceTaint(const DeviceTaint& taint);

}  // namespace aiadmit::waiting
