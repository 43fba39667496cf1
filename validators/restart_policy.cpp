#include "validators/restart_policy.h"

namespace aiadmit {

void RestartPolicyValidator::check(const ValidationContext& context,
                                   std::vector<Violation>& out) const {
  const WorkloadClass workloadClass = context.classification.workloadClass;
  if (workloadClass != WorkloadClass::Training && workloadClass != WorkloadClass::Batch) return;
  // Controllers that serve forever are AIA002's; Jobs and CronJobs carry Pods.
  if (context.kind != WorkloadKind::Pod && !isJobLike(context.kind)) return;
  const std::string_view policy = stringMember(context.view.spec, "restartPolicy");
  const bool defaulted = policy.empty() && context.kind == WorkloadKind::Pod;
  if (policy != "Always" && !defaulted) return;

  out.push_back(
      {AIA014, context.view.specFieldPath() + ".restartPolicy",
       "a " + std::string(className(workloadClass)) + " Pod with restartPolicy Always" +
           (defaulted ? " (the default)" : "") + " starts over when it finishes and keeps its GPUs",
       "set restartPolicy: Never or OnFailure",
       std::string(className(workloadClass)) + " Pod restarts Always" +
           (defaulted ? " (the default)" : "") + "; set restartPolicy Never or OnFailure"});
}

}  // namespace aiadmit
