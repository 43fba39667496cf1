#pragma once

#include "validators/validator.h"

namespace aiadmit {

// AIA005: accelerator requests must equal limits. Devices cannot be
// overcommitted; the API server refuses the difference with a terse error.
class GpuLimitsMatchValidator final : public RuleValidator<AIA005> {
 public:
  void check(const ValidationContext& context, std::vector<Violation>& out) const override;
};

}  // namespace aiadmit
