// Reads profile YAML strictly into immutable Profile objects. Every problem is
// reported with file, line, column and field, and a set with any error is
// refused as a whole.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "webhook/model/workload_type.h"
#include "webhook/policy/profile_set.h"

namespace aiadmit {

// A WorkloadType document's type and where it was written, for set-level
// messages (webhook/policy/workload_type_loader.h reads them).
struct WorkloadTypeDocument {
  WorkloadType type;
  std::string name;  // metadata.name
  std::string file;
  SourceLocation nameLocation;
  SourceLocation kindLocation;  // of spec.kind
};

struct ProfileError {
  std::string file;
  int line = 0;       // 1-based; 0 when the error is about the whole file or set
  int column = 0;     // 1-based
  std::string field;  // "spec.placement.tolerations[0].effect"
  std::string message;

  // "profiles/training.yaml:12:5: spec.placement.tolerations[0].effect: ..."
  std::string format() const;
};

struct ProfileLoadResult {
  std::shared_ptr<const ProfileSet> set;  // null when errors is not empty
  // The built-in workload types and the directory's WorkloadType documents;
  // null when errors is not empty. Loaded, swapped and kept with the set.
  std::shared_ptr<const WorkloadTypeTable> workloadTypes;
  std::vector<ProfileError> errors;
  bool ok() const { return errors.empty() && set != nullptr; }
};

// `switches` are the keys spec.mutations takes, with their defaults: the
// mutators declare them and mutationSwitches() (mutators/registry.cpp)
// gathers them, in a layer this one does not see.

// Every *.yaml and *.yml file directly in `directory`, in name order; hidden
// entries are skipped. In a ConfigMap volume the files are read through the
// ..data symlink, resolved once, so that a concurrent update is seen whole or
// not at all. Errors are sorted by file, line and column.
ProfileLoadResult loadProfileDirectory(const std::string& directory,
                                       std::span<const MutationSwitch> switches);

// Whether the server reads a file of this name as profiles: *.yaml or *.yml,
// not hidden (a ConfigMap volume's ..data and version directories are).
bool isProfileFileName(std::string_view name);

// One file of a profile set as text: its name (a ConfigMap key) and contents.
struct ProfileFileText {
  std::string name;
  std::string text;
};

// The set that `files` make, as loadProfileDirectory would load them from a
// directory holding them: those whose name isProfileFileName, in name order,
// the others ignored. `source` names the set in set-level messages ("no
// profiles found"). What `aiadmit serve` checks a profiles ConfigMap with
// before the API server stores it.
ProfileLoadResult loadProfileFiles(std::vector<ProfileFileText> files, std::string source,
                                   std::span<const MutationSwitch> switches);

// Profiles from YAML text; `fileName` is used in messages. Exposed for tests.
ProfileLoadResult loadProfileText(std::string_view text, const std::string& fileName,
                                  std::span<const MutationSwitch> switches);

// Parses documents of one file into `out`, appending errors. Used by both of
// the above and by tests that combine files. WorkloadType documents go to
// `workloadTypes`; without it they are refused.
void parseProfileDocuments(std::string_view text, const std::string& fileName,
                           std::span<const MutationSwitch> switches, std::vector<Profile>& out,
                           std::vector<ProfileError>& errors,
                           std::vector<WorkloadTypeDocument>* workloadTypes = nullptr);

// Set-level checks (duplicate names, profiles that could tie: findScopeTie;
// WorkloadType documents: buildWorkloadTypeTable) and construction. The set
// is built only when there is no error at all.
ProfileLoadResult buildProfileSet(std::vector<Profile> profiles, std::vector<ProfileError> errors,
                                  std::string source,
                                  std::vector<WorkloadTypeDocument> workloadTypes = {});

}  // namespace aiadmit
