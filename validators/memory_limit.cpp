#include "validators/validator.h"
#include "webhook/policy/rule_messages.h"

namespace aiadmit {

namespace {

// AIA015: a realtime GPU server without a memory limit can grow until it
// starves its GPU node (warns by default).
void checkMemoryLimit(const ValidationContext& context, std::vector<Violation>& out) {
  if (context.classification.workloadClass != WorkloadClass::Realtime) return;
  for (const PodContainer& serving : context.pod.containers()) {
    if (serving.list != ContainerList::Containers) continue;
    if (member(member(serving.resources(), "limits"), "memory") != nullptr) continue;
    if (!context.pod.asksForAccelerator(serving)) continue;
    const std::string_view name = serving.name;
    RuleMessage message = memoryLimitMessage(name.empty() ? std::string("the GPU server")
                                                          : "GPU server " + inQuotes(name));
    Violation violation{resourceSectionFieldPath(context.view, serving, "limits"),
                        std::move(message.problem), std::move(message.fix),
                        std::move(message.brief)};
    // The field path names the container too: a name too long to fit beside
    // it gives way, so that the warning keeps its path.
    if (!violation.warningKeepsField())
      violation.brief = "GPU server has no memory limit; set limits.memory";
    out.push_back(std::move(violation));
  }
}

}  // namespace

extern const ValidatorDeclaration kMemoryLimitValidator{.name = "memory-limit",
                                                        .eachTemplate = checkMemoryLimit};

}  // namespace aiadmit
