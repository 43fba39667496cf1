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
  // The workload's kind as the table names it ("PyTorchJob.kubeflow.org")
  // and its templates by role with their Pod counts ("Worker ×8"), for
  // `check` and the log; empty for objects the table does not describe.
  std::string workloadType;
  std::vector<std::string> templates;
  bool customResource = false;  // a kind of an operator, not Pod or a built-in controller
  // "KIND.GROUP" of the controller that made it when no row describes that
  // kind (Assessment::unknownController): /metrics counts such objects.
  std::string unknownController;
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
};

// What the engine decided on one request: the answer, the record of it, and
// what the answer rests on that the cluster view lacks.
struct Decided {
  AdmissionOutcome outcome = AdmissionOutcome::allowed();
  Evaluation record{};
  // What the server should ask the API for before it answers, sorted: the
  // objects denials rest on the absence of (AIA017-AIA019), and the claim
  // templates and claims the view lacks, which decide the workload's class.
  // None that a direct read was already asked about. The server asks, then
  // decides again on the same request with the answers
  // (webhook/cluster/cluster_ref.h).
  std::vector<ClusterRef> toConfirm{};
  // A Pod a controller is creating names claims the view lacks: the server
  // asks for them with patience (ApiLookup::confirm), since the claim
  // templates of the same apply may be created a moment after the workload.
  bool awaitClaims = false;
};

// How Engine::mutate is asked.
struct MutateOptions {
  // What the API said of objects the view lacks; what it had is decided
  // with as if the view held it.
  const ClusterAnswers* answers = nullptr;
  // Receives the mutated object (`check -o yaml`, a fuzzer) when the answer
  // is a patch, so that no caller runs the pipeline twice.
  JsonDocument* mutated = nullptr;
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

  // The outcome carries its audit annotations.
  Decided mutate(const AdmissionSubject& subject, const MutateOptions& options = {}) const;
  // `answers`: what the API said of objects the view lacks; a violation
  // resting on the absence of one it did not answer No for is dropped.
  Decided validate(const AdmissionSubject& subject, const ClusterAnswers* answers = nullptr) const;
  // The route's decision on a decoded review: /mutate or /validate, its
  // owner believed or not. An exception is an internal error (500), never
  // thrown.
  Decided decide(AdmissionRoute route, const AdmissionRequest& request,
                 const ClusterAnswers* answers = nullptr) const;

 private:
  // The validation's outcome, its record and what it rests on in `decided`.
  AdmissionOutcome judgeObject(const AdmissionSubject& subject, const ClusterAnswers* answers,
                               Decided& decided) const;
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

// An admission answer as HTTP: status and body, and for logs the review's
// identity and the engine's record, never contents.
struct ReviewAnswer {
  int httpStatus = 200;
  std::string body;
  Decision decision = Decision::Errored;
  std::string uid;
  std::string group;
  std::string kind;
  std::string namespaceName;
  std::string name;
  std::string operation;
  Evaluation evaluation;
};

// One review, decoded once: the frame every admission endpoint answers in.
// A held answer decides again on the same request, never parsing it again.
// Movable: the request it owns stays where it is.
class Review {
 public:
  // Decodes `body` (a copy is kept: the request's strings point into it);
  // never throws.
  explicit Review(std::string_view body);
  // Null when the body is no AdmissionReview aiadmit can read: answer()
  // then says why (400, or 500 for our own failure).
  const AdmissionRequest* request() const { return request_.get(); }
  // `decided` encoded with the review's uid, and the identity the log
  // prints; the decode error's answer when there is no request.
  ReviewAnswer answer(Decided decided) const;

 private:
  std::unique_ptr<AdmissionRequest> request_;
  AdmissionOutcome failure_ = AdmissionOutcome::allowed();
  std::string uid_;
};

// Runs `decide`, an exception becoming an internal error (500): what is
// decided on a request never throws.
template <class Decide>
Decided decideSafely(Decide&& decide) noexcept {
  try {
    return decide();
  } catch (const std::exception& e) {
    return Decided{.outcome =
                       AdmissionOutcome::internalError(std::string("internal error: ") + e.what())};
  }
}

// One HTTP body in, one HTTP answer out: the request path of `review` and
// of the tests. `serve` keeps the Review while it asks the API.
ReviewAnswer answerReview(const Engine& engine, AdmissionRoute route, std::string_view body,
                          const ClusterAnswers* answers = nullptr);
// The controller's paths (/mutate, /validate): the owner is believed.
inline ReviewAnswer answerReview(const Engine& engine, Endpoint endpoint, std::string_view body,
                                 const ClusterAnswers* answers = nullptr) {
  return answerReview(engine, AdmissionRoute{endpoint, true}, body, answers);
}

// The warnings of the evaluation's notices as /mutate sends them:
// "aiadmit: <notice> (profile <name>)".
std::vector<std::string> noticeWarnings(const Evaluation& evaluation);

}  // namespace aiadmit
