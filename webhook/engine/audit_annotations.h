// What aiadmit decided, as response.auditAnnotations, so that the API
// server's audit log shows what each webhook did to a request and why:
// names, field names and rule IDs only, never object contents.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "webhook/engine/admission.h"
#include "webhook/engine/engine.h"

namespace aiadmit {

// Keys (the API server prefixes each with "<webhook name>/"):
//   class          training | batch | realtime | none
//   class-basis    declared (aiadmit.dev/workload or a named profile) | inferred
//   profile        the selected profile's name
//   profile-error  why the profile named by aiadmit.dev/profile cannot apply
//   mutated        the fields the patch sets, short: "tolerations,containers[0].readinessProbe"
//   rules          each violated rule with the action applied: "AIA009=audit,AIA015=warn"
//   capped         the rules whose action was lowered (by the enforcement cap, an inferred
//                  class, an answer that may change), with their profile's action
//   enforcement    the cap, when a rule was lowered: audit | warn | deny
inline constexpr std::string_view kAuditClass = "class", kAuditClassBasis = "class-basis",
                                  kAuditProfile = "profile", kAuditProfileError = "profile-error",
                                  kAuditMutated = "mutated", kAuditRules = "rules",
                                  kAuditCapped = "capped", kAuditEnforcement = "enforcement";

// Each value stays under this many bytes, so that the annotations of one
// request are well under a kilobyte and audit events stay small.
inline constexpr size_t kMaxAuditAnnotationValue = 256;

// The annotations of a /mutate answer: nothing for objects that are not AI
// workloads and were not changed. What the patch sets is read from the
// paths of its operations (Evaluation::patchPaths).
std::vector<AuditAnnotation> mutationAuditAnnotations(const Evaluation& evaluation);
// The annotations of a /validate answer: nothing when the object is not an AI
// workload and broke no rule.
std::vector<AuditAnnotation> validationAuditAnnotations(const Evaluation& evaluation,
                                                        RuleAction enforcement);

// The fields a JSON Patch sets, from the paths of its operations in patch
// order, relative to the pod template or the Job spec, each once:
// "tolerations,nodeSelector,containers[0].resources".
std::string mutatedFieldsOf(const std::vector<std::string>& patchPaths);

}  // namespace aiadmit
