// An immutable picture of the cluster objects that decide whether a workload
// can ever run: Nodes, ResourceSlices, DeviceClasses, ResourceClaimTemplates,
// PriorityClasses, Namespaces, Kueue LocalQueues, RuntimeClasses and
// ResourceClaims; and for `explain`, what decides whether it runs now (GPU
// Pods, Kueue Workloads, DeviceTaintRules, PodGroups). The
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
#include <tuple>
#include <variant>
#include <vector>

#include "webhook/cluster/cluster_objects.h"
#include "webhook/model/scheduling.h"

namespace aiadmit {

enum class Presence { Yes, No, Unknown };

// The largest number of devices one node can hold, and where.
struct NodeCapacity {
  int64_t devices = 0;
  std::string node;       // the node that has them ("" when none matched)
  int matchingNodes = 0;  // nodes of the pool that were considered
};

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

// The part a view keeps of a kind's records: found by key, but for the kinds
// whose questions need indexes of their own.
template <typename T>
struct PartOf {
  using type = Keyed<T>;
};
template <>
struct PartOf<ClusterNode> {
  using type = Nodes;
};
template <>
struct PartOf<ResourceSliceRecord> {
  using type = Slices;
};
template <>
struct PartOf<DeviceClassRecord> {
  using type = DeviceClasses;
};
template <typename Object>
struct PartsOf;
template <typename... T>
struct PartsOf<std::variant<T...>> {
  using type = std::tuple<std::shared_ptr<const typename PartOf<T>::type>...>;
};
// One part per kind, at the kind's index.
using Parts = PartsOf<ClusterObject>::type;
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
    std::array<std::vector<ClusterObjectsPtr>, kClusterKinds> sources_;
    std::array<ClusterObjects, kClusterKinds> loose_;  // add(): made into one more source
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
  const PodGroupRecord* podGroup(std::string_view ns, std::string_view name) const;
  // By name.
  RecordList<DeviceClassRecord> deviceClasses() const;
  // By namespace and name.
  RecordList<ClaimRecord> claims() const;
  RecordList<PodRecord> pods() const;
  RecordList<QueueWorkloadRecord> queueWorkloads() const;
  RecordList<DeviceTaintRuleRecord> deviceTaintRules() const;

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
  // Calls visit(node) for each node `pool` may land on, by name, while it
  // returns true; only the nodes that carry the pool's exact labels are
  // looked at.
  template <typename Visit>
  void forEachMatchingNode(const Placement& pool, Visit visit) const;
  // The part of kind K.
  template <ClusterKind K>
  const auto& part() const {
    return std::get<indexOf(K)>(parts_);
  }
  // Whether `pool` is answered from the capacity summary: it names no labels.
  bool summarized(const Placement& pool) const;

  bool synced_ = false;
  std::set<ClusterKind> listed_;
  view_parts::Parts parts_;
  std::shared_ptr<const view_parts::Capacity> capacity_;
};

}  // namespace aiadmit
