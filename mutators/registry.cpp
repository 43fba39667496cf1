// The fixed order in which mutators run. Order matters where one mutator's
// result feeds another, and a fixed order keeps patches deterministic:
// - GPU limits come first: the pool, the /dev/shm decision and the GPU count
//   all read the limits it makes explicit;
// - pool tolerations and placement only aim pods that ask for GPUs at the pool;
//   a TrainJob, which has no pod template, gets them through runtimePatches;
// - the stamp comes last and records the class and profile of the result.
// docs/mutators.md describes each one; keep both in the same order.
//
// Each mutator declares its own switches, parts and runs (MutatorDeclaration);
// what a profile may switch off is gathered from those declarations here.
#include <algorithm>

#include "mutators/gpu_limits.h"
#include "mutators/job_defaults.h"
#include "mutators/mutator.h"
#include "mutators/pool_placement.h"
#include "mutators/pool_tolerations.h"
#include "mutators/realtime_probes.h"
#include "mutators/scheduling.h"
#include "mutators/shared_memory.h"
#include "mutators/stamp.h"
#include "mutators/trainjob_placement.h"

namespace aiadmit {

const std::vector<std::unique_ptr<const Mutator>>& allMutators() {
  static const std::vector<std::unique_ptr<const Mutator>> mutators = [] {
    std::vector<std::unique_ptr<const Mutator>> list;
    list.push_back(std::make_unique<GpuLimitsMutator>());
    list.push_back(std::make_unique<PoolTolerationsMutator>());
    list.push_back(std::make_unique<PoolPlacementMutator>());
    list.push_back(std::make_unique<TrainJobPlacementMutator>());
    list.push_back(std::make_unique<SchedulingMutator>());
    list.push_back(std::make_unique<RealtimeProbesMutator>());
    list.push_back(std::make_unique<JobDefaultsMutator>());
    list.push_back(std::make_unique<SharedMemoryMutator>());
    list.push_back(std::make_unique<StampMutator>());
    return list;
  }();
  return mutators;
}

std::span<const MutationSwitch> mutationSwitches() {
  static const std::vector<MutationSwitch> switches = [] {
    std::vector<MutationSwitch> gathered;
    for (const auto& mutator : allMutators()) {
      for (const MutationSwitch& declared : mutator->declaration().switches) {
        const bool known =
            std::any_of(gathered.begin(), gathered.end(),
                        [&](const MutationSwitch& earlier) { return earlier.key == declared.key; });
        if (!known) gathered.push_back(declared);
      }
    }
    return gathered;
  }();
  return switches;
}

}  // namespace aiadmit
