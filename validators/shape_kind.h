#pragma once

#include "validators/validator.h"

namespace aiadmit {

// AIA002: the declared shape must suit the kind. A Deployment restarts
// finished training forever; a Job stops serving when its Pods exit.
class ShapeKindValidator final : public RuleValidator<AIA002, Validator::Scope::Workload> {
 public:
  void check(const ValidationContext& context, std::vector<Violation>& out) const override;
};

}  // namespace aiadmit
