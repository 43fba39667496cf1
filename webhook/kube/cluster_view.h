// An immutable picture of the cluster objects that decide whether a workload
// can ever run: Nodes, ResourceSlices, DeviceClasses, ResourceClaimTemplates,
// PriorityClasses, Namespaces, Kueue LocalQueues, RuntimeClasses and
// ResourceClaims. The
// same code reads a snapshot file (`aiadmit check --cluster FILE`) and the
// API's watch caches, so both answer alike. Nothing here blocks or talks to
// the network.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "webhook/kube/dra.h"
#include "webhook/kube/json.h"
#include "webhook/kube/scheduling.h"

namespace aiadmit {

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
  // with --waiting-metrics): Pods that ask for accelerators, Kueue Workloads.
  Pod,
  QueueWorkload,
};
// In the order of ClusterObject's alternatives (kindOf() relies on it).
inline constexpr ClusterKind kAllClusterKinds[] = {
    ClusterKind::Node,          ClusterKind::ResourceSlice,
    ClusterKind::DeviceClass,   ClusterKind::ResourceClaimTemplate,
    ClusterKind::PriorityClass, ClusterKind::Namespace,
    ClusterKind::LocalQueue,    ClusterKind::RuntimeClass,
    ClusterKind::ResourceClaim, ClusterKind::Pod,
    ClusterKind::QueueWorkload};
// The kinds the admission rules read: what serve watches by default.
inline constexpr ClusterKind kAdmissionClusterKinds[] = {
    ClusterKind::Node,          ClusterKind::ResourceSlice,
    ClusterKind::DeviceClass,   ClusterKind::ResourceClaimTemplate,
    ClusterKind::PriorityClass, ClusterKind::Namespace,
    ClusterKind::LocalQueue,    ClusterKind::RuntimeClass,
    ClusterKind::ResourceClaim};
std::string_view kindName(ClusterKind kind);  // "Node", "ResourceSlice", ...
std::optional<ClusterKind> clusterKindOf(std::string_view kind);

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

// Only what the rules read: a device's name and, with
// spec.perDeviceNodeSelection, where it is (its capacity and attributes are
// no rule's business and would be most of a slice's memory).
struct SliceDevice {
  std::string name;
  // With spec.perDeviceNodeSelection, each device says where it is.
  std::string nodeName;
  bool allNodes = false;
  std::optional<NodeSelectorTerms> nodeSelector;
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
// (webhook/kube/cluster_workloads.cpp), so that a watch of every Pod costs
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

using ClusterObject =
    std::variant<ClusterNode, ResourceSliceRecord, DeviceClassRecord, ClaimTemplateRecord,
                 PriorityClassRecord, NamespaceRecord, LocalQueueRecord, RuntimeClassRecord,
                 ClaimRecord, PodRecord, QueueWorkloadRecord>;
ClusterKind kindOf(const ClusterObject& object);
// "NAMESPACE/NAME" or "NAME": the cache key of an object.
std::string keyOf(const ClusterObject& object);

// Reads one object of `kind`. `apiVersion` is the version it was served in
// (list items from the API carry none; pass the version that was asked for).
// False with `error` when the object lacks what its kind requires; false
// with `error` empty for an object the view does not keep (a Pod that asks
// for no accelerator).
bool readClusterObject(ClusterKind kind, std::string_view apiVersion, const JsonValue& object,
                       ClusterObject& out, std::string* error);

// The DeviceClass CEL reading on its own, for tests and messages.
void readDeviceClassSelector(std::string_view expression, std::vector<std::string>& drivers,
                             std::vector<std::string>& notUnderstood);

// Whether `name` looks like a driver or class of accelerators (gpu.nvidia.com,
// gpu.amd.com, mig.nvidia.com, tpu.google.com) as opposed to NICs or CPUs.
bool looksLikeAcceleratorDriver(std::string_view name);

enum class Presence { Yes, No, Unknown };

// The largest number of devices one node can hold, and where.
struct NodeCapacity {
  int64_t devices = 0;
  std::string node;       // the node that has them ("" when none matched)
  int matchingNodes = 0;  // nodes of the pool that were considered
};

// One kind's objects as a source holds them, immutable and shared: a
// reflector's cache as of its last change, or the objects of a snapshot
// file. A view points into them instead of copying them, and a view whose
// kind's objects did not change shares the previous view's part of that
// kind, indexes included.
using SharedClusterObject = std::shared_ptr<const ClusterObject>;
using ClusterObjects = std::vector<SharedClusterObject>;
using ClusterObjectsPtr = std::shared_ptr<const ClusterObjects>;

// Records a view holds by pointer, read as a sequence of records; valid as
// long as the view is.
template <typename T>
class RecordList {
 public:
  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = const T*;
    using reference = const T&;
    Iterator() = default;
    explicit Iterator(const T* const* at) : at_(at) {}
    const T& operator*() const { return **at_; }
    const T* operator->() const { return *at_; }
    Iterator& operator++() {
      ++at_;
      return *this;
    }
    Iterator operator++(int) {
      Iterator was = *this;
      ++at_;
      return was;
    }
    bool operator==(const Iterator& other) const { return at_ == other.at_; }

   private:
    const T* const* at_ = nullptr;
  };

  explicit RecordList(const std::vector<const T*>& items) : items_(&items) {}
  size_t size() const { return items_->size(); }
  bool empty() const { return items_->empty(); }
  const T& operator[](size_t i) const { return *(*items_)[i]; }
  const T& back() const { return *items_->back(); }
  Iterator begin() const { return Iterator(items_->data()); }
  Iterator end() const { return Iterator(items_->data() + items_->size()); }

 private:
  const std::vector<const T*>* items_;
};

namespace view_parts {
struct Capacity;
struct GroupBest;
struct DriverDevices;
struct Nodes;
struct Slices;
struct DeviceClasses;
template <typename T>
struct Keyed;
}  // namespace view_parts

class ClusterView {
 public:
  class Builder {
   public:
    void add(ClusterObject object);
    // All of `objects` are of `kind`; they are shared, not copied.
    void addAll(ClusterKind kind, ClusterObjectsPtr objects);
    // The kind was listed (from the API, or present in a snapshot): absence
    // of an object of this kind now means it does not exist.
    void markListed(ClusterKind kind) { listed_.insert(kind); }
    // Every kind its source reads is listed and current (a snapshot file, or
    // a watcher whose caches are all in sync).
    void markSynced(bool synced) { synced_ = synced; }
    // Each kind whose objects are the very ones `previous` was built from
    // takes its part (records and indexes) from `previous` as it is.
    void reuse(const ClusterView& previous);
    std::shared_ptr<const ClusterView> build() &&;

   private:
    friend class ClusterView;
    static constexpr size_t kKinds = static_cast<size_t>(ClusterKind::QueueWorkload) + 1;
    std::array<std::vector<ClusterObjectsPtr>, kKinds> sources_;
    std::array<ClusterObjects, kKinds> loose_;  // add(): made into one more source
    std::set<ClusterKind> listed_;
    bool synced_ = false;
    std::shared_ptr<const ClusterView> previous_;
  };

  ClusterView();
  ~ClusterView();
  ClusterView(const ClusterView&);
  ClusterView& operator=(const ClusterView&) = delete;

  // False until the source has listed everything it reads, and while it is
  // out of date; callers then decide from the profiles alone (knows() still
  // tells which kinds can be trusted).
  bool synced() const { return synced_; }

  // A builder that holds everything this view holds (objects, listed kinds,
  // synced), to add what else the same input says: `check` adds the claims
  // and claim templates of the files it checks to the snapshot it was given.
  // The kinds it adds nothing to keep this view's parts.
  Builder extended() const;

  // Whether the objects of `kind` are all known (listed and kept in sync).
  bool knows(ClusterKind kind) const { return listed_.count(kind) != 0; }
  // Whether this view holds `other`'s very part of `kind` (records and
  // indexes), as a view does whose builder reused `other` and got the same
  // objects of that kind.
  bool sharesPart(ClusterKind kind, const ClusterView& other) const;

  // By name.
  RecordList<ClusterNode> nodes() const;
  const ClusterNode* node(std::string_view name) const;
  // Only each pool's newest generation, in the order of their sources.
  RecordList<ResourceSliceRecord> resourceSlices() const;
  const DeviceClassRecord* deviceClass(std::string_view name) const;
  const ClaimTemplateRecord* claimTemplate(std::string_view ns, std::string_view name) const;
  const ClaimRecord* claim(std::string_view ns, std::string_view name) const;
  const PriorityClassRecord* priorityClass(std::string_view name) const;
  const NamespaceRecord* namespaceNamed(std::string_view name) const;
  const LocalQueueRecord* localQueue(std::string_view ns, std::string_view name) const;
  const RuntimeClassRecord* runtimeClass(std::string_view name) const;
  // By name.
  RecordList<DeviceClassRecord> deviceClasses() const;
  // By namespace and name.
  RecordList<ClaimRecord> claims() const;
  RecordList<PodRecord> pods() const;
  RecordList<QueueWorkloadRecord> queueWorkloads() const;

  Presence hasDeviceClass(std::string_view name) const;
  Presence hasClaimTemplate(std::string_view ns, std::string_view name) const;
  Presence hasClaim(std::string_view ns, std::string_view name) const;
  // Yes for system-cluster-critical and system-node-critical whatever the
  // view holds: the API server creates them and recreates them when deleted.
  Presence hasPriorityClass(std::string_view name) const;
  Presence hasLocalQueue(std::string_view ns, std::string_view name) const;
  Presence hasRuntimeClass(std::string_view name) const;

  // A GPU class: one whose selectors name an accelerator driver, or whose
  // name or extended resource name is an accelerator's. Unknown when the
  // class is not in the view.
  Presence isGpuDeviceClass(std::string_view name) const;
  // The DeviceClass whose spec.extendedResourceName is `resourceName` (the
  // newest by creationTimestamp when several claim it, then the first by
  // name, as the scheduler picks), or the class a KEP-5004 implicit name
  // names; nullptr when none.
  const DeviceClassRecord* deviceClassForResource(std::string_view resourceName) const;

  // Whether a Pod placed as `pool` says (nodeSelector and required affinity,
  // tolerating every NoSchedule and NoExecute taint) may land on `node`.
  static bool nodeMatches(const ClusterNode& node, const Placement& pool);
  // Whether `node` is one of the pool's own nodes: it has the labels the
  // pool selects, or, for a pool that only tolerates, a taint the pool
  // tolerates by key. A node any Pod may land on is not the pool's.
  static bool nodeInPool(const ClusterNode& node, const Placement& pool);

  // The most of `resourceName` (an extended resource such as nvidia.com/gpu,
  // or one backed by DRA through a DeviceClass) that any one matching node
  // offers: its allocatable count plus the devices of ResourceSlices that
  // the resource's class selects. nullopt when Nodes or DeviceClasses are
  // not known (a cluster that serves no DRA API lists DeviceClasses as
  // none), or the devices of its class cannot be counted and a node has
  // none allocatable.
  std::optional<NodeCapacity> largestNodeForResource(std::string_view resourceName,
                                                     const Placement& pool) const;
  // The same over every node, whatever a Pod selects or tolerates: whether
  // the cluster has the resource at all.
  std::optional<NodeCapacity> largestNodeForResourceAnywhere(std::string_view resourceName) const;
  // The most devices of `deviceClassName` that the ResourceSlices make
  // available to any one matching node (node-local slices and those whose
  // nodeSelector or allNodes reach it; only each pool's newest generation).
  // nullopt when Nodes, ResourceSlices or the class are not known, the
  // class's selectors could not be read, or a pool of its drivers is
  // incomplete (fewer slices than its resourceSliceCount).
  std::optional<NodeCapacity> largestNodeForDeviceClass(std::string_view deviceClassName,
                                                        const Placement& pool) const;
  // Devices of the class that `node` can use; nullopt as above.
  std::optional<int64_t> devicesOnNode(const DeviceClassRecord& deviceClass,
                                       const ClusterNode& node) const;

 private:
  // The slice index's entries of a class's drivers.
  struct ClassDevices {
    std::vector<std::pair<std::string_view, const view_parts::DriverDevices*>> drivers;
  };
  // nullopt when no count can be given: ResourceSlices not known, no driver
  // read from the class, or a pool of its drivers incomplete.
  std::optional<ClassDevices> classDevices(const DeviceClassRecord& deviceClass) const;
  int64_t countOnNode(const ClassDevices& devices, const ClusterNode& node) const;
  // Calls visit(node) for each node `pool` may land on, by name, while it
  // returns true; only the nodes that carry the pool's exact labels are
  // looked at.
  template <typename Visit>
  void forEachMatchingNode(const Placement& pool, Visit visit) const;
  // Calls visit(kind, member) with each kind the view keeps and the member
  // that holds its part (all but the capacity, which is made from others).
  template <typename Visit>
  static void forEachPart(Visit visit);
  // Whether a node with `taints` admits a Pod with the pool's tolerations.
  static bool tolerates(const std::vector<NodeTaint>& taints, const Placement& pool);
  // The summary of this view's Nodes, slices and classes (cluster_pools.cpp).
  std::shared_ptr<const view_parts::Capacity> makeCapacity() const;
  // Whether `pool` is answered from that summary: it names no labels.
  bool summarized(const Placement& pool) const;
  // The best of the groups `pool` tolerates; `best` null: none has any.
  std::optional<NodeCapacity> fromGroups(const std::vector<view_parts::GroupBest>* best,
                                         const Placement& pool) const;

  bool synced_ = false;
  std::set<ClusterKind> listed_;
  std::shared_ptr<const view_parts::Nodes> nodes_;
  std::shared_ptr<const view_parts::Slices> slices_;
  std::shared_ptr<const view_parts::DeviceClasses> deviceClasses_;
  std::shared_ptr<const view_parts::Keyed<ClaimTemplateRecord>> claimTemplates_;  // "ns/name"
  std::shared_ptr<const view_parts::Keyed<ClaimRecord>> claims_;                  // "ns/name"
  std::shared_ptr<const view_parts::Keyed<PriorityClassRecord>> priorityClasses_;
  std::shared_ptr<const view_parts::Keyed<NamespaceRecord>> namespaces_;
  std::shared_ptr<const view_parts::Keyed<LocalQueueRecord>> localQueues_;  // "ns/name"
  std::shared_ptr<const view_parts::Keyed<RuntimeClassRecord>> runtimeClasses_;
  std::shared_ptr<const view_parts::Keyed<PodRecord>> pods_;                      // "ns/name"
  std::shared_ptr<const view_parts::Keyed<QueueWorkloadRecord>> queueWorkloads_;  // "ns/name"
  std::shared_ptr<const view_parts::Capacity> capacity_;
};

// A cluster snapshot as `kubectl get nodes,resourceslices,deviceclasses,
// priorityclasses,localqueues,runtimeclasses -A -o yaml` prints it: a v1
// List (YAML or JSON), or several documents of objects or Lists. Kinds the
// view does not read are skipped and named in `skippedKinds`; a kind with at
// least one object counts as listed.
struct ClusterSnapshot {
  std::shared_ptr<const ClusterView> view;
  std::string error;  // "FILE:LINE: message" when the view could not be made
  std::vector<std::string> skippedKinds;
};
ClusterSnapshot loadClusterSnapshot(const std::string& path);
// The same from text; `name` is used in errors.
ClusterSnapshot readClusterSnapshot(std::string_view text, const std::string& name);

}  // namespace aiadmit
