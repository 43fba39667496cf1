#pragma once

#include "validators/claim_validator.h"

namespace aiadmit {

// AIA019 on claim objects: a device request of a ResourceClaim or
// ResourceClaimTemplate (any alternative of a firstAvailable request) names
// a DeviceClass the cluster view knows does not exist. The same fact as for
// a Pod's claims (claim_references), found where it was written; says
// nothing without a cluster view or while DeviceClasses are not listed.
class ClaimDeviceClassExistsValidator final
    : public ClaimRuleValidator<AIA019, ProfileUse::NotNeeded> {
 public:
  void check(const ClaimValidationContext& context, std::vector<Violation>& out) const override;
};

}  // namespace aiadmit
