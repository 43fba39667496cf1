#pragma once

#include "mutators/mutator.h"

namespace aiadmit {

// Gives the serving container of a realtime workload (the main container)
// the readiness and startup probes it lacks, so that a model server takes
// traffic only once its model is loaded, and is not restarted while it loads.
// The probes check the port the profile names, else the port the container
// serves on (PodReader::servingPort: one named for serving, else its first
// TCP port); a container with neither gets none (validation then explains,
// AIA009). Nor do the ranks of one multi-node server that share a template
// (ranksOfOneServer): only one of them serves, and a notice says so. The
// startup probe allows the profile's startup budget:
// failureThreshold = ceil(startupBudgetSeconds / periodSeconds).
struct RealtimeProbesMutator final : Mutator {
  RealtimeProbesMutator();
};

}  // namespace aiadmit
