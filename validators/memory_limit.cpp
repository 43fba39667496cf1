#include "validators/memory_limit.h"

#include "validators/gpu_requests.h"
#include "webhook/kube/quantity.h"

namespace aiadmit {

void MemoryLimitValidator::check(const ValidationContext& context,
                                 std::vector<Violation>& out) const {
  if (context.classification.workloadClass != WorkloadClass::Realtime) return;
  const JsonValue* spec = context.view.spec;
  const JsonValue* containers = member(spec, "containers");
  if (!isArray(containers)) return;
  for (rapidjson::SizeType i = 0; i < containers->Size(); ++i) {
    const JsonValue& container = (*containers)[i];
    if (!container.IsObject()) continue;
    const JsonValue* limits = member(member(&container, "resources"), "limits");
    if (member(limits, "memory") != nullptr) continue;
    bool servesOnGpu = false;
    const JsonValue* sections[] = {limits, member(member(&container, "resources"), "requests")};
    for (const JsonValue* quantities : sections) {
      if (!isObject(quantities)) continue;
      for (auto it = quantities->MemberBegin(); it != quantities->MemberEnd() && !servesOnGpu;
           ++it) {
        if (!isAcceleratorResource({it->name.GetString(), it->name.GetStringLength()},
                                   context.profile)) {
          continue;
        }
        const auto quantity = Quantity::fromJson(it->value);
        servesOnGpu = quantity && !quantity->isZero() && !quantity->isNegative();
      }
    }
    if (!servesOnGpu) continue;
    const std::string_view name = stringMember(&container, "name");
    const std::string problem =
        (name.empty() ? std::string("the GPU server") : "GPU server " + quoted(name)) +
        " has no memory limit";
    out.push_back(
        {AIA015,
         containerFieldPath(context.kind, ContainerList::Containers, i) + ".resources.limits",
         problem + ", so it can grow until it starves the node", "set limits.memory",
         problem + "; set limits.memory"});
  }
}

}  // namespace aiadmit
