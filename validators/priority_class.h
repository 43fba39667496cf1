#pragma once

#include "validators/validator.h"

namespace aiadmit {

// AIA011: a priorityClassName the profile does not allow for its class in
// this namespace would jump or starve the GPU queue.
class PriorityClassValidator final : public Validator {
 public:
  RuleId rule() const override { return AIA011; }
  void check(const ValidationContext& context, std::vector<Violation>& out) const override;
};

}  // namespace aiadmit
