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
#include <vector>

#include "mutators/mutator.h"

namespace aiadmit {

// Each defined in its own .cpp (mutators/<name>.cpp).
extern const MutatorDeclaration kGpuLimitsMutator, kPoolTolerationsMutator, kPoolPlacementMutator,
    kTrainJobPlacementMutator, kSchedulingMutator, kRealtimeProbesMutator, kJobDefaultsMutator,
    kSharedMemoryMutator, kStampMutator;

namespace {

constexpr const MutatorDeclaration* kMutators[] = {
    &kGpuLimitsMutator,         &kPoolTolerationsMutator, &kPoolPlacementMutator,
    &kTrainJobPlacementMutator, &kSchedulingMutator,      &kRealtimeProbesMutator,
    &kJobDefaultsMutator,       &kSharedMemoryMutator,    &kStampMutator,
};

}  // namespace

std::span<const MutatorDeclaration* const> allMutators() {
  return kMutators;
}

std::span<const MutationSwitch> mutationSwitches() {
  static const std::vector<MutationSwitch> switches = [] {
    std::vector<MutationSwitch> gathered;
    for (const MutatorDeclaration* mutator : allMutators()) {
      for (const MutationSwitch& declared : mutator->switches) {
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
