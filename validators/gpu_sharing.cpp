#include "validators/gpu_sharing.h"

#include <algorithm>
#include <tuple>

#include "validators/gpu_requests.h"

namespace aiadmit {

void GpuSharingValidator::check(const ValidationContext& context,
                                std::vector<Violation>& out) const {
  const Profile* profile = context.profile;
  if (profile == nullptr || profile->gpu.sharingAllowed) return;
  const std::string workloadClass(className(profile->workloadClass));
  const std::string fix = "ask for whole GPUs (\"" + profile->gpu.resourceName + "\")";
  const JsonValue* spec = context.view.spec;
  const std::string needsWhole = " needs whole GPUs";

  std::vector<std::tuple<ContainerList, size_t, std::string_view>> reported;
  forEachAcceleratorEntry(spec, profile, [&](const AcceleratorEntry& entry) {
    if (!isSharedGpuResource(entry.name)) return;
    const auto key = std::make_tuple(entry.list, entry.index, entry.name);
    if (std::find(reported.begin(), reported.end(), key) != reported.end()) return;
    reported.push_back(key);
    out.push_back({AIA013,
                   containerFieldPath(context.kind, entry.list, entry.index) + ".resources." +
                       std::string(entry.section),
                   quoted(entry.name) + inContainer(spec, entry.container) +
                       " is a shared GPU, and " + workloadClass + " work may not share GPUs",
                   fix, quoted(entry.name) + " is a shared GPU; " + workloadClass + needsWhole});
  });

  const std::string podSpec(podSpecFieldPath(context.kind));
  const JsonValue* nodeSelector = member(spec, "nodeSelector");
  if (isObject(nodeSelector)) {
    for (auto it = nodeSelector->MemberBegin(); it != nodeSelector->MemberEnd(); ++it) {
      const std::string_view key{it->name.GetString(), it->name.GetStringLength()};
      const std::string_view value = stringOf(&it->value);
      if (!isSharedGpuNodeLabel(key, value)) continue;
      out.push_back({AIA013, podSpec + ".nodeSelector",
                     std::string(key) + "=" + std::string(value) + " selects shared GPUs, and " +
                         workloadClass + " work may not share GPUs",
                     "remove " + std::string(key) + " to get whole GPUs",
                     std::string(key) + " selects shared GPUs; " + workloadClass + needsWhole});
    }
  }
  const JsonValue* terms = member(member(member(member(spec, "affinity"), "nodeAffinity"),
                                         "requiredDuringSchedulingIgnoredDuringExecution"),
                                  "nodeSelectorTerms");
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
      out.push_back(
          {AIA013,
           podSpec +
               ".affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
               ".nodeSelectorTerms[" +
               std::to_string(t) + "].matchExpressions[" + std::to_string(e) + "]",
           describeRequirement(requirement) + " selects shared GPUs, and " + workloadClass +
               " work may not share GPUs",
           "drop the expression to get whole GPUs",
           std::string(requirement.key) + " selects shared GPUs; " + workloadClass + needsWhole});
    }
  }
}

}  // namespace aiadmit
