#pragma once

#include "validators/validator.h"

namespace aiadmit {

// AIA004: an accelerator quantity must be a whole number. Devices are not
// divisible: the API server refuses "0.5", "500m" or "-1" tersely. A 0 is
// no request (a container without the resource, as the API server, the
// scheduler and the device plugin take it), and not this rule's.
class GpuQuantityValidator final : public RuleValidator<AIA004> {
 public:
  void check(const ValidationContext& context, std::vector<Violation>& out) const override;
};

}  // namespace aiadmit
