// The loaded, immutable set of profiles and the selection of one per workload.
//
// Precedence (profiles/README.md, "Selection"):
//  1. The aiadmit.dev/profile annotation, when the named profile exists, has
//     the workload's class and its scope.namespaces admit the namespace
//     (matchLabels are not required: naming a profile is the explicit choice).
//     Otherwise the selection fails with an error, and nothing else is tried.
//     A profile that does not place the accelerator the workload asks for
//     (placesAccelerator) cannot apply either; a claim not resolved yet may
//     be the named profile's, and the name stands.
//  2. Otherwise, among the profiles of the workload's class whose scope
//     matches and that place the accelerator the workload asks for (each
//     workload goes to its own vendor's pool), the one with the highest
//     precedence: first by how the namespace matched (an exact name beats a
//     glob, which beats a profile with no namespace scope), then by the
//     number of matchLabels (more beats fewer). For a workload that names no
//     accelerator, among equals, the one that gives GPUs by default
//     (gpu.defaultCount > 0), then the first by name.
//  3. No matching profile: no profile; the workload is admitted as it is.
// Two profiles that could match one object with equal precedence (scopes
// that tie, and an accelerator both place or GPUs both give by default) are
// refused when the set is loaded (findScopeTie), so the winner of 2 is unique.
#pragma once

#include <array>
#include <compare>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "webhook/codec/json.h"
#include "webhook/model/workload_type.h"
#include "webhook/policy/accelerators.h"
#include "webhook/policy/profile.h"

namespace aiadmit {

enum class NamespaceMatch { Any = 0, Pattern = 1, Exact = 2 };

// How a profile's scope matched one object; a greater value wins.
struct Precedence {
  NamespaceMatch byNamespace = NamespaceMatch::Any;
  size_t labels = 0;
  auto operator<=>(const Precedence&) const = default;
  // "exact namespace, 1 label"
  std::string describe() const;
};

struct ProfileSelection {
  const Profile* profile = nullptr;
  std::string reason;  // why this profile, for warnings and `check`
  std::string error;   // set when the annotation names a profile that cannot apply
  // With an error: the profile the workload would get without the annotation
  // (null when none); its rule actions judge the error, so that a profile
  // that only warns does not start denying over a misspelt name.
  const Profile* withoutAnnotation = nullptr;
  // Set when profiles of the class match the workload's scope but none
  // places the accelerator it asks for: what to add, for the warning.
  std::string unplaced;
  // Then the profile its scope alone selects: nothing of it is injected or
  // judged, but its rule actions are the platform team's for the namespace.
  const Profile* byScopeAlone = nullptr;
  // The profile whose rule actions apply: the selected one, else the one
  // the annotation's error or an unplaced accelerator falls back to.
  const Profile* actionsFrom() const {
    return profile != nullptr ? profile
                              : (withoutAnnotation != nullptr ? withoutAnnotation : byScopeAlone);
  }
};

// An object that two scopes of the same class would both select with equal
// precedence: the proof that a set is ambiguous.
struct ScopeTie {
  std::string namespaceName;
  std::map<std::string, std::string> labels;
  Precedence precedence;
  // "namespace team-a with labels team=vision (namespace pattern, 1 label)"
  std::string describe() const;
};

// "every namespace", "namespaces ml-prod, team-*; labels team=vision".
std::string describeScope(const ProfileScope& scope);

// Whether profiles with scopes `a` and `b` (of the same class) can both
// select one object with equal precedence, and that object when they can.
// Exact: scopes that can never select the same object never tie.
std::optional<ScopeTie> findScopeTie(const ProfileScope& a, const ProfileScope& b);

class ProfileSet {
 public:
  // `workloadTypes`: the table the set's workloads are read by, loaded from
  // the same directory; null means the built-in rows alone.
  explicit ProfileSet(std::vector<Profile> profiles, std::string source = {},
                      std::shared_ptr<const WorkloadTypeTable> workloadTypes = nullptr);
  // Indexes point into the profiles; a set lives behind a shared_ptr.
  ProfileSet(const ProfileSet&) = delete;
  ProfileSet& operator=(const ProfileSet&) = delete;

  // Sorted by name.
  const std::vector<Profile>& profiles() const { return profiles_; }
  const std::string& source() const { return source_; }
  const Profile* find(std::string_view name) const;
  // The workload-type table loaded with the set: built-in rows and the
  // directory's WorkloadType documents. Never null.
  const WorkloadTypeTable& workloadTypes() const { return *workloadTypes_; }

  // `labels` are the object's labels and `templateLabels` its pod template's;
  // `requestedName` is the aiadmit.dev/profile annotation ("" when absent);
  // `ask` the accelerator the workload asks for.
  ProfileSelection select(WorkloadClass workloadClass, std::string_view ns, const JsonValue* labels,
                          const JsonValue* templateLabels, std::string_view requestedName,
                          const AcceleratorAsk& ask = {}) const;

  // Calls `visit` once for each profile, of any class, whose namespace scope
  // may admit `ns`, through the same index as select(): the cost follows the
  // profiles that concern the namespace, not the size of the set. Callers
  // still check labels (scopeMatches).
  void forEachForNamespace(std::string_view ns,
                           const std::function<void(const Profile&)>& visit) const;

  // How `profile`'s scope matches an object; nullopt when it does not.
  static std::optional<Precedence> match(const Profile& profile, std::string_view ns,
                                         const JsonValue* labels, const JsonValue* templateLabels);
  // Whether `profile`'s scope admits an object; `specificity` ranks matches
  // (1000 per NamespaceMatch step plus the number of matchLabels, at most 999).
  static bool scopeMatches(const Profile& profile, std::string_view ns, const JsonValue* labels,
                           const JsonValue* templateLabels, int* specificity);
  // Whether `profile`'s scope.namespaces admit `ns` (labels are not looked at).
  static bool admitsNamespace(const Profile& profile, std::string_view ns);

 private:
  struct ClassIndex {
    std::unordered_map<std::string_view, std::vector<const Profile*>> byExactNamespace;
    // Profiles with namespace patterns, by each pattern's literal prefix (the
    // text before its first * or ?), so that a request looks only at
    // patterns that can match its namespace.
    std::unordered_map<std::string_view, std::vector<const Profile*>> byPatternPrefix;
    std::vector<size_t> patternPrefixLengths;  // sorted, distinct
    std::vector<const Profile*> unscoped;
  };

  std::string describeChoices(WorkloadClass workloadClass, std::string_view ns,
                              const AcceleratorAsk& ask = {}) const;

  std::vector<Profile> profiles_;
  std::string source_;
  std::shared_ptr<const WorkloadTypeTable> workloadTypes_;
  std::unordered_map<std::string_view, const Profile*> byName_;
  std::array<ClassIndex, 4> byClass_;
};

}  // namespace aiadmit
