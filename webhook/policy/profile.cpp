#include "webhook/policy/profile.h"

#include <algorithm>
#include <cstdint>

namespace aiadmit {

bool Profile::allowsResource(std::string_view resourceName) const {
  if (resourceName == gpu.resourceName) return true;
  return std::any_of(gpu.allowedResources.begin(), gpu.allowedResources.end(),
                     [&](const std::string& allowed) { return globMatch(allowed, resourceName); });
}

bool Profile::allowsPriorityClass(std::string_view priorityClass) const {
  if (priorityClass == scheduling.priorityClassName) return true;
  return std::find(scheduling.allowedPriorityClasses.begin(),
                   scheduling.allowedPriorityClasses.end(),
                   priorityClass) != scheduling.allowedPriorityClasses.end();
}

int Probes::startupFailureThreshold() const {
  const int period = std::max(startup.periodSeconds, 1);
  return std::max(1, (startupBudgetSeconds + period - 1) / period);
}

bool globMatch(std::string_view pattern, std::string_view text) {
  size_t p = 0, t = 0, starP = std::string_view::npos, starT = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] != '*' && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      starP = p++;
      starT = t;
    } else if (starP != std::string_view::npos) {
      p = starP + 1;
      t = ++starT;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool isGlob(std::string_view pattern) {
  return pattern.find_first_of("*?") != std::string_view::npos;
}

bool isNamespaceName(std::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return name.front() != '-' && name.back() != '-';
}

namespace {

constexpr size_t kMaxNamespaceLength = 63;

// Where the name syntax stands after a prefix: nothing read yet, last
// character a letter or digit (a complete name), or last character '-'.
enum NameState : uint8_t { kNameEmpty = 0, kNameAlnum = 1, kNameDash = 2, kNameStates = 3 };

int nameStep(int state, char c) {
  if (c != '-') return kNameAlnum;
  return state == kNameEmpty ? -1 : kNameDash;
}

// The glob positions a pattern can stand at after `position`, skipping stars
// that match nothing.
void closeGlob(std::string_view pattern, size_t position, std::vector<size_t>& out) {
  for (;;) {
    if (std::find(out.begin(), out.end(), position) == out.end()) out.push_back(position);
    if (position >= pattern.size() || pattern[position] != '*') return;
    ++position;
  }
}

void stepGlob(std::string_view pattern, size_t position, char c, std::vector<size_t>& out) {
  if (position >= pattern.size()) return;
  if (pattern[position] == '*') {
    closeGlob(pattern, position, out);
  } else if (pattern[position] == '?' || pattern[position] == c) {
    closeGlob(pattern, position + 1, out);
  }
}

// The product of one glob automaton per pattern and the name syntax. A state
// is one position per pattern plus a NameState, numbered in mixed radix.
class NamespaceProduct {
 public:
  NamespaceProduct(const std::vector<std::string_view>& patterns,
                   const std::vector<std::string_view>& excluded)
      : patterns_(patterns) {
    states_ = kNameStates;
    for (std::string_view pattern : patterns_) states_ *= pattern.size() + 1;
    // Characters that neither a pattern nor an excluded name spells out
    // behave alike, so one of them stands for all: letters first, for
    // readable examples.
    for (char c : std::string_view("abcdefghijklmnopqrstuvwxyz0123456789-")) {
      bool literal = c == '-';
      for (const std::vector<std::string_view>* texts : {&patterns, &excluded}) {
        for (std::string_view text : *texts) {
          if (text.find(c) != std::string_view::npos) literal = true;
        }
      }
      if (literal) {
        alphabet_.push_back(c);
      } else if (!haveOther_) {
        alphabet_.push_back(c);
        haveOther_ = true;
      }
    }
    computeDistances();
  }

  // A subset of states: one set of positions per pattern and one NameState.
  struct Subset {
    std::vector<std::vector<size_t>> positions;
    int name = kNameEmpty;
  };

  Subset initial() const {
    Subset subset;
    for (std::string_view pattern : patterns_) {
      subset.positions.emplace_back();
      closeGlob(pattern, 0, subset.positions.back());
    }
    return subset;
  }

  // False when no state survives `c`.
  bool step(const Subset& from, char c, Subset& to) const {
    to.name = nameStep(from.name, c);
    if (to.name < 0) return false;
    to.positions.assign(patterns_.size(), {});
    for (size_t i = 0; i < patterns_.size(); ++i) {
      for (size_t position : from.positions[i])
        stepGlob(patterns_[i], position, c, to.positions[i]);
      if (to.positions[i].empty()) return false;
    }
    return true;
  }

  bool accepts(const Subset& subset) const {
    if (subset.name != kNameAlnum) return false;
    for (size_t i = 0; i < patterns_.size(); ++i) {
      const auto& set = subset.positions[i];
      if (std::find(set.begin(), set.end(), patterns_[i].size()) == set.end()) return false;
    }
    return true;
  }

  // Fewest characters from any state of `subset` to a name every pattern matches.
  size_t distance(const Subset& subset) const {
    size_t best = kUnreachable;
    std::vector<size_t> index(patterns_.size(), 0);
    for (;;) {
      size_t state = 0;
      for (size_t i = 0; i < patterns_.size(); ++i) {
        state = state * (patterns_[i].size() + 1) + subset.positions[i][index[i]];
      }
      best = std::min(best, distance_[state * kNameStates + static_cast<size_t>(subset.name)]);
      size_t i = patterns_.size();
      while (i > 0 && ++index[i - 1] == subset.positions[i - 1].size()) index[--i] = 0;
      if (i == 0) return best;
    }
  }

  const std::string& alphabet() const { return alphabet_; }
  static constexpr size_t kUnreachable = static_cast<size_t>(-1);

 private:
  void decode(size_t state, std::vector<size_t>& positions, int& name) const {
    name = static_cast<int>(state % kNameStates);
    state /= kNameStates;
    positions.assign(patterns_.size(), 0);
    for (size_t i = patterns_.size(); i-- > 0;) {
      positions[i] = state % (patterns_[i].size() + 1);
      state /= patterns_[i].size() + 1;
    }
  }

  size_t encode(const std::vector<size_t>& positions, int name) const {
    size_t state = 0;
    for (size_t i = 0; i < patterns_.size(); ++i) {
      state = state * (patterns_[i].size() + 1) + positions[i];
    }
    return state * kNameStates + static_cast<size_t>(name);
  }

  // Breadth-first from the accepting states over reversed transitions.
  void computeDistances() {
    std::vector<std::vector<size_t>> reverse(states_);
    std::vector<size_t> positions;
    std::vector<std::vector<size_t>> next(patterns_.size());
    for (size_t state = 0; state < states_; ++state) {
      int name = 0;
      decode(state, positions, name);
      for (char c : alphabet_) {
        const int nextName = nameStep(name, c);
        if (nextName < 0) continue;
        bool dead = false;
        for (size_t i = 0; i < patterns_.size() && !dead; ++i) {
          next[i].clear();
          stepGlob(patterns_[i], positions[i], c, next[i]);
          dead = next[i].empty();
        }
        if (dead) continue;
        std::vector<size_t> index(patterns_.size(), 0), target(patterns_.size());
        for (;;) {
          for (size_t i = 0; i < patterns_.size(); ++i) target[i] = next[i][index[i]];
          reverse[encode(target, nextName)].push_back(state);
          size_t i = patterns_.size();
          while (i > 0 && ++index[i - 1] == next[i - 1].size()) index[--i] = 0;
          if (i == 0) break;
        }
      }
    }
    distance_.assign(states_, kUnreachable);
    std::vector<size_t> queue;
    for (size_t state = 0; state < states_; ++state) {
      int name = 0;
      decode(state, positions, name);
      bool accepting = name == kNameAlnum;
      for (size_t i = 0; i < patterns_.size() && accepting; ++i) {
        accepting = positions[i] == patterns_[i].size();
      }
      if (accepting) {
        distance_[state] = 0;
        queue.push_back(state);
      }
    }
    for (size_t head = 0; head < queue.size(); ++head) {
      for (size_t previous : reverse[queue[head]]) {
        if (distance_[previous] != kUnreachable) continue;
        distance_[previous] = distance_[queue[head]] + 1;
        queue.push_back(previous);
      }
    }
  }

  std::vector<std::string_view> patterns_;
  size_t states_ = 0;
  std::string alphabet_;
  bool haveOther_ = false;
  std::vector<size_t> distance_;
};

// Depth-first over names in order of distance to acceptance, so that the
// first name found is a shortest one; every subset entered can still reach
// an accepted name within the length limit, so each dead end costs at most
// one excluded name.
bool searchNamespace(const NamespaceProduct& product, const NamespaceProduct::Subset& subset,
                     std::string& prefix, const std::vector<std::string_view>& excluded) {
  if (product.accepts(subset) &&
      std::find(excluded.begin(), excluded.end(), prefix) == excluded.end()) {
    return true;
  }
  if (prefix.size() == kMaxNamespaceLength) return false;
  struct Child {
    size_t distance;
    size_t order;
    NamespaceProduct::Subset subset;
  };
  std::vector<Child> children;
  for (size_t i = 0; i < product.alphabet().size(); ++i) {
    NamespaceProduct::Subset next;
    if (!product.step(subset, product.alphabet()[i], next)) continue;
    const size_t distance = product.distance(next);
    if (distance == NamespaceProduct::kUnreachable ||
        prefix.size() + 1 + distance > kMaxNamespaceLength) {
      continue;
    }
    children.push_back({distance, i, std::move(next)});
  }
  std::sort(children.begin(), children.end(), [](const Child& a, const Child& b) {
    return a.distance != b.distance ? a.distance < b.distance : a.order < b.order;
  });
  for (const Child& child : children) {
    prefix.push_back(product.alphabet()[child.order]);
    if (searchNamespace(product, child.subset, prefix, excluded)) return true;
    prefix.pop_back();
  }
  return false;
}

}  // namespace

std::optional<std::string> namespaceMatchedByAll(const std::vector<std::string_view>& patterns,
                                                 const std::vector<std::string_view>& excluded) {
  for (std::string_view pattern : patterns) {
    if (pattern.size() > 4 * kMaxNamespaceLength) return std::nullopt;
  }
  // Exact names need no automaton.
  for (std::string_view pattern : patterns) {
    if (isGlob(pattern)) continue;
    if (!isNamespaceName(pattern)) return std::nullopt;
    for (std::string_view other : patterns) {
      if (!globMatch(other, pattern)) return std::nullopt;
    }
    if (std::find(excluded.begin(), excluded.end(), pattern) != excluded.end()) {
      return std::nullopt;
    }
    return std::string(pattern);
  }
  const NamespaceProduct product(patterns, excluded);
  const NamespaceProduct::Subset start = product.initial();
  if (product.distance(start) == NamespaceProduct::kUnreachable) return std::nullopt;
  std::string name;
  if (!searchNamespace(product, start, name, excluded)) return std::nullopt;
  return name;
}

}  // namespace aiadmit
