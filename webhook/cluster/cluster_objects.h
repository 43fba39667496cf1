// The cluster objects a view keeps, each read into a record of only the
// fields the rules and `explain` read: Nodes, ResourceSlices, DeviceClasses,
// ResourceClaimTemplates, ResourceClaims, PriorityClasses, Namespaces, Kueue
// LocalQueues, RuntimeClasses, and for `explain` GPU Pods, Kueue Workloads,
// DeviceTaintRules and PodGroups.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "webhook/cluster/cluster_kinds.h"
#include "webhook/codec/json.h"
#include "webhook/model/dra.h"
#include "webhook/model/scheduling.h"

namespace aiadmit {

struct NodeTaint {
  std::string key;
  std::string value;
  std::string effect;
};

// A node selector requirement with owned values (matchExpressions or, with
// `field`, matchFields on metadata.name).
struct OwnedRequirement {
  std::string key;
  LabelOperator op = LabelOperator::Exists;
  std::vector<std::string> values;
  bool field = false;
};
// core/v1 NodeSelector: terms ORed, requirements of a term ANDed.
using NodeSelectorTerms = std::vector<std::vector<OwnedRequirement>>;

struct ClusterNode {
  std::string name;
  std::map<std::string, std::string> labels;
  std::vector<NodeTaint> taints;
  // status.allocatable entries that are whole numbers, by resource name
  // (accelerators and any other extended resource; cpu and memory are left out).
  std::map<std::string, int64_t> allocatable;
};

// Only what the rules and `explain` read: a device's name, with
// spec.perDeviceNodeSelection where it is, and its taints (its capacity and
// attributes are no rule's business and would be most of a slice's memory).
struct SliceDevice {
  std::string name;
  // With spec.perDeviceNodeSelection, each device says where it is.
  std::string nodeName;
  bool allNodes = false;
  std::optional<NodeSelectorTerms> nodeSelector;
  // The taints its driver publishes. Only `explain` reads them: a taint
  // passes, so capacity counts the device all the same.
  std::vector<DeviceTaint> taints{};
};

struct ResourceSliceRecord {
  std::string name;
  std::string driver;
  std::string pool;
  int64_t poolGeneration = 0;
  int64_t resourceSliceCount = 1;
  std::string nodeName;
  bool allNodes = false;
  std::optional<NodeSelectorTerms> nodeSelector;
  bool perDeviceNodeSelection = false;
  std::vector<SliceDevice> devices;
};

// What a DeviceClass selects, as far as its CEL can be read without a CEL
// engine: the common `device.driver == "NAME"` conjunct, with single or
// double quotes. Anything else of an expression is kept as not understood.
struct DeviceClassRecord {
  std::string name;
  std::vector<std::string> drivers;  // named by its selectors; empty when none is
  std::vector<std::string> notUnderstood;
  std::string extendedResourceName;  // spec.extendedResourceName (KEP-5004)
  // metadata.creationTimestamp as the API writes it (RFC 3339, in seconds,
  // UTC), so that text order is time order: the newest class of an extended
  // resource name backs it.
  std::string creationTimestamp;
};

struct ClaimTemplateRecord {
  std::string namespaceName;
  std::string name;
  ClaimSpec spec;
};

// A device a claim's allocation holds (status.allocation.devices.results).
struct AllocatedDevice {
  std::string driver;
  std::string pool;
  std::string device;
  auto operator<=>(const AllocatedDevice&) const = default;
};

// A ResourceClaim that Pods name with resourceClaimName: its device requests
// as a template keeps them (the claim's own spec, not a template's spec.spec),
// and what the scheduler allocated to it.
struct ClaimRecord {
  std::string namespaceName;
  std::string name;
  ClaimSpec spec;
  bool allocated = false;
  std::vector<AllocatedDevice> devices{};
};

// A Pod that asks for accelerators (extended resources or DRA claims), or a
// Kueue Workload, as `explain` reads it: a copy of only the fields it reads
// (webhook/cluster/cluster_workloads.cpp), so that a watch of every Pod costs
// the GPU Pods' few fields alone.
struct PodRecord {
  std::string namespaceName;
  std::string name;
  std::shared_ptr<const JsonDocument> object;
};
struct QueueWorkloadRecord {
  std::string namespaceName;
  std::string name;
  std::shared_ptr<const JsonDocument> object;
};

// resource.k8s.io DeviceTaintRule: its spec.taint on every device that
// spec.deviceSelector selects, as if the device's driver had published it.
struct DeviceTaintRuleRecord {
  std::string name;
  // spec.deviceSelector: without one (or with v1alpha3's deviceClassName or
  // CEL selectors) the rule is taken to select no device; each of driver,
  // pool and device that it sets must be the device's.
  bool selects = false;
  std::optional<std::string> driver;
  std::optional<std::string> pool;
  std::optional<std::string> device;
  DeviceTaint taint;

  bool appliesTo(std::string_view driverName, std::string_view poolName,
                 std::string_view deviceName) const;
};

// A condition of an object's status, as metav1.Condition writes it.
struct ConditionRecord {
  std::string type;
  std::string status;  // "True", "False", "Unknown"; "" when there is none
  std::string reason;
  std::string message;
};

// scheduling.k8s.io PodGroup (Kubernetes' own gang scheduling, 1.36+): the
// Pods that name it in spec.schedulingGroup.podGroupName are placed as its
// policy says, and the scheduler reports on placing them in its status.
struct PodGroupRecord {
  std::string namespaceName;
  std::string name;
  // spec.schedulingPolicy.gang.minCount: none of its Pods is placed until
  // that many fit at once. nullopt for the basic policy: no gang.
  std::optional<int64_t> minCount;
  // The scheduler's word on placing it: PodGroupInitiallyScheduled (1.37),
  // else PodGroupScheduled (1.36); its type is "" when it has neither.
  ConditionRecord scheduled;
};

struct PriorityClassRecord {
  std::string name;
  int64_t value = 0;
  bool globalDefault = false;
};

struct NamespaceRecord {
  std::string name;
  std::map<std::string, std::string> labels;
};

struct LocalQueueRecord {
  std::string namespaceName;
  std::string name;
  std::string clusterQueue;
};

// node.k8s.io/v1 RuntimeClass: the API server's RuntimeClass admission adds
// its scheduling.nodeSelector and scheduling.tolerations to every Pod that
// names it, so a pod template that names one gets them too once it is a Pod.
struct RuntimeClassRecord {
  std::string name;
  std::string handler;
  std::map<std::string, std::string> nodeSelector;  // scheduling.nodeSelector
  std::vector<Toleration> tolerations;              // scheduling.tolerations
};

using ClusterObject = std::variant<ClusterNode, ResourceSliceRecord, DeviceClassRecord,
                                   ClaimTemplateRecord, PriorityClassRecord, NamespaceRecord,
                                   LocalQueueRecord, RuntimeClassRecord, ClaimRecord, PodRecord,
                                   QueueWorkloadRecord, DeviceTaintRuleRecord, PodGroupRecord>;
ClusterKind kindOf(const ClusterObject& object);
// "NAMESPACE/NAME" or "NAME": the cache key of an object.
std::string keyOf(const ClusterObject& object);

// Reads one object of `kind`. `apiVersion` is the version it was served in
// (list items from the API carry none; pass the version that was asked for).
// False with `error` when the object lacks what its kind requires; false
// with `error` empty for an object the view does not keep (a Pod that asks
// for no accelerator and is in no PodGroup).
bool readClusterObject(ClusterKind kind, std::string_view apiVersion, const JsonValue& object,
                       ClusterObject& out, std::string* error);

// The DeviceClass CEL reading on its own, for tests and messages.
void readDeviceClassSelector(std::string_view expression, std::vector<std::string>& drivers,
                             std::vector<std::string>& notUnderstood);

// One kind's objects as a source holds them, immutable and shared: a
// reflector's cache as of its last change, or the objects of a snapshot
// file. A view points into them instead of copying them, and a view whose
// kind's objects did not change shares the previous view's part of that
// kind, indexes included.
using SharedClusterObject = std::shared_ptr<const ClusterObject>;
using ClusterObjects = std::vector<SharedClusterObject>;
using ClusterObjectsPtr = std::shared_ptr<const ClusterObjects>;

}  // namespace aiadmit
