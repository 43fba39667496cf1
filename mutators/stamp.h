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

// A controller's workload whose GPUs hang on DRA claims whose templates the
// cluster does not hold yet (Helm creates the kinds it does not know, the
// ResourceClaimTemplate among them, after the Deployment that names it):
// which vendor's pool they are in is not known, so nothing is placed. The
// class its kind gives it is recorded alone, as aiadmit.dev/class on the
// object and its templates, so that what its controller makes once the
// templates exist is judged as its GPU role and placed in its pool, instead
// of being taken for work made before the namespace opted in. Returns
// whether it changed the object.
bool recordPendingClass(JsonValue& object, const Resolution& resolution,
                        WorkloadClass workloadClass, JsonAllocator& alloc);

}  // namespace aiadmit
