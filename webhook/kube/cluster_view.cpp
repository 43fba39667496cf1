#include "webhook/kube/cluster_view.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "webhook/kube/resources.h"

namespace aiadmit {

namespace {

bool termsMatch(const NodeSelectorTerms& terms, const ClusterNode& node) {
  for (const auto& term : terms) {
    // An empty term selects no node (core/v1 NodeSelectorTerm semantics).
    if (term.empty()) continue;
    bool all = true;
    for (const OwnedRequirement& owned : term) {
      LabelRequirement requirement;
      requirement.key = owned.key;
      requirement.op = owned.op;
      requirement.values = LabelValues(owned.values);
      if (owned.field) {
        all = all && owned.key == "metadata.name" && requirement.matches(true, node.name);
        continue;
      }
      const auto label = node.labels.find(owned.key);
      all = all && requirement.matches(label != node.labels.end(),
                                       label != node.labels.end() ? label->second : "");
    }
    if (all) return true;
  }
  return false;
}

}  // namespace

void ClusterView::Builder::add(ClusterObject object) {
  objects_.push_back(std::move(object));
}

std::shared_ptr<const ClusterView> ClusterView::Builder::build() && {
  auto view = std::make_shared<ClusterView>();
  view->synced_ = synced_;
  view->listed_ = std::move(listed_);
  // A consumer must use only the newest generation of each pool.
  std::map<std::pair<std::string, std::string>, int64_t> newest;
  for (const ClusterObject& object : objects_) {
    if (const auto* slice = std::get_if<ResourceSliceRecord>(&object)) {
      int64_t& generation =
          newest.try_emplace({slice->driver, slice->pool}, slice->poolGeneration).first->second;
      generation = std::max(generation, slice->poolGeneration);
    }
  }
  for (ClusterObject& object : objects_) {
    std::visit(
        [&](auto&& record) {
          using T = std::decay_t<decltype(record)>;
          if constexpr (std::is_same_v<T, ClusterNode>) {
            view->nodes_.push_back(std::move(record));
          } else if constexpr (std::is_same_v<T, ResourceSliceRecord>) {
            if (record.poolGeneration == newest.at({record.driver, record.pool})) {
              view->slices_.push_back(std::move(record));
            }
          } else if constexpr (std::is_same_v<T, DeviceClassRecord>) {
            view->deviceClasses_[record.name] = std::move(record);
          } else if constexpr (std::is_same_v<T, ClaimTemplateRecord>) {
            view->claimTemplates_[record.namespaceName + "/" + record.name] = std::move(record);
          } else if constexpr (std::is_same_v<T, ClaimRecord>) {
            view->claims_[record.namespaceName + "/" + record.name] = std::move(record);
          } else if constexpr (std::is_same_v<T, PriorityClassRecord>) {
            view->priorityClasses_[record.name] = std::move(record);
          } else if constexpr (std::is_same_v<T, NamespaceRecord>) {
            view->namespaces_[record.name] = std::move(record);
          } else if constexpr (std::is_same_v<T, LocalQueueRecord>) {
            view->localQueues_[record.namespaceName + "/" + record.name] = std::move(record);
          } else {
            static_assert(std::is_same_v<T, RuntimeClassRecord>);
            view->runtimeClasses_[record.name] = std::move(record);
          }
        },
        std::move(object));
  }
  // A pool is complete when all resourceSliceCount slices of its newest
  // generation are there; a driver part-way through publishing one would
  // otherwise look smaller than it is.
  std::map<std::pair<std::string, std::string>, std::pair<int64_t, int64_t>> seen;  // count, want
  for (const ResourceSliceRecord& slice : view->slices_) {
    auto& [count, want] = seen[{slice.driver, slice.pool}];
    ++count;
    want = std::max(want, slice.resourceSliceCount);
  }
  for (const auto& [pool, counts] : seen) {
    if (counts.first < counts.second) view->incompleteDrivers_.insert(pool.first);
  }
  std::sort(view->nodes_.begin(), view->nodes_.end(),
            [](const ClusterNode& a, const ClusterNode& b) { return a.name < b.name; });
  return view;
}

ClusterView::Builder ClusterView::extended() const {
  Builder builder;
  builder.listed_ = listed_;
  builder.synced_ = synced_;
  for (const ClusterNode& node : nodes_) builder.add(node);
  for (const ResourceSliceRecord& slice : slices_) builder.add(slice);
  for (const auto& [name, record] : deviceClasses_) builder.add(record);
  for (const auto& [key, record] : claimTemplates_) builder.add(record);
  for (const auto& [key, record] : claims_) builder.add(record);
  for (const auto& [name, record] : priorityClasses_) builder.add(record);
  for (const auto& [name, record] : namespaces_) builder.add(record);
  for (const auto& [key, record] : localQueues_) builder.add(record);
  for (const auto& [name, record] : runtimeClasses_) builder.add(record);
  return builder;
}

namespace {

template <typename Map>
const typename Map::mapped_type* find(const Map& map, std::string_view key) {
  const auto it = map.find(key);
  return it == map.end() ? nullptr : &it->second;
}

Presence presence(bool listed, const void* found) {
  if (found != nullptr) return Presence::Yes;
  return listed ? Presence::No : Presence::Unknown;
}

std::string namespacedKey(std::string_view ns, std::string_view name) {
  return std::string(ns) + "/" + std::string(name);
}

}  // namespace

const DeviceClassRecord* ClusterView::deviceClass(std::string_view name) const {
  return find(deviceClasses_, name);
}
const ClaimTemplateRecord* ClusterView::claimTemplate(std::string_view ns,
                                                      std::string_view name) const {
  return find(claimTemplates_, namespacedKey(ns, name));
}
const ClaimRecord* ClusterView::claim(std::string_view ns, std::string_view name) const {
  return find(claims_, namespacedKey(ns, name));
}
const PriorityClassRecord* ClusterView::priorityClass(std::string_view name) const {
  return find(priorityClasses_, name);
}
const NamespaceRecord* ClusterView::namespaceNamed(std::string_view name) const {
  return find(namespaces_, name);
}
const LocalQueueRecord* ClusterView::localQueue(std::string_view ns, std::string_view name) const {
  return find(localQueues_, namespacedKey(ns, name));
}
const RuntimeClassRecord* ClusterView::runtimeClass(std::string_view name) const {
  return find(runtimeClasses_, name);
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
  if (const std::optional<std::string_view> implicit = deviceClassOfResourceName(resourceName)) {
    return deviceClass(*implicit);
  }
  // KEP-5004: when several classes claim a name, the API picks the newest;
  // creation times are not kept here, so the first by name decides, which
  // is at least deterministic.
  for (const auto& [name, record] : deviceClasses_) {
    if (record.extendedResourceName == resourceName) return &record;
  }
  return nullptr;
}

bool ClusterView::nodeMatches(const ClusterNode& node, const Placement& pool) {
  for (const auto& [key, value] : pool.nodeSelector) {
    const auto label = node.labels.find(key);
    if (label == node.labels.end() || label->second != value) return false;
  }
  for (const NodeSelectorRequirement& requirement : pool.requiredNodeAffinity) {
    const auto label = node.labels.find(requirement.key);
    if (!LabelRequirement::fromProfile(requirement)
             .matches(label != node.labels.end(),
                      label != node.labels.end() ? label->second : "")) {
      return false;
    }
  }
  for (const NodeTaint& taint : node.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    // Taints of node conditions and cordons (not-ready, unreachable,
    // unschedulable, pressure) come and go; they do not make a node one a
    // Pod can never use.
    if (taint.key.rfind("node.kubernetes.io/", 0) == 0) continue;
    bool tolerated = false;
    for (const Toleration& toleration : pool.tolerations) {
      const bool effect = toleration.effect.empty() || toleration.effect == taint.effect;
      const bool key =
          toleration.key.empty() ? toleration.op == "Exists" : toleration.key == taint.key;
      const bool value = toleration.op == "Exists" || toleration.value == taint.value;
      tolerated = tolerated || (effect && key && value);
    }
    if (!tolerated) return false;
  }
  return true;
}

namespace {

bool reaches(const std::string& nodeName, bool allNodes,
             const std::optional<NodeSelectorTerms>& selector, const ClusterNode& node) {
  if (allNodes) return true;
  if (!nodeName.empty()) return nodeName == node.name;
  return selector && termsMatch(*selector, node);
}

}  // namespace

std::optional<int64_t> ClusterView::devicesOnNode(const DeviceClassRecord& deviceClass,
                                                  const ClusterNode& node) const {
  if (!knows(ClusterKind::ResourceSlice) || deviceClass.drivers.empty()) return std::nullopt;
  for (const std::string& driver : deviceClass.drivers) {
    if (incompleteDrivers_.count(driver) != 0) return std::nullopt;
  }
  std::set<std::tuple<std::string_view, std::string_view, std::string_view>> devices;
  for (const ResourceSliceRecord& slice : slices_) {
    if (std::find(deviceClass.drivers.begin(), deviceClass.drivers.end(), slice.driver) ==
        deviceClass.drivers.end()) {
      continue;
    }
    const bool sliceReaches = !slice.perDeviceNodeSelection &&
                              reaches(slice.nodeName, slice.allNodes, slice.nodeSelector, node);
    for (const SliceDevice& device : slice.devices) {
      if (sliceReaches || (slice.perDeviceNodeSelection &&
                           reaches(device.nodeName, device.allNodes, device.nodeSelector, node))) {
        devices.emplace(slice.driver, slice.pool, device.name);
      }
    }
  }
  return static_cast<int64_t>(devices.size());
}

std::optional<NodeCapacity> ClusterView::largestNodeForDeviceClass(std::string_view deviceClassName,
                                                                   const Placement& pool) const {
  const DeviceClassRecord* record = deviceClass(deviceClassName);
  if (!knows(ClusterKind::Node) || record == nullptr) return std::nullopt;
  NodeCapacity best;
  for (const ClusterNode& node : nodes_) {
    if (!nodeMatches(node, pool)) continue;
    ++best.matchingNodes;
    const std::optional<int64_t> count = devicesOnNode(*record, node);
    if (!count) return std::nullopt;
    if (best.node.empty() || *count > best.devices) {
      best.devices = *count;
      best.node = node.name;
    }
  }
  return best;
}

std::optional<NodeCapacity> ClusterView::largestNodeForResource(std::string_view resourceName,
                                                                const Placement& pool) const {
  if (!knows(ClusterKind::Node)) return std::nullopt;
  const DeviceClassRecord* backing = deviceClassForResource(resourceName);
  NodeCapacity best;
  for (const ClusterNode& node : nodes_) {
    if (!nodeMatches(node, pool)) continue;
    ++best.matchingNodes;
    int64_t count = 0;
    const auto allocatable = node.allocatable.find(std::string(resourceName));
    if (allocatable != node.allocatable.end()) count += allocatable->second;
    if (backing != nullptr) {
      // A node offers a name either through a device plugin or through DRA
      // (KEP-5004), so adding both never undercounts.
      const std::optional<int64_t> devices = devicesOnNode(*backing, node);
      if (!devices && count == 0) return std::nullopt;
      count += devices.value_or(0);
    }
    if (best.node.empty() || count > best.devices) {
      best.devices = count;
      best.node = node.name;
    }
  }
  return best;
}

}  // namespace aiadmit
