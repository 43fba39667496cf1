#include "validators/memory_limit.h"

namespace aiadmit {

void MemoryLimitValidator::check(const ValidationContext& context,
                                 std::vector<Violation>& out) const {
  if (context.classification.workloadClass != WorkloadClass::Realtime) return;
  for (const PodContainer& serving : context.pod.containers()) {
    if (serving.list != ContainerList::Containers) continue;
    const JsonValue& container = *serving.json;
    if (member(member(member(&container, "resources"), "limits"), "memory") != nullptr) continue;
    if (!context.pod.asksForAccelerator(serving)) continue;
    const std::string_view name = stringMember(&container, "name");
    const std::string problem =
        (name.empty() ? std::string("the GPU server") : "GPU server " + inQuotes(name)) +
        " has no memory limit";
    out.push_back({AIA015,
                   containerFieldPath(context.kind, ContainerList::Containers, serving.index) +
                       ".resources.limits",
                   problem + ", so it can grow until it starves the node", "set limits.memory",
                   // The field path names the container: a long name must not
                   // push it out of the warning.
                   "GPU server has no memory limit; set limits.memory"});
  }
}

}  // namespace aiadmit
