#include "validators/validator.h"

#include "webhook/codec/text.h"
#include "webhook/policy/accelerators.h"

namespace aiadmit {

namespace {

// A term that names a key of the pool's required node affinity but reaches
// beyond it ("gpu.nvidia.com/class in (A100, H100)" under an H100 pool): the
// mutator narrows an In to the pool's values when some are left, so what
// still reaches beyond would let the Pod's GPUs be taken outside the pool.
// `aimed`: the Pod asks for GPUs of the pool (usesProfilePool).
void checkTermsWithinPool(const ValidationContext& context, const Profile& profile, bool aimed,
                          std::vector<Violation>& out) {
  if (!aimed || !profile.mutations.on("placement")) return;
  const auto site = firstTermBeyondPool(context.view.spec, profile.placement);
  if (!site) return;
  const std::string own = describeRequirement(site->podRequirement);
  const std::string expected = describeRequirement(site->poolRequirement);
  out.push_back({context.view.specFieldPath() + "." + site->fieldPath(),
                 own + " reaches nodes outside the GPU pool (" + expected +
                     "), so the Pod could run where the profile does not place GPU work",
                 "match " + expected + " or drop the expression",
                 own + " reaches beyond the GPU pool; match " + expected});
}

// Whether the row lets the pool's placement be written into the template. A
// template whose operator refuses it there (a Knative Service's, unless a
// feature flag of Knative's allows tolerations) gets no toleration from
// aiadmit, and its Pods get the pool's when the operator makes what runs
// them (Knative's Deployment: controlled.mutate places a controller's
// object): a missing toleration there is no sign that they never run.
bool placementWritable(const ValidationContext& context) {
  const ResolvedTemplate* place = context.view.place;
  return place == nullptr || place->slot == nullptr ||
         (place->slot->injectable & kInjectPlacement) != 0;
}

// AIA008: a node selection that excludes the profile's pool, or a GPU Pod
// that does not tolerate the pool's taints, can never be scheduled there.
void checkPoolConflict(const ValidationContext& context, std::vector<Violation>& out) {
  const Profile* profile = context.profile;
  if (profile == nullptr) return;
  // A template that is only a ResourceRequirements (a TrainJob's
  // resourcesPerNode) has no placement of its own: its Pods' come from the
  // runtime and runtimePatches, which this object does not hold.
  const ResolvedTemplate* place = context.view.place;
  if (place != nullptr && place->slot != nullptr &&
      place->slot->shape == TemplateShape::Resources) {
    return;
  }
  const JsonValue* spec = context.view.spec;
  const Placement& pool = profile->placement;
  const std::string podSpec = context.view.specFieldPath();

  const PoolVerdict verdict = relatePodToPool(spec, pool);
  if (verdict.relation == PoolRelation::Excludes) {
    const SelectionSite& site = verdict.site;
    const bool keyed = !site.key.empty() && !site.poolRequirement.key.empty();
    const std::string expected =
        keyed ? describeRequirement(site.poolRequirement) : describePool(pool);
    std::string problem;
    std::string fix;
    std::string brief;
    if (keyed) {
      const std::string own = describeRequirement(site.podRequirement);
      problem = own + " contradicts the GPU pool (" + expected + ")";
      brief = own + " excludes the GPU pool; match " + expected;
      fix = site.part == SelectionSite::Part::NodeSelector
                ? "remove " + std::string(site.key) + " or match " + expected
                : "match " + expected + " or drop the expression";
    } else {
      problem = "no node selector term can match the GPU pool (" + expected + ")";
      brief = "no term matches the GPU pool (" + expected + ")";
      fix = "let at least one term match " + expected;
    }
    out.push_back({std::string(podSpec) + "." + site.fieldPath(),
                   problem + ", so no GPU node can run the Pod", std::move(fix), std::move(brief)});
  }

  // Only a Pod that asks for GPUs of the pool is aimed at it (the mutator adds
  // its tolerations then); a quantity that asks for none is AIA004's alone.
  const bool aimed = usesProfilePool(context.pod, *profile, context.cluster);
  if (verdict.relation != PoolRelation::Excludes)
    checkTermsWithinPool(context, *profile, aimed, out);
  if (!aimed || !placementWritable(context)) return;
  if (const Toleration* taint = firstUntoleratedPoolTaint(member(spec, "tolerations"), pool)) {
    const std::string described = describeToleration(*taint);
    const bool exists = taint->op == "Exists";
    const std::string_view value = exists ? "" : std::string_view(taint->value);
    out.push_back({concat(podSpec, ".tolerations"),
                   concat("the GPU pool's taint ", described,
                          " is not tolerated, so no GPU node can run the Pod"),
                   concat("add a toleration for it (key ", taint->key, ", operator ", taint->op,
                          exists ? "" : ", value ", value, taint->effect.empty() ? "" : ", effect ",
                          taint->effect, ")"),
                   concat("no toleration for the GPU pool's taint ", described)});
  }
}

}  // namespace

extern const ValidatorDeclaration kPoolConflictValidator{.name = "pool-conflict",
                                                         .eachTemplate = checkPoolConflict};

}  // namespace aiadmit
