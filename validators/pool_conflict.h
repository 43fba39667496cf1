#pragma once

#include "validators/validator.h"

namespace aiadmit {

// AIA008: a node selection that excludes the profile's pool, or a GPU Pod
// that does not tolerate the pool's taints, can never be scheduled there.
class PoolConflictValidator final : public Validator {
 public:
  RuleId rule() const override { return AIA008; }
  void check(const ValidationContext& context, std::vector<Violation>& out) const override;
};

}  // namespace aiadmit
