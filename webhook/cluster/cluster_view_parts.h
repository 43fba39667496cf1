// The parts of a ClusterView, one per kind: the kind's records, by pointer
// into the shared objects of its sources, and the indexes its questions
// need. Immutable once built, and shared by every view built from the same
// sources, so that publishing a view after one Node changed rebuilds the
// Node part alone. The view's own files include this; cluster_view.h does not.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "webhook/cluster/cluster_objects.h"

namespace aiadmit::view_parts {

struct Part {
  std::vector<ClusterObjectsPtr> sources;  // keeps the records alive
};

// Records found by "NAME" or "NAMESPACE/NAME"; a later source's record of a
// key replaces an earlier one's (the input of `check` over its snapshot).
template <typename T>
struct Keyed : Part {
  std::map<std::string, const T*, std::less<>> byKey;
  std::vector<const T*> ordered;  // byKey's records, in its order

  const T* find(std::string_view key) const {
    const auto it = byKey.find(key);
    return it == byKey.end() ? nullptr : it->second;
  }
};

struct Nodes : Part {
  std::vector<const ClusterNode*> byName;
  // "KEY\0VALUE" -> positions in byName, ascending: the nodes a nodeSelector
  // entry names, so that a pool is matched against its own nodes only.
  std::unordered_map<std::string, std::vector<uint32_t>> byLabel;
};

struct DeviceClasses : Keyed<DeviceClassRecord> {
  // spec.extendedResourceName -> the class that backs it: the newest by
  // creationTimestamp, then the first by name, as the scheduler picks.
  std::map<std::string, const DeviceClassRecord*, std::less<>> byExtendedResource;

  // The class that backs an extended resource name: the class a KEP-5004
  // implicit name (deviceclass.resource.kubernetes.io/CLASS) names, else the
  // class that declares it; null when none does.
  const DeviceClassRecord* backing(std::string_view resourceName) const;
};

}  // namespace aiadmit::view_parts
