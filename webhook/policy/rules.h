// The stable rule catalogue and what a profile may do with each.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace aiadmit {

// What a violated rule does to the request. Audit admits it silently and only
// records the violation (audit annotations, metrics, `check`), as Kyverno's
// Audit and ValidatingAdmissionPolicy's Audit action do.
enum class RuleAction { Deny, Warn, Audit, Off };

struct RuleId {
  int number = 0;            // 1..the catalogue's size
  std::string name() const;  // "AIA004"
  static std::optional<RuleId> parse(std::string_view text);
  bool operator==(const RuleId&) const = default;
  auto operator<=>(const RuleId&) const = default;
};

// Names for the rules that tests and other code name (AIA007's validator
// weighs profiles' actions for it); the rows of validators/registry.cpp use
// them where they exist. A rule needs none: its row states its number
// (RuleId{16}), and its checks leave Violation::rule to the engine.
inline constexpr RuleId AIA001{1}, AIA002{2}, AIA003{3}, AIA004{4}, AIA005{5}, AIA006{6}, AIA007{7},
    AIA008{8}, AIA009{9}, AIA010{10}, AIA011{11}, AIA012{12}, AIA013{13}, AIA014{14}, AIA015{15},
    AIA017{17}, AIA018{18}, AIA019{19};

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

// A rule's row of the catalogue: the action it has when a profile says
// nothing and the title docs/rules.md gives it (a test holds the docs to the
// catalogue), what it judges and what its verdict rests on.
struct RuleInfo {
  RuleId id{};
  // For bare Pods, and for everything unless the next says otherwise.
  RuleAction defaultAction = RuleAction::Deny;
  std::string_view title{};
  // The default for controllers' objects, when it is not defaultAction.
  std::optional<RuleAction> controllerDefault = std::nullopt;
  RuleSubject subject = RuleSubject::Pod;
  RulePremise premise = RulePremise::None;

  constexpr RuleAction defaultFor(RuleTarget target) const {
    return target == RuleTarget::Controller && controllerDefault ? *controllerDefault
                                                                 : defaultAction;
  }
};

// The catalogue: every rule once, in ID order. It is declared here, where
// profiles read it (the IDs a profile may name, the default actions), and
// defined in validators/registry.cpp, where each rule's row also lists the
// validators that check it: a rule's facts and its checks are one row. The
// policy layer sits below the validators and never includes them.
std::span<const RuleInfo> ruleCatalogue();

constexpr int kFirstRule = 1;
// The ID of the catalogue's last rule.
RuleId lastRule();
// The most rules the catalogue may hold: RuleActions and the metrics keep a
// place for each (validators/registry.cpp asserts the catalogue fits).
inline constexpr int kRuleCapacity = 64;

// The catalogue row of a rule of the catalogue.
inline const RuleInfo& ruleInfo(RuleId rule) {
  return ruleCatalogue()[static_cast<size_t>(rule.number - kFirstRule)];
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
  std::array<std::optional<RuleAction>, kRuleCapacity + 1> actions_{};
};

}  // namespace aiadmit
