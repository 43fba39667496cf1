#include "webhook/policy/rule_messages.h"

#include "webhook/codec/text.h"

namespace aiadmit {

RuleMessage gpusPerNodeMessage(std::string_view wanted, std::string_view what,
                               std::string_view briefWhat, int64_t perNode) {
  const std::string most = std::to_string(perNode);
  return {
      concat("the Pod asks for ", wanted, " ", what, " but the largest node of the GPU pool has ",
             most, ", so it would stay Pending forever"),
      concat("ask for at most ", most, " per Pod and spread larger runs over several Pods"),
      concat(wanted, " ", briefWhat, " in one Pod, but GPU nodes have ", most, "; ask for at most ",
             most)};
}

std::vector<std::string_view> allowedPriorityClasses(const Profile& profile) {
  const Scheduling& scheduling = profile.scheduling;
  std::vector<std::string_view> allowed;
  if (!scheduling.priorityClassName.empty()) allowed.push_back(scheduling.priorityClassName);
  for (const std::string& name : scheduling.allowedPriorityClasses) {
    if (name != scheduling.priorityClassName) allowed.push_back(name);
  }
  return allowed;
}

RuleMessage priorityClassMessage(std::string_view priorityClass, const Profile& profile,
                                 std::string_view namespaceName) {
  const std::string_view workloadClass = className(profile.workloadClass);
  // Left out, the webhook sets the profile's own.
  const bool mayLeaveOut =
      !profile.scheduling.priorityClassName.empty() && profile.mutations.on("scheduling");
  const std::string use = "use " + quotedList(allowedPriorityClasses(profile), "or");
  return {concat(inQuotes(priorityClass), " is not allowed for ", workloadClass,
                 " work in namespace ", namespaceName),
          mayLeaveOut ? use + ", or leave it out" : use,
          concat(inQuotes(priorityClass), " is not for ", workloadClass, "; ", use)};
}

RuleMessage restartPolicyMessage(std::string_view workloadClass, bool defaulted) {
  const std::string_view always = defaulted ? "Always (the default)" : "Always";
  return {
      concat("a ", workloadClass, " Pod with restartPolicy ", always,
             " starts over when it finishes and keeps its GPUs"),
      "set restartPolicy: Never or OnFailure",
      concat(workloadClass, " Pod restarts ", always, "; set restartPolicy Never or OnFailure")};
}

RuleMessage memoryLimitMessage(std::string_view server) {
  const std::string problem = concat(server, " has no memory limit");
  return {problem + ", so it can grow until it starves the node", "set limits.memory",
          problem + "; set limits.memory"};
}

}  // namespace aiadmit
