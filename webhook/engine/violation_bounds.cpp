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

// Violations of a vector by index, hashed and compared by value.
struct ByValue {
  const std::vector<Violation>* list;
  size_t operator()(size_t index) const { return hashOf((*list)[index]); }
  bool operator()(size_t a, size_t b) const { return (*list)[a] == (*list)[b]; }
};
using IndexSet = std::unordered_set<size_t, ByValue, ByValue>;

IndexSet indexSet(const std::vector<Violation>& list) {
  const ByValue byValue{&list};
  return IndexSet(list.size(), byValue, byValue);
}

std::string moreLine(size_t count) {
  return std::to_string(count) + " more violation" + (count == 1 ? "" : "s") +
         " of this rule, not listed";
}

}  // namespace

void eraseRepeatedViolations(std::vector<Violation>& violations, size_t from) {
  if (violations.size() < 2) return;  // the usual review: no set to make
  IndexSet seen = indexSet(violations);
  size_t kept = 0;
  for (size_t i = 0; i < violations.size(); ++i) {
    if (i != kept) violations[kept] = std::move(violations[i]);
    // Those before `from` are kept as they are.
    if (seen.insert(kept).second || i < from) ++kept;
  }
  violations.resize(kept);
}

void eraseViolationsIn(std::vector<Violation>& violations, const std::vector<Violation>& existing) {
  if (existing.empty()) return;
  // One list holds both: the existing ones first, looked up by value.
  std::vector<Violation> all(existing);
  const size_t known = all.size();
  IndexSet seen = indexSet(all);
  for (size_t i = 0; i < known; ++i) seen.insert(i);
  std::vector<Violation> kept;
  for (Violation& violation : violations) {
    all.push_back(std::move(violation));
    if (seen.find(all.size() - 1) == seen.end()) kept.push_back(all.back());
  }
  violations = std::move(kept);
}

void capViolationsPerRule(std::vector<Violation>& violations) {
  if (violations.size() <= kMaxViolationsPerRule) return;
  struct LeftOut {
    size_t count = 0;
    size_t at = 0;  // where the rule's last listed violation is
    bool mayChange = false;
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
  }
  violations.resize(kept);
  // Each rule's line after its last listed violation, the last place first
  // so that the places found stay right.
  std::map<size_t, Violation, std::greater<>> lines;
  for (const auto& [rule, out] : leftOut) {
    if (out.count == 0) continue;
    Violation more{rule, "", moreLine(out.count), "", moreLine(out.count)};
    more.profile = violations[out.at].profile;
    more.mayChange = out.mayChange;
    lines.emplace(out.at, std::move(more));
  }
  for (auto& [at, more] : lines) {
    violations.insert(violations.begin() + static_cast<std::ptrdiff_t>(at) + 1, std::move(more));
  }
}

}  // namespace aiadmit
