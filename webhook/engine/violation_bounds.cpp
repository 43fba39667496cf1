#include "webhook/engine/violation_bounds.h"

#include <functional>
#include <map>
#include <string_view>
#include <unordered_set>

namespace aiadmit {

namespace {

// What tells violations apart in practice; equality compares the rest.
size_t hashOf(const Violation& violation) {
  const std::hash<std::string_view> text;
  size_t hash = std::hash<std::string_view>()(violation.rule.name());
  for (const std::string* part : {&violation.field, &violation.problem, &violation.role}) {
    hash = hash * 1099511628211ULL ^ text(*part);
  }
  return hash;
}

// Violations by address, hashed and compared by value. An address is only
// kept while its violation stays where it is.
struct ByValue {
  size_t operator()(const Violation* violation) const { return hashOf(*violation); }
  bool operator()(const Violation* a, const Violation* b) const { return *a == *b; }
};
using ViolationSet = std::unordered_set<const Violation*, ByValue, ByValue>;

std::string moreLine(size_t count) {
  return std::to_string(count) + " more violation" + (count == 1 ? "" : "s") +
         " of this rule, not listed";
}

}  // namespace

void eraseRepeatedViolations(std::vector<Violation>& violations) {
  if (violations.size() < 2) return;  // the usual review: no set to make
  // The first of each is moved to the front; the set holds only the kept
  // ones, at places no later move writes to.
  ViolationSet seen(violations.size());
  size_t kept = 0;
  for (size_t i = 0; i < violations.size(); ++i) {
    if (i != kept) violations[kept] = std::move(violations[i]);
    if (seen.insert(&violations[kept]).second) ++kept;
  }
  violations.resize(kept);
}

void eraseViolationsIn(std::vector<Violation>& violations, const std::vector<Violation>& existing) {
  if (existing.empty()) return;
  ViolationSet known(existing.size());
  for (const Violation& violation : existing) known.insert(&violation);
  std::erase_if(violations,
                [&](const Violation& violation) { return known.count(&violation) != 0; });
}

void capViolationsPerRule(std::vector<Violation>& violations) {
  if (violations.size() <= kMaxViolationsPerRule) return;
  struct LeftOut {
    size_t count = 0;
    size_t at = 0;  // where the rule's last listed violation is
    bool mayChange = false;
    bool restsOnGuess = true;  // every one left out denies only on a guessed class
  };
  std::map<RuleId, LeftOut> leftOut;
  std::map<RuleId, size_t> listed;
  size_t kept = 0;
  for (size_t i = 0; i < violations.size(); ++i) {
    Violation& violation = violations[i];
    if (++listed[violation.rule] <= kMaxViolationsPerRule) {
      if (i != kept) violations[kept] = std::move(violation);
      leftOut[violations[kept].rule].at = kept;
      ++kept;
      continue;
    }
    LeftOut& out = leftOut[violation.rule];
    ++out.count;
    out.mayChange =
        out.mayChange || violation.absent || violation.unconfirmed || violation.mayChange;
    out.restsOnGuess = out.restsOnGuess && violation.restsOnGuess;
  }
  violations.resize(kept);
  // Each rule's line after its last listed violation, the last place first
  // so that the places found stay right.
  std::map<size_t, Violation, std::greater<>> lines;
  for (const auto& [rule, out] : leftOut) {
    if (out.count == 0) continue;
    Violation more{"", moreLine(out.count), "", moreLine(out.count), rule};
    more.profile = violations[out.at].profile;
    more.mayChange = out.mayChange;
    more.restsOnGuess = out.restsOnGuess;
    lines.emplace(out.at, std::move(more));
  }
  for (auto& [at, more] : lines) {
    violations.insert(violations.begin() + static_cast<std::ptrdiff_t>(at) + 1, std::move(more));
  }
}

}  // namespace aiadmit
