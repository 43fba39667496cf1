#include "webhook/engine/engine.h"

#include <algorithm>
#include <exception>

#include "mutators/mutator.h"
#include "validators/registry.h"
#include "webhook/codec/json_patch.h"
#include "webhook/codec/warnings.h"
#include "webhook/engine/assessment.h"
#include "webhook/engine/audit_annotations.h"
#include "webhook/engine/claim_objects.h"
#include "webhook/engine/guessed_class.h"
#include "webhook/engine/updates.h"
#include "webhook/engine/violation_bounds.h"
#include "webhook/model/workload_update.h"
#include "webhook/policy/accelerators.h"

namespace aiadmit {

std::string_view endpointName(Endpoint endpoint) {
  return endpoint == Endpoint::Mutate ? "mutate" : "validate";
}

std::optional<AdmissionRoute> admissionRoute(std::string_view path) {
  constexpr std::string_view kApplied = "/applied";
  const bool applied = path.starts_with(kApplied);
  if (applied) path.remove_prefix(kApplied.size());
  if (path == "/mutate") return AdmissionRoute{Endpoint::Mutate, !applied};
  if (path == "/validate") return AdmissionRoute{Endpoint::Validate, !applied};
  return std::nullopt;
}

Engine::Engine(std::shared_ptr<const ProfileSet> profiles, RuleAction enforcement)
    : profiles_(std::move(profiles)), enforcement_(enforcement) {}

void Engine::replaceProfiles(std::shared_ptr<const ProfileSet> profiles) {
  profiles_.store(std::move(profiles));
  refreshPoolFit();
}

std::shared_ptr<const ProfileSet> Engine::profiles() const {
  return profiles_.load();
}

void Engine::replaceClusterView(std::shared_ptr<const ClusterView> view) {
  cluster_.store(std::move(view));
  refreshPoolFit();
}

std::shared_ptr<const ClusterView> Engine::clusterView() const {
  return cluster_.load();
}

namespace {

// The very same Nodes and devices as `previous` (a view rebuilt for a Pod or
// a queue changes neither): a pool's fit is the same.
bool sameNodes(const ClusterView& view, const ClusterView& previous) {
  const auto same = [&](ClusterKind kind, bool bothEmpty) {
    return view.knows(kind) == previous.knows(kind) &&
           (view.sharesPart(kind, previous) || bothEmpty);
  };
  return same(ClusterKind::Node, view.nodes().empty() && previous.nodes().empty()) &&
         same(ClusterKind::ResourceSlice,
              view.resourceSlices().empty() && previous.resourceSlices().empty());
}

}  // namespace

std::shared_ptr<const PoolFit> Engine::poolFit() const {
  static const auto kNone = std::make_shared<const PoolFit>();
  const auto state = poolFit_.load();
  return state != nullptr ? state->fit : kNone;
}

void Engine::refreshPoolFit() {
  const std::lock_guard lock(poolFitMutex_);
  auto state = std::make_shared<PoolFitState>();
  state->profiles = profiles_.load();
  state->view = cluster_.load();
  const auto previous = poolFit_.load();
  if (state->profiles == nullptr || state->view == nullptr) {
    state->fit = std::make_shared<const PoolFit>();
  } else if (previous != nullptr && previous->view != nullptr &&
             previous->profiles == state->profiles && sameNodes(*state->view, *previous->view)) {
    state->fit = previous->fit;
  } else {
    state->fit = std::make_shared<const PoolFit>(fitPools(*state->profiles, *state->view));
  }
  const bool changed =
      previous == nullptr ? !state->fit->unmatched.empty() : !(*state->fit == *previous->fit);
  const std::shared_ptr<const PoolFit> fit = state->fit;
  poolFit_.store(std::move(state));
  if (changed && poolFitObserver_) poolFitObserver_(fit);
}

namespace {

std::string classWarning(WorkloadClass workloadClass, const std::string& reason) {
  return warningLine("class " + std::string(className(workloadClass)) + ": " + reason);
}

// Requests whose object the pipeline reads: no subresource, an object, a
// CREATE or an UPDATE.
bool isAdmittable(const AdmissionSubject& subject) {
  return subject.subResource.empty() && subject.object != nullptr &&
         (subject.operation == Operation::Create || subject.operation == Operation::Update);
}

void describeWorkload(const Assessment& assessment, Evaluation& eval) {
  const Classification& classification = assessment.classification();
  eval.workloadClass = classification.workloadClass;
  eval.classReason = classification.reason;
  eval.classDeclared = classification.declared();
  if (assessment.type == nullptr) return;
  eval.workloadType = assessment.type->qualifiedKind();
  eval.customResource = assessment.type->customResource;
  eval.unknownController = assessment.unknownController;
  eval.templates.clear();
  for (const PodTemplateView& view : assessment.views) {
    if (view.place != nullptr) eval.templates.push_back(describeTemplate(view));
  }
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

// A declaration's eachTemplate on one template: with several templates, or a
// custom resource's, each violation says which template it is about.
void runOnTemplate(RuleId rule, Check check, const ValidationContext& context,
                   std::vector<Violation>& out) {
  const size_t before = runCheck(rule, check, context, out);
  if (context.templates.size() <= 1 && !context.view.isCustomResource()) return;
  for (size_t i = before; i < out.size(); ++i) {
    // The object's own metadata belongs to no template.
    if (out[i].field.rfind("metadata", 0) == 0) continue;
    out[i].role = std::string(context.view.role());
    out[i].templateField = context.view.specFieldPath();
  }
}

// A Pod no controller owns: a refusal reaches whoever made it, and nothing
// retries it. Everything else is a controller's object. (`assessment` is of
// the subject's object.)
RuleTarget ruleTargetOf(const Assessment& assessment) {
  return assessment.type != nullptr && assessment.type->objectIsPod && !assessment.madeByController
             ? RuleTarget::BarePod
             : RuleTarget::Controller;
}

void collectViolations(const JsonValue& object, const Assessment& assessment,
                       const AdmissionSubject& subject, const ProfileSet& profiles,
                       const ClusterView* cluster, RuleTarget target, std::vector<Violation>& out) {
  if (assessment.views.empty()) return;
  const Classification& classification = assessment.classification();
  const ProfileAcceleratorNames accelerators(assessment.selection.profile);
  std::vector<TemplateReading> readings;
  readings.reserve(assessment.views.size());
  // The assessment's readers, one per view with its claims resolved in the
  // same view of the cluster, judging accelerators by the profile.
  for (size_t i = 0; i < assessment.views.size(); ++i) {
    readings.push_back({assessment.views[i], assessment.pods[i].judgingBy(accelerators)});
  }
  const size_t primary = assessment.workload.primaryTemplate() < readings.size()
                             ? assessment.workload.primaryTemplate()
                             : 0;
  // One context per template, made once for all the validators.
  std::vector<ValidationContext> contexts;
  contexts.reserve(readings.size());
  for (const TemplateReading& reading : readings) {
    contexts.push_back({object, reading.view, reading.pod, classification,
                        assessment.selection.profile, profiles, assessment.selection,
                        subject.namespaceName, subject.operation, cluster, readings, target});
  }
  for (const RuleRow& row : ruleRows()) {
    // The workload's shape was judged on the workload the developer wrote.
    if (assessment.madeByController && row.rule.subject == RuleSubject::Workload) continue;
    for (const ValidatorDeclaration* validator : row.checks) {
      if (!classification.isAiWorkload() && !validator->appliesToUnclassified) continue;
      if (validator->eachTemplate != nullptr) {
        for (const ValidationContext& context : contexts) {
          runOnTemplate(row.rule.id, validator->eachTemplate, context, out);
        }
      }
      if (validator->onceForWorkload != nullptr) {
        runCheck(row.rule.id, validator->onceForWorkload, contexts[primary], out);
      }
    }
  }
  // A rule about the object itself (its annotations, its profile) is found
  // again on every template: keep each violation once.
  eraseRepeatedViolations(out);
}

// A training class guessed over the kind's batch refuses nothing the kind's
// class would admit (webhook/engine/guessed_class.h): when a violation would
// deny, the object is judged again as its kind's class, and what denies only
// under the guess is marked to warn.
void holdGuessToKind(const JsonValue& object, const Assessment& assessment,
                     const AdmissionSubject& subject, const ProfileSet& profiles,
                     const ClusterView* cluster, RuleTarget target,
                     std::vector<Violation>& violations) {
  const std::optional<WorkloadClass> kindClass =
      guessedOverKind(assessment, object, profiles.workloadTypes());
  if (!kindClass) return;
  const Profile* profile = assessment.selection.actionsFrom();
  const bool anyDenial = std::any_of(violations.begin(), violations.end(), [&](const auto& v) {
    return configuredAction(v, profile, target) == RuleAction::Deny;
  });
  if (!anyDenial) return;
  const Assessment asKind = assess(object, subject, profiles, cluster, kindClass);
  std::vector<Violation> reference;
  collectViolations(object, asKind, subject, profiles, cluster, target, reference);
  markDenialsOfTheGuess(violations, profile, reference, asKind.selection.actionsFrom(), target);
}

// The view the request decides with: the engine's, with what the API, asked
// directly, had and the view did not yet.
std::shared_ptr<const ClusterView> viewWith(std::shared_ptr<const ClusterView> cluster,
                                            const ClusterAnswers* answers) {
  if (cluster == nullptr || answers == nullptr || answers->found.empty()) return cluster;
  ClusterView::Builder builder = cluster->extended();
  for (const ClusterObject& object : answers->found) builder.add(object);
  return std::move(builder).build();
}

// The claim or claim template a Pod's claim source names ("" name for none).
ClusterRef claimRefOf(const PodClaimSource& source, const std::string& ns) {
  return source.resourceClaimTemplateName.empty()
             ? ClusterRef{ClusterKind::ResourceClaim, ns, source.resourceClaimName}
             : ClusterRef{ClusterKind::ResourceClaimTemplate, ns, source.resourceClaimTemplateName};
}

// What the API said of a claim or claim template, else what the view says.
Presence presenceOf(const ClusterRef& ref, const ClusterView& cluster,
                    const ClusterAnswers* answers) {
  if (answers != nullptr) {
    const auto answer = answers->presence.find(ref);
    if (answer != answers->presence.end()) return answer->second;
  }
  return ref.kind == ClusterKind::ResourceClaimTemplate
             ? cluster.hasClaimTemplate(ref.namespaceName, ref.name)
             : cluster.hasClaim(ref.namespaceName, ref.name);
}

// The claim templates and claims the templates name that the view says do
// not exist: they decide whether the workload is a GPU workload, and may only
// be newer than the view. The server asks the API for them.
void unresolvedClaims(const Assessment& assessment, const AdmissionSubject& subject,
                      const ClusterView* cluster, const ClusterAnswers* answers,
                      std::vector<ClusterRef>& out) {
  if (cluster == nullptr) return;
  const std::string ns(subject.namespaceName);
  for (const PodReader& pod : assessment.pods) {
    for (const PodClaimSource& source : pod.claims().sources) {
      ClusterRef ref = claimRefOf(source, ns);
      if (ref.name.empty() || presenceOf(ref, *cluster, nullptr) != Presence::No) continue;
      if (answers == nullptr || answers->presence.count(ref) == 0) out.push_back(std::move(ref));
    }
  }
}

void sortUnique(std::vector<ClusterRef>& refs) {
  std::sort(refs.begin(), refs.end());
  refs.erase(std::unique(refs.begin(), refs.end()), refs.end());
}

// Drops the violations resting on the absence of an object that the API,
// asked directly, has (the view lagged behind a create). One it could not
// tell of (no answer in time) is not a definite "no": it warns at most.
void applyAnswers(std::vector<Violation>& violations, const ClusterAnswers* answers) {
  if (answers == nullptr) return;
  std::erase_if(violations, [&](Violation& violation) {
    if (!violation.absent) return false;
    const auto answer = answers->presence.find(*violation.absent);
    if (answer == answers->presence.end() || answer->second == Presence::No) return false;
    if (answer->second == Presence::Yes) return true;
    violation.unconfirmed = true;
    violation.brief = "not confirmed by the API: " + violation.brief;
    return false;
  });
}

// Whether `violation` rests on a class aiadmit guessed: its rule's premise is
// the class, the class was inferred, and the profile does not enforce
// inferred classes. `classification` is null for objects without one.
bool restsOnInferredClass(const Violation& violation, const Classification* classification,
                          const Profile* profile) {
  if (classification == nullptr || !classification->isAiWorkload() || classification->declared() ||
      ruleInfo(violation.rule).premise != RulePremise::Class) {
    return false;
  }
  return profile == nullptr || !profile->classification.enforceInferred;
}

// One line for the rules that only warned because the class was inferred:
// which, and how to declare the class ("inferred class realtime: AIA009,
// AIA015 only warn; declare it in aiadmit.dev/workload").
std::string inferredClassNotice(const Classification& classification,
                                const std::vector<RuleId>& rules) {
  std::string names;
  for (const RuleId rule : rules) {
    if (!names.empty()) names += ", ";
    names += rule.name();
  }
  return "inferred class " + std::string(className(classification.workloadClass)) + ": " + names +
         (rules.size() == 1 ? " only warns" : " only warn") + "; declare it in " +
         std::string(kWorkloadAnnotation);
}

// Sorts violations by the action that applies to them: the profile's action
// for the rule, capped by the enforcement level, and at warn when it rests
// on an inferred class.
void sortByAction(std::vector<Violation>& violations, const Profile* profile, RuleTarget target,
                  RuleAction enforcement, const Classification* classification, Evaluation& eval) {
  std::vector<RuleId> onInferredClass;
  for (Violation& violation : violations) {
    // An object without a profile of its own answers to the profile the
    // validator judged it by (AIA007 on objects that are not AI workloads).
    RuleAction configured = configuredAction(violation, profile, target);
    // On a class aiadmit guessed, the rule is the profile's at most as a
    // warning: that is its action for this workload, whatever the cap.
    if ((violation.restsOnGuess ||
         restsOnInferredClass(violation, classification,
                              violation.profile != nullptr ? violation.profile : profile)) &&
        actionSeverity(configured) > actionSeverity(RuleAction::Warn)) {
      configured = RuleAction::Warn;
      if (std::find(onInferredClass.begin(), onInferredClass.end(), violation.rule) ==
          onInferredClass.end()) {
        onInferredClass.push_back(violation.rule);
      }
    }
    RuleAction applied = capAction(configured, enforcement);
    if (violation.unconfirmed || violation.mayChange)
      applied = capAction(applied, RuleAction::Warn);
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
  if (!onInferredClass.empty()) {
    eval.notices.push_back(inferredClassNotice(*classification, onInferredClass));
  }
}

// The answer to a validation: the violations sorted by action, warnings
// for those that warn, one message for those that deny.
AdmissionOutcome judge(std::vector<Violation>& violations, const Profile* profile,
                       RuleTarget target, RuleAction enforcement, const ClusterAnswers* answers,
                       const Classification* classification, Decided& decided) {
  Evaluation& eval = decided.record;
  sortByAction(violations, profile, target, enforcement, classification, eval);
  for (const Violation& violation : eval.denials) {
    if (violation.absent &&
        (answers == nullptr || answers->presence.count(*violation.absent) == 0)) {
      decided.toConfirm.push_back(*violation.absent);
    }
  }
  sortUnique(decided.toConfirm);
  // What the engine noted (a claim no profile places) before the rules' lines.
  std::vector<std::string> warnings = noticeWarnings(eval);
  for (const Violation& violation : eval.warnings) {
    warnings.push_back(violation.warning());
  }
  if (eval.denials.empty()) return AdmissionOutcome::allowed(std::move(warnings));
  std::string message = eval.denials.front().format();
  for (size_t i = 1; i < eval.denials.size(); ++i) {
    message += "\n";
    message += eval.denials[i].format();
  }
  return AdmissionOutcome::denied(std::move(message), std::move(warnings));
}

// A ResourceClaim or ResourceClaimTemplate: no Pod, only device requests.
// As for workloads, an UPDATE is not refused for what the old object already
// had (a claim's spec is immutable: a label change must not start failing).
AdmissionOutcome validateClaimObject(const AdmissionSubject& subject, const ProfileSet& profiles,
                                     const ClusterView* cluster, const ClusterAnswers* answers,
                                     RuleAction enforcement, Decided& decided) {
  Evaluation& eval = decided.record;
  const ClaimAssessment assessment =
      assessClaim(*subject.object, subject.namespaceName, profiles, cluster);
  if (!assessment.readable) return AdmissionOutcome::allowed();
  if (!assessment.unplaced.empty()) eval.notices.push_back(assessment.unplaced);
  eval.workloadType = std::string(subject.kindName) + ".resource.k8s.io";
  eval.workloadClass = assessment.workloadClass;
  eval.classReason = assessment.classReason;
  eval.classDeclared = assessment.classDeclared;
  eval.profileError = assessment.selection.error;
  const Profile* profile = assessment.selection.profile;
  if (profile != nullptr) {
    eval.profile = profile->name;
    eval.profileReason = assessment.selection.reason;
  }
  std::vector<Violation> violations;
  collectClaimViolations(assessment, subject.operation, cluster, violations);
  if (subject.operation == Operation::Update && subject.oldObject != nullptr &&
      !violations.empty()) {
    std::vector<Violation> existing;
    collectClaimViolations(
        assessClaim(*subject.oldObject, subject.namespaceName, profiles, cluster),
        subject.operation, cluster, existing);
    eraseViolationsIn(violations, existing);
  }
  applyAnswers(violations, answers);
  capViolationsPerRule(violations);
  // A claim object is not a Pod: nothing is refused that a controller's
  // retries would see converge.
  return judge(violations, assessment.selection.actionsFrom(), RuleTarget::Controller, enforcement,
               answers, nullptr, decided);
}

// A controller's workload, just created, that is no AI workload only because
// a claim it names is not there: neither the view nor the API has its
// template (or the claim). Its Pods will claim devices once it exists
// (recordPendingClass). A claim the view cannot tell of is no such case.
bool awaitsItsClaims(const AdmissionSubject& subject, const Assessment& assessment,
                     const ClusterView* cluster, const ClusterAnswers* answers) {
  if (subject.operation != Operation::Create || assessment.madeByController ||
      assessment.type == nullptr || assessment.type->objectIsPod || cluster == nullptr) {
    return false;
  }
  const std::string ns(subject.namespaceName);
  bool absent = false;
  for (const PodReader& pod : assessment.pods) {
    if (pod.claimedDevices().unresolved.empty()) continue;
    for (const PodClaimSource& source : pod.claims().sources) {
      const ClusterRef ref = claimRefOf(source, ns);
      if (ref.name.empty()) continue;
      const Presence presence = presenceOf(ref, *cluster, answers);
      if (presence == Presence::Unknown) return false;
      absent = absent || presence == Presence::No;
    }
  }
  return absent;
}

// How the object is copied before the mutators edit it.
enum class Copy {
  // Strings and all: the copy outlives the request (the caller keeps it).
  Whole,
  // Its strings are the original's own: the copy lives no longer than the
  // request's object (answerReview's), and the diff compares most by address.
  SharingStrings,
};

// Whether the mutators changed the copy; `inputError` says why the object
// cannot be read (beyond a limit: 400).
bool mutateCopy(const Engine& engine, const AdmissionSubject& subject, JsonDocument& mutated,
                Decided& decided, std::string& inputError, const ClusterAnswers* answers,
                Copy copy) {
  if (!isAdmittable(subject)) return false;
  const auto profiles = engine.profiles();
  const auto cluster = viewWith(engine.clusterView(), answers);
  const Assessment assessment = assess(*subject.object, subject, *profiles, cluster.get());
  const MutationScope scope = mutationScope(subject, assessment);
  if (scope == MutationScope::None) return false;
  // A controller's update is told only what aiadmit restored: nothing is
  // asked of the API for it, and nothing said of what it leaves alone.
  Decided quiet;
  Decided& run = scope == MutationScope::RestoresOnly ? quiet : decided;
  Evaluation& eval = run.record;
  if (!assessment.resolution.ok()) {
    inputError = assessment.resolution.error;
    return false;
  }
  describeWorkload(assessment, eval);
  unresolvedClaims(assessment, subject, cluster.get(), answers, run.toConfirm);
  sortUnique(run.toConfirm);
  run.awaitClaims = !run.toConfirm.empty() && assessment.madeByController &&
                    assessment.type != nullptr && assessment.type->objectIsPod &&
                    subject.operation == Operation::Create;
  const Classification& classification = assessment.classification();
  const ProfileSelection& selection = assessment.selection;
  auto copyObject = [&] {
    if (copy == Copy::SharingStrings) {
      copySharingStrings(*subject.object, mutated, mutated.GetAllocator());
    } else {
      mutated.CopyFrom(*subject.object, mutated.GetAllocator());
    }
  };
  if (!classification.isAiWorkload()) {
    if (!awaitsItsClaims(subject, assessment, cluster.get(), answers)) return false;
    copyObject();
    const WorkloadClass pending = defaultClassOf(*assessment.type, *subject.object).workloadClass;
    if (!recordPendingClass(mutated, assessment.resolution, pending, mutated.GetAllocator())) {
      return false;
    }
    eval.changes.push_back("recorded " + annotationSetting(kClassAnnotation, className(pending)) +
                           ": its Pods get their pool once the claim templates exist");
    return true;
  }

  if (selection.profile == nullptr) {
    eval.profileError = !selection.error.empty() ? selection.error
                        : !selection.unplaced.empty()
                            ? selection.unplaced
                            : "no profile for class " +
                                  std::string(className(classification.workloadClass)) +
                                  " in namespace " + std::string(subject.namespaceName);
    return false;
  }
  eval.profile = selection.profile->name;
  eval.profileReason = selection.reason;
  if (engine.poolFit()->find(eval.profile) != nullptr) {
    eval.notices.emplace_back(UnmatchedPool::brief());
  }

  copyObject();
  MutationContext context{
      .object = mutated,
      .alloc = mutated.GetAllocator(),
      .type = *assessment.type,
      .classification = classification,
      .profile = *selection.profile,
      .namespaceName = subject.namespaceName,
      .changes = eval.changes,
      .notices = eval.notices,
      .templateUnchanged = templateUnchanged(subject, assessment),
      .severalTemplates = assessment.views.size() > 1,
      .madeByController = assessment.madeByController,
      .cluster = cluster.get(),
  };
  bool changed = false;
  // Template by template, each in the fixed mutator order; where each
  // template's change lines begin.
  const PodTemplateView* primary = assessment.primary();
  std::vector<size_t> firstChange;
  for (const PodTemplateView& view : assessment.views) {
    firstChange.push_back(eval.changes.size());
    context.place = view.place;
    // A controller's object gets no GPUs its template did not ask for.
    context.primaryTemplate = &view == primary && !context.madeByController;
    // Each runs where its declaration lets it (MutatorDeclaration::runsOn).
    for (const MutatorDeclaration* mutator : allMutators()) {
      changed = mutator->mutate(context) || changed;
    }
  }
  // What the kind fixes at creation (a Job's template, a JobSet's replicated
  // jobs) may only be restored, never changed: the update would be refused.
  if (changed && subject.operation == Operation::Update && subject.oldObject != nullptr) {
    changed = keepWhatTheUpdateMay(scope, subject, assessment, firstChange, mutated, eval);
  }
  if (changed && scope == MutationScope::RestoresOnly) decided.record = std::move(quiet.record);
  return changed;
}

// The answer when nothing was injected: why an AI workload got nothing (the
// selection failed or no profile applies), and what the engine noted.
AdmissionOutcome unchanged(const Evaluation& eval, const std::string& inputError) {
  if (!inputError.empty()) return AdmissionOutcome::badRequest(inputError);
  std::vector<std::string> warnings = noticeWarnings(eval);
  if (!eval.profileError.empty()) {
    warnings.push_back(warningLine("nothing injected: " + eval.profileError));
  }
  return AdmissionOutcome::allowed(std::move(warnings));
}

// The copy against the original as one JSON Patch, with a line for the class
// and one for each change.
AdmissionOutcome patchOf(const AdmissionSubject& subject, const JsonDocument& mutated,
                         Evaluation& eval) {
  std::string patch = diffToJsonPatch(*subject.object, mutated, &eval.patchPaths);
  if (patch.empty()) return AdmissionOutcome::allowed(noticeWarnings(eval));
  std::vector<std::string> warnings;
  warnings.push_back(classWarning(eval.workloadClass, eval.classReason));
  // Notices before changes: the budget drops the last lines first, and what
  // was left out is what the user has to act on.
  for (std::string& notice : noticeWarnings(eval)) warnings.push_back(std::move(notice));
  for (const std::string& change : eval.changes) {
    warnings.push_back(profileWarning(change, eval.profile));
  }
  return AdmissionOutcome::patched(std::move(patch), std::move(warnings));
}

}  // namespace

Decided Engine::mutate(const AdmissionSubject& subject, const MutateOptions& options) const {
  Decided decided;
  JsonDocument scratch;
  JsonDocument& mutated = options.mutated != nullptr ? *options.mutated : scratch;
  // The caller's copy is its own; a scratch copy shares the request's strings.
  const Copy copy = options.mutated != nullptr ? Copy::Whole : Copy::SharingStrings;
  std::string inputError;
  decided.outcome = mutateCopy(*this, subject, mutated, decided, inputError, options.answers, copy)
                        ? patchOf(subject, mutated, decided.record)
                        : unchanged(decided.record, inputError);
  decided.outcome.setAuditAnnotations(mutationAuditAnnotations(decided.record));
  return decided;
}

std::vector<std::string> noticeWarnings(const Evaluation& evaluation) {
  std::vector<std::string> warnings;
  for (const std::string& notice : evaluation.notices)
    warnings.push_back(profileWarning(notice, evaluation.profile));
  return warnings;
}

Decided Engine::validate(const AdmissionSubject& subject, const ClusterAnswers* answers) const {
  Decided decided;
  decided.outcome = judgeObject(subject, answers, decided);
  decided.outcome.setAuditAnnotations(validationAuditAnnotations(decided.record, enforcement_));
  return decided;
}

AdmissionOutcome Engine::judgeObject(const AdmissionSubject& subject, const ClusterAnswers* answers,
                                     Decided& decided) const {
  if (!isAdmittable(subject)) return AdmissionOutcome::allowed();
  Evaluation& eval = decided.record;
  const auto profiles = this->profiles();
  const auto cluster = viewWith(clusterView(), answers);
  if (isClaimObject(subject)) {
    return validateClaimObject(subject, *profiles, cluster.get(), answers, enforcement_, decided);
  }

  const Assessment assessment = assess(*subject.object, subject, *profiles, cluster.get());
  if (assessment.type == nullptr) return AdmissionOutcome::allowed();
  if (!assessment.resolution.ok()) return AdmissionOutcome::badRequest(assessment.resolution.error);
  describeWorkload(assessment, eval);
  // A profile named by annotation that cannot apply is an AIA001 violation
  // (validators/annotation_values), judged and capped like any rule.
  eval.profileError = assessment.selection.error;
  if (assessment.selection.profile != nullptr) {
    eval.profile = assessment.selection.profile->name;
    eval.profileReason = assessment.selection.reason;
  }

  std::vector<Violation> violations;
  // Decided by the kind's row and the object sent, so the same for the old
  // object's violations below.
  const RuleTarget target = ruleTargetOf(assessment);
  collectViolations(*subject.object, assessment, subject, *profiles, cluster.get(), target,
                    violations);

  // An UPDATE is not refused for what the old object already had and the
  // update did not touch: changing a label must not start failing.
  if (subject.operation == Operation::Update && subject.oldObject != nullptr &&
      !violations.empty()) {
    std::vector<Violation> existing;
    const Assessment before = assess(*subject.oldObject, subject, *profiles, cluster.get());
    if (before.resolution.ok()) {
      collectViolations(*subject.oldObject, before, subject, *profiles, cluster.get(), target,
                        existing);
    }
    eraseViolationsIn(violations, existing);
  }

  holdGuessToKind(*subject.object, assessment, subject, *profiles, cluster.get(), target,
                  violations);
  applyAnswers(violations, answers);
  capViolationsPerRule(violations);
  // What a controller changes without a rollout (a scale, Kueue's suspend
  // and placement) is the controller's: refusing it would stop the workload
  // from ever starting or scaling. aiadmit warns.
  // Nor is what a controller made from a template aiadmit never judged: it
  // ran before the namespace opted in, and opting in changes nothing that runs.
  const RuleAction enforcement =
      isControllersUpdate(subject, assessment) || assessment.fromUnjudgedController
          ? capAction(enforcement_, RuleAction::Warn)
          : enforcement_;
  AdmissionOutcome outcome = judge(violations, assessment.selection.actionsFrom(), target,
                                   enforcement, answers, &assessment.classification(), decided);
  unresolvedClaims(assessment, subject, cluster.get(), answers, decided.toConfirm);
  sortUnique(decided.toConfirm);
  return outcome;
}

Decided Engine::decide(AdmissionRoute route, const AdmissionRequest& request,
                       const ClusterAnswers* answers) const {
  return decideSafely([&] {
    AdmissionSubject subject = request.subject;
    subject.ownerTrusted = route.ownerTrusted;
    if (route.endpoint == Endpoint::Validate) return validate(subject, answers);
    return mutate(subject, {.answers = answers});
  });
}

Review::Review(std::string_view body) {
  try {
    auto request = std::make_unique<AdmissionRequest>();
    DecodeError error;
    if (decodeAdmissionReview(body, *request, error)) {
      uid_ = std::string(request->uid);
      request_ = std::move(request);
    } else {
      uid_ = std::move(error.uid);
      failure_ = AdmissionOutcome::badRequest(std::move(error.message));
    }
  } catch (const std::exception& e) {
    request_.reset();
    failure_ = AdmissionOutcome::internalError(std::string("internal error: ") + e.what());
  }
}

ReviewAnswer Review::answer(Decided decided) const {
  ReviewAnswer answer;
  answer.uid = uid_;
  if (request_ != nullptr) {
    const AdmissionSubject& subject = request_->subject;
    answer.group = std::string(subject.group);
    answer.kind = std::string(subject.kindName);
    answer.namespaceName = std::string(subject.namespaceName);
    answer.name = std::string(request_->name);
    answer.operation = std::string(operationName(subject.operation));
    answer.evaluation = std::move(decided.record);
  }
  const AdmissionOutcome& outcome = request_ != nullptr ? decided.outcome : failure_;
  answer.decision = outcome.decision();
  answer.httpStatus = outcome.httpStatus();
  answer.body = encodeAdmissionResponse(answer.uid, outcome);
  return answer;
}

ReviewAnswer answerReview(const Engine& engine, AdmissionRoute route, std::string_view body,
                          const ClusterAnswers* answers) {
  const Review review(body);
  if (review.request() == nullptr) return review.answer({});
  return review.answer(engine.decide(route, *review.request(), answers));
}

}  // namespace aiadmit
