#include "webhook/cli/check.h"

#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "mutators/mutator.h"
#include "webhook/cli/check_crds.h"
#include "webhook/cli/check_output.h"
#include "webhook/cli/check_summary.h"
#include "webhook/cluster/cluster_snapshot.h"
#include "webhook/codec/enum_table.h"
#include "webhook/codec/json_pointer.h"
#include "webhook/codec/yaml_json.h"
#include "webhook/engine/claim_objects.h"
#include "webhook/engine/engine.h"
#include "webhook/model/dra.h"
#include "webhook/policy/profile_loader.h"

namespace aiadmit {

namespace {

using namespace check_cli;

constexpr const char* kCheckHelp = R"(Usage: aiadmit check [options] FILE_OR_DIR...

Shows what the webhook would do with each object in the files, without a
cluster: its class and why, its profile, what would be injected, and every
warning and denial as kubectl would print them. Files hold YAML documents
(separated by ---) or JSON objects, and List objects stand for their items;
a directory means its .yaml, .yml and .json files; - reads stdin. A key set
twice is read as kubectl applies it (the last value), with a warning. Objects
of a kind that no row of the workload-type table describes (Services,
ConfigMaps, kinds of an operator nobody added) are skipped and counted;
Pods, their controllers and the AI operators' custom resources are checked.
Custom resources are checked with the defaults of their CRD applied, as the
API server applies them before it calls the webhook, when the CRD is in the
input, in --cluster or in --crds.

Options:
  --profiles DIR      profile directory (default: the shipped profiles)
  --cluster FILE      decide with a cluster snapshot, as the webhook does with
                      its live view: the output of `kubectl get nodes,
                      resourceslices,deviceclasses,priorityclasses,localqueues
                      -A -o yaml`; kinds it holds no object of are unknown;
                      CustomResourceDefinitions in it (add `crd` to the
                      kubectl get) give their defaults, as with --crds
  --crds PATH         CustomResourceDefinitions (a file, or the .yaml, .yml
                      and .json files of a directory; repeat for several)
                      whose defaults are applied to their custom resources
                      before they are checked; a later one of the same kind
                      replaces an earlier one, and those of the input win
  -n, --namespace NS  namespace of objects that name none (default: default)
  -o, --output FORMAT text (default), json (one record per object) or
                      yaml (every object as the API server would store it,
                      for kubectl apply -f -; warnings and denials on stderr)
  -R, --recursive     read directories recursively
  --enforcement LEVEL audit, warn or deny (default): caps every rule's action,
                      as `serve --enforcement` does
  --summary           a report instead of one entry per object: workloads by
                      rule, namespace and kind, worst first; objects that a
                      controller in the input owns are counted under it
  -h, --help          this help

Exit status: 0 when every object is admitted, 1 when any is denied, 2 when
some input or the profiles cannot be used (then -o yaml writes nothing).
)";

struct CheckOptions {
  std::string profilesDir;
  std::string clusterFile;  // a snapshot, or "" for the profiles alone
  std::vector<std::string> crdPaths;
  std::string defaultNamespace = "default";
  Format format = Format::Text;
  bool recursive = false;
  bool summary = false;
  RuleAction enforcement = RuleAction::Deny;
  std::vector<std::string> paths;
};
struct Source {
  std::string name;  // as kubectl names it in messages: the path given, or STDIN
  std::string text;
  std::optional<InputError> unreadable;
};
// ---------------------------------------------------------------- options

// The value of `name` at args[i]: "--flag VALUE", "--flag=VALUE", and for
// one-letter flags also "-nVALUE", as kubectl takes them. "" when the value
// is missing, nullopt when args[i] is another flag.
std::optional<std::string> flagValue(const Arguments& args, size_t& i, std::string_view name) {
  const std::string& arg = args[i];
  if (arg.rfind(name, 0) != 0) return std::nullopt;
  const std::string rest = arg.substr(name.size());
  if (rest.empty()) return i + 1 < args.size() ? args[++i] : std::string();
  if (rest[0] == '=') return rest.substr(1);
  if (name.size() == 2) return rest;
  return std::nullopt;
}

std::optional<int> parseOptions(const Arguments& args, CheckOptions& options) {
  options.profilesDir = defaultProfilesDir();
  bool onlyPaths = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (onlyPaths || arg == "-" || arg.empty() || arg[0] != '-') {
      options.paths.push_back(arg);
      continue;
    }
    if (arg == "--") {
      onlyPaths = true;
      continue;
    }
    if (arg == "-h" || arg == "--help") {
      std::cout << kCheckHelp;
      return 0;
    }
    if (arg == "-R" || arg == "--recursive") {
      options.recursive = true;
      continue;
    }
    if (arg == "--summary") {
      options.summary = true;
      continue;
    }
    std::string flag;
    std::optional<std::string> value;
    for (const char* name : {"--profiles", "--cluster", "--crds", "--namespace", "-n", "--output",
                             "-o", "--enforcement"}) {
      value = flagValue(args, i, name);
      if (value) {
        flag = name;
        break;
      }
    }
    if (!value) {
      std::cerr << "aiadmit check: unknown option " << arg << "\n\n" << kCheckHelp;
      return 2;
    }
    if (value->empty()) {
      std::cerr << "aiadmit check: " << flag << " needs a value\n";
      return 2;
    }
    if (flag == "--profiles") {
      options.profilesDir = *value;
    } else if (flag == "--cluster") {
      options.clusterFile = *value;
    } else if (flag == "--crds") {
      options.crdPaths.push_back(*value);
    } else if (flag == "--namespace" || flag == "-n") {
      options.defaultNamespace = *value;
    } else if (flag == "--enforcement") {
      const std::optional<RuleAction> level = parseEnforcement(*value);
      if (!level) {
        std::cerr << "aiadmit check: --enforcement must be audit, warn or deny, not \"" << *value
                  << "\"\n";
        return 2;
      }
      options.enforcement = *level;
    } else if (*value == "text") {
      options.format = Format::Text;
    } else if (*value == "json") {
      options.format = Format::Json;
    } else if (*value == "yaml") {
      options.format = Format::Yaml;
    } else {
      std::cerr << "aiadmit check: -o must be text, json or yaml, not \"" << *value << "\"\n";
      return 2;
    }
  }
  if (options.summary && options.format == Format::Yaml) {
    std::cerr << "aiadmit check: --summary prints text or json, not yaml\n";
    return 2;
  }
  if (options.paths.empty()) {
    std::cerr << "aiadmit check: name at least one file, directory or -\n\n" << kCheckHelp;
    return 2;
  }
  return std::nullopt;
}

// ------------------------------------------------------------------ input

bool readFile(const std::string& path, std::string& out, std::string& why) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    why = errno != 0 ? std::strerror(errno) : "cannot open";
    return false;
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) {
    why = "read error";
    return false;
  }
  out = buffer.str();
  return true;
}

// The files of `path` as kubectl -f reads them: a directory's manifest files
// in name order (its subdirectories too with -R), a file whatever its name.
void collectSources(const std::string& path, bool recursive, std::vector<Source>& sources) {
  namespace fs = std::filesystem;
  if (path == "-") {
    Source source{"STDIN", {}, {}};
    if (!readAll("-", source.text)) source.unreadable = InputError{"STDIN", 0, 0, "cannot read"};
    sources.push_back(std::move(source));
    return;
  }
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) {
    const std::string why =
        ec && ec != std::errc::no_such_file_or_directory ? ec.message() : "the path does not exist";
    sources.push_back({path, {}, InputError{path, 0, 0, why}});
    return;
  }
  if (!fs::is_directory(status)) {
    Source source{path, {}, {}};
    std::string why;
    if (!readFile(path, source.text, why)) {
      source.unreadable = InputError{path, 0, 0, "cannot read: " + why};
    }
    sources.push_back(std::move(source));
    return;
  }
  std::vector<fs::directory_entry> entries;
  for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    entries.push_back(*it);
  }
  if (ec) {
    sources.push_back({path, {}, InputError{path, 0, 0, "cannot list: " + ec.message()}});
    return;
  }
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.path().filename() < b.path().filename(); });
  for (const fs::directory_entry& entry : entries) {
    const std::string child = (fs::path(path) / entry.path().filename()).string();
    std::error_code entryError;
    if (entry.is_directory(entryError)) {
      if (recursive) collectSources(child, recursive, sources);
    } else if (isManifestFile(entry.path())) {
      collectSources(child, recursive, sources);
    }
  }
}

// A JSON type as a message about the wrong one names it.
constexpr EnumEntry<rapidjson::Type> kJsonTypeNames[] = {
    {rapidjson::kNullType, "null"},       {rapidjson::kFalseType, "a boolean"},
    {rapidjson::kTrueType, "a boolean"},  {rapidjson::kNumberType, "a number"},
    {rapidjson::kStringType, "a string"}, {rapidjson::kArrayType, "a list"},
    {rapidjson::kObjectType, "an object"}};

std::string_view jsonTypeName(const JsonValue& value) {
  return valueIn(kJsonTypeNames, value.GetType(), "a value");
}

bool isList(const JsonValue& object) {
  const std::string_view kind = stringMember(&object, "kind");
  return kind.size() >= 4 && kind.substr(kind.size() - 4) == "List" &&
         isArray(member(&object, "items"));
}

// What the input holds: its objects, and what cannot be used or is read
// otherwise than written.
struct Input {
  std::vector<InputObject> objects;
  std::vector<InputError> errors;
  std::vector<InputWarning> warnings;
};

// Where in a document a key was set twice, for the object it belongs to.
struct DuplicatesOf {
  const std::string& file;
  int index;
  int item;  // -1, or the List item the keys are in
  std::vector<DuplicateKey> keys;
};

std::string duplicateMessage(const DuplicateKey& key) {
  const std::string before = " (first at line " + std::to_string(key.firstLine) + ")";
  switch (key.kind) {
    case DuplicateKey::Kind::Merged:
      return "the << merge here replaces " + key.path + " (written at line " +
             std::to_string(key.firstLine) + ")" +
             ": kubectl lets a merge override the keys written before it, and applies the "
             "merged value without a warning; checked as applied";
    case DuplicateKey::Kind::Ambiguous:
      return "duplicate key " + key.path + before + ", written as two keys that are both \"" +
             key.key +
             "\" in JSON: kubectl keeps one of them at random, so what it applies cannot be "
             "told; write the key once";
    case DuplicateKey::Kind::Repeated:
      break;
  }
  return "duplicate key " + key.path + before +
         ": kubectl applies the value written here and drops the earlier one without a "
         "warning; checked as applied";
}

// Warns of each key set twice; false, with an error, when what kubectl
// makes of one cannot be told (the object is then not checked).
bool noteDuplicates(const DuplicatesOf& duplicates, Input& input) {
  const std::string where =
      duplicates.item < 0 ? "" : "item " + std::to_string(duplicates.item) + " of the List: ";
  bool usable = true;
  for (const DuplicateKey& key : duplicates.keys) {
    const std::string message = where + duplicateMessage(key);
    if (key.kind == DuplicateKey::Kind::Ambiguous) {
      input.errors.push_back({duplicates.file, key.line, key.column, message});
      usable = false;
    } else {
      input.warnings.push_back({duplicates.file, duplicates.index, duplicates.item, key.line,
                                key.column, key.path, message});
    }
  }
  return usable;
}

// The List item a key's path is in ("items[3].metadata.name"), with the
// path made the item's own; nullopt for a key of the List itself.
std::optional<size_t> listItemOf(DuplicateKey& key, size_t items) {
  constexpr std::string_view kItems = "items[";
  if (key.path.rfind(kItems, 0) != 0) return std::nullopt;
  const size_t close = key.path.find(']');
  const size_t item = std::strtoul(key.path.c_str() + kItems.size(), nullptr, 10);
  // Keys of an `items` list that a later `items` replaced stay the List's.
  if (close == std::string::npos || item >= items) return std::nullopt;
  size_t rest = close + 1;
  if (rest < key.path.size() && key.path[rest] == '.') ++rest;
  key.path.erase(0, rest);
  return item;
}

// One document's objects; a List stands for its items, as kubectl applies them.
void addObjects(const std::string& file, int index, int item, int line,
                const std::shared_ptr<JsonDocument>& document, std::vector<DuplicateKey> duplicates,
                Input& input) {
  const std::string where = item < 0 ? "" : "item " + std::to_string(item) + " of the List: ";
  if (!document->IsObject()) {
    input.errors.push_back({file, line, 0,
                            where + "a manifest is an object with apiVersion and kind, not " +
                                std::string(jsonTypeName(*document))});
    return;
  }
  if (item < 0 && isList(*document)) {
    const JsonValue& items = (*document)["items"];
    std::vector<std::vector<DuplicateKey>> ofItems(items.Size());
    DuplicatesOf ofList{file, index, -1, {}};
    for (DuplicateKey& key : duplicates) {
      const std::optional<size_t> at = listItemOf(key, items.Size());
      (at ? ofItems[*at] : ofList.keys).push_back(std::move(key));
    }
    // A key of the List that cannot be told leaves none of its items known.
    if (!noteDuplicates(ofList, input)) return;
    int position = 0;
    for (const JsonValue& value : items.GetArray()) {
      auto copy = std::make_shared<JsonDocument>();
      copy->CopyFrom(value, copy->GetAllocator());
      addObjects(file, index, position, line, copy, std::move(ofItems[position]), input);
      ++position;
    }
    return;
  }
  if (!noteDuplicates({file, index, item, std::move(duplicates)}, input)) return;
  const bool hasApiVersion = !stringMember(document.get(), "apiVersion").empty();
  const bool hasKind = !stringMember(document.get(), "kind").empty();
  if (!hasApiVersion || !hasKind) {
    input.errors.push_back({file, line, 0,
                            where + (hasKind         ? "apiVersion not set"
                                     : hasApiVersion ? "kind not set"
                                                     : "apiVersion not set, kind not set")});
    return;
  }
  InputObject object;
  object.file = file;
  object.index = index;
  object.item = item;
  object.line = line;
  object.json = document;
  object.kubernetesKind =
      kubernetesKindOf(splitApiVersion(stringMember(document.get(), "apiVersion")).group,
                       stringMember(document.get(), "kind"));
  if (object.kubernetesKind != nullptr && nameOf(*document).empty() &&
      generateNameOf(*document).empty()) {
    input.errors.push_back({file, line, 0,
                            where + std::string(stringMember(document.get(), "kind")) +
                                " has neither metadata.name nor metadata.generateName"});
    return;
  }
  input.objects.push_back(std::move(object));
}

// kubectl reads a key set twice as go-yaml and Go's JSON decoder do, and so
// does check, with a warning: each object is checked as kubectl applies it.
void parseSource(const Source& source, Input& input) {
  std::vector<ManifestDocument> documents;
  ManifestError error;
  if (!parseManifests(source.text, documents, error, DuplicateKeys::Keep)) {
    input.errors.push_back({source.name, error.line, error.column, error.message});
    return;
  }
  int index = 0;
  for (ManifestDocument& document : documents) {
    addObjects(source.name, index++, -1, document.line, document.json,
               std::move(document.duplicateKeys), input);
  }
}

// --------------------------------------------------------------- decisions

void appendWarnings(const std::vector<std::string>& warnings, std::vector<std::string>& out) {
  // Each webhook's warnings are trimmed as its answer carries them.
  for (std::string& warning : fitWarnings(warnings)) out.push_back(std::move(warning));
}

// The mutating webhook, then the validating webhook on the mutated object,
// as the API server calls them for `kubectl apply` of a new object.
Record evaluate(const Engine& engine, const InputObject& input,
                const std::string& defaultNamespace) {
  Record record;
  record.input = &input;
  record.namespaceName =
      std::string(stringMember(member(input.json.get(), "metadata"), "namespace"));
  if (record.namespaceName.empty()) record.namespaceName = defaultNamespace;

  AdmissionSubject subject = AdmissionSubject::ofObject(*input.json, record.namespaceName);

  record.mutated = input.json;
  auto mutated = std::make_shared<JsonDocument>();
  Decided mutationDecided = engine.mutate(subject, {.mutated = mutated.get()});
  record.mutation = std::move(mutationDecided.record);
  const AdmissionOutcome& mutation = mutationDecided.outcome;
  if (mutation.decision() == Decision::Patched) {
    // A patched answer's warnings are the class and the injected changes,
    // which the record shows as such, and the notices, which it does not.
    record.patch = mutation.patch();
    record.mutated = std::move(mutated);
    appendWarnings(noticeWarnings(record.mutation), record.warnings);
  } else {
    appendWarnings(mutation.warnings(), record.warnings);
  }

  subject.object = record.mutated.get();
  Decided validationDecided = engine.validate(subject);
  record.validation = std::move(validationDecided.record);
  const AdmissionOutcome& validation = validationDecided.outcome;
  // A DRA claim object is only validated: its class and profile are the
  // validating webhook's.
  if (isClaimObject(subject) && record.mutation.workloadClass == WorkloadClass::None) {
    record.mutation.workloadClass = record.validation.workloadClass;
    record.mutation.classReason = record.validation.classReason;
    record.mutation.classDeclared = record.validation.classDeclared;
    record.mutation.profile = record.validation.profile;
    record.mutation.profileReason = record.validation.profileReason;
  }
  appendWarnings(validation.warnings(), record.warnings);
  if (!validation.isAllowed()) record.denial = validation.message();
  return record;
}
void printReport(const std::vector<InputObject>& objects, const std::vector<Record>& records,
                 const CheckOptions& options) {
  std::vector<ReportInput> inputs;
  for (const InputObject& object : objects) {
    ReportInput input;
    input.object = object.json.get();
    if (object.record) {
      const Record& record = records[*object.record];
      input.namespaceName = record.namespaceName;
      input.validation = &record.validation;
      input.admitted = record.admitted();
    } else {
      input.namespaceName = stringMember(member(input.object, "metadata"), "namespace");
      if (input.namespaceName.empty()) input.namespaceName = options.defaultNamespace;
    }
    inputs.push_back(std::move(input));
  }
  const CheckReport report = summarize(inputs);
  if (options.format == Format::Json) {
    printReportJson(report, std::cout);
  } else {
    printReportText(report, std::cout);
  }
}

// The view `check` decides with: the snapshot (or nothing), and the claims
// and claim templates of the input itself, so that a file holding a template
// (or a claim) and the Job (or Pod) that uses it reads as it will once both
// are applied. Kinds the snapshot did not list stay unknown: a claim of the
// input is known to exist, the absence of one is not known to mean anything.
std::shared_ptr<const ClusterView> viewForInput(const std::shared_ptr<const ClusterView>& snapshot,
                                                const std::vector<InputObject>& objects,
                                                const std::string& defaultNamespace) {
  ClusterView::Builder builder = snapshot ? snapshot->extended() : ClusterView::Builder();
  if (!snapshot) builder.markSynced(false);
  for (const InputObject& object : objects) {
    ClaimObject claim;
    if (object.kubernetesKind != nullptr || !readClaimObject(*object.json, claim, nullptr)) {
      continue;
    }
    std::string namespaceName =
        claim.namespaceName.empty() ? defaultNamespace : claim.namespaceName;
    if (claim.isTemplate) {
      builder.add(ClaimTemplateRecord{std::move(namespaceName), claim.name, std::move(claim.spec)});
    } else {
      builder.add(ClaimRecord{std::move(namespaceName), claim.name, std::move(claim.spec)});
    }
  }
  return std::move(builder).build();
}

// The snapshot of --cluster; false (with the reason on stderr) when unusable.
bool loadSnapshot(const CheckOptions& options, std::shared_ptr<const ClusterView>& snapshot) {
  if (options.clusterFile.empty()) return true;
  ClusterSnapshot loadedSnapshot = loadClusterSnapshot(options.clusterFile);
  if (!loadedSnapshot.error.empty() || !loadedSnapshot.view) {
    std::cerr << "aiadmit check: the cluster snapshot cannot be used: " << loadedSnapshot.error
              << "\n";
    return false;
  }
  for (const std::string& kind : loadedSnapshot.skippedKinds) {
    // The view holds no CRDs, but check reads them for their defaults.
    if (kind.rfind("apiextensions.k8s.io/", 0) == 0) continue;
    std::cerr << "aiadmit check: " << options.clusterFile << ": " << kind
              << " objects are not read\n";
  }
  snapshot = std::move(loadedSnapshot.view);
  return true;
}

// The CRDs of the snapshot, then of each --crds path; false (with the
// reason on stderr) when one cannot be used.
bool loadCrds(const CheckOptions& options, CrdDefaults::Builder& crds) {
  std::vector<std::string> paths = options.crdPaths;
  if (!options.clusterFile.empty()) paths.insert(paths.begin(), options.clusterFile);
  for (const std::string& path : paths) {
    std::string error;
    if (!addCrdsFromPath(path, crds, error)) {
      std::cerr << "aiadmit check: the CRDs cannot be used: " << error << "\n";
      return false;
    }
  }
  return true;
}

Input readInput(const CheckOptions& options) {
  std::vector<Source> sources;
  for (const std::string& path : options.paths) {
    collectSources(path, options.recursive, sources);
  }
  Input input;
  for (const Source& source : sources) {
    if (source.unreadable) {
      input.errors.push_back(*source.unreadable);
    } else {
      parseSource(source, input);
    }
  }
  if (input.objects.empty() && input.errors.empty()) {
    input.errors.push_back({"", 0, 0, "no objects in the input"});
  }
  return input;
}

// A kind of an operator's: its group is no group of Kubernetes' own (those
// are one word, apps or batch, or end in .k8s.io but for the x-k8s.io
// projects'), which are served by the API server and carry no GPU work of
// their own besides the kinds the table holds.
bool isCustomResource(const JsonValue& object) {
  const std::string_view group = splitApiVersion(stringMember(&object, "apiVersion")).group;
  if (group.find('.') == std::string_view::npos) return false;
  return !group.ends_with(".k8s.io") || group.ends_with(".x-k8s.io");
}

// Every object the webhooks would see, decided; the rest counted as skipped.
std::vector<Record> decideAll(const Engine& engine, std::vector<InputObject>& objects,
                              const CheckOptions& options, std::vector<InputError>& errors,
                              Summary& summary) {
  std::vector<Record> records;
  const WorkloadTypeTable& workloadTypes = engine.profiles()->workloadTypes();
  for (InputObject& object : objects) {
    // What no row of the workload-type table describes runs no Pods: a
    // Service, a ConfigMap, a kind of an operator nobody added. DRA claim
    // objects are checked too: the validating webhook judges their requests.
    if (workloadTypes.findForObject(*object.json) == nullptr &&
        !isClaimObject(AdmissionSubject::ofObject(*object.json, ""))) {
      ++summary.skipped;
      if (isCustomResource(*object.json)) object.notJudged = findAcceleratorMention(*object.json);
      if (object.notJudged) ++summary.notJudged;
      continue;
    }
    try {
      records.push_back(evaluate(engine, object, options.defaultNamespace));
      object.record = records.size() - 1;
    } catch (const std::exception& e) {
      errors.push_back({object.file, object.line, 0, std::string("internal error: ") + e.what()});
    }
  }
  for (const Record& record : records) {
    ++summary.objects;
    if (record.admitted()) {
      ++summary.admitted;
      if (record.isMutated()) ++summary.mutated;
    } else {
      ++summary.denied;
    }
  }
  return records;
}

}  // namespace

int checkCommand(const Arguments& args) {
  CheckOptions options;
  if (const std::optional<int> exitCode = parseOptions(args, options)) return *exitCode;

  const ProfileLoadResult loaded = loadProfileDirectory(options.profilesDir, mutationSwitches());
  if (!loaded.ok()) {
    std::cerr << "aiadmit check: the profiles in " << options.profilesDir << " cannot be used:\n";
    for (const ProfileError& error : loaded.errors) std::cerr << error.format() << "\n";
    return 2;
  }
  std::shared_ptr<const ClusterView> snapshot;
  if (!loadSnapshot(options, snapshot)) return 2;
  CrdDefaults::Builder crds;
  if (!loadCrds(options, crds)) return 2;
  Engine engine(loaded.set, options.enforcement);

  Input input = readInput(options);
  std::vector<InputObject>& objects = input.objects;
  std::vector<InputError>& errors = input.errors;
  // The API server defaults a custom resource before any webhook sees it.
  addInputCrds(objects, crds, errors);
  applyCrdDefaults(*std::move(crds).build(), objects, errors);
  engine.replaceClusterView(viewForInput(snapshot, objects, options.defaultNamespace));

  Summary summary;
  const std::vector<Record> records = decideAll(engine, objects, options, errors, summary);
  summary.errors = errors.size();
  summary.warnings = input.warnings.size();
  for (const InputWarning& warning : input.warnings) {
    std::cerr << "warning: " << warning.format() << "\n";
  }
  for (const InputError& error : errors) std::cerr << "error: " << error.format() << "\n";

  if (options.summary) {
    printReport(objects, records, options);
  } else {
    printRecords(objects, records, errors, input.warnings, summary, options.format);
  }
  if (!errors.empty()) return 2;
  return summary.denied > 0 ? 1 : 0;
}

}  // namespace aiadmit
