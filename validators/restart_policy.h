#pragma once

#include "validators/validator.h"

namespace aiadmit {

// AIA014: training and batch Pods must not restart Always: a finished run
// would start over and keep its GPUs.
class RestartPolicyValidator final : public RuleValidator<AIA014> {
 public:
  void check(const ValidationContext& context, std::vector<Violation>& out) const override;
};

}  // namespace aiadmit
