// Why a Pod whose DRA claims are not allocated waits, as far as the cluster
// view says.
#pragma once

#include <optional>
#include <vector>

#include "webhook/waiting/waiting_parts.h"

namespace aiadmit::waiting {

// The cause when one of its DRA claims is not allocated and the cluster
// says why (waiting_claims.cpp); nullopt when its claims explain nothing.
std::optional<PodVerdict> judgeClaims(const PodFacts& pod, const Occupancy& occupancy,
                                      const ClusterView& view);

}  // namespace aiadmit::waiting
