#pragma once

#include "validators/validator.h"

namespace aiadmit {

// AIA011: a priorityClassName the profile does not allow for its class in
// this namespace would jump or starve the GPU queue.
class PriorityClassValidator final : public RuleValidator<AIA011> {
 public:
  void check(const ValidationContext& context, std::vector<Violation>& out) const override;
};

// The operator's priority field of the context's workload, and its kubectl
// field path ("metadata.labels[ray.io/priority-class-name]"); an empty name
// when the kind has no such field or the object leaves it unset.
struct OperatorPriorityClass {
  std::string_view name;
  std::string field;
};
OperatorPriorityClass operatorPriorityClass(const ValidationContext& context);

// AIA011 on the operator's own priority field (a Volcano Job's
// spec.priorityClassName, KubeRay's ray.io/priority-class-name label, a
// Kubeflow job's runPolicy.schedulingPolicy.priorityClass): it ranks the
// workload's Pods or their gang group as a template's class does. Judged once
// for the workload, since the field is the object's and no template's.
class OperatorPriorityClassValidator final
    : public RuleValidator<AIA011, Validator::Scope::Workload> {
 public:
  void check(const ValidationContext& context, std::vector<Violation>& out) const override;
};

}  // namespace aiadmit
