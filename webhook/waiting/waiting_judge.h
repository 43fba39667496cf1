// Why one Pod waits: the lasting causes first (no node can hold it, a
// taint, a selector), then the ones that pass (a full pool, a partial gang).
#pragma once

#include <optional>
#include <vector>

#include "webhook/waiting/waiting_parts.h"

namespace aiadmit::waiting {

// The cause of one waiting Pod.
PodVerdict judgePod(const PodFacts& pod, const Occupancy& occupancy, const ClusterView& view);

}  // namespace aiadmit::waiting
