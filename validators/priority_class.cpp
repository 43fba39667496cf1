#include "validators/validator.h"
#include "webhook/policy/rule_messages.h"

namespace aiadmit {

namespace {

// AIA011: a priority class the profile does not allow for its class in this
// namespace would jump or starve the GPU queue, named in a template or in the
// operator's own field.
void judge(const ValidationContext& context, NamedPriorityClass named,
           std::vector<Violation>& out) {
  const std::string_view priorityClass = named.name;
  const Profile* profile = context.profile;
  if (profile == nullptr) return;
  const Scheduling& scheduling = profile->scheduling;
  // A profile that names no priority class has no priority policy.
  if (scheduling.priorityClassName.empty() && scheduling.allowedPriorityClasses.empty()) return;
  if (priorityClass.empty() || profile->allowsPriorityClass(priorityClass)) return;

  RuleMessage message = priorityClassMessage(priorityClass, *profile, context.namespaceName);
  out.push_back({std::move(named.field), std::move(message.problem), std::move(message.fix),
                 std::move(message.brief)});
}

}  // namespace

extern constinit const ValidatorDeclaration kPriorityClassValidator =
    priorityClassDeclaration<judge>("priority-class");

}  // namespace aiadmit
