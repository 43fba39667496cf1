// The loaded, immutable set of profiles and the selection of one per workload.
//
// Precedence (profiles/README.md): the aiadmit.dev/profile annotation when the
// named profile has the workload's class and its scope admits the namespace;
// otherwise, among profiles of the workload's class whose scope matches, the
// most specific: an exact namespace beats a namespace glob, which beats no
// namespace scope; then more matchLabels beat fewer. Two profiles that could
// tie are refused when the set is loaded.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "webhook/json.h"
#include "webhook/profile.h"

namespace aiadmit {

struct ProfileSelection {
  const Profile* profile = nullptr;
  std::string reason;  // why this profile, for warnings and `check`
  std::string error;   // set when the annotation names a profile that cannot apply
};

class ProfileSet {
 public:
  explicit ProfileSet(std::vector<Profile> profiles, std::string source = {});

  const std::vector<Profile>& profiles() const { return profiles_; }
  const std::string& source() const { return source_; }
  const Profile* find(std::string_view name) const;

  // `labels` are the object's labels and `templateLabels` its pod template's.
  ProfileSelection select(WorkloadClass workloadClass, std::string_view ns,
                          const JsonValue* labels, const JsonValue* templateLabels,
                          std::string_view requestedName) const;

  // Whether `profile`'s scope admits an object; `specificity` ranks matches.
  static bool scopeMatches(const Profile& profile, std::string_view ns, const JsonValue* labels,
                           const JsonValue* templateLabels, int* specificity);

 private:
  struct ClassIndex {
    std::unordered_map<std::string, std::vector<const Profile*>> byExactNamespace;
    std::vector<const Profile*> byGlob;
    std::vector<const Profile*> unscoped;
  };

  std::vector<Profile> profiles_;
  std::string source_;
  std::unordered_map<std::string_view, const Profile*> byName_;
  std::array<ClassIndex, 4> byClass_;
};

}  // namespace aiadmit
