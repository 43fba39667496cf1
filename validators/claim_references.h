#pragma once

#include "validators/validator.h"

namespace aiadmit {

// AIA019: a Pod's resourceClaims name a ResourceClaimTemplate the namespace
// does not have, or its device requests (through a template, or a KEP-5004
// deviceclass.resource.kubernetes.io/<class> name) a DeviceClass the cluster
// does not have. The Pod would wait for a claim that can never be made.
class ClaimReferencesValidator final : public RuleValidator<AIA019> {
 public:
  void check(const ValidationContext& context, std::vector<Violation>& out) const override;
};

}  // namespace aiadmit
