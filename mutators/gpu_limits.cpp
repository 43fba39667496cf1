// Makes GPU asks explicit in `limits`, where the scheduler and the device
// plugin read them:
// - a request for an accelerator the profile allows, with no limit for it,
//   gets an equal limit (the API server refuses extended resources requested
//   without a limit);
// - a workload that asks for GPUs with the aiadmit.dev/gpus annotation, or
//   whose profile gives a default GPU count, gets the limit on its main
//   container when that container asks for no accelerator yet and the Pod
//   claims no GPU through DRA (the default also not beside a claim that
//   cannot be resolved: it may hold the GPUs).
#include "mutators/mutator.h"

#include <algorithm>
#include <string>
#include <vector>

#include "mutators/template_parts.h"
#include "webhook/model/annotations.h"
#include "webhook/model/quantity.h"

namespace aiadmit {

namespace {

// A request of an accelerator the profile allows, with no limit and a usable
// quantity; anything else (a fraction, a typo) is left for validation. A
// request of 0 counts: the API server refuses any extended resource requested
// without a limit, and a limit of 0 beside it still asks for no GPU.
bool needsLimitFromRequest(const ResourceEntry& entry, const Profile& profile) {
  if (entry.section != "requests" || !profile.allowsResource(entry.name)) return false;
  const JsonValue* limits = member(entry.container.resources(), "limits");
  if (member(limits, entry.name) != nullptr) return false;
  const auto quantity = Quantity::fromJson(entry.value);
  return quantity && !quantity->isNegative() && quantity->isWholeNumber();
}

// "container vllm", or the field of a template that is only a
// ResourceRequirements ("trainer.resourcesPerNode").
std::string containerName(const PodContainer& container) {
  if (container.resourcesOnly) return "resourcesPerNode";
  return "container " + std::string(container.name);
}

bool copyRequestsToLimits(MutationContext& context) {
  struct Missing {
    PodContainer container;
    std::string name;
  };
  std::vector<Missing> missing;
  context.pod().forEachResource([&](const ResourceEntry& entry) {
    if (!needsLimitFromRequest(entry, context.profile)) return;
    missing.push_back({entry.container, std::string(entry.name)});
  });
  for (const Missing& entry : missing) {
    JsonValue& resources = ensureResources(entry.container, context.alloc);
    JsonValue value(*member(member(&resources, "requests"), entry.name), context.alloc);
    const std::string text = quantityText(value);
    // Creating `limits` may move the members of `resources`: copy the request first.
    JsonValue& limits = ensureObject(resources, "limits", context.alloc);
    limits.AddMember(makeString(entry.name, context.alloc), value, context.alloc);
    context.report("added limit " + entry.name + "=" + text + " to " +
                   containerName(entry.container) + " to match its request");
  }
  return !missing.empty();
}

bool namespaceMayUseGpus(const Profile& profile, std::string_view namespaceName) {
  if (profile.gpu.allowedNamespaces.empty()) return true;
  return std::any_of(profile.gpu.allowedNamespaces.begin(), profile.gpu.allowedNamespaces.end(),
                     [&](const std::string& pattern) { return globMatch(pattern, namespaceName); });
}

bool addWantedGpus(MutationContext& context) {
  if (!context.primaryTemplate) return false;
  const PodReader pod = context.pod();
  // A container that already names an accelerator, even wrongly, has said
  // what it wants; validation judges it. So has one that names it as 0, as
  // a chart does to run without a GPU: a default would turn that into one.
  if (pod.namesAccelerator()) return false;
  // Nor does a Pod that gets GPUs through DRA claims: an extended-resource
  // limit on top would ask for a second set of GPUs from the device plugin.
  const ClaimedDevices& claimed = pod.claimedDevices();
  if (!claimed.gpus.empty()) return false;
  // Nor does one with a KAI share: KAI refuses a whole GPU beside it.
  if (pod.asksForGpuShare()) return false;
  const std::string_view annotated = pod.annotation(kGpusAnnotation).value_or("");
  int64_t count = 0;
  std::string why;
  if (!annotated.empty()) {
    // An annotation that is not a positive whole number asks for nothing
    // usable; AIA001 refuses it.
    const auto quantity = Quantity::parse(annotated);
    count = quantity && !quantity->isNegative() ? quantity->wholeValue().value_or(0) : 0;
    why = "per annotation " + std::string(kGpusAnnotation);
  } else if (context.profile.gpu.defaultCount > 0 && claimed.unresolved.empty() &&
             namespaceMayUseGpus(context.profile, context.namespaceName)) {
    // A claim that could not be resolved may well hold the GPUs: a default
    // nobody asked for is not added beside it.
    // A default nobody asked for must not turn an admissible workload into one
    // that the namespace rule (AIA012) refuses.
    count = context.profile.gpu.defaultCount;
    why = "per gpu.defaultCount";
  }
  if (count <= 0) return false;

  const PodContainer* container = pod.mainContainer().container;
  if (container == nullptr) return false;
  const std::string& resource = context.profile.gpu.resourceName;
  JsonValue& limits =
      ensureObject(ensureResources(*container, context.alloc), "limits", context.alloc);
  const std::string quantity = std::to_string(count);
  setString(limits, resource, quantity, context.alloc);
  context.report("added limit " + resource + "=" + quantity + " to " + containerName(*container) +
                 " " + why);
  return true;
}

bool limitGpus(MutationContext& context) {
  bool changed = copyRequestsToLimits(context);
  changed = addWantedGpus(context) || changed;
  return changed;
}

}  // namespace

extern const MutatorDeclaration kGpuLimitsMutator{
    "gpu-limits", {{"gpuLimits"}}, kInjectGpuLimits, Runs::AlsoOnControllersObjects, limitGpus};

}  // namespace aiadmit
