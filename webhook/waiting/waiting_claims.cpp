// A waiting Pod's DRA claims: a ResourceClaim not allocated, and why, as far
// as the cluster's DeviceClasses and ResourceSlices tell it: no such class,
// more devices than any node it may use offers, the devices allocated to
// other claims, or selectors that only kube-scheduler can evaluate.
#include "webhook/waiting/waiting_claims.h"
#include "webhook/cluster/cluster_pools.h"
#include "webhook/model/dra.h"
#include "webhook/model/pod_reader.h"

namespace aiadmit::waiting {

namespace {

// The most devices of the class free now on one node the Pod may use.
int64_t mostFree(const DeviceClassRecord& deviceClass, const Placement& placement,
                 const Occupancy& occupancy, const ClusterView& view) {
  int64_t most = 0;
  for (const ClusterNode& node : view.nodes()) {
    if (!nodeMatches(node, placement)) continue;
    const std::optional<int64_t> devices = view.devicesOnNode(deviceClass, node);
    if (!devices) continue;
    const int64_t free = *devices - nodeDevices(view, node, occupancy).allocated;
    most = std::max(most, free);
  }
  return most;
}

std::optional<PodVerdict> judgeRequest(const std::string& claimName,
                                       const DeviceAlternative& alternative,
                                       const Placement& placement, const Occupancy& occupancy,
                                       const ClusterView& view) {
  const std::string& className = alternative.deviceClassName;
  const std::string which = "claim " + claimName + " asks for ";
  if (view.hasDeviceClass(className) == Presence::No) {
    return PodVerdict{
        WaitCause::ClaimUnallocatable,
        which + "devices of DeviceClass " + className + ", which does not exist",
        "name an existing DeviceClass in claim " + claimName + " (kubectl get deviceclasses)", ""};
  }
  if (alternative.mode != AllocationMode::ExactCount) return std::nullopt;
  const std::optional<NodeCapacity> largest = view.largestNodeForDeviceClass(className, placement);
  if (largest && largest->devices < alternative.count) {
    const std::string where = largest->node.empty() ? "no node it may use offers any"
                                                    : "the most one node it may use offers is " +
                                                          std::to_string(largest->devices) + " (" +
                                                          largest->node + ")";
    return PodVerdict{WaitCause::NoNodeCanHold,
                      which + std::to_string(alternative.count) + " devices of class " + className +
                          " on one node; " + where,
                      "ask for at most " + std::to_string(largest->devices) +
                          " devices per claim, or add nodes whose drivers publish " +
                          std::to_string(alternative.count),
                      ""};
  }
  const DeviceClassRecord* deviceClass = view.deviceClass(className);
  if (largest && deviceClass != nullptr) {
    const int64_t free = mostFree(*deviceClass, placement, occupancy, view);
    if (free < alternative.count) {
      return PodVerdict{WaitCause::ClaimUnallocatable,
                        which + std::to_string(alternative.count) + " devices of class " +
                            className + "; the nodes it may use have at most " +
                            std::to_string(free) +
                            " free on one node, the rest allocated to other claims",
                        "wait for the claims that hold them to be released, or ask for fewer", ""};
    }
  }
  if (alternative.selectors) {
    return PodVerdict{WaitCause::ClaimUnallocatable,
                      which + "devices of class " + className +
                          " narrowed by selectors that may match none of the free devices "
                          "(kube-scheduler evaluates their CEL; aiadmit does not)",
                      "compare the selectors of claim " + claimName +
                          " with the devices' attributes (kubectl get resourceslices -o yaml)",
                      ""};
  }
  return std::nullopt;
}

}  // namespace

std::optional<PodVerdict> judgeClaims(const PodFacts& pod, const Occupancy& occupancy,
                                      const ClusterView& view) {
  const JsonValue* metadata = member(pod.json, "metadata");
  const Placement placement = PodReader(metadata, metadata, pod.spec).placement();
  for (const std::string& claimKey : pod.claimKeys) {
    const auto found = occupancy.claims.find(claimKey);
    if (found == occupancy.claims.end() || found->second->allocated) continue;
    const ClaimRecord& claim = *found->second;
    for (const DeviceRequest& request : claim.spec.requests) {
      if (request.alternatives.empty()) continue;
      // firstAvailable: the scheduler takes the first alternative that fits;
      // the last one is what remains when none does.
      const DeviceAlternative& alternative =
          request.firstAvailable ? request.alternatives.back() : request.alternatives.front();
      if (std::optional<PodVerdict> verdict =
              judgeRequest(claim.name, alternative, placement, occupancy, view)) {
        return verdict;
      }
    }
  }
  return std::nullopt;
}

}  // namespace aiadmit::waiting
