#pragma once

#include "mutators/mutator.h"

namespace aiadmit {

// Records the decision on the workload: aiadmit.dev/class and
// aiadmit.dev/profile on the object and on every template below it, so that
// the ReplicaSets, Jobs and Pods that controllers create from it are
// recognised with the same class and profile, and need no further patch.
// These annotations are aiadmit's own: a stale value is brought up to date.
// On an UPDATE that left the template unchanged, only the object is stamped.
struct StampMutator final : Mutator {
  StampMutator();
};

}  // namespace aiadmit
