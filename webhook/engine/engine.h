// The admission pipeline: guard clauses, pod-template view, classification,
// profile selection, mutators on a copy, one diff into a JSON Patch; and, on
// its own path, the validators. Shared by `serve`, `review` and `check`.
#pragma once

#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "validators/validator.h"
#include "webhook/cluster/cluster_ref.h"
#include "webhook/cluster/cluster_view.h"
#include "webhook/engine/admission.h"
#include "webhook/policy/classify.h"
#include "webhook/policy/pool_fit.h"
#include "webhook/policy/profile_set.h"

namespace aiadmit {

// Everything the engine decided, for logs, metrics and `aiadmit check`.
// Holds names and decisions only, never object contents.
struct Evaluation {
  WorkloadClass workloadClass = WorkloadClass::None;
  std::string classReason;
  // The developer stated the class (Classification::declared); else aiadmit
  // inferred it, and the rules whose premise it is warn at most.
  bool classDeclared = false;
  std::string profile;
  std::string profileReason;
  std::string profileError;  // why no profile applies to an AI workload
  std::string inputError;    // why the object cannot be read (beyond a limit): 400
  // The workload's kind as the table names it ("PyTorchJob.kubeflow.org")
  // and its templates by role with their Pod counts ("Worker ×8"), for
  // `check` and the log; empty for objects the table does not describe.
  std::string workloadType;
  std::vector<std::string> templates;
  bool customResource = false;       // a kind of an operator, not Pod or a built-in controller
  std::vector<std::string> changes;  // injected, one line each
  // The JSON Pointer each operation of the patch sets, in patch order: what
  // the audit annotation `mutated` names (label and annotation keys at most).
  std::vector<std::string> patchPaths;
  std::vector<std::string> notices;  // left out on purpose (a class the cluster lacks)
  std::vector<Violation> denials;    // violations whose action is deny
  std::vector<Violation> warnings;   // violations whose action is warn
  std::vector<Violation> audited;    // violations whose action is audit: recorded only
  // Each violated rule once, in rule order, with the action applied and the
  // one its profile sets (stronger when the enforcement cap lowered it).
  struct RuleDecision {
    RuleId rule;
    RuleAction applied = RuleAction::Off;
    RuleAction configured = RuleAction::Off;
  };
  std::vector<RuleDecision> rules;
  // What the server should ask the API for before it answers, sorted: the
  // objects denials rest on the absence of (AIA017-AIA019), and the claim
  // templates and claims the view lacks, which decide the workload's class.
  // None that a direct read was already asked about. The server asks, then
  // answers again with the answers (webhook/cluster/cluster_ref.h).
  std::vector<ClusterRef> toConfirm;
  // A Pod a controller is creating names claims the view lacks: the server
  // asks for them with patience (ApiLookup::confirm), since the claim
  // templates of the same apply may be created a moment after the workload.
  bool awaitClaims = false;
};

enum class Endpoint { Mutate, Validate };
std::string_view endpointName(Endpoint endpoint);

// An admission path: what it does, and whether the object's controlling
// ownerReference is believed (AdmissionSubject::ownerTrusted). The API
// server calls /mutate and /validate for the objects of a controller whose
// identity the install lists for the owner's kind, and the applied paths,
// /applied/mutate and /applied/validate, for everything else, whatever
// owner it names: there it is judged as a person's object.
struct AdmissionRoute {
  Endpoint endpoint = Endpoint::Mutate;
  bool ownerTrusted = true;
};
// The route of an HTTP path; none for a path that is no admission review's.
std::optional<AdmissionRoute> admissionRoute(std::string_view path);

class Engine {
 public:
  // `enforcement` caps every rule's action (deny > warn > audit): a staged
  // rollout runs with audit, then warn, then deny.
  explicit Engine(std::shared_ptr<const ProfileSet> profiles,
                  RuleAction enforcement = RuleAction::Deny);

  // Swapped atomically; requests in flight keep the set they started with.
  void replaceProfiles(std::shared_ptr<const ProfileSet> profiles);
  std::shared_ptr<const ProfileSet> profiles() const;
  RuleAction enforcement() const { return enforcement_; }

  // The cluster view the rules on the cluster read (a snapshot for `check`,
  // the watcher's latest for `serve`); null decides from the profiles alone.
  // Swapped atomically like the profiles.
  void replaceClusterView(std::shared_ptr<const ClusterView> view);
  std::shared_ptr<const ClusterView> clusterView() const;

  // Which profiles' pools match no GPU node of the cluster view: worked out
  // when the profiles or the view's Nodes change, never on the request path.
  // Each request its profile touches is warned; never null.
  std::shared_ptr<const PoolFit> poolFit() const;
  // Called with the new fit each time it differs from the last one (serve
  // logs it and shows it in /metrics), on the thread that replaced the
  // profiles or the view. Set before either is replaced.
  void onPoolFitChange(std::function<void(std::shared_ptr<const PoolFit>)> observer) {
    poolFitObserver_ = std::move(observer);
  }

  // `mutated`, when given, receives the mutated object (for `check -o yaml`)
  // when the answer is a patch, so that no caller runs the pipeline twice.
  // `answers`, in both: what the API said of objects the view lacks; what it
  // had is decided with as if the view held it.
  // `scratchMemory`: where the copy that is mutated and diffed lives when
  // `mutated` is not given (the request's memory); a pool of its own when null.
  AdmissionOutcome mutate(const AdmissionSubject& subject, Evaluation* evaluation,
                          JsonDocument* mutated = nullptr, const ClusterAnswers* answers = nullptr,
                          JsonAllocator* scratchMemory = nullptr) const;
  // `answers`: what the API said of objects the view lacks; a violation
  // resting on the absence of one it did not answer No for is dropped.
  AdmissionOutcome validate(const AdmissionSubject& subject, Evaluation* evaluation,
                            const ClusterAnswers* answers = nullptr) const;

  // The mutated object itself; false when not mutated.
  bool mutateInto(const AdmissionSubject& subject, JsonDocument& mutated, Evaluation* evaluation,
                  const ClusterAnswers* answers = nullptr) const;

 private:
  // The fit and what it was worked out from.
  struct PoolFitState {
    std::shared_ptr<const ProfileSet> profiles;
    std::shared_ptr<const ClusterView> view;
    std::shared_ptr<const PoolFit> fit;
  };
  void refreshPoolFit();

  std::atomic<std::shared_ptr<const ProfileSet>> profiles_;
  std::atomic<std::shared_ptr<const ClusterView>> cluster_;
  std::mutex poolFitMutex_;  // one refresh at a time: reloads and the view's feed
  std::atomic<std::shared_ptr<const PoolFitState>> poolFit_;
  std::function<void(std::shared_ptr<const PoolFit>)> poolFitObserver_;
  RuleAction enforcement_;
};

// One HTTP body in, one HTTP answer out: the request path of `serve` and of
// `review`. Never throws.
struct ReviewAnswer {
  int httpStatus = 200;
  std::string body;
  Decision decision = Decision::Errored;
  // For logs: identity and decisions, never contents.
  std::string uid;
  std::string group;
  std::string kind;
  std::string namespaceName;
  std::string name;
  std::string operation;
  Evaluation evaluation;
};

ReviewAnswer answerReview(const Engine& engine, AdmissionRoute route, std::string_view body,
                          const ClusterAnswers* answers = nullptr);
// The controller's paths (/mutate, /validate): the owner is believed.
inline ReviewAnswer answerReview(const Engine& engine, Endpoint endpoint, std::string_view body,
                                 const ClusterAnswers* answers = nullptr) {
  return answerReview(engine, AdmissionRoute{endpoint, true}, body, answers);
}

// The frame every endpoint answers in: the review of `body` decoded (400
// when it cannot be), `decide(const AdmissionRequest&, Evaluation&)` for its
// outcome, the answer encoded with the review's uid, and 500 for an exception.
template <class Decide>
ReviewAnswer answerDecoded(std::string_view body, Decide&& decide) {
  ReviewAnswer answer;
  try {
    AdmissionRequest request;
    DecodeError error;
    const bool decoded = decodeAdmissionReview(body, request, error);
    if (!decoded) {
      answer.uid = error.uid;
    } else {
      answer.uid = std::string(request.uid);
      answer.group = std::string(request.subject.group);
      answer.kind = std::string(request.subject.kindName);
      answer.namespaceName = std::string(request.subject.namespaceName);
      answer.name = std::string(request.name);
      answer.operation = std::string(operationName(request.subject.operation));
    }
    const AdmissionOutcome outcome =
        decoded ? decide(static_cast<const AdmissionRequest&>(request), answer.evaluation)
                : AdmissionOutcome::badRequest(error.message);
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

// The warnings of the evaluation's notices as /mutate sends them:
// "aiadmit: <notice> (profile <name>)".
std::vector<std::string> noticeWarnings(const Evaluation& evaluation);

}  // namespace aiadmit
