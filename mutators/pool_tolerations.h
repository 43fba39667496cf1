#pragma once

#include "mutators/mutator.h"

namespace aiadmit {

// Adds the profile's tolerations for the accelerator pool to a pod that asks
// for one of the profile's accelerators, unless a toleration already in the
// pod tolerates the same taint. Pods without GPUs are left off the pool:
// aimed at it, they would be refused (AIA007).
struct PoolTolerationsMutator final : Mutator {
  PoolTolerationsMutator();
};

}  // namespace aiadmit
