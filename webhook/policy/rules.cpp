#include "webhook/policy/rules.h"

#include <cstdio>

#include "webhook/codec/enum_table.h"

namespace aiadmit {

std::string RuleId::name() const {
  // Without printf: it is written for every violation and audit annotation.
  if (number >= 0 && number <= 999) {
    return {'A',
            'I',
            'A',
            static_cast<char>('0' + number / 100),
            static_cast<char>('0' + number / 10 % 10),
            static_cast<char>('0' + number % 10)};
  }
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
  if (number < kFirstRule || number > lastRule().number) return std::nullopt;
  return RuleId{number};
}

RuleId lastRule() {
  return {kFirstRule + static_cast<int>(ruleCatalogue().size()) - 1};
}

constexpr EnumEntry<RuleAction> kActionNames[] = {{RuleAction::Deny, "deny"},
                                                  {RuleAction::Warn, "warn"},
                                                  {RuleAction::Audit, "audit"},
                                                  {RuleAction::Off, "off"}};

constexpr EnumEntry<RuleAction, int> kActionSeverities[] = {
    {RuleAction::Deny, 3}, {RuleAction::Warn, 2}, {RuleAction::Audit, 1}, {RuleAction::Off, 0}};

std::string_view actionName(RuleAction action) {
  return valueIn(kActionNames, action, "off");
}

std::optional<RuleAction> parseAction(std::string_view text) {
  return keyIn(kActionNames, text);
}

int actionSeverity(RuleAction action) {
  return valueIn(kActionSeverities, action, 0);
}

RuleAction capAction(RuleAction action, RuleAction ceiling) {
  return actionSeverity(action) > actionSeverity(ceiling) ? ceiling : action;
}

std::optional<RuleAction> parseEnforcement(std::string_view text) {
  const std::optional<RuleAction> action = parseAction(text);
  if (!action || *action == RuleAction::Off) return std::nullopt;
  return action;
}

}  // namespace aiadmit
