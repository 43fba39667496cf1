#include "validators/priority_class.h"

#include "webhook/codec/json_pointer.h"

namespace aiadmit {

namespace {

// `priorityClass`, named at `field`, judged against the profile's policy.
void judge(const ValidationContext& context, std::string_view priorityClass, std::string field,
           std::vector<Violation>& out) {
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
  out.push_back({AIA011, std::move(field),
                 inQuotes(priorityClass) + " is not allowed for " +
                     std::string(className(profile->workloadClass)) + " work in namespace " +
                     std::string(context.namespaceName),
                 std::move(fix),
                 inQuotes(priorityClass) + " is not for " +
                     std::string(className(profile->workloadClass)) + "; use " +
                     quotedList(allowed, "or")});
}

}  // namespace

OperatorPriorityClass operatorPriorityClass(const ValidationContext& context) {
  const WorkloadType* type = context.view.type;
  if (type == nullptr || type->scheduling.priorityClassName.empty()) return {};
  const std::string& pointer = type->scheduling.priorityClassName;
  const std::string_view name = stringOf(valueAt(context.object, pointer));
  if (name.empty()) return {};
  return {name, fieldPathOf(context.object, pointer)};
}

void PriorityClassValidator::check(const ValidationContext& context,
                                   std::vector<Violation>& out) const {
  judge(context, stringMember(context.view.spec, "priorityClassName"),
        context.view.specFieldPath() + ".priorityClassName", out);
}

void OperatorPriorityClassValidator::check(const ValidationContext& context,
                                           std::vector<Violation>& out) const {
  OperatorPriorityClass own = operatorPriorityClass(context);
  judge(context, own.name, std::move(own.field), out);
}

}  // namespace aiadmit
