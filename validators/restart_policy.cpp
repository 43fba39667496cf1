#include "validators/restart_policy.h"

namespace aiadmit {

void RestartPolicyValidator::check(const ValidationContext& context,
                                   std::vector<Violation>& out) const {
  const WorkloadClass workloadClass = context.classification.workloadClass;
  if (workloadClass != WorkloadClass::Training && workloadClass != WorkloadClass::Batch) return;
  // Kubernetes' own kinds only: a bare Pod and the Pods of a Job (a kind
  // with Job settings) run to completion; controllers that serve forever
  // are AIA002's.
  const PodTemplateView& view = context.view;
  if (view.type == nullptr || view.type->customResource) return;
  if (!view.objectIsPod() && (view.slot == nullptr || !view.slot->jobSettings.any())) return;
  const std::string_view policy = stringMember(view.spec, "restartPolicy");
  const bool defaulted = policy.empty() && view.objectIsPod();
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
