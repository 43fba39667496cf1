#pragma once

#include "validators/validator.h"

namespace aiadmit {

// AIA012: GPUs requested in a namespace the profile does not allow.
class GpuNamespaceValidator final : public RuleValidator<AIA012> {
 public:
  void check(const ValidationContext& context, std::vector<Violation>& out) const override;
};

}  // namespace aiadmit
