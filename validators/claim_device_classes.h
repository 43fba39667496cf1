#pragma once

#include "validators/claim_validator.h"

namespace aiadmit {

// AIA020: a device request of a ResourceClaim or ResourceClaimTemplate names
// an accelerator DeviceClass the profile's gpu.deviceClasses does not list
// (gpu.amd.com on an NVIDIA pool), or a near miss of one it lists
// ("gpu.nvidia.comm"), with "did you mean". Every alternative of a
// firstAvailable request is checked. Classes of other devices (NICs, CPUs)
// are not the profile's to judge; a class the cluster view knows does not
// exist is AIA019's.
class ClaimDeviceClassesValidator final : public ClaimRuleValidator<AIA020> {
 public:
  void check(const ClaimValidationContext& context, std::vector<Violation>& out) const override;
};

}  // namespace aiadmit
