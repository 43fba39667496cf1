#include "webhook/policy/profile_set.h"

#include <algorithm>
#include <set>

namespace aiadmit {

namespace {

size_t classIndex(WorkloadClass workloadClass) {
  return static_cast<size_t>(workloadClass);
}

// The object's own label wins; the pod template's counts for keys the object lacks.
bool labelMatches(const JsonValue* labels, const JsonValue* templateLabels, const std::string& key,
                  const std::string& value) {
  const JsonValue* own = member(labels, key);
  if (own != nullptr && own->IsString()) return stringOf(own) == value;
  const JsonValue* inherited = member(templateLabels, key);
  return inherited != nullptr && inherited->IsString() && stringOf(inherited) == value;
}

struct ScopeHit {
  Precedence precedence;
  std::string_view pattern;  // the namespace entry that matched; empty for Any
};

std::optional<ScopeHit> matchScope(const Profile& profile, std::string_view ns,
                                   const JsonValue* labels, const JsonValue* templateLabels) {
  ScopeHit hit;
  if (!profile.scope.namespaces.empty()) {
    for (const std::string& pattern : profile.scope.namespaces) {
      if (!isGlob(pattern)) {
        if (pattern == ns) {
          hit.precedence.byNamespace = NamespaceMatch::Exact;
          hit.pattern = pattern;
          break;
        }
      } else if (hit.precedence.byNamespace == NamespaceMatch::Any && globMatch(pattern, ns)) {
        hit.precedence.byNamespace = NamespaceMatch::Pattern;
        hit.pattern = pattern;
      }
    }
    if (hit.precedence.byNamespace == NamespaceMatch::Any) return std::nullopt;
  }
  for (const auto& [key, value] : profile.scope.matchLabels) {
    if (!labelMatches(labels, templateLabels, key, value)) return std::nullopt;
  }
  hit.precedence.labels = profile.scope.matchLabels.size();
  return hit;
}

std::string describeLabels(const std::map<std::string, std::string>& labels) {
  std::string out;
  for (const auto& [key, value] : labels) {
    if (!out.empty()) out += ",";
    out += key + "=" + value;
  }
  return out;
}

// Where a profile names what `ask` asks for; the name itself is in the
// message already, and a warning line has 120 characters.
std::string placingFieldOf(const AcceleratorAsk& ask) {
  return ask.resourceName.empty() ? "it in gpu.deviceClasses" : "it as gpu.resourceName";
}

// Why no profile places `ask`, and what to do: add a profile, or (for a
// claim not known yet) create what it names first.
std::string unplacedMessage(WorkloadClass workloadClass, const AcceleratorAsk& ask) {
  if (!ask.pendingClaim.empty()) {
    return "no pool until its claims resolve (" + ask.pendingClaim +
           "); create the claim template before the workload";
  }
  return "no " + std::string(className(workloadClass)) + " profile places " + ask.describe() +
         "; add one with " + placingFieldOf(ask);
}

std::string describeHit(const Profile& profile, const ScopeHit& hit, std::string_view ns) {
  std::string out;
  switch (hit.precedence.byNamespace) {
    case NamespaceMatch::Exact:
      out = "scope namespace " + std::string(ns);
      break;
    case NamespaceMatch::Pattern:
      out = "scope namespace pattern " + std::string(hit.pattern) + " matches " + std::string(ns);
      break;
    case NamespaceMatch::Any:
      break;
  }
  if (!profile.scope.matchLabels.empty()) {
    out += out.empty() ? "scope labels " : ", labels ";
    out += describeLabels(profile.scope.matchLabels);
  }
  if (out.empty()) out = "default for class " + std::string(className(profile.workloadClass));
  return out;
}

// Characters of a glob before its first star, or after its last one, must
// agree ('?' agrees with anything) for two globs to share a match. A cheap
// test that spares most pairs the automaton.
bool globEndsAgree(std::string_view a, std::string_view b) {
  auto agree = [](char x, char y) { return x == y || x == '?' || y == '?'; };
  const size_t headA = std::min(a.find('*'), a.size());
  const size_t headB = std::min(b.find('*'), b.size());
  for (size_t i = 0; i < std::min(headA, headB); ++i) {
    if (!agree(a[i], b[i])) return false;
  }
  const size_t tailA = a.size() - (a.rfind('*') == std::string_view::npos ? 0 : a.rfind('*') + 1);
  const size_t tailB = b.size() - (b.rfind('*') == std::string_view::npos ? 0 : b.rfind('*') + 1);
  for (size_t i = 1; i <= std::min(tailA, tailB); ++i) {
    if (!agree(a[a.size() - i], b[b.size() - i])) return false;
  }
  return true;
}

}  // namespace

std::string Precedence::describe() const {
  std::string out;
  switch (byNamespace) {
    case NamespaceMatch::Exact:
      out = "exact namespace";
      break;
    case NamespaceMatch::Pattern:
      out = "namespace pattern";
      break;
    case NamespaceMatch::Any:
      out = "any namespace";
      break;
  }
  return out + ", " + std::to_string(labels) + (labels == 1 ? " label" : " labels");
}

std::string ScopeTie::describe() const {
  std::string out = "namespace " + namespaceName;
  if (!labels.empty()) out += " with labels " + describeLabels(labels);
  return out + " (" + precedence.describe() + ")";
}

std::string describeScope(const ProfileScope& scope) {
  std::string out;
  if (scope.namespaces.empty()) {
    out = "every namespace";
  } else {
    out = scope.namespaces.size() == 1 ? "namespace " : "namespaces ";
    for (size_t i = 0; i < scope.namespaces.size(); ++i) {
      out += (i == 0 ? "" : ", ") + scope.namespaces[i];
    }
  }
  if (!scope.matchLabels.empty()) out += "; labels " + describeLabels(scope.matchLabels);
  return out;
}

std::optional<ScopeTie> findScopeTie(const ProfileScope& a, const ProfileScope& b) {
  // Equal precedence needs as many labels; one object can carry both sets
  // unless they disagree on a key.
  if (a.matchLabels.size() != b.matchLabels.size()) return std::nullopt;
  for (const auto& [key, value] : b.matchLabels) {
    auto it = a.matchLabels.find(key);
    if (it != a.matchLabels.end() && it->second != value) return std::nullopt;
  }
  auto tie = [&](std::string namespaceName, NamespaceMatch byNamespace) {
    ScopeTie found;
    found.namespaceName = std::move(namespaceName);
    found.labels = a.matchLabels;
    found.labels.insert(b.matchLabels.begin(), b.matchLabels.end());
    found.precedence = {byNamespace, a.matchLabels.size()};
    return found;
  };

  // A scope without namespaces matches everywhere at the lowest rank, so it
  // ties only with another such scope.
  if (a.namespaces.empty() || b.namespaces.empty()) {
    if (!a.namespaces.empty() || !b.namespaces.empty()) return std::nullopt;
    return tie("default", NamespaceMatch::Any);
  }

  std::optional<std::string_view> commonExact;
  for (const std::string& x : a.namespaces) {
    if (isGlob(x)) continue;
    for (const std::string& y : b.namespaces) {
      if (x == y && (!commonExact || x < *commonExact)) commonExact = x;
    }
  }
  if (commonExact) return tie(std::string(*commonExact), NamespaceMatch::Exact);

  // Both match by pattern only where neither lists the namespace exactly.
  std::vector<std::string_view> excluded;
  bool excludedKnown = false;
  for (const std::string& x : a.namespaces) {
    if (!isGlob(x)) continue;
    for (const std::string& y : b.namespaces) {
      if (!isGlob(y) || !globEndsAgree(x, y)) continue;
      if (!excludedKnown) {
        for (const auto* scope : {&a, &b}) {
          for (const std::string& entry : scope->namespaces) {
            if (!isGlob(entry)) excluded.push_back(entry);
          }
        }
        excludedKnown = true;
      }
      if (auto name = namespaceMatchedByAll({x, y}, excluded)) {
        return tie(std::move(*name), NamespaceMatch::Pattern);
      }
    }
  }
  return std::nullopt;
}

ProfileSet::ProfileSet(std::vector<Profile> profiles, std::string source,
                       std::shared_ptr<const WorkloadTypeTable> workloadTypes)
    : profiles_(std::move(profiles)),
      source_(std::move(source)),
      workloadTypes_(workloadTypes != nullptr ? std::move(workloadTypes)
                                              : WorkloadTypeTable::builtIn()) {
  // Stable order makes every scan below deterministic.
  std::sort(profiles_.begin(), profiles_.end(),
            [](const Profile& a, const Profile& b) { return a.name < b.name; });
  for (const Profile& profile : profiles_) {
    byName_.emplace(profile.name, &profile);
    ClassIndex& index = byClass_[classIndex(profile.workloadClass)];
    if (profile.scope.namespaces.empty()) {
      index.unscoped.push_back(&profile);
      continue;
    }
    for (const std::string& pattern : profile.scope.namespaces) {
      const std::string_view prefix =
          std::string_view(pattern).substr(0, pattern.find_first_of("*?"));
      auto& bucket =
          isGlob(pattern) ? index.byPatternPrefix[prefix] : index.byExactNamespace[pattern];
      if (bucket.empty() || bucket.back() != &profile) bucket.push_back(&profile);
      if (isGlob(pattern)) index.patternPrefixLengths.push_back(prefix.size());
    }
  }
  for (ClassIndex& index : byClass_) {
    auto& lengths = index.patternPrefixLengths;
    std::sort(lengths.begin(), lengths.end());
    lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
  }
}

const Profile* ProfileSet::find(std::string_view name) const {
  auto it = byName_.find(name);
  return it == byName_.end() ? nullptr : it->second;
}

std::optional<Precedence> ProfileSet::match(const Profile& profile, std::string_view ns,
                                            const JsonValue* labels,
                                            const JsonValue* templateLabels) {
  auto hit = matchScope(profile, ns, labels, templateLabels);
  if (!hit) return std::nullopt;
  return hit->precedence;
}

bool ProfileSet::scopeMatches(const Profile& profile, std::string_view ns, const JsonValue* labels,
                              const JsonValue* templateLabels, int* specificity) {
  const auto precedence = match(profile, ns, labels, templateLabels);
  if (!precedence) return false;
  if (specificity != nullptr) {
    *specificity = static_cast<int>(precedence->byNamespace) * 1000 +
                   static_cast<int>(std::min<size_t>(precedence->labels, 999));
  }
  return true;
}

bool ProfileSet::admitsNamespace(const Profile& profile, std::string_view ns) {
  if (profile.scope.namespaces.empty()) return true;
  return std::any_of(profile.scope.namespaces.begin(), profile.scope.namespaces.end(),
                     [&](const std::string& pattern) { return globMatch(pattern, ns); });
}

std::string ProfileSet::describeChoices(WorkloadClass workloadClass, std::string_view ns,
                                        const AcceleratorAsk& ask) const {
  std::string names;
  for (const Profile& profile : profiles_) {
    if (profile.workloadClass != workloadClass || !admitsNamespace(profile, ns) ||
        !placesAccelerator(profile, ask)) {
      continue;
    }
    names += (names.empty() ? "" : ", ") + profile.name;
  }
  const std::string cls(className(workloadClass));
  const std::string what = ask.any() ? ask.describe() : "";
  if (names.empty()) {
    return "no profile of class " + cls + (what.empty() ? "" : " that places " + what) +
           " applies to namespace " + std::string(ns);
  }
  return "profiles of class " + cls + (what.empty() ? "" : " that place " + what) +
         " for namespace " + std::string(ns) + ": " + names;
}

ProfileSelection ProfileSet::select(WorkloadClass workloadClass, std::string_view ns,
                                    const JsonValue* labels, const JsonValue* templateLabels,
                                    std::string_view requestedName,
                                    const AcceleratorAsk& ask) const {
  ProfileSelection selection;
  if (!requestedName.empty()) {
    const std::string quoted = "profile \"" + std::string(requestedName) + "\"";
    const Profile* requested = find(requestedName);
    if (requested == nullptr) {
      selection.error =
          quoted + " does not exist (" + describeChoices(workloadClass, ns, ask) + ")";
    } else if (requested->workloadClass != workloadClass) {
      selection.error = quoted + " is for class " +
                        std::string(className(requested->workloadClass)) + ", not " +
                        std::string(className(workloadClass)) + " (" +
                        describeChoices(workloadClass, ns, ask) + ")";
    } else if (!admitsNamespace(*requested, ns)) {
      selection.error = quoted + " is not allowed in namespace " + std::string(ns) + " (" +
                        describeChoices(workloadClass, ns, ask) + ")";
    } else if (ask.pendingClaim.empty() && !placesAccelerator(*requested, ask)) {
      selection.error = quoted + " places " + describePlaced(*requested) + ", not " +
                        ask.describe() + " (" + describeChoices(workloadClass, ns, ask) + ")";
    } else {
      selection.profile = requested;
      selection.reason = "annotation " + annotationSetting(kProfileAnnotation, requested->name);
    }
    if (!selection.error.empty()) {
      selection.withoutAnnotation =
          select(workloadClass, ns, labels, templateLabels, "", ask).profile;
    }
    return selection;
  }

  const ClassIndex& index = byClass_[classIndex(workloadClass)];
  const Profile* best = nullptr;
  ScopeHit bestHit;
  bool unplaced = false;
  // Among equal scopes, a workload that names no accelerator goes to the
  // profile that gives GPUs by default.
  auto givesByDefault = [&](const Profile* profile) {
    return !ask.any() && profile->gpu.defaultCount > 0;
  };
  auto consider = [&](const Profile* candidate) {
    const auto hit = matchScope(*candidate, ns, labels, templateLabels);
    if (!hit) return;
    if (!placesAccelerator(*candidate, ask)) {
      unplaced = true;
      return;
    }
    // Sets from the loader never tie; a tie in a hand-built set goes to the
    // first name so that the answer is still deterministic.
    if (best == nullptr || hit->precedence > bestHit.precedence ||
        (hit->precedence == bestHit.precedence &&
         std::pair(!givesByDefault(candidate), candidate->name) <
             std::pair(!givesByDefault(best), best->name))) {
      best = candidate;
      bestHit = *hit;
    }
  };
  if (auto exact = index.byExactNamespace.find(ns); exact != index.byExactNamespace.end()) {
    for (const Profile* candidate : exact->second) consider(candidate);
  }
  // The namespace ranks first, so a weaker kind of namespace match never wins
  // over one already found.
  if (best == nullptr || bestHit.precedence.byNamespace < NamespaceMatch::Exact) {
    for (size_t length : index.patternPrefixLengths) {
      if (length > ns.size()) break;
      const auto bucket = index.byPatternPrefix.find(ns.substr(0, length));
      if (bucket == index.byPatternPrefix.end()) continue;
      for (const Profile* candidate : bucket->second) consider(candidate);
    }
  }
  if (best == nullptr) {
    for (const Profile* candidate : index.unscoped) consider(candidate);
  }
  if (best != nullptr) {
    selection.profile = best;
    selection.reason = describeHit(*best, bestHit, ns);
  } else if (unplaced) {
    // Within a warning line: `aiadmit profiles init` and the docs say more.
    selection.unplaced = unplacedMessage(workloadClass, ask);
    selection.byScopeAlone = select(workloadClass, ns, labels, templateLabels, "").profile;
  }
  return selection;
}

void ProfileSet::forEachForNamespace(std::string_view ns,
                                     const std::function<void(const Profile&)>& visit) const {
  std::vector<const Profile*> seen;  // a profile with several patterns sits in several buckets
  auto once = [&](const Profile* profile) {
    if (std::find(seen.begin(), seen.end(), profile) != seen.end()) return;
    seen.push_back(profile);
    if (admitsNamespace(*profile, ns)) visit(*profile);
  };
  for (const ClassIndex& index : byClass_) {
    if (auto exact = index.byExactNamespace.find(ns); exact != index.byExactNamespace.end()) {
      for (const Profile* profile : exact->second) once(profile);
    }
    for (size_t length : index.patternPrefixLengths) {
      if (length > ns.size()) break;
      const auto bucket = index.byPatternPrefix.find(ns.substr(0, length));
      if (bucket == index.byPatternPrefix.end()) continue;
      for (const Profile* profile : bucket->second) once(profile);
    }
    for (const Profile* profile : index.unscoped) once(profile);
  }
}

}  // namespace aiadmit
