#include "webhook/engine/engine.h"

#include <algorithm>
#include <exception>

#include "mutators/mutator.h"
#include "webhook/engine/audit_annotations.h"
#include "webhook/kube/json_patch.h"
#include "webhook/policy/accelerators.h"

namespace aiadmit {

AdmissionSubject AdmissionSubject::of(const AdmissionRequest& request) {
  AdmissionSubject subject;
  subject.object = request.object;
  subject.oldObject = request.oldObject;
  subject.kind = request.kind;
  subject.namespaceName = request.namespaceName;
  subject.subResource = request.subResource;
  subject.operation = request.operation;
  return subject;
}

std::string_view endpointName(Endpoint endpoint) {
  return endpoint == Endpoint::Mutate ? "mutate" : "validate";
}

Engine::Engine(std::shared_ptr<const ProfileSet> profiles, RuleAction enforcement)
    : profiles_(std::move(profiles)), enforcement_(enforcement) {}

void Engine::replaceProfiles(std::shared_ptr<const ProfileSet> profiles) {
  profiles_.store(std::move(profiles));
}

std::shared_ptr<const ProfileSet> Engine::profiles() const {
  return profiles_.load();
}

void Engine::replaceClusterView(std::shared_ptr<const ClusterView> view) {
  cluster_.store(std::move(view));
}

std::shared_ptr<const ClusterView> Engine::clusterView() const {
  return cluster_.load();
}

namespace {

const JsonValue* labelsOf(const JsonValue* metadata) {
  return member(metadata, "labels");
}

ProfileSelection selectProfile(const ProfileSet& profiles, const PodTemplateView& view,
                               WorkloadClass workloadClass, std::string_view namespaceName) {
  const JsonValue* labels = labelsOf(member(view.object, "metadata"));
  const JsonValue* templateLabels = labelsOf(view.metadata);
  const std::string_view requested = declaredAnnotation(view, kProfileAnnotation).value_or("");
  ProfileSelection selection =
      profiles.select(workloadClass, namespaceName, labels, templateLabels, requested);
  // aiadmit writes aiadmit.dev/profile beside aiadmit.dev/class on what it
  // mutates: with a class stamp, the profile is aiadmit's record of its last
  // decision, not the developer's choice. When that record cannot apply (the
  // profile was renamed or removed, or the developer changed the class), the
  // workload must stay updatable: select again as if it named none, and the
  // stamp mutator brings the record up to date.
  const bool recorded = declaredAnnotation(view, kClassAnnotation).has_value();
  if (selection.profile == nullptr && !requested.empty() && recorded) {
    ProfileSelection fresh =
        profiles.select(workloadClass, namespaceName, labels, templateLabels, "");
    if (fresh.profile != nullptr) {
      fresh.reason =
          "recorded profile " + std::string(requested) + " no longer applies; " + fresh.reason;
      return fresh;
    }
  }
  return selection;
}

std::string changeWarning(const std::string& change, const std::string& profile) {
  return "aiadmit: " + change + " (profile " + profile + ")";
}

std::string classWarning(WorkloadClass workloadClass, const std::string& reason) {
  return "aiadmit: class " + std::string(className(workloadClass)) + ": " + reason;
}

bool isMutable(const AdmissionSubject& subject) {
  if (!subject.subResource.empty() || subject.object == nullptr) return false;
  if (subject.kind == WorkloadKind::Other) return false;
  if (subject.operation == Operation::Create) return true;
  // A Pod's spec and a Job's pod template are immutable after creation; the
  // templates of the other controllers are not.
  return subject.operation == Operation::Update && subject.kind != WorkloadKind::Pod &&
         subject.kind != WorkloadKind::Job;
}

// Where the template of a controller lives: what it creates is made from it.
const JsonValue* workloadTemplate(const JsonValue* object, WorkloadKind kind) {
  const JsonValue* spec = member(object, "spec");
  return kind == WorkloadKind::CronJob ? member(spec, "jobTemplate") : member(spec, "template");
}

// An UPDATE that left the template as it was (a scale, a label on the
// object): a changed template would make the controller replace every Pod,
// which for a model server means reloading the model on each replica.
bool templateUnchanged(const AdmissionSubject& subject) {
  if (subject.operation != Operation::Update || subject.oldObject == nullptr) return false;
  const JsonValue* before = workloadTemplate(subject.oldObject, subject.kind);
  const JsonValue* after = workloadTemplate(subject.object, subject.kind);
  if (before == nullptr || after == nullptr) return before == after;
  return *before == *after;
}

bool isValidatable(const AdmissionSubject& subject) {
  return subject.subResource.empty() && subject.object != nullptr &&
         subject.kind != WorkloadKind::Other &&
         (subject.operation == Operation::Create || subject.operation == Operation::Update);
}

// What the pipeline knows of one object before any mutator or validator runs.
struct Assessment {
  PodTemplateView view;
  Classification classification;
  ProfileSelection selection;  // empty for objects that are not AI workloads
};

Assessment assess(const JsonValue& object, const AdmissionSubject& subject,
                  const ProfileSet& profiles) {
  Assessment assessment;
  assessment.view = PodTemplateView::of(object, subject.kind);
  assessment.classification = classify(assessment.view);
  if (assessment.classification.isAiWorkload()) {
    assessment.selection = selectProfile(
        profiles, assessment.view, assessment.classification.workloadClass, subject.namespaceName);
  }
  return assessment;
}

// One decision per rule, the strongest when several profiles judged it.
void recordDecision(std::vector<Evaluation::RuleDecision>& decisions, RuleId rule,
                    RuleAction applied, RuleAction configured) {
  auto at = std::lower_bound(decisions.begin(), decisions.end(), rule,
                             [](const auto& d, RuleId r) { return d.rule < r; });
  if (at != decisions.end() && at->rule == rule) {
    if (actionSeverity(applied) > actionSeverity(at->applied)) *at = {rule, applied, configured};
    return;
  }
  decisions.insert(at, {rule, applied, configured});
}

void collectViolations(const JsonValue& object, const Assessment& assessment,
                       const AdmissionSubject& subject, const ProfileSet& profiles,
                       const ClusterView* cluster, std::vector<Violation>& out) {
  const Classification& classification = assessment.classification;
  const ProfileAcceleratorNames accelerators(assessment.selection.profile);
  const PodReader pod = PodReader::of(assessment.view, accelerators);
  const ValidationContext context{object,
                                  subject.kind,
                                  assessment.view,
                                  pod,
                                  classification,
                                  assessment.selection.profile,
                                  profiles,
                                  assessment.selection,
                                  subject.namespaceName,
                                  subject.operation,
                                  cluster};
  for (const auto& validator : allValidators()) {
    if (!classification.isAiWorkload() && !validator->appliesToUnclassified()) continue;
    validator->check(context, out);
  }
}

// Sorts violations by the action that applies to them: the profile's action
// for the rule, capped by the enforcement level.
void sortByAction(std::vector<Violation>& violations, const Profile* profile,
                  RuleAction enforcement, Evaluation& eval) {
  const RuleActions defaults;
  const RuleActions& actions = profile != nullptr ? profile->rules : defaults;
  for (Violation& violation : violations) {
    // An object without a profile of its own answers to the profile the
    // validator judged it by (AIA007 on objects that are not AI workloads).
    const RuleActions& ruleActions =
        violation.profile != nullptr ? violation.profile->rules : actions;
    const RuleAction configured = ruleActions.of(violation.rule);
    const RuleAction applied = capAction(configured, enforcement);
    if (applied != RuleAction::Off) recordDecision(eval.rules, violation.rule, applied, configured);
    switch (applied) {
      case RuleAction::Deny:
        eval.denials.push_back(std::move(violation));
        break;
      case RuleAction::Warn:
        eval.warnings.push_back(std::move(violation));
        break;
      case RuleAction::Audit:
        eval.audited.push_back(std::move(violation));
        break;
      case RuleAction::Off:
        break;
    }
  }
}

}  // namespace

bool Engine::mutateInto(const AdmissionSubject& subject, JsonDocument& mutated,
                        Evaluation* evaluation) const {
  if (!isMutable(subject)) return false;
  const auto profiles = this->profiles();
  const Assessment assessment = assess(*subject.object, subject, *profiles);
  const Classification& classification = assessment.classification;
  const ProfileSelection& selection = assessment.selection;
  Evaluation local;
  Evaluation& eval = evaluation != nullptr ? *evaluation : local;
  eval.workloadClass = classification.workloadClass;
  eval.classReason = classification.reason;
  if (!classification.isAiWorkload()) return false;

  if (selection.profile == nullptr) {
    eval.profileError = !selection.error.empty()
                            ? selection.error
                            : "no profile for class " +
                                  std::string(className(classification.workloadClass)) +
                                  " in namespace " + std::string(subject.namespaceName);
    return false;
  }
  eval.profile = selection.profile->name;
  eval.profileReason = selection.reason;

  mutated.CopyFrom(*subject.object, mutated.GetAllocator());
  MutationContext context{mutated,        mutated.GetAllocator(),    subject.kind,
                          classification, *selection.profile,        subject.namespaceName,
                          eval.changes,   templateUnchanged(subject)};
  bool changed = false;
  for (const auto& mutator : allMutators()) {
    if (context.templateUnchanged && !mutator->runsOnUnchangedTemplate()) continue;
    changed = mutator->mutate(context) || changed;
  }
  return changed;
}

AdmissionOutcome Engine::mutate(const AdmissionSubject& subject, Evaluation* evaluation) const {
  Evaluation local;
  Evaluation& eval = evaluation != nullptr ? *evaluation : local;
  JsonDocument mutated;
  if (!mutateInto(subject, mutated, &eval)) {
    std::vector<std::string> warnings;
    // Say why an AI workload got nothing: the selection failed or no profile applies.
    if (!eval.profileError.empty())
      warnings.push_back("aiadmit: nothing injected: " + eval.profileError);
    return AdmissionOutcome::allowed(std::move(warnings));
  }
  std::string patch = diffToJsonPatch(*subject.object, mutated);
  if (patch.empty()) return AdmissionOutcome::allowed();

  std::vector<std::string> warnings;
  warnings.push_back(classWarning(eval.workloadClass, eval.classReason));
  for (const std::string& change : eval.changes)
    warnings.push_back(changeWarning(change, eval.profile));
  return AdmissionOutcome::patched(std::move(patch), std::move(warnings));
}

AdmissionOutcome Engine::validate(const AdmissionSubject& subject, Evaluation* evaluation) const {
  if (!isValidatable(subject)) return AdmissionOutcome::allowed();
  Evaluation local;
  Evaluation& eval = evaluation != nullptr ? *evaluation : local;
  const auto profiles = this->profiles();
  const auto cluster = clusterView();

  const Assessment assessment = assess(*subject.object, subject, *profiles);
  const Classification& classification = assessment.classification;
  eval.workloadClass = classification.workloadClass;
  eval.classReason = classification.reason;
  // A profile named by annotation that cannot apply is an AIA001 violation
  // (validators/annotation_values), judged and capped like any rule.
  eval.profileError = assessment.selection.error;
  if (assessment.selection.profile != nullptr) {
    eval.profile = assessment.selection.profile->name;
    eval.profileReason = assessment.selection.reason;
  }

  std::vector<Violation> violations;
  collectViolations(*subject.object, assessment, subject, *profiles, cluster.get(), violations);

  // An UPDATE is not refused for what the old object already had and the
  // update did not touch: changing a label must not start failing.
  if (subject.operation == Operation::Update && subject.oldObject != nullptr &&
      !violations.empty()) {
    std::vector<Violation> existing;
    collectViolations(*subject.oldObject, assess(*subject.oldObject, subject, *profiles), subject,
                      *profiles, cluster.get(), existing);
    std::erase_if(violations, [&](const Violation& v) {
      return std::find(existing.begin(), existing.end(), v) != existing.end();
    });
  }

  sortByAction(violations, assessment.selection.profile, enforcement_, eval);

  std::vector<std::string> warnings;
  for (const Violation& violation : eval.warnings) {
    warnings.push_back(violation.warning());
  }
  if (eval.denials.empty()) return AdmissionOutcome::allowed(std::move(warnings));
  std::string message;
  for (const Violation& violation : eval.denials) {
    if (!message.empty()) message += "\n";
    message += violation.format();
  }
  return AdmissionOutcome::denied(std::move(message), std::move(warnings));
}

ReviewAnswer answerReview(const Engine& engine, Endpoint endpoint, std::string_view body) {
  ReviewAnswer answer;
  try {
    AdmissionRequest request;
    DecodeError error;
    AdmissionOutcome outcome = AdmissionOutcome::allowed();
    if (!decodeAdmissionReview(body, request, error)) {
      outcome = AdmissionOutcome::badRequest(error.message);
      answer.uid = error.uid;
    } else {
      answer.uid = std::string(request.uid);
      answer.workloadKind = request.kind;
      answer.kind = std::string(request.kindName);
      answer.namespaceName = std::string(request.namespaceName);
      answer.name = std::string(request.name);
      answer.operation = std::string(operationName(request.operation));
      const AdmissionSubject subject = AdmissionSubject::of(request);
      if (endpoint == Endpoint::Mutate) {
        outcome = engine.mutate(subject, &answer.evaluation);
        outcome.setAuditAnnotations(mutationAuditAnnotations(answer.evaluation, outcome.patch()));
      } else {
        outcome = engine.validate(subject, &answer.evaluation);
        outcome.setAuditAnnotations(
            validationAuditAnnotations(answer.evaluation, engine.enforcement()));
      }
    }
    answer.decision = outcome.decision();
    answer.httpStatus = outcome.httpStatus();
    answer.body = encodeAdmissionResponse(answer.uid, outcome);
  } catch (const std::exception& e) {
    const AdmissionOutcome outcome =
        AdmissionOutcome::internalError(std::string("internal error: ") + e.what());
    answer.decision = outcome.decision();
    answer.httpStatus = outcome.httpStatus();
    answer.body = encodeAdmissionResponse(answer.uid, outcome);
  }
  return answer;
}

}  // namespace aiadmit
