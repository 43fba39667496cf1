#pragma once

#include "validators/validator.h"

namespace aiadmit {

// AIA008: a node selection that excludes the profile's pool, or a GPU Pod
// that does not tolerate the pool's taints, can never be scheduled there.
class PoolConflictValidator final : public RuleValidator<AIA008> {
 public:
  void check(const ValidationContext& context, std::vector<Violation>& out) const override;
};

}  // namespace aiadmit
