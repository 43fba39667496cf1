#include "validators/validator.h"

#include <algorithm>
#include <map>
#include <set>

#include "validators/admitted_placement.h"

namespace aiadmit {

namespace {

// Devices of each class that the Pod needs on one node, where the count is
// certain: `exactly` requests (or v1beta1's inline ones) of its claim
// templates with an exact count, and KEP-5004 deviceclass names. A
// firstAvailable request may be met by its smallest alternative and `All`
// takes whatever a node has, so neither adds a need. A consumable-capacity
// request still asks for whole devices (a share of each), so its count is
// what the node must have.
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
  // A KEP-5004 name is a resource of the Pod like any other: init containers
  // that are not sidecars reuse the devices of the containers that run after
  // them, so the scheduler needs the larger of the two, not their sum.
  std::set<std::string, std::less<>> counted;
  for (const ContainerDeviceClassRequest& request : claims.deviceClassRequests) {
    if (!counted.insert(request.deviceClassName).second) continue;
    // An operator's annotation (AnnotatedClaim) gives its count itself.
    const int64_t devices = request.byAnnotation
                                ? request.count.value_or(0)
                                : context.pod.podRequest(std::string(kDeviceClassResourcePrefix) +
                                                         request.deviceClassName);
    if (devices > 0) addNeed(needs, request.deviceClassName, devices, request.fieldPath);
  }
  return needs;
}

// What a need is held against: the largest matching node there is now and,
// on a pool the profile says is autoscaled, the largest node its autoscaler
// can add.
struct Ceiling {
  NodeCapacity current;
  std::optional<int64_t> autoscaled;  // spec.gpu.maxNodeGpus
  const Profile* profile = nullptr;

  int64_t most() const { return std::max(current.devices, autoscaled.value_or(0)); }
};

// nullopt when the view gives no definite, lasting answer. `poolGpus` says
// whether what is counted is the profile's GPU resource (or devices of a
// class that stands for it), the one unit maxNodeGpus is given in.
std::optional<Ceiling> ceilingOf(const std::optional<NodeCapacity>& capacity,
                                 const Profile* profile, bool poolGpus) {
  if (!capacity) return std::nullopt;  // Nodes, slices or the class not known
  if (profile != nullptr && profile->gpu.maxNodeGpus) {
    // The autoscaler's nodes are known by their GPUs alone: what else they
    // would bring (MIG slices, other devices) cannot be bounded.
    if (!poolGpus) return std::nullopt;
    return Ceiling{*capacity, profile->gpu.maxNodeGpus, profile};
  }
  // No node with any of it: a pool scaled to zero (its CPU nodes still
  // match), or a driver whose ResourceSlices are missing for a while (an
  // upgrade, a plugin not yet registered). Both grow back.
  if (capacity->matchingNodes == 0 || capacity->devices == 0) return std::nullopt;
  return Ceiling{*capacity, std::nullopt, profile};
}

std::string nodesNow(const Ceiling& ceiling) {
  const NodeCapacity& now = ceiling.current;
  if (now.matchingNodes == 0) return "none of the nodes it may land on exists now";
  return "the largest of the " + std::to_string(now.matchingNodes) + " nodes it may land on has " +
         std::to_string(now.devices) + (now.node.empty() ? "" : " (node " + now.node + ")");
}

Violation tooMany(std::string field, int64_t wanted, const std::string& what,
                  const Ceiling& ceiling) {
  const std::string most = std::to_string(ceiling.most());
  std::string problem = "the Pod asks for " + std::to_string(wanted) + " " + what +
                        " on one node, but " + nodesNow(ceiling);
  std::string fix = "ask for at most " + most +
                    " per Pod and spread larger runs over several Pods, or aim the Pod at " +
                    "nodes that have more";
  std::string brief = std::to_string(wanted) + " " + what + " in one Pod, but ";
  brief += ceiling.current.matchingNodes == 0
               ? std::string("no node has it now")
               : "the largest node has " + std::to_string(ceiling.current.devices);
  if (ceiling.autoscaled) {
    const std::string added = std::to_string(*ceiling.autoscaled);
    const std::string profile = ceiling.profile->name;
    problem += " and the nodes its autoscaler adds have at most " + added +
               " (spec.gpu.maxNodeGpus of profile " + profile + ")";
    fix += "; if the autoscaler can add larger nodes, raise maxNodeGpus in profile " + profile;
    brief += " and the autoscaler adds at most " + added;
  }
  problem += ", so it would stay Pending forever";
  brief += "; ask for at most " + most;
  return {std::move(field), std::move(problem), std::move(fix), std::move(brief)};
}

// No node the Pod may land on has any of `resource` now, while nodes it
// may not land on do: its selection (a selector of another cloud's labels, a
// node group scaled to zero, a taint it does not tolerate) keeps it off
// every node that could run it. A node that matches may yet be added, so it
// is said, never refused.
std::optional<Violation> noNodeNow(const ClusterView& cluster, const std::string& resource,
                                   const std::optional<NodeCapacity>& capacity,
                                   const std::string& field) {
  if (!capacity || (capacity->matchingNodes > 0 && capacity->devices > 0)) return std::nullopt;
  const std::optional<NodeCapacity> anywhere = cluster.largestNodeForResourceAnywhere(resource);
  if (!anywhere || anywhere->devices == 0) return std::nullopt;
  Violation violation{
      field,
      "none of the nodes the Pod may land on has " + inQuotes(resource) +
          " now, while other nodes do (node " + anywhere->node +
          "), so it waits until a node that matches its node selector, affinity "
          "and tolerations is added",
      "aim the Pod at the nodes that have " + inQuotes(resource) +
          " (`aiadmit explain` shows which) or add such nodes",
      "no node it may land on has " + inQuotes(resource) + " now; check its node selection"};
  violation.mayChange = true;
  return violation;
}

// AIA016: the Pod asks for more accelerators than the largest node of the
// cluster that it may land on holds, counted from the nodes' allocatable
// resources and the devices ResourceSlices publish for them. Unlike AIA006,
// which trusts the profile's gpusPerNode, this reads the cluster view. It
// refuses only a lasting "no": where the Pod may land is judged as the API
// server will admit the Pod (validators/admitted_placement.h); a pool the
// profile marks as autoscaled (spec.gpu.maxNodeGpus) counts the nodes its
// autoscaler can add; and no node with any of the resource (a pool scaled
// to zero, a driver without slices for now) is no answer; where other nodes
// have the resource, the Pod's selection is what keeps it off them, and that
// is warned (a node that matches may yet be added), never refused.
void checkClusterCapacity(const ValidationContext& context, std::vector<Violation>& out) {
  const ClusterView* cluster = context.cluster;
  if (cluster == nullptr) return;
  const Placement placement = admittedPlacement(context.pod, cluster);
  const std::string podSpec(context.view.specFieldPath());
  const Profile* profile = context.profile;
  const std::string poolResource = profile != nullptr ? profile->gpu.resourceName : "";

  std::set<std::string, std::less<>> resources;
  std::map<std::string, std::string, std::less<>> fields;
  context.pod.forEachAccelerator([&](const ResourceEntry& entry) {
    // KEP-5004 names are counted by their class below.
    if (deviceClassOfResourceName(entry.name)) return;
    const std::string name(entry.name);
    if (resources.insert(name).second) {
      fields[name] = resourceSectionFieldPath(context.view, entry.container, entry.section);
    }
  });
  for (const std::string& resource : resources) {
    const int64_t wanted = context.pod.podRequest(resource);
    if (wanted <= 0) continue;
    const std::optional<NodeCapacity> capacity =
        cluster->largestNodeForResource(resource, placement);
    const std::optional<Ceiling> ceiling = ceilingOf(capacity, profile, resource == poolResource);
    if (!ceiling && !(profile != nullptr && profile->gpu.maxNodeGpus)) {
      if (auto waits = noNodeNow(*cluster, resource, capacity, fields[resource])) {
        out.push_back(std::move(*waits));
      }
    }
    if (!ceiling || wanted <= ceiling->most()) continue;
    out.push_back(tooMany(fields[resource], wanted, inQuotes(resource), *ceiling));
  }

  for (const auto& [deviceClass, need] : deviceClassNeeds(context, *cluster)) {
    const DeviceClassRecord* record = cluster->deviceClass(deviceClass);
    const bool poolGpus =
        record != nullptr && !poolResource.empty() && record->extendedResourceName == poolResource;
    const std::optional<Ceiling> ceiling =
        ceilingOf(cluster->largestNodeForDeviceClass(deviceClass, placement), profile, poolGpus);
    if (!ceiling || need.devices <= ceiling->most()) continue;
    out.push_back(tooMany(podSpec + "." + need.field, need.devices,
                          "devices of class " + inQuotes(deviceClass), *ceiling));
  }
}

}  // namespace

extern const ValidatorDeclaration kClusterCapacityValidator{.name = "cluster-capacity",
                                                            .eachTemplate = checkClusterCapacity};

}  // namespace aiadmit
