// Adds the profile's tolerations for the accelerator pool to a pod that asks
// for one of the profile's accelerators, unless a toleration already in the
// pod tolerates the same taint. Pods without GPUs are left off the pool:
// aimed at it, they would be refused (AIA007).
#include "mutators/mutator.h"

#include "webhook/model/scheduling.h"
#include "webhook/policy/accelerators.h"

namespace aiadmit {

namespace {

bool addPoolTolerations(MutationContext& context) {
  const Profile& profile = context.profile;
  if (profile.placement.tolerations.empty()) return false;
  if (!usesProfilePool(context.pod(), profile, context.cluster)) return false;

  bool changed = false;
  for (const Toleration& wanted : profile.placement.tolerations) {
    if (anyTolerationCovers(member(context.view().spec, "tolerations"), wanted)) continue;
    JsonValue& tolerations = ensureArray(context.podSpec(), "tolerations", context.alloc);
    tolerations.PushBack(tolerationToJson(wanted, context.alloc), context.alloc);
    context.report("added toleration " + describeToleration(wanted));
    changed = true;
  }
  return changed;
}

}  // namespace

extern const MutatorDeclaration kPoolTolerationsMutator{"pool-tolerations",
                                                        {{"tolerations"}},
                                                        kInjectPlacement,
                                                        Runs::AlsoOnControllersObjects,
                                                        addPoolTolerations};

}  // namespace aiadmit
