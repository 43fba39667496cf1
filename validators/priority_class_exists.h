#pragma once

#include "validators/validator.h"

namespace aiadmit {

// AIA017: the Pod names a priorityClassName that the cluster does not have.
// The API server refuses such a Pod, and a controller's Pods then fail one by
// one long after the workload was applied.
class PriorityClassExistsValidator final : public RuleValidator<AIA017> {
 public:
  void check(const ValidationContext& context, std::vector<Violation>& out) const override;
};

// AIA017 on the operator's own priority field (OperatorPriorityClassValidator
// names them): the operator gives the class to the Pods, or to the gang group
// Volcano ranks them by, so a class the cluster lacks fails them the same way.
class OperatorPriorityClassExistsValidator final
    : public RuleValidator<AIA017, Validator::Scope::Workload> {
 public:
  void check(const ValidationContext& context, std::vector<Violation>& out) const override;
};

}  // namespace aiadmit
