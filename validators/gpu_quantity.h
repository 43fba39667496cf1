#pragma once

#include "validators/validator.h"

namespace aiadmit {

// AIA004: an accelerator quantity must be a positive whole number. Devices are
// not divisible: the API server refuses "0.5" or "500m" tersely, and "0" asks
// for nothing while the Pod is still placed as GPU work.
class GpuQuantityValidator final : public RuleValidator<AIA004> {
 public:
  void check(const ValidationContext& context, std::vector<Violation>& out) const override;
};

}  // namespace aiadmit
