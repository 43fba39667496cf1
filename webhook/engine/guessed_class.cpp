#include "webhook/engine/guessed_class.h"

#include <algorithm>

namespace aiadmit {

namespace {

// The class the kind alone gives the object: its controller's kind's for an
// object a controller made (a JobSet's Job carries the JobSet's stamp, and a
// Job's own kind would say batch of a PyTorchJob's Pod too), else its own.
WorkloadClass kindClassOf(const Assessment& assessment, const JsonValue& object,
                          const WorkloadTypeTable& table) {
  if (assessment.madeByController) {
    const auto [group, kind] = controllerGroupKind(object);
    const WorkloadType* controller = table.findGroupKind(group, kind);
    if (controller != nullptr) return controller->workloadClass;
  }
  return defaultClassOf(*assessment.type, object).workloadClass;
}

// Whether `reference` holds a violation of the same rule on the same field of
// the same template that denies there. The problem's words may differ: they
// name the class ("training work may not share GPUs").
bool deniedThereToo(const Violation& violation, const std::vector<Violation>& reference,
                    const Profile* referenceProfile, RuleTarget target) {
  return std::any_of(reference.begin(), reference.end(), [&](const Violation& other) {
    return other.rule == violation.rule && other.field == violation.field &&
           other.role == violation.role &&
           configuredAction(other, referenceProfile, target) == RuleAction::Deny;
  });
}

}  // namespace

std::optional<WorkloadClass> guessedOverKind(const Assessment& assessment, const JsonValue& object,
                                             const WorkloadTypeTable& table) {
  const Classification& classification = assessment.classification();
  const Profile* profile = assessment.selection.profile;
  if (assessment.type == nullptr || classification.declared() ||
      classification.workloadClass != WorkloadClass::Training ||
      (profile != nullptr && profile->classification.enforceInferred)) {
    return std::nullopt;
  }
  const WorkloadClass kindClass = kindClassOf(assessment, object, table);
  if (kindClass != WorkloadClass::Batch) return std::nullopt;
  return kindClass;
}

RuleAction configuredAction(const Violation& violation, const Profile* profile, RuleTarget target) {
  const RuleActions defaults;
  const Profile* judging = violation.profile != nullptr ? violation.profile : profile;
  return (judging != nullptr ? judging->rules : defaults).of(violation.rule, target);
}

void markDenialsOfTheGuess(std::vector<Violation>& violations, const Profile* profile,
                           const std::vector<Violation>& reference, const Profile* referenceProfile,
                           RuleTarget target) {
  for (Violation& violation : violations) {
    if (configuredAction(violation, profile, target) != RuleAction::Deny) continue;
    violation.restsOnGuess = !deniedThereToo(violation, reference, referenceProfile, target);
  }
}

}  // namespace aiadmit
