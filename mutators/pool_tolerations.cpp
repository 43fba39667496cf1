#include "mutators/pool_tolerations.h"

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

PoolTolerationsMutator::PoolTolerationsMutator()
    : Mutator("pool-tolerations", {{.key = "tolerations", .onByDefault = true}}, kInjectPlacement,
              Runs::AlsoOnControllersObjects, addPoolTolerations) {}

}  // namespace aiadmit
