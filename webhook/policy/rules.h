// The stable rule catalogue and what a profile may do with each.
#pragma once

#include <array>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

namespace aiadmit {

// What a violated rule does to the request. Audit admits it silently and only
// records the violation (audit annotations, metrics, `check`), as Kyverno's
// Audit and ValidatingAdmissionPolicy's Audit action do.
enum class RuleAction { Deny, Warn, Audit, Off };

struct RuleId {
  int number = 0;            // 1..kLastRule
  std::string name() const;  // "AIA004"
  static std::optional<RuleId> parse(std::string_view text);
  bool operator==(const RuleId&) const = default;
  auto operator<=>(const RuleId&) const = default;
};

inline constexpr RuleId AIA001{1}, AIA002{2}, AIA003{3}, AIA004{4}, AIA005{5}, AIA006{6}, AIA007{7},
    AIA008{8}, AIA009{9}, AIA010{10}, AIA011{11}, AIA012{12}, AIA013{13}, AIA014{14}, AIA015{15},
    AIA016{16}, AIA017{17}, AIA018{18}, AIA019{19}, AIA020{20};

// What a rule judges, for the rules whose default differs between the two: a
// bare Pod (no controller owns it, so a refusal reaches the one who made it
// and nothing retries it), or a controller's object (a Deployment, a Job, a
// custom resource, or an object a controller made), which Kubernetes accepts
// and then converges: a controller retries its Pods until what they name
// exists.
enum class RuleTarget { BarePod, Controller };

// What a rule judges: a Pod's fit (its GPUs, the nodes that can hold them,
// the pool), which holds for every Pod whoever made it; or how the workload
// is put together (its class, its probes, gang scheduling, priority, restart
// policy, the annotations it declares), which is judged where the developer
// wrote it, through the table's role, and never again on what a controller
// made from it: an operator sets its children's restart policy and probes.
enum class RuleSubject { Pod, Workload };

// What a rule's verdict rests on besides the object: nothing, or the
// workload's class. A class is a premise only when the developer declared it
// (aiadmit.dev/workload, or a profile named by aiadmit.dev/profile); one
// aiadmit inferred from the kind is a guess, and a rule that rests on it
// warns at most, unless the profile opts in (spec.classification).
enum class RulePremise { None, Class };

// The catalogue: every rule once, in ID order, with the action it has when a
// profile says nothing and the title docs/rules.md gives it (a test holds the
// docs to this table). A new rule is one row here and one validator.
struct RuleInfo {
  RuleId id;
  RuleAction defaultAction;  // for bare Pods, and for everything unless the next says otherwise
  std::string_view title;
  // The default for controllers' objects, when it is not defaultAction.
  std::optional<RuleAction> controllerDefault = std::nullopt;
  RuleSubject subject = RuleSubject::Pod;
  RulePremise premise = RulePremise::None;

  constexpr RuleAction defaultFor(RuleTarget target) const {
    return target == RuleTarget::Controller && controllerDefault ? *controllerDefault
                                                                 : defaultAction;
  }
};

inline constexpr RuleInfo kRuleCatalogue[] = {
    {AIA001, RuleAction::Deny, "an aiadmit.dev annotation aiadmit cannot use", std::nullopt,
     RuleSubject::Workload},
    {AIA002, RuleAction::Deny, "shape against kind", std::nullopt, RuleSubject::Workload,
     RulePremise::Class},
    {AIA003, RuleAction::Deny, "misspelt accelerator name"},
    {AIA004, RuleAction::Deny, "GPU quantity that is negative or not a whole number"},
    {AIA005, RuleAction::Deny, "extended-resource requests that differ from limits"},
    {AIA006, RuleAction::Deny, "more GPUs than a node has"},
    {AIA007, RuleAction::Deny, "aimed at the GPU pool without asking for a GPU", std::nullopt,
     RuleSubject::Workload},
    {AIA008, RuleAction::Deny, "selection that contradicts the pool"},
    {AIA009, RuleAction::Deny, "model server without a readiness probe", std::nullopt,
     RuleSubject::Workload, RulePremise::Class},
    {AIA010, RuleAction::Deny, "distributed training without gang scheduling", std::nullopt,
     RuleSubject::Workload},
    {AIA011, RuleAction::Deny, "priority class not allowed", std::nullopt, RuleSubject::Workload},
    {AIA012, RuleAction::Deny, "GPUs in a namespace that may not use them"},
    {AIA013, RuleAction::Deny, "shared GPUs where the profile forbids sharing"},
    {AIA014, RuleAction::Deny, "training or batch Pod that restarts Always", std::nullopt,
     RuleSubject::Workload, RulePremise::Class},
    {AIA015, RuleAction::Warn, "model server without a memory limit", std::nullopt,
     RuleSubject::Workload, RulePremise::Class},
    // Rules on the cluster view: they act only on what the cluster is known
    // to hold (webhook/cluster/cluster_view.h) and say nothing without one. What
    // does not exist yet may exist a moment later (one `kubectl apply` of a
    // file holding both, Helm's or a GitOps tool's order), and controllers
    // retry until it does: AIA017-AIA019 warn on controllers' objects.
    {AIA016, RuleAction::Deny, "accelerators no node of the cluster can hold"},
    {AIA017, RuleAction::Deny, "priority class that does not exist", RuleAction::Warn},
    {AIA018, RuleAction::Deny, "Kueue LocalQueue that does not exist", RuleAction::Warn},
    {AIA019, RuleAction::Deny, "claim template or device class that does not exist",
     RuleAction::Warn},
    // Rules on DRA claim objects (ResourceClaim, ResourceClaimTemplate).
    {AIA020, RuleAction::Deny, "device request a profile does not allow or no node can hold"},
};

constexpr int kFirstRule = 1;
constexpr int kLastRule = static_cast<int>(std::size(kRuleCatalogue));

// The catalogue row of a rule of the catalogue.
constexpr const RuleInfo& ruleInfo(RuleId rule) {
  return kRuleCatalogue[rule.number - kFirstRule];
}

std::string_view actionName(RuleAction action);
std::optional<RuleAction> parseAction(std::string_view text);

// Strength order: deny > warn > audit > off.
int actionSeverity(RuleAction action);
// `action`, lowered to `ceiling` when stronger: the enforcement cap of a
// staged rollout (`serve --enforcement=audit|warn|deny`).
RuleAction capAction(RuleAction action, RuleAction ceiling);
// The enforcement levels `--enforcement` takes: audit, warn or deny.
std::optional<RuleAction> parseEnforcement(std::string_view text);

// Per-rule actions: what a profile set, else the catalogue's default for the
// target.
class RuleActions {
 public:
  RuleAction of(RuleId rule, RuleTarget target) const {
    const std::optional<RuleAction>& set = actions_[static_cast<size_t>(rule.number)];
    return set ? *set : ruleInfo(rule).defaultFor(target);
  }
  // Whether a profile set the rule's action (then it applies to every target).
  bool isSet(RuleId rule) const { return actions_[static_cast<size_t>(rule.number)].has_value(); }
  void set(RuleId rule, RuleAction action) { actions_[static_cast<size_t>(rule.number)] = action; }

 private:
  std::array<std::optional<RuleAction>, kLastRule + 1> actions_{};
};

}  // namespace aiadmit
