// Building a ClusterView from shared objects, part by part, the lookups of
// what exists, and what the largest node of a pool can hold.
#include "webhook/cluster/cluster_view.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "webhook/cluster/cluster_devices.h"
#include "webhook/cluster/cluster_pools.h"
#include "webhook/cluster/cluster_view_parts.h"
#include "webhook/model/resources.h"

namespace aiadmit {

using namespace view_parts;

namespace {

template <typename T, typename Visit>
void forEachRecord(const std::vector<ClusterObjectsPtr>& sources, Visit visit) {
  for (const ClusterObjectsPtr& source : sources) {
    for (const SharedClusterObject& object : *source) {
      if (const T* record = std::get_if<T>(object.get())) visit(*record);
    }
  }
}

template <typename T>
std::shared_ptr<const Keyed<T>> makeKeyed(std::vector<ClusterObjectsPtr> sources) {
  auto part = std::make_shared<Keyed<T>>();
  forEachRecord<T>(sources, [&](const T& record) {
    std::string key = record.name;
    if constexpr (requires { record.namespaceName; }) key = record.namespaceName + "/" + key;
    part->byKey[std::move(key)] = &record;
  });
  for (const auto& [key, record] : part->byKey) part->ordered.push_back(record);
  part->sources = std::move(sources);
  return part;
}

std::shared_ptr<const Nodes> makeNodes(std::vector<ClusterObjectsPtr> sources) {
  auto part = std::make_shared<Nodes>();
  forEachRecord<ClusterNode>(sources,
                             [&](const ClusterNode& node) { part->byName.push_back(&node); });
  std::stable_sort(part->byName.begin(), part->byName.end(),
                   [](const ClusterNode* a, const ClusterNode* b) { return a->name < b->name; });
  for (uint32_t i = 0; i < part->byName.size(); ++i) {
    for (const auto& [key, value] : part->byName[i]->labels) {
      std::string label = key;
      label += '\0';
      label += value;
      part->byLabel[std::move(label)].push_back(i);
    }
  }
  part->sources = std::move(sources);
  return part;
}

std::shared_ptr<const DeviceClasses> makeDeviceClasses(std::vector<ClusterObjectsPtr> sources) {
  auto part = std::make_shared<DeviceClasses>();
  forEachRecord<DeviceClassRecord>(
      sources, [&](const DeviceClassRecord& record) { part->byKey[record.name] = &record; });
  for (const auto& [name, record] : part->byKey) part->ordered.push_back(record);
  // KEP-5004: when several classes claim one extended resource name, the
  // scheduler takes the newest; creation times tie at one second, and then
  // the first by name decides.
  for (const auto& [name, record] : part->byKey) {
    if (record->extendedResourceName.empty()) continue;
    const DeviceClassRecord*& backing = part->byExtendedResource[record->extendedResourceName];
    if (backing == nullptr || record->creationTimestamp > backing->creationTimestamp) {
      backing = record;
    }
  }
  part->sources = std::move(sources);
  return part;
}

// A kind's part made from its sources.
template <typename T>
auto makePart(std::type_identity<Keyed<T>>, std::vector<ClusterObjectsPtr> sources) {
  return makeKeyed<T>(std::move(sources));
}
auto makePart(std::type_identity<Nodes>, std::vector<ClusterObjectsPtr> sources) {
  return makeNodes(std::move(sources));
}
auto makePart(std::type_identity<Slices>, std::vector<ClusterObjectsPtr> sources) {
  return makeSlices(std::move(sources));
}
auto makePart(std::type_identity<DeviceClasses>, std::vector<ClusterObjectsPtr> sources) {
  return makeDeviceClasses(std::move(sources));
}

// The part of `previous` when it was built from the very same sources.
template <typename Part>
std::shared_ptr<const Part> partOf(const std::shared_ptr<const Part>& previous,
                                   std::vector<ClusterObjectsPtr> sources) {
  if (previous && previous->sources == sources) return previous;
  return makePart(std::type_identity<Part>{}, std::move(sources));
}

// Calls visit(index) with each kind's index, as a constant.
template <typename Visit, size_t... Index>
void forEachKind(Visit visit, std::index_sequence<Index...>) {
  (visit(std::integral_constant<size_t, Index>{}), ...);
}
template <typename Visit>
void forEachKind(Visit visit) {
  forEachKind(visit, std::make_index_sequence<kClusterKinds>{});
}

}  // namespace

const DeviceClassRecord* DeviceClasses::backing(std::string_view resourceName) const {
  if (const std::optional<std::string_view> implicit = deviceClassOfResourceName(resourceName)) {
    return find(*implicit);
  }
  const auto it = byExtendedResource.find(resourceName);
  return it == byExtendedResource.end() ? nullptr : it->second;
}

ClusterView::ClusterView() = default;
ClusterView::~ClusterView() = default;
ClusterView::ClusterView(const ClusterView&) = default;

void ClusterView::Builder::add(ClusterObject object) {
  const size_t kind = indexOf(kindOf(object));
  loose_[kind].push_back(std::make_shared<const ClusterObject>(std::move(object)));
}

void ClusterView::Builder::addAll(ClusterKind kind, ClusterObjectsPtr objects) {
  if (objects) sources_[indexOf(kind)].push_back(std::move(objects));
}

void ClusterView::Builder::reuse(const ClusterView& previous) {
  previous_ = std::make_shared<ClusterView>(previous);
}

std::shared_ptr<const ClusterView> ClusterView::Builder::build() && {
  for (size_t kind = 0; kind < kClusterKinds; ++kind) {
    if (loose_[kind].empty()) continue;
    sources_[kind].push_back(std::make_shared<const ClusterObjects>(std::move(loose_[kind])));
  }
  auto view = std::make_shared<ClusterView>();
  view->synced_ = synced_;
  view->listed_ = std::move(listed_);
  const ClusterView empty;
  const ClusterView& was = previous_ ? *previous_ : empty;
  forEachKind([&](auto kind) {
    std::get<kind>(view->parts_) = partOf(std::get<kind>(was.parts_), std::move(sources_[kind]));
  });
  const std::shared_ptr<const Capacity>& capacity = was.capacity_;
  const bool same = capacity && capacity->nodes == view->part<ClusterKind::Node>() &&
                    capacity->slices == view->part<ClusterKind::ResourceSlice>() &&
                    capacity->deviceClasses == view->part<ClusterKind::DeviceClass>() &&
                    capacity->slicesKnown == view->knows(ClusterKind::ResourceSlice);
  view->capacity_ =
      same ? capacity
           : makeCapacity(view->part<ClusterKind::Node>(), view->part<ClusterKind::ResourceSlice>(),
                          view->part<ClusterKind::DeviceClass>(),
                          view->knows(ClusterKind::ResourceSlice));
  return view;
}

ClusterView::Builder ClusterView::extended() const {
  Builder builder;
  builder.listed_ = listed_;
  builder.synced_ = synced_;
  forEachKind([&](auto kind) {
    if (const auto& part = std::get<kind>(parts_)) builder.sources_[kind] = part->sources;
  });
  builder.reuse(*this);
  return builder;
}

bool ClusterView::sharesPart(ClusterKind kind, const ClusterView& other) const {
  bool shared = false;
  forEachKind([&](auto index) {
    const auto& part = std::get<index>(parts_);
    if (index == indexOf(kind)) shared = part && part == std::get<index>(other.parts_);
  });
  return shared;
}

namespace {

template <typename Part>
auto find(const std::shared_ptr<const Part>& part, std::string_view key) {
  return part ? part->find(key) : nullptr;
}

Presence presence(bool listed, const void* found) {
  if (found != nullptr) return Presence::Yes;
  return listed ? Presence::No : Presence::Unknown;
}

std::string namespacedKey(std::string_view ns, std::string_view name) {
  return std::string(ns) + "/" + std::string(name);
}

}  // namespace

RecordList<ClusterNode> ClusterView::nodes() const {
  static const std::vector<const ClusterNode*> kNone;
  return RecordList<ClusterNode>(part<ClusterKind::Node>() ? part<ClusterKind::Node>()->byName
                                                           : kNone);
}
const ClusterNode* ClusterView::node(std::string_view name) const {
  if (!part<ClusterKind::Node>()) return nullptr;
  const auto& byName = part<ClusterKind::Node>()->byName;
  const auto it = std::lower_bound(
      byName.begin(), byName.end(), name,
      [](const ClusterNode* node, std::string_view wanted) { return node->name < wanted; });
  return it != byName.end() && (*it)->name == name ? *it : nullptr;
}
template <typename T>
RecordList<T> orderedRecords(const std::shared_ptr<const Keyed<T>>& part) {
  static const std::vector<const T*> kNone;
  return RecordList<T>(part ? part->ordered : kNone);
}

RecordList<DeviceClassRecord> ClusterView::deviceClasses() const {
  return orderedRecords<DeviceClassRecord>(part<ClusterKind::DeviceClass>());
}
RecordList<ClaimRecord> ClusterView::claims() const {
  return orderedRecords(part<ClusterKind::ResourceClaim>());
}
RecordList<PodRecord> ClusterView::pods() const {
  return orderedRecords(part<ClusterKind::Pod>());
}
RecordList<QueueWorkloadRecord> ClusterView::queueWorkloads() const {
  return orderedRecords(part<ClusterKind::QueueWorkload>());
}
RecordList<DeviceTaintRuleRecord> ClusterView::deviceTaintRules() const {
  return orderedRecords(part<ClusterKind::DeviceTaintRule>());
}
RecordList<ResourceSliceRecord> ClusterView::resourceSlices() const {
  static const std::vector<const ResourceSliceRecord*> kNone;
  return RecordList<ResourceSliceRecord>(
      part<ClusterKind::ResourceSlice>() ? part<ClusterKind::ResourceSlice>()->newest : kNone);
}

const DeviceClassRecord* ClusterView::deviceClass(std::string_view name) const {
  return find(part<ClusterKind::DeviceClass>(), name);
}
const ClaimTemplateRecord* ClusterView::claimTemplate(std::string_view ns,
                                                      std::string_view name) const {
  return find(part<ClusterKind::ResourceClaimTemplate>(), namespacedKey(ns, name));
}
const ClaimRecord* ClusterView::claim(std::string_view ns, std::string_view name) const {
  return find(part<ClusterKind::ResourceClaim>(), namespacedKey(ns, name));
}
const PriorityClassRecord* ClusterView::priorityClass(std::string_view name) const {
  return find(part<ClusterKind::PriorityClass>(), name);
}
const NamespaceRecord* ClusterView::namespaceNamed(std::string_view name) const {
  return find(part<ClusterKind::Namespace>(), name);
}
const LocalQueueRecord* ClusterView::localQueue(std::string_view ns, std::string_view name) const {
  return find(part<ClusterKind::LocalQueue>(), namespacedKey(ns, name));
}
const RuntimeClassRecord* ClusterView::runtimeClass(std::string_view name) const {
  return find(part<ClusterKind::RuntimeClass>(), name);
}
const PodGroupRecord* ClusterView::podGroup(std::string_view ns, std::string_view name) const {
  return find(part<ClusterKind::PodGroup>(), namespacedKey(ns, name));
}

Presence ClusterView::hasDeviceClass(std::string_view name) const {
  return presence(knows(ClusterKind::DeviceClass), deviceClass(name));
}
Presence ClusterView::hasClaimTemplate(std::string_view ns, std::string_view name) const {
  return presence(knows(ClusterKind::ResourceClaimTemplate), claimTemplate(ns, name));
}
Presence ClusterView::hasClaim(std::string_view ns, std::string_view name) const {
  return presence(knows(ClusterKind::ResourceClaim), claim(ns, name));
}
Presence ClusterView::hasPriorityClass(std::string_view name) const {
  if (name == "system-cluster-critical" || name == "system-node-critical") return Presence::Yes;
  return presence(knows(ClusterKind::PriorityClass), priorityClass(name));
}
Presence ClusterView::hasLocalQueue(std::string_view ns, std::string_view name) const {
  return presence(knows(ClusterKind::LocalQueue), localQueue(ns, name));
}
Presence ClusterView::hasRuntimeClass(std::string_view name) const {
  return presence(knows(ClusterKind::RuntimeClass), runtimeClass(name));
}

Presence ClusterView::isGpuDeviceClass(std::string_view name) const {
  const DeviceClassRecord* record = deviceClass(name);
  if (record == nullptr) return knows(ClusterKind::DeviceClass) ? Presence::No : Presence::Unknown;
  bool gpu =
      looksLikeAcceleratorDriver(record->name) ||
      (!record->extendedResourceName.empty() && looksLikeAccelerator(record->extendedResourceName));
  for (const std::string& driver : record->drivers) gpu = gpu || looksLikeAcceleratorDriver(driver);
  return gpu ? Presence::Yes : Presence::No;
}

const DeviceClassRecord* ClusterView::deviceClassForResource(std::string_view resourceName) const {
  return part<ClusterKind::DeviceClass>() ? part<ClusterKind::DeviceClass>()->backing(resourceName)
                                          : nullptr;
}

bool ClusterView::summarized(const Placement& pool) const {
  return capacity_ && pool.nodeSelector.empty() && pool.requiredNodeAffinity.empty();
}

template <typename Visit>
void ClusterView::forEachMatchingNode(const Placement& pool, Visit visit) const {
  if (!part<ClusterKind::Node>()) return;
  // The fewest nodes that one of the pool's exact label requirements names:
  // the others only need checking on those.
  const std::vector<uint32_t>* candidates = nullptr;
  auto narrow = [&](const std::string& key, const std::string& value) {
    std::string label = key;
    label += '\0';
    label += value;
    const auto it = part<ClusterKind::Node>()->byLabel.find(label);
    static const std::vector<uint32_t> kNone;
    const std::vector<uint32_t>* named =
        it == part<ClusterKind::Node>()->byLabel.end() ? &kNone : &it->second;
    if (candidates == nullptr || named->size() < candidates->size()) candidates = named;
  };
  for (const auto& [key, value] : pool.nodeSelector) narrow(key, value);
  for (const NodeSelectorRequirement& requirement : pool.requiredNodeAffinity) {
    if (requirement.op == "In" && requirement.values.size() == 1) {
      narrow(requirement.key, requirement.values[0]);
    }
  }
  const auto& nodes = part<ClusterKind::Node>()->byName;
  auto consider = [&](const ClusterNode& node) { return !nodeMatches(node, pool) || visit(node); };
  if (candidates == nullptr) {
    for (const ClusterNode* node : nodes) {
      if (!consider(*node)) return;
    }
    return;
  }
  for (uint32_t i : *candidates) {
    if (!consider(*nodes[i])) return;
  }
}

std::optional<int64_t> ClusterView::devicesOnNode(const DeviceClassRecord& deviceClass,
                                                  const ClusterNode& node) const {
  const std::optional<ClassDevices> devices = classDevices(
      part<ClusterKind::ResourceSlice>().get(), knows(ClusterKind::ResourceSlice), deviceClass);
  if (!devices) return std::nullopt;
  return countOnNode(part<ClusterKind::ResourceSlice>().get(), *devices, node);
}

std::optional<NodeCapacity> ClusterView::largestNodeForDeviceClass(std::string_view deviceClassName,
                                                                   const Placement& pool) const {
  const DeviceClassRecord* record = deviceClass(deviceClassName);
  if (!knows(ClusterKind::Node) || record == nullptr) return std::nullopt;
  const std::optional<ClassDevices> devices = classDevices(
      part<ClusterKind::ResourceSlice>().get(), knows(ClusterKind::ResourceSlice), *record);
  if (!devices) return std::nullopt;
  if (summarized(pool)) {
    const auto it = capacity_->byDeviceClass.find(deviceClassName);
    return capacity_->fromGroups(it == capacity_->byDeviceClass.end() ? nullptr : &it->second,
                                 pool);
  }
  NodeCapacity best;
  forEachMatchingNode(pool, [&](const ClusterNode& node) {
    ++best.matchingNodes;
    const int64_t count = countOnNode(part<ClusterKind::ResourceSlice>().get(), *devices, node);
    if (best.node.empty() || count > best.devices) {
      best.devices = count;
      best.node = node.name;
    }
    return true;
  });
  return best;
}

std::optional<NodeCapacity> ClusterView::largestNodeForResourceAnywhere(
    std::string_view resourceName) const {
  Toleration everyTaint;  // an empty key with Exists tolerates every taint
  everyTaint.op = "Exists";
  Placement everywhere;
  everywhere.tolerations.push_back(std::move(everyTaint));
  return largestNodeForResource(resourceName, everywhere);
}

std::optional<NodeCapacity> ClusterView::largestNodeForResource(std::string_view resourceName,
                                                                const Placement& pool) const {
  // Without the DeviceClasses it is not known whether DRA backs the name
  // (KEP-5004), so allocatable alone may be too few. A cluster that serves
  // no DRA API lists them as none.
  if (!knows(ClusterKind::Node) || !knows(ClusterKind::DeviceClass)) return std::nullopt;
  const DeviceClassRecord* backing = deviceClassForResource(resourceName);
  if (summarized(pool)) {
    const auto it = capacity_->byResource.find(resourceName);
    if (it != capacity_->byResource.end()) return capacity_->fromGroups(&it->second, pool);
    // Neither allocatable anywhere nor declared by a class (a KEP-5004
    // implicit name is counted below).
    if (backing == nullptr) return capacity_->fromGroups(nullptr, pool);
  }
  const std::optional<ClassDevices> devices =
      backing != nullptr ? classDevices(part<ClusterKind::ResourceSlice>().get(),
                                        knows(ClusterKind::ResourceSlice), *backing)
                         : std::nullopt;
  const std::string name(resourceName);
  NodeCapacity best;
  bool unknown = false;
  forEachMatchingNode(pool, [&](const ClusterNode& node) {
    ++best.matchingNodes;
    int64_t count = 0;
    const auto allocatable = node.allocatable.find(name);
    if (allocatable != node.allocatable.end()) count += allocatable->second;
    if (backing != nullptr) {
      // A node offers a name either through a device plugin or through DRA
      // (KEP-5004), so adding both never undercounts.
      if (!devices && count == 0) {
        unknown = true;
        return false;
      }
      if (devices) count += countOnNode(part<ClusterKind::ResourceSlice>().get(), *devices, node);
    }
    if (best.node.empty() || count > best.devices) {
      best.devices = count;
      best.node = node.name;
    }
    return true;
  });
  if (unknown) return std::nullopt;
  return best;
}

}  // namespace aiadmit
