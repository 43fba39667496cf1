#include "validators/validator.h"
#include "webhook/policy/rule_messages.h"

namespace aiadmit {

namespace {

// AIA014: training and batch Pods must not restart Always: a finished run
// would start over and keep its GPUs.
void checkRestartPolicy(const ValidationContext& context, std::vector<Violation>& out) {
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

  RuleMessage message = restartPolicyMessage(className(workloadClass), defaulted);
  out.push_back({context.view.specFieldPath() + ".restartPolicy", std::move(message.problem),
                 std::move(message.fix), std::move(message.brief)});
}

}  // namespace

extern const ValidatorDeclaration kRestartPolicyValidator{.name = "restart-policy",
                                                          .eachTemplate = checkRestartPolicy};

}  // namespace aiadmit
