#include "validators/gpu_requests.h"

#include <algorithm>
#include <limits>

#include "validators/suggestion.h"
#include "webhook/kube/quantity.h"
#include "webhook/policy/classify.h"

namespace aiadmit {

namespace {

bool nearAllowedName(std::string_view name, const Profile& profile) {
  if (name.find('/') == std::string_view::npos) return false;
  auto near = [&](std::string_view allowed) {
    const size_t longer = std::max(name.size(), allowed.size());
    const size_t shorter = std::min(name.size(), allowed.size());
    return longer - shorter <= 2 && editDistance(name, allowed) <= 2;
  };
  if (near(profile.gpu.resourceName)) return true;
  return std::any_of(profile.gpu.allowedResources.begin(), profile.gpu.allowedResources.end(),
                     [&](const std::string& allowed) { return near(allowed); });
}

const JsonValue* quantityOf(const JsonValue& container, std::string_view section,
                            std::string_view resource) {
  return member(member(member(&container, "resources"), section), resource);
}

int64_t saturatingAdd(int64_t a, int64_t b) {
  return a > std::numeric_limits<int64_t>::max() - b ? std::numeric_limits<int64_t>::max() : a + b;
}

bool isSidecar(const JsonValue& container) {
  return stringMember(&container, "restartPolicy") == "Always";
}

}  // namespace

bool isAcceleratorResource(std::string_view name, const Profile* profile) {
  if (profile != nullptr && profile->allowsResource(name)) return true;
  if (containsWord(name, "gpu", false) || containsWord(name, "mig-", false)) return true;
  for (std::string_view word : {"tpu", "neuron", "gaudi"}) {
    if (containsWord(name, word, true)) return true;
  }
  return profile != nullptr && nearAllowedName(name, *profile);
}

bool isSharedGpuNodeLabel(std::string_view key, std::string_view value) {
  if (key == "cloud.google.com/gke-gpu-sharing-strategy" ||
      key == "cloud.google.com/gke-max-shared-clients-per-gpu" ||
      key == "cloud.google.com/gke-gpu-partition-size") {
    return true;
  }
  return key == "nvidia.com/gpu.sharing-strategy" && value != "none";
}

void forEachAcceleratorEntry(const JsonValue* podSpec, const Profile* profile,
                             const std::function<void(const AcceleratorEntry&)>& visit) {
  forEachContainer(podSpec, [&](const JsonValue& container, ContainerList list, size_t index) {
    const JsonValue* resources = member(&container, "resources");
    for (std::string_view section : {"limits", "requests"}) {
      const JsonValue* quantities = member(resources, section);
      if (!isObject(quantities)) continue;
      for (auto it = quantities->MemberBegin(); it != quantities->MemberEnd(); ++it) {
        const std::string_view name{it->name.GetString(), it->name.GetStringLength()};
        if (!isAcceleratorResource(name, profile)) continue;
        visit(AcceleratorEntry{container, list, index, section, name, it->value});
      }
    }
  });
}

int64_t containerRequest(const JsonValue& container, std::string_view resource) {
  const JsonValue* value = quantityOf(container, "requests", resource);
  if (value == nullptr) value = quantityOf(container, "limits", resource);
  if (value == nullptr) return 0;
  const auto quantity = Quantity::fromJson(*value);
  if (!quantity || quantity->isNegative() || quantity->isZero() || !quantity->isWholeNumber()) {
    return 0;
  }
  // Whole but beyond int64: more than any node has, which is what matters.
  return quantity->wholeValue().value_or(std::numeric_limits<int64_t>::max());
}

int64_t podRequest(const JsonValue* podSpec, std::string_view resource) {
  int64_t containers = 0;
  const JsonValue* regular = member(podSpec, "containers");
  if (isArray(regular)) {
    for (const JsonValue& container : regular->GetArray()) {
      containers = saturatingAdd(containers, containerRequest(container, resource));
    }
  }
  int64_t sidecars = 0;
  int64_t initPeak = 0;
  const JsonValue* init = member(podSpec, "initContainers");
  if (isArray(init)) {
    for (const JsonValue& container : init->GetArray()) {
      const int64_t own = containerRequest(container, resource);
      if (isSidecar(container)) {
        sidecars = saturatingAdd(sidecars, own);
        containers = saturatingAdd(containers, own);
        initPeak = std::max(initPeak, sidecars);
      } else {
        initPeak = std::max(initPeak, saturatingAdd(own, sidecars));
      }
    }
  }
  return std::max(containers, initPeak);
}

bool asksForAccelerator(const JsonValue* podSpec, const Profile* profile) {
  bool found = false;
  forEachAcceleratorEntry(podSpec, profile, [&](const AcceleratorEntry& entry) {
    if (found) return;
    const auto quantity = Quantity::fromJson(entry.value);
    found = quantity && !quantity->isZero() && !quantity->isNegative();
  });
  return found;
}

bool claimsDevices(const JsonValue* podSpec) {
  const JsonValue* claims = member(podSpec, "resourceClaims");
  return isArray(claims) && !claims->Empty();
}

ContainerRef mainContainer(const PodTemplateView& view) {
  const JsonValue* containers = member(view.spec, "containers");
  if (!isArray(containers) || containers->Empty()) return {};
  const std::string_view wanted = workloadAnnotation(view, kGpuContainerAnnotation);
  if (!wanted.empty()) {
    for (rapidjson::SizeType i = 0; i < containers->Size(); ++i) {
      if (stringMember(&(*containers)[i], "name") == wanted) return {&(*containers)[i], i};
    }
  }
  return {&(*containers)[0], 0};
}

std::string inContainer(const JsonValue* podSpec, const JsonValue& container) {
  size_t count = 0;
  for (std::string_view list : {"containers", "initContainers"}) {
    const JsonValue* items = member(podSpec, list);
    if (isArray(items)) count += items->Size();
  }
  const std::string_view name = stringMember(&container, "name");
  if (count < 2 || name.empty()) return {};
  return " in container \"" + std::string(name) + "\"";
}

}  // namespace aiadmit
