#pragma once

#include "validators/validator.h"

namespace aiadmit {

// AIA001: aiadmit.dev/workload must name a class. A typo would otherwise
// silently fall back to the kind's default class and its profile.
class WorkloadAnnotationValidator final : public RuleValidator<AIA001> {
 public:
  void check(const ValidationContext& context, std::vector<Violation>& out) const override;
};

}  // namespace aiadmit
