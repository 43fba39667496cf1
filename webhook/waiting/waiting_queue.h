// The Kueue Workloads that wait for quota, each with its cause.
#pragma once

#include <optional>
#include <vector>

#include "webhook/waiting/waiting_parts.h"

namespace aiadmit::waiting {

// The Kueue Workloads of `input` in `scope` that ask for GPUs and are not
// admitted, each explained (waiting_queue.cpp).
std::vector<WaitingWorkload> queuedWorkloads(const WaitingInput& input, const WaitingScope& scope);

}  // namespace aiadmit::waiting
