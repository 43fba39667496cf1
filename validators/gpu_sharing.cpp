#include "validators/validator.h"

#include <algorithm>
#include <tuple>

#include "webhook/model/resources.h"

namespace aiadmit {

namespace {

// AIA013: shared GPUs (MIG slices, time-slicing, MPS) for a class whose
// profile forbids sharing, such as training that needs whole devices.
void checkGpuSharing(const ValidationContext& context, std::vector<Violation>& out) {
  const Profile* profile = context.profile;
  if (profile == nullptr || profile->gpu.sharingAllowed) return;
  const std::string_view workloadClass = className(profile->workloadClass);
  const JsonValue* spec = context.view.spec;
  // `what` names the shared GPUs in the message, `briefly` in the warning.
  auto report = [&](std::string field, const std::string& what, const std::string& briefly,
                    std::string_view verb, std::string fix) {
    out.push_back({std::move(field),
                   what + " " + std::string(verb) + ", and " + std::string(workloadClass) +
                       " work may not share GPUs",
                   std::move(fix),
                   briefly + " " + std::string(verb) + "; " + std::string(workloadClass) +
                       " needs whole GPUs"});
  };

  std::vector<std::tuple<ContainerList, size_t, std::string_view>> reported;
  context.pod.forEachAccelerator([&](const ResourceEntry& entry) {
    if (!isSharedGpuResource(entry.name)) return;
    const auto key = std::make_tuple(entry.container.list, entry.container.index, entry.name);
    if (std::find(reported.begin(), reported.end(), key) != reported.end()) return;
    reported.push_back(key);
    report(resourceSectionFieldPath(context.view, entry.container, entry.section),
           inQuotes(entry.name) + inContainer(context.pod, entry.container), inQuotes(entry.name),
           "is a shared GPU", "ask for whole GPUs (" + inQuotes(profile->gpu.resourceName) + ")");
  });

  // A KAI share is a GPU shared with other Pods by definition.
  if (const std::optional<GpuShare> share = context.pod.gpuShare()) {
    const std::string annotation = std::string(share->key) + "=" + std::string(share->value);
    report(annotationFieldPath(context, share->key), "annotation " + annotation,
           std::string(share->key), "asks for a share of a GPU",
           "remove the " + std::string(share->key) + " annotation and ask for whole GPUs (" +
               inQuotes(profile->gpu.resourceName) + ")");
  }

  const std::string podSpec = context.view.specFieldPath();
  const JsonValue* nodeSelector = member(spec, "nodeSelector");
  if (isObject(nodeSelector)) {
    for (auto it = nodeSelector->MemberBegin(); it != nodeSelector->MemberEnd(); ++it) {
      const std::string_view key{it->name.GetString(), it->name.GetStringLength()};
      const std::string_view value = stringOf(&it->value);
      if (!isSharedGpuNodeLabel(key, value)) continue;
      report(std::string(podSpec) + ".nodeSelector",
             describeRequirement(LabelRequirement::equals(key, value)), std::string(key),
             "selects shared GPUs", "remove " + std::string(key) + " to get whole GPUs");
    }
  }
  const JsonValue* terms = requiredNodeSelectorTerms(spec);
  if (!isArray(terms)) return;
  for (rapidjson::SizeType t = 0; t < terms->Size(); ++t) {
    const JsonValue* expressions = member(&(*terms)[t], "matchExpressions");
    if (!isArray(expressions)) continue;
    for (rapidjson::SizeType e = 0; e < expressions->Size(); ++e) {
      LabelRequirement requirement;
      if (!LabelRequirement::fromJson((*expressions)[e], requirement)) continue;
      const bool selectsShared =
          (requirement.op == LabelOperator::Exists && isSharedGpuNodeLabel(requirement.key, "")) ||
          (requirement.op == LabelOperator::In && requirement.values.size() > 0 &&
           isSharedGpuNodeLabel(requirement.key, requirement.values[0]));
      if (!selectsShared) continue;
      SelectionSite site;
      site.part = SelectionSite::Part::NodeAffinity;
      site.term = static_cast<int>(t);
      site.expression = static_cast<int>(e);
      report(std::string(podSpec) + "." + site.fieldPath(), describeRequirement(requirement),
             std::string(requirement.key), "selects shared GPUs",
             "drop the expression to get whole GPUs");
    }
  }
}

}  // namespace

extern const ValidatorDeclaration kGpuSharingValidator{.name = "gpu-sharing",
                                                       .eachTemplate = checkGpuSharing};

}  // namespace aiadmit
