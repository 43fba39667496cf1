#include "webhook/profile_set.h"

#include <algorithm>

namespace aiadmit {

namespace {

bool isGlob(std::string_view pattern) {
  return pattern.find_first_of("*?") != std::string_view::npos;
}

bool labelMatches(const JsonValue* labels, const JsonValue* templateLabels,
                  const std::string& key, const std::string& value) {
  const JsonValue* own = member(labels, key);
  if (own != nullptr && own->IsString()) return stringOf(own) == value;
  return stringOf(member(templateLabels, key)) == value && member(templateLabels, key) != nullptr;
}

size_t classIndex(WorkloadClass workloadClass) { return static_cast<size_t>(workloadClass); }

}  // namespace

ProfileSet::ProfileSet(std::vector<Profile> profiles, std::string source)
    : profiles_(std::move(profiles)), source_(std::move(source)) {
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
    bool anyGlob = false;
    for (const std::string& pattern : profile.scope.namespaces) {
      if (isGlob(pattern)) {
        anyGlob = true;
      } else {
        index.byExactNamespace[pattern].push_back(&profile);
      }
    }
    if (anyGlob) index.byGlob.push_back(&profile);
  }
}

const Profile* ProfileSet::find(std::string_view name) const {
  auto it = byName_.find(name);
  return it == byName_.end() ? nullptr : it->second;
}

bool ProfileSet::scopeMatches(const Profile& profile, std::string_view ns, const JsonValue* labels,
                              const JsonValue* templateLabels, int* specificity) {
  int namespaceRank = 0;
  if (!profile.scope.namespaces.empty()) {
    for (const std::string& pattern : profile.scope.namespaces) {
      if (!isGlob(pattern) && pattern == ns) {
        namespaceRank = 2;
        break;
      }
      if (isGlob(pattern) && globMatch(pattern, ns)) namespaceRank = 1;
    }
    if (namespaceRank == 0) return false;
  }
  for (const auto& [key, value] : profile.scope.matchLabels) {
    if (!labelMatches(labels, templateLabels, key, value)) return false;
  }
  if (specificity != nullptr) {
    *specificity = namespaceRank * 1000 + static_cast<int>(profile.scope.matchLabels.size());
  }
  return true;
}

ProfileSelection ProfileSet::select(WorkloadClass workloadClass, std::string_view ns,
                                    const JsonValue* labels, const JsonValue* templateLabels,
                                    std::string_view requestedName) const {
  ProfileSelection selection;
  if (!requestedName.empty()) {
    const Profile* requested = find(requestedName);
    if (requested == nullptr) {
      selection.error = "profile \"" + std::string(requestedName) + "\" does not exist";
    } else if (requested->workloadClass != workloadClass) {
      selection.error = "profile \"" + std::string(requestedName) + "\" is for class " +
                        std::string(className(requested->workloadClass)) + ", not " +
                        std::string(className(workloadClass));
    } else if (!scopeMatches(*requested, ns, labels, templateLabels, nullptr)) {
      selection.error = "profile \"" + std::string(requestedName) +
                        "\" is not allowed in namespace " + std::string(ns);
    } else {
      selection.profile = requested;
      selection.reason = "annotation aiadmit.dev/profile";
    }
    return selection;
  }

  const ClassIndex& index = byClass_[classIndex(workloadClass)];
  int best = -1;
  auto consider = [&](const Profile* candidate) {
    int specificity = 0;
    if (scopeMatches(*candidate, ns, labels, templateLabels, &specificity) && specificity > best) {
      best = specificity;
      selection.profile = candidate;
    }
  };
  if (auto exact = index.byExactNamespace.find(std::string(ns));
      exact != index.byExactNamespace.end()) {
    for (const Profile* candidate : exact->second) consider(candidate);
  }
  for (const Profile* candidate : index.byGlob) consider(candidate);
  for (const Profile* candidate : index.unscoped) consider(candidate);

  if (selection.profile != nullptr) {
    selection.reason = best >= 2000   ? "scope: namespace " + std::string(ns)
                       : best >= 1000 ? "scope: namespace pattern"
                       : best > 0     ? "scope: labels"
                                      : "default for class " + std::string(className(workloadClass));
  }
  return selection;
}

}  // namespace aiadmit
