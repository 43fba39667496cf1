// The kinds of object the cluster view reads, and what the API says of each:
// its group, the versions aiadmit reads by preference, its plural, whether it
// lives in namespaces, and what it means when the API does not serve it.
// One row per kind: the reflectors, `explain`'s listing, the API lookups and
// the RBAC test read the same facts.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aiadmit {

// In the order of ClusterObject's alternatives (kindOf() relies on it).
enum class ClusterKind {
  Node,
  ResourceSlice,
  DeviceClass,
  ResourceClaimTemplate,
  PriorityClass,
  Namespace,
  LocalQueue,
  RuntimeClass,
  ResourceClaim,
  // What `explain` and serve's waiting gauges read (serve watches them only
  // with --waiting-metrics): Pods that ask for accelerators, Kueue Workloads,
  // the DeviceTaintRules that keep claims off devices for a while, and the
  // PodGroups of Kubernetes' own gang scheduling.
  Pod,
  QueueWorkload,
  DeviceTaintRule,
  PodGroup,
};
inline constexpr size_t kClusterKinds = static_cast<size_t>(ClusterKind::PodGroup) + 1;
constexpr size_t indexOf(ClusterKind kind) {
  return static_cast<size_t>(kind);
}
inline constexpr ClusterKind kAllClusterKinds[] = {
    ClusterKind::Node,          ClusterKind::ResourceSlice,
    ClusterKind::DeviceClass,   ClusterKind::ResourceClaimTemplate,
    ClusterKind::PriorityClass, ClusterKind::Namespace,
    ClusterKind::LocalQueue,    ClusterKind::RuntimeClass,
    ClusterKind::ResourceClaim, ClusterKind::Pod,
    ClusterKind::QueueWorkload, ClusterKind::DeviceTaintRule,
    ClusterKind::PodGroup};
// The kinds the admission rules read: what serve watches by default.
inline constexpr ClusterKind kAdmissionClusterKinds[] = {
    ClusterKind::Node,          ClusterKind::ResourceSlice,
    ClusterKind::DeviceClass,   ClusterKind::ResourceClaimTemplate,
    ClusterKind::PriorityClass, ClusterKind::Namespace,
    ClusterKind::LocalQueue,    ClusterKind::RuntimeClass,
    ClusterKind::ResourceClaim};
// What serve watches besides with --waiting-metrics, for the gauges alone:
// its ClusterRole (manifests/components/waiting-metrics) grants these.
inline constexpr ClusterKind kWaitingClusterKinds[] = {ClusterKind::Pod, ClusterKind::QueueWorkload,
                                                       ClusterKind::DeviceTaintRule,
                                                       ClusterKind::PodGroup};

struct ResourceType {
  ClusterKind kind;
  std::string name;   // "Node", "ResourceSlice", ...; Kueue's "Workload"
  std::string group;  // "" for the core group
  // The versions aiadmit reads, by preference: the first one the group's
  // discovery document lists is watched. A group served only in others
  // (a 1.31 cluster with resource.k8s.io/v1alpha3 alone) is unknown.
  std::vector<std::string> versions;
  std::string plural;
  // What it means when the API does not serve the group at all (discovery
  // 404), or the resource within the version (404): Unknown for a CRD that
  // is not installed (Kueue's LocalQueue: skipped, not an error); Empty for
  // the DRA kinds, built in but served only by clusters with DRA (none
  // exist); Error for kinds every cluster serves.
  enum class WhenAbsent { Unknown, Empty, Error } whenAbsent = WhenAbsent::Error;
  // Its objects live in namespaces: one is read at .../namespaces/NS/PLURAL/NAME.
  bool namespaced = false;
  // Lists and watches ask only for the objects it selects ("" for all).
  std::string fieldSelector{};

  std::string path(std::string_view version) const;  // "/apis/GROUP/VERSION/PLURAL"
  std::string discoveryPath() const;                 // "/apis/GROUP"; "" for the core group
  std::string qualifiedPlural() const;               // "resourceslices.resource.k8s.io"
};
// Every kind the view reads, in the order of kAllClusterKinds.
const std::vector<ResourceType>& clusterResourceTypes();
const ResourceType& resourceType(ClusterKind kind);

std::string_view kindName(ClusterKind kind);  // "Node", "ResourceSlice", ...
std::optional<ClusterKind> clusterKindOf(std::string_view kind);

}  // namespace aiadmit
