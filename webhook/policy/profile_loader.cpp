#include "webhook/policy/profile_loader.h"

#include "webhook/codec/yaml_load.h"
#include "webhook/policy/accelerators.h"
#include "webhook/policy/profile_reader.h"
#include "webhook/policy/workload_type_loader.h"
#include "webhook/policy/yaml_fields.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <set>
#include <sstream>

#include "webhook/codec/text.h"
#include "webhook/model/quantity.h"

namespace aiadmit {

std::string ProfileError::format() const {
  std::string out = file;
  if (line > 0) {
    out.push_back(':');
    out += std::to_string(line);
    out.push_back(':');
    out += std::to_string(column);
  }
  out += ": ";
  if (!field.empty()) out += field + ": ";
  out += message;
  return out;
}

namespace {

std::string where(const Profile& profile) {
  return profile.sourceFile + ":" + std::to_string(profile.nameLocation.line);
}

void checkNames(const std::vector<Profile>& profiles, std::vector<ProfileError>& errors) {
  std::map<std::string_view, const Profile*> byName;
  for (const Profile& profile : profiles) {
    auto [it, inserted] = byName.emplace(profile.name, &profile);
    if (inserted) continue;
    errors.push_back({profile.sourceFile, profile.nameLocation.line, profile.nameLocation.column,
                      "metadata.name",
                      "duplicate profile name " + inQuotes(profile.name) + " (first defined at " +
                          where(*it->second) + ")"});
  }
}

// Ties reported at most: each profile is reported once, with the first
// profile it ties with, so that n profiles of one scope make n errors, not
// n²/2 (1,200 of them made 215 MB of messages).
constexpr size_t kMaxTieErrors = 100;

// Pairs of the same class that could select one object with equal precedence.
// Only pairs that can tie are compared: two scopes without namespaces, two
// with patterns, or two listing one namespace exactly. So a large set of
// profiles scoped to distinct namespaces costs little.
void checkTies(const std::vector<Profile>& profiles, std::vector<ProfileError>& errors) {
  std::set<std::pair<size_t, size_t>> compared;
  std::vector<bool> reported(profiles.size(), false);
  size_t ties = 0;
  auto compare = [&](size_t first, size_t second, bool remember) {
    if (reported[second] || ties > kMaxTieErrors) return;
    if (remember && !compared.emplace(first, second).second) return;
    const Profile& a = profiles[first];
    const Profile& b = profiles[second];
    if (a.name == b.name) return;  // reported as a duplicate
    // Profiles that place no accelerator in common select different
    // workloads, but for one that names none, which both would give GPUs.
    const bool sameAccelerator = placeSameAccelerator(a, b);
    if (!sameAccelerator && (a.gpu.defaultCount == 0 || b.gpu.defaultCount == 0)) return;
    const auto tie = findScopeTie(a.scope, b.scope);
    if (!tie) return;
    reported[second] = true;
    if (++ties > kMaxTieErrors) {
      errors.push_back({b.sourceFile, b.scopeLocation.line, b.scopeLocation.column, "spec.scope",
                        "more than " + std::to_string(kMaxTieErrors) +
                            " profiles tie with another; the rest are not looked for until "
                            "these are fixed"});
      return;
    }
    const std::string workload =
        sameAccelerator ? std::string(className(a.workloadClass)) + " workload"
                        : std::string(className(a.workloadClass)) +
                              " workload that names no accelerator, to which both give GPUs by "
                              "default,";
    const std::string remedy = sameAccelerator
                                   ? "make one scope more specific, or the scopes disjoint"
                                   : "set gpu.defaultCount: 0 on one, or make the scopes disjoint";
    errors.push_back({b.sourceFile, b.scopeLocation.line, b.scopeLocation.column, "spec.scope",
                      "profiles " + inQuotes(a.name) + " (" + where(a) + ") and " +
                          inQuotes(b.name) + " both select a " + workload + " in " +
                          tie->describe() + " with equal precedence; " + remedy});
  };
  for (WorkloadClass workloadClass :
       {WorkloadClass::Training, WorkloadClass::Batch, WorkloadClass::Realtime}) {
    std::vector<size_t> unscoped, withPattern;
    std::map<std::string_view, std::vector<size_t>> byExactNamespace;
    for (size_t i = 0; i < profiles.size(); ++i) {
      const Profile& profile = profiles[i];
      if (profile.workloadClass != workloadClass) continue;
      if (profile.scope.namespaces.empty()) unscoped.push_back(i);
      bool anyPattern = false;
      for (const std::string& entry : profile.scope.namespaces) {
        if (isGlob(entry)) {
          anyPattern = true;
        } else {
          byExactNamespace[entry].push_back(i);
        }
      }
      if (anyPattern) withPattern.push_back(i);
    }
    for (const auto* group : {&unscoped, &withPattern}) {
      for (size_t a = 0; a < group->size(); ++a) {
        for (size_t b = a + 1; b < group->size(); ++b) compare((*group)[a], (*group)[b], false);
      }
    }
    // A pair sharing an exact namespace is checked once, and not again when
    // both also have patterns (findScopeTie looks at exact names first).
    for (const auto& [ns, group] : byExactNamespace) {
      for (size_t a = 0; a < group.size(); ++a) {
        for (size_t b = a + 1; b < group.size(); ++b) {
          const bool bothPatterns =
              std::binary_search(withPattern.begin(), withPattern.end(), group[a]) &&
              std::binary_search(withPattern.begin(), withPattern.end(), group[b]);
          if (!bothPatterns) compare(group[a], group[b], true);
        }
      }
    }
  }
}

bool errorBefore(const ProfileError& a, const ProfileError& b) {
  if (a.file != b.file) return a.file < b.file;
  if (a.line != b.line) return a.line < b.line;
  return a.column < b.column;
}

}  // namespace

void parseProfileDocuments(std::string_view text, const std::string& fileName,
                           std::span<const MutationSwitch> switches, std::vector<Profile>& out,
                           std::vector<ProfileError>& errors,
                           std::vector<WorkloadTypeDocument>* workloadTypes) {
  yaml_fields::Reader reader(fileName, errors);
  std::vector<YAML::Node> documents;
  YamlLoadError loadError;
  if (!loadYamlDocuments(text, documents, loadError)) {
    ProfileError error;
    error.file = fileName;
    error.line = loadError.line;
    error.column = loadError.column;
    error.message = "invalid YAML: " + loadError.message;
    errors.push_back(std::move(error));
    return;
  }
  for (const YAML::Node& doc : documents) {
    if (doc.IsNull()) continue;  // an empty document between separators
    try {
      if (isWorkloadTypeDocument(doc)) {
        if (workloadTypes != nullptr) {
          readWorkloadTypeDocument(reader, doc, fileName, *workloadTypes);
        } else {
          reader.error(doc["kind"], "kind", "WorkloadType documents are read from a directory");
        }
        continue;
      }
      readProfileDocument(reader, doc, fileName, switches, out);
    } catch (const YAML::Exception& e) {
      reader.error(doc, "", "invalid YAML: " + e.msg);
    }
  }
}

ProfileLoadResult buildProfileSet(std::vector<Profile> profiles, std::vector<ProfileError> errors,
                                  std::string source,
                                  std::vector<WorkloadTypeDocument> workloadTypes) {
  checkNames(profiles, errors);
  checkTies(profiles, errors);
  auto table = buildWorkloadTypeTable(std::move(workloadTypes), errors);
  // Errors in file order, then by position, whichever check found them.
  std::stable_sort(errors.begin(), errors.end(), errorBefore);
  if (profiles.empty() && errors.empty()) {
    errors.push_back({source, 0, 0, "", "no profiles found (files named *.yaml or *.yml)"});
  }
  ProfileLoadResult result;
  result.errors = std::move(errors);
  if (result.errors.empty()) {
    result.workloadTypes = table;
    result.set = std::make_shared<const ProfileSet>(std::move(profiles), std::move(source),
                                                    std::move(table));
  }
  return result;
}

ProfileLoadResult loadProfileText(std::string_view text, const std::string& fileName,
                                  std::span<const MutationSwitch> switches) {
  std::vector<Profile> profiles;
  std::vector<ProfileError> errors;
  std::vector<WorkloadTypeDocument> workloadTypes;
  parseProfileDocuments(text, fileName, switches, profiles, errors, &workloadTypes);
  return buildProfileSet(std::move(profiles), std::move(errors), fileName,
                         std::move(workloadTypes));
}

bool isProfileFileName(std::string_view name) {
  if (name.empty() || name[0] == '.') return false;
  return name.ends_with(".yaml") || name.ends_with(".yml");
}

ProfileLoadResult loadProfileFiles(std::vector<ProfileFileText> files, std::string source,
                                   std::span<const MutationSwitch> switches) {
  std::erase_if(files, [](const ProfileFileText& file) { return !isProfileFileName(file.name); });
  std::sort(files.begin(), files.end(),
            [](const ProfileFileText& a, const ProfileFileText& b) { return a.name < b.name; });
  std::vector<Profile> profiles;
  std::vector<ProfileError> errors;
  std::vector<WorkloadTypeDocument> workloadTypes;
  for (const ProfileFileText& file : files) {
    parseProfileDocuments(file.text, file.name, switches, profiles, errors, &workloadTypes);
  }
  return buildProfileSet(std::move(profiles), std::move(errors), std::move(source),
                         std::move(workloadTypes));
}

namespace {

namespace fs = std::filesystem;

struct ProfileFile {
  std::string shownAs;  // the path under the directory the user named
  fs::path readFrom;
};

// The profile files of `directory`, read from `listFrom`.
bool listProfileFiles(const fs::path& directory, const fs::path& listFrom,
                      std::vector<ProfileFile>& files, std::string& error) {
  std::error_code ec;
  for (fs::directory_iterator it(listFrom, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!isProfileFileName(name)) continue;
    std::error_code typeError;
    if (!fs::is_regular_file(it->path(), typeError)) continue;
    files.push_back({(directory / name).string(), it->path()});
  }
  if (ec) {
    error = ec.message();
    return false;
  }
  std::sort(files.begin(), files.end(),
            [](const ProfileFile& a, const ProfileFile& b) { return a.shownAs < b.shownAs; });
  return true;
}

}  // namespace

ProfileLoadResult loadProfileDirectory(const std::string& directory,
                                       std::span<const MutationSwitch> switches) {
  const fs::path root(directory);
  // A ConfigMap volume holds its files in a hidden timestamped directory that
  // the ..data symlink names; kubelet updates it by swapping that symlink.
  // Reading through one resolved target, and checking that it did not move
  // meanwhile, gives one consistent version even during a swap.
  const fs::path dataLink = root / "..data";
  for (int attempt = 0;; ++attempt) {
    std::error_code ec;
    fs::path listFrom = root;
    fs::path target;
    if (fs::is_symlink(dataLink, ec)) {
      target = fs::read_symlink(dataLink, ec);
      if (!ec) listFrom = target.is_absolute() ? target : root / target;
    }
    std::vector<Profile> profiles;
    std::vector<ProfileError> errors;
    std::vector<WorkloadTypeDocument> workloadTypes;
    std::vector<ProfileFile> files;
    std::string listError;
    if (!listProfileFiles(root, listFrom, files, listError)) {
      errors.push_back({directory, 0, 0, "", "cannot read profile directory: " + listError});
      return buildProfileSet({}, std::move(errors), directory);
    }
    for (const ProfileFile& file : files) {
      std::ifstream in(file.readFrom, std::ios::binary);
      std::ostringstream text;
      text << in.rdbuf();
      if (!in) {
        errors.push_back({file.shownAs, 0, 0, "", "cannot read file"});
        continue;
      }
      parseProfileDocuments(text.str(), file.shownAs, switches, profiles, errors, &workloadTypes);
    }
    std::error_code after;
    const bool moved = !target.empty() && fs::read_symlink(dataLink, after) != target;
    if (moved && attempt < 3) continue;
    return buildProfileSet(std::move(profiles), std::move(errors), directory,
                           std::move(workloadTypes));
  }
}

}  // namespace aiadmit
