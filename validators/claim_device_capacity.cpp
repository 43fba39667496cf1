#include "validators/claim_validator.h"

#include <algorithm>
#include <map>
#include <optional>

namespace aiadmit {

namespace {

// The most devices of a class one node of the pool has, and where that
// number comes from, for messages.
struct LargestNode {
  int64_t devices = 0;
  std::string source;  // "the largest of the 3 nodes of the pool (node gpu-1)"
};

// A class of whole GPUs by the drivers' naming (gpu.nvidia.com, gpu.amd.com,
// gpu.intel.com): one device is one GPU, so gpusPerNode bounds it. MIG
// slices and other shares come many to a GPU.
bool wholeGpuClass(std::string_view deviceClass) {
  return deviceClass.rfind("gpu.", 0) == 0;
}

std::optional<LargestNode> largestNode(const ClaimValidationContext& context,
                                       const std::string& deviceClass) {
  const Profile& profile = *context.profile;
  if (context.cluster != nullptr) {
    const std::optional<NodeCapacity> capacity =
        context.cluster->largestNodeForDeviceClass(deviceClass, profile.placement);
    // No matching node is no answer: a pool scaled to zero grows on demand.
    if (capacity && capacity->matchingNodes > 0) {
      std::string source =
          "the largest of the " + std::to_string(capacity->matchingNodes) + " nodes of the pool";
      if (!capacity->node.empty()) source += " (node " + capacity->node + ")";
      return LargestNode{capacity->devices, std::move(source)};
    }
  }
  // Without the view, only a class the profile allows is known to be its
  // pool's GPUs (a class it does not allow is reported as such).
  const std::vector<std::string>& allowed = profile.gpu.deviceClasses;
  if (!wholeGpuClass(deviceClass) ||
      std::find(allowed.begin(), allowed.end(), deviceClass) == allowed.end()) {
    return std::nullopt;
  }
  return LargestNode{profile.gpu.gpusPerNode,
                     "a node of profile " + profile.name + " (gpusPerNode)"};
}

Violation tooMany(const ClaimValidationContext& context, const DeviceAlternative& where,
                  int64_t wanted, const LargestNode& largest, bool total) {
  const std::string most = std::to_string(largest.devices);
  const std::string what = std::to_string(wanted) + " devices of class " +
                           inQuotes(where.deviceClassName) +
                           (total ? " in all (the claim's requests add up on one node)" : "");
  return {claimFieldPath(context.claim, where, "count"),
          "the " + std::string(claimKindName(context.claim)) + " asks for " + what + ", but " +
              largest.source + " has " + most + ", so a Pod using it would stay Pending forever",
          "ask for at most " + most + " per claim and spread larger runs over several Pods",
          std::to_string(wanted) + " devices, but the largest node has " + most + "; ask for at " +
              "most " + most};
}

Violation noDevicesForAll(const ClaimValidationContext& context, const DeviceAlternative& where,
                          const LargestNode& largest) {
  const std::string name = inQuotes(where.deviceClassName);
  return {claimFieldPath(context.claim, where, "allocationMode"),
          "allocationMode All needs at least one device of class " + name + " on the node, but " +
              largest.source + " has none, so a Pod using it would stay Pending forever",
          "name a class whose devices the pool's nodes have, or aim the profile at nodes that "
          "have " +
              name + " devices",
          "allocationMode All, but no node of the pool has a " + name + " device"};
}

void checkAlone(const ClaimValidationContext& context, const DeviceAlternative& alternative,
                std::vector<Violation>& out) {
  if (alternative.deviceClassName.empty() || alternative.adminAccess) return;
  const std::optional<LargestNode> largest = largestNode(context, alternative.deviceClassName);
  if (!largest) return;
  if (alternative.mode == AllocationMode::All) {
    // Without the cluster view the pool's nodes are only known to have GPUs.
    if (context.cluster != nullptr && largest->devices == 0) {
      out.push_back(noDevicesForAll(context, alternative, *largest));
    }
  } else if (alternative.count > largest->devices) {
    out.push_back(tooMany(context, alternative, alternative.count, *largest, false));
  }
}

// AIA020: a device request of a ResourceClaim or ResourceClaimTemplate that
// no node of the profile's pool can ever satisfy, so every Pod using the
// claim stays Pending:
//  - more devices of a class than the largest node has: with the cluster
//    view, the most its ResourceSlices offer one node of the pool; without
//    it, the profile's gpusPerNode for classes of whole GPUs (a class named
//    gpu.<driver>: gpu.nvidia.com, gpu.amd.com). The `exactly` requests of
//    one claim are allocated on one node, so their counts add up per class;
//  - allocationMode All where the cluster view shows the pool's nodes have
//    no device of the class (All needs at least one);
//  - each alternative of a firstAvailable request on its own: one that can
//    never be chosen is a mistake even when another can.
void checkClaimDeviceCapacity(const ClaimValidationContext& context, std::vector<Violation>& out) {
  // The exact counts of the claim's `exactly` requests, per class, with the
  // first request that asked.
  struct Need {
    int64_t devices = 0;
    const DeviceAlternative* first = nullptr;
    int requests = 0;
  };
  std::map<std::string, Need> needs;
  for (const DeviceRequest& request : context.claim.spec.requests) {
    if (request.firstAvailable || request.alternatives.size() != 1) {
      for (const DeviceAlternative& alternative : request.alternatives) {
        checkAlone(context, alternative, out);
      }
      continue;
    }
    const DeviceAlternative& only = request.alternatives.front();
    if (only.mode == AllocationMode::All || only.adminAccess || only.deviceClassName.empty()) {
      checkAlone(context, only, out);
      continue;
    }
    Need& need = needs[only.deviceClassName];
    if (need.first == nullptr) need.first = &only;
    need.devices += only.count;
    ++need.requests;
  }
  for (const auto& [deviceClass, need] : needs) {
    const std::optional<LargestNode> largest = largestNode(context, deviceClass);
    if (!largest || need.devices <= largest->devices) continue;
    out.push_back(tooMany(context, *need.first, need.devices, *largest, need.requests > 1));
  }
}

}  // namespace

extern const ClaimValidatorDeclaration kClaimDeviceCapacityValidator{
    .name = "claim-device-capacity", .check = checkClaimDeviceCapacity};

}  // namespace aiadmit
