#pragma once

#include "validators/validator.h"

namespace aiadmit {

// AIA004: an accelerator quantity must be a positive whole number. Devices are
// not divisible; "0.5" or "500m" is refused by the device plugin at bind time
// and "0" asks for nothing.
class GpuQuantityValidator final : public Validator {
 public:
  RuleId rule() const override { return AIA004; }
  void check(const ValidationContext& context, std::vector<Violation>& out) const override;
};

}  // namespace aiadmit
