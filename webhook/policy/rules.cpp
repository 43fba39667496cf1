#include "webhook/policy/rules.h"

#include <cstdio>

namespace aiadmit {

std::string RuleId::name() const {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "AIA%03d", number);
  return buffer;
}

std::optional<RuleId> RuleId::parse(std::string_view text) {
  if (text.size() != 6 || text.substr(0, 3) != "AIA") return std::nullopt;
  int number = 0;
  for (char c : text.substr(3)) {
    if (c < '0' || c > '9') return std::nullopt;
    number = number * 10 + (c - '0');
  }
  if (number < kFirstRule || number > kLastRule) return std::nullopt;
  return RuleId{number};
}

std::string_view actionName(RuleAction action) {
  switch (action) {
    case RuleAction::Deny:
      return "deny";
    case RuleAction::Warn:
      return "warn";
    case RuleAction::Audit:
      return "audit";
    case RuleAction::Off:
      return "off";
  }
  return "off";
}

std::optional<RuleAction> parseAction(std::string_view text) {
  if (text == "deny") return RuleAction::Deny;
  if (text == "warn") return RuleAction::Warn;
  if (text == "audit") return RuleAction::Audit;
  if (text == "off") return RuleAction::Off;
  return std::nullopt;
}

int actionSeverity(RuleAction action) {
  switch (action) {
    case RuleAction::Deny:
      return 3;
    case RuleAction::Warn:
      return 2;
    case RuleAction::Audit:
      return 1;
    case RuleAction::Off:
      return 0;
  }
  return 0;
}

RuleAction capAction(RuleAction action, RuleAction ceiling) {
  return actionSeverity(action) > actionSeverity(ceiling) ? ceiling : action;
}

std::optional<RuleAction> parseEnforcement(std::string_view text) {
  const std::optional<RuleAction> action = parseAction(text);
  if (!action || *action == RuleAction::Off) return std::nullopt;
  return action;
}

static_assert(
    [] {
      for (int i = 0; i < kLastRule; ++i) {
        if (kRuleCatalogue[i].id.number != kFirstRule + i) return false;
      }
      return true;
    }(),
    "the catalogue lists every rule once, in ID order");

}  // namespace aiadmit
