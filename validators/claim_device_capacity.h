#pragma once

#include "validators/claim_validator.h"

namespace aiadmit {

// AIA020: a device request of a ResourceClaim or ResourceClaimTemplate that
// no node of the profile's pool can ever satisfy, so every Pod using the
// claim stays Pending:
//  - more devices of a class than the largest node has: with the cluster
//    view, the most its ResourceSlices offer one node of the pool; without
//    it, the profile's gpusPerNode for classes of whole GPUs (a class named
//    gpu.<driver>: gpu.nvidia.com, gpu.amd.com). The `exactly` requests of
//    one claim are allocated on one node, so their counts add up per class;
//  - allocationMode All where the cluster view shows the pool's nodes have
//    no device of the class (All needs at least one);
//  - each alternative of a firstAvailable request on its own: one that can
//    never be chosen is a mistake even when another can.
class ClaimDeviceCapacityValidator final : public ClaimRuleValidator<AIA020> {
 public:
  void check(const ClaimValidationContext& context, std::vector<Violation>& out) const override;
};

}  // namespace aiadmit
