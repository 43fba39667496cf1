#include "validators/priority_class.h"

namespace aiadmit {

void PriorityClassValidator::check(const ValidationContext& context,
                                   std::vector<Violation>& out) const {
  const Profile* profile = context.profile;
  if (profile == nullptr) return;
  const Scheduling& scheduling = profile->scheduling;
  // A profile that names no priority class has no priority policy.
  if (scheduling.priorityClassName.empty() && scheduling.allowedPriorityClasses.empty()) return;
  const std::string_view priorityClass = stringMember(context.view.spec, "priorityClassName");
  if (priorityClass.empty() || profile->allowsPriorityClass(priorityClass)) return;

  std::vector<std::string_view> allowed;
  if (!scheduling.priorityClassName.empty()) allowed.push_back(scheduling.priorityClassName);
  for (const std::string& name : scheduling.allowedPriorityClasses) {
    if (name != scheduling.priorityClassName) allowed.push_back(name);
  }
  std::string fix = "use " + quotedList(allowed, "or");
  if (!scheduling.priorityClassName.empty() && profile->mutations.scheduling) {
    fix += ", or leave it out";
  }
  out.push_back({AIA011, context.view.specFieldPath() + ".priorityClassName",
                 inQuotes(priorityClass) + " is not allowed for " +
                     std::string(className(profile->workloadClass)) + " work in namespace " +
                     std::string(context.namespaceName),
                 std::move(fix),
                 inQuotes(priorityClass) + " is not for " +
                     std::string(className(profile->workloadClass)) + "; use " +
                     quotedList(allowed, "or")});
}

}  // namespace aiadmit
