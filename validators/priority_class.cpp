#include "validators/validator.h"

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

  std::vector<std::string_view> allowed;
  if (!scheduling.priorityClassName.empty()) allowed.push_back(scheduling.priorityClassName);
  for (const std::string& name : scheduling.allowedPriorityClasses) {
    if (name != scheduling.priorityClassName) allowed.push_back(name);
  }
  std::string fix = "use " + quotedList(allowed, "or");
  if (!scheduling.priorityClassName.empty() && profile->mutations.on("scheduling")) {
    fix += ", or leave it out";
  }
  out.push_back({std::move(named.field),
                 inQuotes(priorityClass) + " is not allowed for " +
                     std::string(className(profile->workloadClass)) + " work in namespace " +
                     std::string(context.namespaceName),
                 std::move(fix),
                 inQuotes(priorityClass) + " is not for " +
                     std::string(className(profile->workloadClass)) + "; use " +
                     quotedList(allowed, "or")});
}

}  // namespace

extern constinit const ValidatorDeclaration kPriorityClassValidator =
    priorityClassDeclaration<judge>("priority-class");

}  // namespace aiadmit
