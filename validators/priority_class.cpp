#include "validators/validator.h"

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
  out.push_back({std::move(field),
                 inQuotes(priorityClass) + " is not allowed for " +
                     std::string(className(profile->workloadClass)) + " work in namespace " +
                     std::string(context.namespaceName),
                 std::move(fix),
                 inQuotes(priorityClass) + " is not for " +
                     std::string(className(profile->workloadClass)) + "; use " +
                     quotedList(allowed, "or")});
}

// AIA011: a priorityClassName the profile does not allow for its class in
// this namespace would jump or starve the GPU queue.
void checkPriorityClass(const ValidationContext& context, std::vector<Violation>& out) {
  judge(context, stringMember(context.view.spec, "priorityClassName"),
        context.view.specFieldPath() + ".priorityClassName", out);
}

// AIA011 on the operator's own priority field (a Volcano Job's
// spec.priorityClassName, KubeRay's ray.io/priority-class-name label, a
// Kubeflow job's runPolicy.schedulingPolicy.priorityClass): it ranks the
// workload's Pods or their gang group as a template's class does. Judged once
// for the workload, since the field is the object's and no template's.
void checkOperatorPriorityClass(const ValidationContext& context, std::vector<Violation>& out) {
  OperatorPriorityClass own = operatorPriorityClass(context);
  judge(context, own.name, std::move(own.field), out);
}

}  // namespace

extern const ValidatorDeclaration kPriorityClassValidator{.name = "priority-class",
                                                          .check = checkPriorityClass};
extern const ValidatorDeclaration kOperatorPriorityClassValidator{
    .name = "operator-priority-class",
    .scope = Scope::Workload,
    .check = checkOperatorPriorityClass};

}  // namespace aiadmit
