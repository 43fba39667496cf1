// A training class aiadmit guessed over the batch its kind gives (a sign of
// training in a Job, a JobSet, a RayJob: webhook/policy/training_evidence.h;
// or aiadmit's stamp of that guess on the object and on what its controller
// makes) selects the training profile, and that profile may refuse what the
// batch one admits: training forbids the MIG slices and shared GPUs batch
// allows (AIA013), allows other priority classes (AIA011), may require gang
// scheduling (AIA010). A guess is not a statement: such a refusal warns. A
// violation denies only when the same object judged as its kind's class is
// denied for it too (same rule, field and template).
#pragma once

#include <optional>
#include <vector>

#include "validators/validator.h"
#include "webhook/engine/assessment.h"

namespace aiadmit {

// The class the object's kind gives it, when the workload's class is
// training that aiadmit inferred over that kind's batch and the profile does
// not enforce inferred classes; nullopt otherwise. The kind of an object a
// controller made is its controller's (a JobSet's for its Jobs), as the
// stamp it carries is its controller's workload's.
std::optional<WorkloadClass> guessedOverKind(const Assessment& assessment, const JsonValue& object,
                                             const WorkloadTypeTable& table);

// The profile action of `violation`: its own profile's (AIA007 on objects
// that are not AI workloads), else `profile`'s, else the catalogue's default.
RuleAction configuredAction(const Violation& violation, const Profile* profile, RuleTarget target);

// Marks Violation::restsOnGuess on each of `violations` (judged with the
// guessed class's `profile`) that denies there and not in `reference` (the
// same object judged as its kind's class, with `referenceProfile`).
void markDenialsOfTheGuess(std::vector<Violation>& violations, const Profile* profile,
                           const std::vector<Violation>& reference, const Profile* referenceProfile,
                           RuleTarget target);

}  // namespace aiadmit
