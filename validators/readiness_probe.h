#pragma once

#include "validators/validator.h"

namespace aiadmit {

// AIA009: a realtime GPU server without a readiness probe takes traffic
// before its model is loaded. Only where aiadmit could not inject one.
class ReadinessProbeValidator final : public RuleValidator<AIA009> {
 public:
  void check(const ValidationContext& context, std::vector<Violation>& out) const override;
};

}  // namespace aiadmit
