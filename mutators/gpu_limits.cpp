#include "mutators/gpu_limits.h"

#include "webhook/kube/resources.h"

#include <algorithm>

#include "mutators/gpu_count.h"
#include "mutators/template_parts.h"
#include "webhook/kube/quantity.h"

namespace aiadmit {

namespace {

std::string_view nameOf(const JsonValue& member) {
  return {member.GetString(), member.GetStringLength()};
}

// Requested accelerators of the profile that have no limit and a usable
// quantity; anything else (a fraction, a typo) is left for validation.
bool needsLimitFromRequest(const JsonValue* limits, const JsonValue& resource,
                           const JsonValue& quantity, const Profile& profile) {
  if (!profile.allowsResource(nameOf(resource))) return false;
  if (member(limits, nameOf(resource)) != nullptr) return false;
  return positiveWholeQuantity(quantity) > 0;
}

bool copyRequestsToLimits(MutationContext& context, JsonValue& container) {
  JsonValue* resources = member(&container, "resources");
  const JsonValue* requests = member(resources, "requests");
  if (!isObject(requests)) return false;
  const JsonValue* existingLimits = member(resources, "limits");
  bool needed = false;
  for (auto it = requests->MemberBegin(); it != requests->MemberEnd() && !needed; ++it) {
    needed = needsLimitFromRequest(existingLimits, it->name, it->value, context.profile);
  }
  if (!needed) return false;

  // Creating `limits` may move the members of `resources`; look `requests` up again after.
  JsonValue& limits = ensureObject(*resources, "limits", context.alloc);
  requests = member(resources, "requests");
  for (auto it = requests->MemberBegin(); it != requests->MemberEnd(); ++it) {
    if (!needsLimitFromRequest(&limits, it->name, it->value, context.profile)) continue;
    limits.AddMember(JsonValue(it->name, context.alloc), JsonValue(it->value, context.alloc),
                     context.alloc);
    context.report("added limit " + std::string(nameOf(it->name)) + "=" + quantityText(it->value) +
                   " to container " + std::string(stringMember(&container, "name")) +
                   " to match its request");
  }
  return true;
}

bool asksForAccelerator(const JsonValue& container) {
  const JsonValue* resources = member(&container, "resources");
  for (std::string_view section : {"limits", "requests"}) {
    const JsonValue* quantities = member(resources, section);
    if (!isObject(quantities)) continue;
    for (auto it = quantities->MemberBegin(); it != quantities->MemberEnd(); ++it) {
      if (looksLikeAccelerator(nameOf(it->name))) return true;
    }
  }
  return false;
}

bool namespaceMayUseGpus(const Profile& profile, std::string_view namespaceName) {
  if (profile.gpu.allowedNamespaces.empty()) return true;
  return std::any_of(profile.gpu.allowedNamespaces.begin(), profile.gpu.allowedNamespaces.end(),
                     [&](const std::string& pattern) { return globMatch(pattern, namespaceName); });
}

bool addWantedGpus(MutationContext& context) {
  const PodTemplateView view = context.view();
  const std::string_view annotated = workloadAnnotation(view, kGpusAnnotation);
  int64_t count = 0;
  std::string_view why;
  if (!annotated.empty()) {
    // An annotation that is not a positive whole number asks for nothing usable.
    const auto quantity = Quantity::parse(annotated);
    count = quantity && !quantity->isNegative() ? quantity->wholeValue().value_or(0) : 0;
    why = "per annotation aiadmit.dev/gpus";
  } else if (context.profile.gpu.defaultCount > 0 && !requestsAccelerator(view.spec) &&
             namespaceMayUseGpus(context.profile, context.namespaceName)) {
    // A default nobody asked for must not turn an admissible workload into one
    // that the namespace rule (AIA012) refuses.
    count = context.profile.gpu.defaultCount;
    why = "per gpu.defaultCount";
  }
  if (count <= 0) return false;

  JsonValue* container = mainContainer(context);
  if (container == nullptr || asksForAccelerator(*container)) return false;
  const std::string& resource = context.profile.gpu.resourceName;
  JsonValue& limits =
      ensureObject(ensureObject(*container, "resources", context.alloc), "limits", context.alloc);
  const std::string quantity = std::to_string(count);
  setString(limits, resource, quantity, context.alloc);
  context.report("added limit " + resource + "=" + quantity + " to container " +
                 std::string(stringMember(container, "name")) + " " + std::string(why));
  return true;
}

}  // namespace

bool GpuLimitsMutator::mutate(MutationContext& context) const {
  if (!context.profile.mutations.gpuLimits) return false;
  bool changed = false;
  if (JsonValue* spec = context.existingPodSpec()) {
    for (std::string_view list : {"initContainers", "containers"}) {
      JsonValue* containers = member(spec, list);
      if (!isArray(containers)) continue;
      for (JsonValue& container : containers->GetArray()) {
        if (container.IsObject()) changed = copyRequestsToLimits(context, container) || changed;
      }
    }
  }
  return addWantedGpus(context) || changed;
}

}  // namespace aiadmit
