#pragma once

#include "mutators/mutator.h"

namespace aiadmit {

// Aims a pod that asks for one of the profile's accelerators at the profile's
// pool: the profile's nodeSelector merged key by key, and its required node
// affinity added to every node selector term the pod has (terms are
// alternatives, so each must require the pool), or as a term of its own.
// A key the pod already sets, to any value, is left alone: a different value
// is a contradiction that validation reports (AIA008), not something to
// overwrite.
struct PoolPlacementMutator final : Mutator {
  PoolPlacementMutator();
};

}  // namespace aiadmit
