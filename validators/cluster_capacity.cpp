#include "validators/cluster_capacity.h"

#include <map>
#include <set>

namespace aiadmit {

namespace {

// Devices of each class that the Pod's claims need on one node, where the
// count is certain: `exactly` requests (or v1beta1's inline ones) with an
// exact count. A firstAvailable request may be met by its smallest
// alternative and `All` takes whatever a node has, so neither adds a need.
// A consumable-capacity request still asks for whole devices (a share of
// each), so its count is what the node must have.
struct DeviceClassNeed {
  int64_t devices = 0;
  std::string field;  // the first request that asked, relative to the PodSpec
};

void addNeed(std::map<std::string, DeviceClassNeed>& needs, const std::string& deviceClass,
             int64_t count, const std::string& field) {
  DeviceClassNeed& need = needs[deviceClass];
  if (need.field.empty()) need.field = field;
  need.devices += count;
}

std::map<std::string, DeviceClassNeed> deviceClassNeeds(const ValidationContext& context,
                                                        const ClusterView& cluster) {
  std::map<std::string, DeviceClassNeed> needs;
  const PodClaims& claims = context.pod.claims();
  for (const PodClaimSource& source : claims.sources) {
    if (source.resourceClaimTemplateName.empty()) continue;
    const ClaimTemplateRecord* record =
        cluster.claimTemplate(context.namespaceName, source.resourceClaimTemplateName);
    if (record == nullptr) continue;
    for (const DeviceRequest& request : record->spec.requests) {
      if (request.firstAvailable || request.alternatives.size() != 1) continue;
      const DeviceAlternative& only = request.alternatives.front();
      if (only.mode != AllocationMode::ExactCount || only.adminAccess) continue;
      addNeed(needs, only.deviceClassName, only.count, source.fieldPath);
    }
  }
  for (const ContainerDeviceClassRequest& request : claims.deviceClassRequests) {
    if (request.count) addNeed(needs, request.deviceClassName, *request.count, request.fieldPath);
  }
  return needs;
}

std::string onNode(const NodeCapacity& capacity) {
  return capacity.node.empty() ? "" : " (node " + capacity.node + ")";
}

Violation tooMany(std::string field, int64_t wanted, const std::string& what,
                  const NodeCapacity& capacity) {
  const std::string most = std::to_string(capacity.devices);
  return {AIA016, std::move(field),
          "the Pod asks for " + std::to_string(wanted) + " " + what + " on one node, but the " +
              "largest of the " + std::to_string(capacity.matchingNodes) +
              " nodes it may land on has " + most + onNode(capacity) +
              ", so it would stay Pending forever",
          "ask for at most " + most + " per Pod and spread larger runs over several Pods, or " +
              "aim the Pod at nodes that have more",
          std::to_string(wanted) + " " + what + " in one Pod, but the largest node has " + most +
              "; ask for at most " + most};
}

}  // namespace

void ClusterCapacityValidator::check(const ValidationContext& context,
                                     std::vector<Violation>& out) const {
  const ClusterView* cluster = context.cluster;
  if (cluster == nullptr) return;
  const Placement placement = context.pod.placement();
  const std::string podSpec(context.view.specFieldPath());

  std::set<std::string, std::less<>> resources;
  std::map<std::string, std::string, std::less<>> fields;
  context.pod.forEachAccelerator([&](const ResourceEntry& entry) {
    // KEP-5004 names are counted by their class below.
    if (deviceClassOfResourceName(entry.name)) return;
    const std::string name(entry.name);
    if (resources.insert(name).second) {
      fields[name] = containerFieldPath(context.view, entry.container.list, entry.container.index) +
                     ".resources." + std::string(entry.section);
    }
  });
  for (const std::string& resource : resources) {
    const int64_t wanted = context.pod.podRequest(resource);
    if (wanted <= 0) continue;
    const std::optional<NodeCapacity> capacity =
        cluster->largestNodeForResource(resource, placement);
    // No matching node is no answer: a pool scaled to zero grows on demand.
    if (!capacity || capacity->matchingNodes == 0 || wanted <= capacity->devices) continue;
    out.push_back(tooMany(fields[resource], wanted, inQuotes(resource), *capacity));
  }

  for (const auto& [deviceClass, need] : deviceClassNeeds(context, *cluster)) {
    const std::optional<NodeCapacity> capacity =
        cluster->largestNodeForDeviceClass(deviceClass, placement);
    if (!capacity || capacity->matchingNodes == 0 || need.devices <= capacity->devices) continue;
    out.push_back(tooMany(podSpec + "." + need.field, need.devices,
                          "devices of class " + inQuotes(deviceClass), *capacity));
  }
}

}  // namespace aiadmit
