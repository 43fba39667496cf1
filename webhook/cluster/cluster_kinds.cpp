#include "webhook/cluster/cluster_kinds.h"

#include <algorithm>

namespace aiadmit {

std::string ResourceType::path(std::string_view version) const {
  if (group.empty()) return "/api/" + std::string(version) + "/" + plural;
  return "/apis/" + group + "/" + std::string(version) + "/" + plural;
}

std::string ResourceType::discoveryPath() const {
  return group.empty() ? "" : "/apis/" + group;
}

std::string ResourceType::qualifiedPlural() const {
  return group.empty() ? plural : plural + "." + group;
}

const std::vector<ResourceType>& clusterResourceTypes() {
  using Absent = ResourceType::WhenAbsent;
  using enum ClusterKind;
  const std::vector<std::string> core = {"v1"};
  const std::vector<std::string> dra = {"v1", "v1beta2", "v1beta1"};
  const std::vector<std::string> kueue = {"v1beta2", "v1beta1"};
  const std::string draGroup = "resource.k8s.io";
  // Pods only with --waiting-metrics or `explain`: the field selector leaves
  // out the Pods that hold nothing any more.
  const std::string holding = "status.phase!=Succeeded,status.phase!=Failed";
  static const std::vector<ResourceType> types = {
      {Node, "Node", "", core, "nodes"},
      {ResourceSlice, "ResourceSlice", draGroup, dra, "resourceslices", Absent::Empty},
      {DeviceClass, "DeviceClass", draGroup, dra, "deviceclasses", Absent::Empty},
      {ResourceClaimTemplate, "ResourceClaimTemplate", draGroup, dra, "resourceclaimtemplates",
       Absent::Empty, true},
      {PriorityClass, "PriorityClass", "scheduling.k8s.io", core, "priorityclasses"},
      {Namespace, "Namespace", "", core, "namespaces"},
      {LocalQueue, "LocalQueue", "kueue.x-k8s.io", kueue, "localqueues", Absent::Unknown, true},
      {RuntimeClass, "RuntimeClass", "node.k8s.io", core, "runtimeclasses"},
      {ResourceClaim, "ResourceClaim", draGroup, dra, "resourceclaims", Absent::Empty, true},
      {Pod, "Pod", "", core, "pods", Absent::Error, true, holding},
      {QueueWorkload, "Workload", "kueue.x-k8s.io", kueue, "workloads", Absent::Unknown, true},
      // Served from 1.33 (v1alpha3) with the feature gate, GA in 1.37: a
      // cluster that serves none has no rule, and no device is tainted by
      // one. A group served in v1beta1 alone (1.32) has none: read as absent.
      {DeviceTaintRule,
       "DeviceTaintRule",
       draGroup,
       {"v1", "v1beta2", "v1beta1", "v1alpha3"},
       "devicetaintrules",
       Absent::Empty},
      // Kubernetes' own gang scheduling (GenericWorkload): v1beta1 and
      // v1alpha3 in 1.37, v1alpha2 in 1.36, each with
      // spec.schedulingPolicy.gang.minCount. 1.35 served none (its Pods name
      // a pod group of a Workload), and a cluster with the gate off has none.
      {PodGroup,
       "PodGroup",
       "scheduling.k8s.io",
       {"v1beta1", "v1alpha3", "v1alpha2"},
       "podgroups",
       Absent::Empty,
       true},
  };
  return types;
}

const ResourceType& resourceType(ClusterKind kind) {
  return clusterResourceTypes()[indexOf(kind)];
}

std::string_view kindName(ClusterKind kind) {
  return indexOf(kind) < kClusterKinds ? std::string_view(resourceType(kind).name) : "?";
}

std::optional<ClusterKind> clusterKindOf(std::string_view kind) {
  const auto& types = clusterResourceTypes();
  const auto it = std::find_if(types.begin(), types.end(),
                               [&](const ResourceType& type) { return type.name == kind; });
  return it == types.end() ? std::nullopt : std::optional<ClusterKind>(it->kind);
}

}  // namespace aiadmit
