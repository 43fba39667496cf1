// A waiting Pod's DRA claims: a ResourceClaim not allocated, and why, as far
// as the cluster's DeviceClasses, ResourceSlices and DeviceTaintRules tell
// it: no such class, more devices than any node it may use offers, the
// devices allocated to other claims, free devices that a taint keeps its
// request off, or selectors that only kube-scheduler can evaluate.
#include "webhook/waiting/waiting_claims.h"
#include "webhook/cluster/cluster_pools.h"
#include "webhook/model/dra.h"
#include "webhook/model/pod_reader.h"
#include "webhook/waiting/waiting_devices.h"

namespace aiadmit::waiting {

namespace {

// The claim being judged, and where a fix to its spec belongs.
struct ClaimAt {
  const ClaimRecord& claim;
  std::string templateName;  // the ResourceClaimTemplate it was made from; "" when none
};

// The node the Pod may use with the most devices of the class free now (by
// those its request may be given when they tie), what keeps the request
// off them, and the most it may be given on any one node.
struct BestNode {
  const ClusterNode* node = nullptr;
  int64_t free = 0;
  FreeDevices devices;
  int64_t mostUsable = 0;
  int64_t usable() const { return free - static_cast<int64_t>(devices.keptOff.size()); }
};

BestNode bestNode(const DeviceClassRecord& deviceClass, const DeviceAlternative& alternative,
                  const Placement& placement, const Occupancy& occupancy, const ClusterView& view) {
  BestNode best;
  for (const ClusterNode& node : view.nodes()) {
    if (!nodeMatches(node, placement)) continue;
    const std::optional<int64_t> devices = view.devicesOnNode(deviceClass, node);
    if (!devices) continue;
    BestNode here{&node, 0,
                  freeDevices(occupancy, node, deviceClass.drivers, alternative.tolerations)};
    here.free = *devices - here.devices.allocated;
    const int64_t mostUsable = std::max(best.mostUsable, here.usable());
    if (best.node == nullptr || here.free > best.free ||
        (here.free == best.free && here.usable() > best.usable())) {
      best = std::move(here);
    }
    best.mostUsable = mostUsable;
  }
  return best;
}

// "gpu-2, gpu-3": the first few device names, then how many more.
std::string deviceNames(const FreeDevices& devices) {
  constexpr size_t kShown = 4;
  std::string out;
  for (size_t i = 0; i < devices.keptOff.size() && i < kShown; ++i) {
    out += (i == 0 ? "" : ", ") + std::string(devices.keptOff[i].first->name);
  }
  if (devices.keptOff.size() > kShown) {
    out += " and " + std::to_string(devices.keptOff.size() - kShown) + " more";
  }
  return out;
}

// "{key: K, operator: Equal, value: V, effect: E}": the toleration the
// request needs, in the YAML of its list.
std::string tolerationFor(const DeviceTaint& taint) {
  return "{key: " + taint.key +
         (taint.value.empty() ? ", operator: Exists" : ", operator: Equal, value: " + taint.value) +
         ", effect: " + taint.effect + "}";
}

// The free devices it could have are all kept off by taints its request
// does not tolerate: name them, the taint, and the two ways out (tolerate
// it, or have it lifted).
PodVerdict tainted(const ClaimAt& at, const DeviceAlternative& alternative, const BestNode& best) {
  const DeviceTaintOf& first = *best.devices.keptOff.front().second;
  const std::string taint = describeDeviceTaint(*first.taint);
  const bool madeFromTemplate = !at.templateName.empty();
  const std::string where = (madeFromTemplate ? "spec.spec." : "spec.") + alternative.fieldPath +
                            ".tolerations of " +
                            (madeFromTemplate ? "ResourceClaimTemplate " + at.templateName
                                              : "ResourceClaim " + at.claim.name);
  const std::string setBy = first.rule.empty()
                                ? "published by driver " +
                                      std::string(best.devices.keptOff.front().first->driver) +
                                      " in ResourceSlice " + std::string(first.slice)
                                : "set by DeviceTaintRule " + std::string(first.rule);
  PodVerdict verdict{WaitCause::DeviceTainted, "", "", poolOfNode(*best.node)};
  verdict.reason = "claim " + at.claim.name + " asks for " + std::to_string(alternative.count) +
                   " devices of class " + alternative.deviceClassName + "; free devices of node " +
                   best.node->name + " (" + deviceNames(best.devices) + ") carry the taint " +
                   taint + " (" + setBy + "), which its request does not tolerate, and no node " +
                   "it may use has " + std::to_string(alternative.count) + " free without one";
  verdict.fix =
      "add the toleration " + tolerationFor(*first.taint) + " to " + where +
      (first.rule.empty()
           ? ", or wait for driver " + std::string(best.devices.keptOff.front().first->driver) +
                 " to clear the taint once the devices are fit for use"
           : ", or delete DeviceTaintRule " + std::string(first.rule) +
                 " once the devices are fit for use (kubectl delete devicetaintrule " +
                 std::string(first.rule) + ")");
  return verdict;
}

std::optional<PodVerdict> judgeRequest(const ClaimAt& at, const DeviceAlternative& alternative,
                                       const Placement& placement, const Occupancy& occupancy,
                                       const ClusterView& view) {
  const std::string& className = alternative.deviceClassName;
  const std::string which = "claim " + at.claim.name + " asks for ";
  if (view.hasDeviceClass(className) == Presence::No) {
    return PodVerdict{
        WaitCause::ClaimUnallocatable,
        which + "devices of DeviceClass " + className + ", which does not exist",
        "name an existing DeviceClass in claim " + at.claim.name + " (kubectl get deviceclasses)",
        ""};
  }
  if (alternative.mode != AllocationMode::ExactCount) return std::nullopt;
  // Capacity counts tainted devices: a taint passes, a node's size does not.
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
    const BestNode best = bestNode(*deviceClass, alternative, placement, occupancy, view);
    if (best.free < alternative.count) {
      return PodVerdict{WaitCause::ClaimUnallocatable,
                        which + std::to_string(alternative.count) + " devices of class " +
                            className + "; the nodes it may use have at most " +
                            std::to_string(best.free) +
                            " free on one node, the rest allocated to other claims",
                        "wait for the claims that hold them to be released, or ask for fewer", ""};
    }
    if (best.mostUsable < alternative.count) return tainted(at, alternative, best);
  }
  if (alternative.selectors) {
    return PodVerdict{WaitCause::ClaimUnallocatable,
                      which + "devices of class " + className +
                          " narrowed by selectors that may match none of the free devices "
                          "(kube-scheduler evaluates their CEL; aiadmit does not)",
                      "compare the selectors of claim " + at.claim.name +
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
    const auto made = pod.claimTemplates.find(claimKey);
    const ClaimAt at{*found->second, made == pod.claimTemplates.end() ? "" : made->second};
    for (const DeviceRequest& request : at.claim.spec.requests) {
      if (request.alternatives.empty()) continue;
      // firstAvailable: the scheduler takes the first alternative that fits;
      // the last one is what remains when none does.
      const DeviceAlternative& alternative =
          request.firstAvailable ? request.alternatives.back() : request.alternatives.front();
      if (std::optional<PodVerdict> verdict =
              judgeRequest(at, alternative, placement, occupancy, view)) {
        return verdict;
      }
    }
  }
  return std::nullopt;
}

}  // namespace aiadmit::waiting
