#pragma once

#include "validators/claim_validator.h"

namespace aiadmit {

// AIA001 on claim objects: aiadmit.dev/workload with a value that is not a
// class, or aiadmit.dev/profile naming a profile that cannot apply. The
// object is then judged as if it had no such annotation.
class ClaimAnnotationsValidator final : public ClaimRuleValidator<AIA001, ProfileUse::NotNeeded> {
 public:
  void check(const ClaimValidationContext& context, std::vector<Violation>& out) const override;
};

}  // namespace aiadmit
