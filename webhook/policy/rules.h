// The stable rule catalogue (AIA001-AIA015) and what a profile may do with each.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace aiadmit {

// What a violated rule does to the request. Audit admits it silently and only
// records the violation (audit annotations, metrics, `check`), as Kyverno's
// Audit and ValidatingAdmissionPolicy's Audit action do.
enum class RuleAction { Deny, Warn, Audit, Off };

constexpr int kFirstRule = 1;
constexpr int kLastRule = 15;

struct RuleId {
  int number = 0;            // 1..15
  std::string name() const;  // "AIA004"
  static std::optional<RuleId> parse(std::string_view text);
  bool operator==(const RuleId&) const = default;
  auto operator<=>(const RuleId&) const = default;
};

inline constexpr RuleId AIA001{1}, AIA002{2}, AIA003{3}, AIA004{4}, AIA005{5}, AIA006{6}, AIA007{7},
    AIA008{8}, AIA009{9}, AIA010{10}, AIA011{11}, AIA012{12}, AIA013{13}, AIA014{14}, AIA015{15};

std::string_view actionName(RuleAction action);
std::optional<RuleAction> parseAction(std::string_view text);

// Strength order: deny > warn > audit > off.
int actionSeverity(RuleAction action);
// `action`, lowered to `ceiling` when stronger: the enforcement cap of a
// staged rollout (`serve --enforcement=audit|warn|deny`).
RuleAction capAction(RuleAction action, RuleAction ceiling);
// The enforcement levels `--enforcement` takes: audit, warn or deny.
std::optional<RuleAction> parseEnforcement(std::string_view text);

// Per-rule actions, defaulting to deny for all rules but AIA015 (warn).
class RuleActions {
 public:
  RuleActions();
  RuleAction of(RuleId rule) const { return actions_[static_cast<size_t>(rule.number)]; }
  void set(RuleId rule, RuleAction action) { actions_[static_cast<size_t>(rule.number)] = action; }

 private:
  std::array<RuleAction, kLastRule + 1> actions_{};
};

}  // namespace aiadmit
