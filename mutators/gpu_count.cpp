#include "mutators/gpu_count.h"

#include <algorithm>

#include "webhook/kube/quantity.h"
#include "webhook/kube/workload.h"

namespace aiadmit {

int64_t positiveWholeQuantity(const JsonValue& value) {
  const auto quantity = Quantity::fromJson(value);
  if (!quantity || quantity->isNegative()) return 0;
  return quantity->wholeValue().value_or(0);
}

int64_t containerGpus(const JsonValue& container, std::string_view resource) {
  const JsonValue* resources = member(&container, "resources");
  const JsonValue* quantity = member(member(resources, "limits"), resource);
  if (quantity == nullptr) quantity = member(member(resources, "requests"), resource);
  return quantity == nullptr ? 0 : positiveWholeQuantity(*quantity);
}

int64_t podGpus(const JsonValue* podSpec, std::string_view resource) {
  // Sidecars (init containers with restartPolicy Always) keep running beside
  // the regular containers; a plain init container runs beside the sidecars
  // started before it.
  int64_t sidecars = 0;
  int64_t initPeak = 0;
  if (const JsonValue* init = member(podSpec, "initContainers"); isArray(init)) {
    for (const JsonValue& container : init->GetArray()) {
      const int64_t gpus = containerGpus(container, resource);
      if (stringMember(&container, "restartPolicy") == "Always") {
        sidecars += gpus;
      } else {
        initPeak = std::max(initPeak, sidecars + gpus);
      }
    }
  }
  int64_t regular = sidecars;
  if (const JsonValue* containers = member(podSpec, "containers"); isArray(containers)) {
    for (const JsonValue& container : containers->GetArray()) {
      regular += containerGpus(container, resource);
    }
  }
  return std::max(regular, initPeak);
}

bool usesProfilePool(const JsonValue* podSpec, const Profile& profile) {
  bool uses = false;
  forEachContainer(podSpec, [&](const JsonValue& container, ContainerList, size_t) {
    const JsonValue* resources = member(&container, "resources");
    for (std::string_view section : {"limits", "requests"}) {
      const JsonValue* quantities = member(resources, section);
      if (!isObject(quantities)) continue;
      for (auto it = quantities->MemberBegin(); it != quantities->MemberEnd() && !uses; ++it) {
        if (!profile.allowsResource({it->name.GetString(), it->name.GetStringLength()})) continue;
        const auto quantity = Quantity::fromJson(it->value);
        uses = quantity && !quantity->isZero() && !quantity->isNegative();
      }
    }
  });
  return uses;
}

}  // namespace aiadmit
