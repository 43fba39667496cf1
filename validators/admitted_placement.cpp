#include "validators/admitted_placement.h"

#include <algorithm>
#include <set>
#include <string>

#include "webhook/model/resources.h"

namespace aiadmit {

namespace {

bool hasToleration(const Placement& placement, const Toleration& wanted) {
  return std::any_of(placement.tolerations.begin(), placement.tolerations.end(),
                     [&](const Toleration& t) {
                       return t.key == wanted.key && t.op == wanted.op && t.value == wanted.value &&
                              t.effect == wanted.effect;
                     });
}

void addExtendedResourceTolerations(const PodReader& pod, Placement& placement) {
  std::set<std::string, std::less<>> resources;
  pod.forEachResource([&](const ResourceEntry& entry) {
    if (isExtendedResourceName(entry.name)) resources.emplace(entry.name);
  });
  for (const std::string& resource : resources) {
    Toleration toleration;
    toleration.key = resource;
    toleration.op = "Exists";
    toleration.effect = "NoSchedule";
    if (!hasToleration(placement, toleration)) placement.tolerations.push_back(toleration);
  }
}

// The RuntimeClass admission plugin merges the class's scheduling into the
// Pod: its nodeSelector (a key the Pod sets already keeps the Pod's value;
// the API server refuses such a Pod, which is not this judgement's to say)
// and its tolerations.
void addRuntimeClass(const PodReader& pod, const ClusterView* cluster, Placement& placement) {
  const std::string_view name = stringMember(pod.spec(), "runtimeClassName");
  if (name.empty()) return;
  const RuntimeClassRecord* record = cluster != nullptr ? cluster->runtimeClass(name) : nullptr;
  if (record == nullptr) {
    // A class the view does not hold (not listed, not synced, or created a
    // moment ago) may tolerate any taint: no taint is judged then.
    Toleration everything;
    everything.op = "Exists";
    placement.tolerations.push_back(everything);
    return;
  }
  for (const auto& [key, value] : record->nodeSelector) placement.nodeSelector.emplace(key, value);
  for (const Toleration& toleration : record->tolerations) {
    if (!hasToleration(placement, toleration)) placement.tolerations.push_back(toleration);
  }
}

}  // namespace

Placement admittedPlacement(const PodReader& pod, const ClusterView* cluster) {
  Placement placement = pod.placement();
  addExtendedResourceTolerations(pod, placement);
  addRuntimeClass(pod, cluster, placement);
  return placement;
}

}  // namespace aiadmit
