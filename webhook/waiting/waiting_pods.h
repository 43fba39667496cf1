// What every node has left once the bound Pods and allocated claims are
// counted, and the facts of each Pod that asks for accelerators.
#pragma once

#include <optional>
#include <vector>

#include "webhook/waiting/waiting_parts.h"

namespace aiadmit::waiting {

// The Pods of `input` that ask for accelerators, and what the bound ones hold.
Occupancy readOccupancy(const WaitingInput& input);

// The accelerator devices a ResourceClaim asks for: each request's count
// (the fewest of a firstAvailable list) where its class hands out accelerators.
int64_t claimDevices(const ClaimRecord& claim, const ClusterView& view);

}  // namespace aiadmit::waiting
