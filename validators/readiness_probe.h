#pragma once

#include "validators/validator.h"

namespace aiadmit {

// AIA009: a realtime GPU server without a readiness probe takes traffic
// before its model is loaded. Only where aiadmit could not inject one, and
// never on Pods that serve no traffic: an operator's workers (the table's
// roles without probes) or the ranks of a multi-node server that share its
// template (ranksOfOneServer).
class ReadinessProbeValidator final : public RuleValidator<AIA009> {
 public:
  void check(const ValidationContext& context, std::vector<Violation>& out) const override;
};

}  // namespace aiadmit
