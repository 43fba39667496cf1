#pragma once

#include "validators/validator.h"

namespace aiadmit {

// AIA012: GPUs requested in a namespace the profile does not allow.
class GpuNamespaceValidator final : public Validator {
 public:
  RuleId rule() const override { return AIA012; }
  void check(const ValidationContext& context, std::vector<Violation>& out) const override;
};

}  // namespace aiadmit
