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

#include "webhook/cli/check_summary.h"
#include "webhook/engine/engine.h"
#include "webhook/kube/yaml_json.h"
#include "webhook/policy/profile_loader.h"

namespace aiadmit {

namespace {

constexpr const char* kCheckHelp = R"(Usage: aiadmit check [options] FILE_OR_DIR...

Shows what the webhook would do with each object in the files, without a
cluster: its class and why, its profile, what would be injected, and every
warning and denial as kubectl would print them. Files hold YAML documents
(separated by ---) or JSON objects, and List objects stand for their items;
a directory means its .yaml, .yml and .json files; - reads stdin. Objects
that are not Pods, Jobs, CronJobs, Deployments, StatefulSets or ReplicaSets
are skipped and counted.

Options:
  --profiles DIR      profile directory (default: the shipped profiles)
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

// kubectl prints the name of the webhook that answered; manifests applied by
// people and pipelines go to this one (manifests/base/webhooks.yaml).
constexpr const char* kValidatingWebhook = "applied.validate.aiadmit.dev";

enum class Format { Text, Json, Yaml };

struct CheckOptions {
  std::string profilesDir;
  std::string defaultNamespace = "default";
  Format format = Format::Text;
  bool recursive = false;
  bool summary = false;
  RuleAction enforcement = RuleAction::Deny;
  std::vector<std::string> paths;
};

// Input that cannot be checked: a file that cannot be read, text that is not
// YAML or JSON, a document that is not a Kubernetes object.
struct InputError {
  std::string file;
  int line = 0;  // 0: about the whole file
  int column = 0;
  std::string message;

  std::string format() const {
    if (file.empty()) return message;
    std::string text = file;
    if (line > 0) text += ":" + std::to_string(line);
    if (column > 0) text += ":" + std::to_string(column);
    return text + ": " + message;
  }
};

struct Source {
  std::string name;  // as kubectl names it in messages: the path given, or STDIN
  std::string text;
  std::optional<InputError> unreadable;
};

// One object of the input, in the order kubectl would apply them.
struct InputObject {
  std::string file;
  int index = 0;  // document in the file, counting those that hold something
  int item = -1;  // position in the items of a List, or -1
  int line = 0;   // where the document starts
  std::shared_ptr<JsonDocument> json;
  WorkloadKind kind = WorkloadKind::Other;
  std::optional<size_t> record;  // its Record, for the kinds aiadmit admits
};

// What the two webhooks answer for one object.
struct Record {
  const InputObject* input = nullptr;
  std::string namespaceName;
  Evaluation mutation;                // class, profile and injected changes
  Evaluation validation;              // rule violations by action
  std::string patch;                  // the JSON Patch of the mutating webhook, or ""
  std::vector<std::string> warnings;  // as kubectl prints them, after "Warning: "
  std::string denial;                 // the message of the 403, or ""
  std::shared_ptr<JsonDocument> mutated;

  bool admitted() const { return denial.empty(); }
  bool isMutated() const { return !patch.empty(); }
};

std::string_view nameOf(const JsonValue& object) {
  return stringMember(member(&object, "metadata"), "name");
}

std::string_view generateNameOf(const JsonValue& object) {
  return stringMember(member(&object, "metadata"), "generateName");
}

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
    for (const char* name :
         {"--profiles", "--namespace", "-n", "--output", "-o", "--enforcement"}) {
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

bool isManifestFile(const std::filesystem::path& path) {
  const std::string extension = path.extension().string();
  return extension == ".yaml" || extension == ".yml" || extension == ".json";
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

std::string_view jsonTypeName(const JsonValue& value) {
  switch (value.GetType()) {
    case rapidjson::kNullType:
      return "null";
    case rapidjson::kFalseType:
    case rapidjson::kTrueType:
      return "a boolean";
    case rapidjson::kNumberType:
      return "a number";
    case rapidjson::kStringType:
      return "a string";
    case rapidjson::kArrayType:
      return "a list";
    case rapidjson::kObjectType:
      return "an object";
  }
  return "a value";
}

bool isList(const JsonValue& object) {
  const std::string_view kind = stringMember(&object, "kind");
  return kind.size() >= 4 && kind.substr(kind.size() - 4) == "List" &&
         isArray(member(&object, "items"));
}

// One document's objects; a List stands for its items, as kubectl applies them.
void addObjects(const std::string& file, int index, int item, int line,
                const std::shared_ptr<JsonDocument>& document, std::vector<InputObject>& objects,
                std::vector<InputError>& errors) {
  const std::string where = item < 0 ? "" : "item " + std::to_string(item) + " of the List: ";
  if (!document->IsObject()) {
    errors.push_back({file, line, 0,
                      where + "a manifest is an object with apiVersion and kind, not " +
                          std::string(jsonTypeName(*document))});
    return;
  }
  if (item < 0 && isList(*document)) {
    int position = 0;
    for (const JsonValue& value : (*document)["items"].GetArray()) {
      auto copy = std::make_shared<JsonDocument>();
      copy->CopyFrom(value, copy->GetAllocator());
      addObjects(file, index, position++, line, copy, objects, errors);
    }
    return;
  }
  const bool hasApiVersion = !stringMember(document.get(), "apiVersion").empty();
  const bool hasKind = !stringMember(document.get(), "kind").empty();
  if (!hasApiVersion || !hasKind) {
    errors.push_back({file, line, 0,
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
  object.kind = workloadKindOfObject(*document);
  if (object.kind != WorkloadKind::Other && nameOf(*document).empty() &&
      generateNameOf(*document).empty()) {
    errors.push_back({file, line, 0,
                      where + std::string(stringMember(document.get(), "kind")) +
                          " has neither metadata.name nor metadata.generateName"});
    return;
  }
  objects.push_back(std::move(object));
}

void parseSource(const Source& source, std::vector<InputObject>& objects,
                 std::vector<InputError>& errors) {
  std::vector<ManifestDocument> documents;
  ManifestError error;
  if (!parseManifests(source.text, documents, error)) {
    errors.push_back({source.name, error.line, error.column, error.message});
    return;
  }
  int index = 0;
  for (const ManifestDocument& document : documents) {
    addObjects(source.name, index++, -1, document.line, document.json, objects, errors);
  }
}

// --------------------------------------------------------------- decisions

void appendWarnings(const AdmissionOutcome& outcome, std::vector<std::string>& out) {
  // Each webhook's warnings are trimmed as its answer carries them.
  for (std::string& warning : fitWarnings(outcome.warnings())) out.push_back(std::move(warning));
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

  AdmissionSubject subject;
  subject.object = input.json.get();
  subject.kind = input.kind;
  subject.namespaceName = record.namespaceName;
  subject.operation = Operation::Create;

  record.mutated = input.json;
  const AdmissionOutcome mutation = engine.mutate(subject, &record.mutation);
  if (mutation.decision() == Decision::Patched) {
    // A patched answer's warnings are the class and the injected changes,
    // which the record shows as such.
    record.patch = mutation.patch();
    auto mutated = std::make_shared<JsonDocument>();
    Evaluation again;
    if (engine.mutateInto(subject, *mutated, &again)) record.mutated = std::move(mutated);
  } else {
    appendWarnings(mutation, record.warnings);
  }

  subject.object = record.mutated.get();
  const AdmissionOutcome validation = engine.validate(subject, &record.validation);
  appendWarnings(validation, record.warnings);
  if (!validation.isAllowed()) record.denial = validation.message();
  return record;
}

// ----------------------------------------------------------------- output

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// "deployment/vllm", or "job/sample-job-*" for a generated name.
std::string objectLabel(const InputObject& input) {
  const std::string_view name = nameOf(*input.json);
  return lower(stringMember(input.json.get(), "kind")) + "/" +
         (name.empty() ? std::string(generateNameOf(*input.json)) + "*" : std::string(name));
}

std::string classReason(const Evaluation& evaluation) {
  return evaluation.workloadClass == WorkloadClass::None
             ? "no aiadmit.dev/workload annotation and no accelerator request"
             : evaluation.classReason;
}

// kubectl's line for a denial of `kubectl apply -f FILE`.
std::string kubectlDenial(const Record& record) {
  return "Error from server (Forbidden): error when creating \"" + record.input->file +
         "\": admission webhook \"" + kValidatingWebhook +
         "\" denied the request: " + record.denial;
}

std::string indentLines(const std::string& text, const std::string& indent) {
  std::string out;
  for (char c : text) {
    out.push_back(c);
    if (c == '\n') out += indent;
  }
  return out;
}

class Style {
 public:
  explicit Style(bool colour) : colour_(colour) {}
  std::string red(const std::string& s) const { return wrap("31", s); }
  std::string yellow(const std::string& s) const { return wrap("33", s); }
  std::string green(const std::string& s) const { return wrap("32", s); }
  std::string bold(const std::string& s) const { return wrap("1", s); }

 private:
  std::string wrap(const char* code, const std::string& s) const {
    return colour_ ? "\033[" + std::string(code) + "m" + s + "\033[0m" : s;
  }
  bool colour_;
};

bool colourWanted() {
  const char* noColour = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  return isatty(STDOUT_FILENO) != 0 && (noColour == nullptr || *noColour == '\0') &&
         (term == nullptr || std::string_view(term) != "dumb");
}

void printText(const Record& record, const Style& style) {
  std::cout << style.bold(objectLabel(*record.input)) << " (ns " << record.namespaceName << ")\n";
  const Evaluation& eval = record.mutation;
  std::cout << "  class:    " << className(eval.workloadClass) << " (" << classReason(eval)
            << ")\n";
  if (eval.workloadClass != WorkloadClass::None) {
    if (eval.profile.empty()) {
      std::cout << "  profile:  none applies\n";
    } else {
      std::cout << "  profile:  " << eval.profile << " (" << eval.profileReason << ")\n";
    }
  }
  for (size_t i = 0; i < eval.changes.size(); ++i) {
    std::cout << (i == 0 ? "  inject:   " : "            ") << style.green(eval.changes[i]) << "\n";
  }
  for (const std::string& warning : record.warnings) {
    std::cout << "  " << style.yellow("Warning: " + warning) << "\n";
  }
  // Audited violations reach no kubectl user; the audit log records them.
  for (const Violation& violation : record.validation.audited) {
    std::cout << "  Audit: " << violation.warning() << "\n";
  }
  if (!record.admitted()) {
    std::cout << "  " << style.red(indentLines(kubectlDenial(record), "  ")) << "\n";
  } else {
    std::cout << "  " << style.green(record.isMutated() ? "admitted, mutated" : "admitted") << "\n";
  }
  std::cout << "\n";
}

struct Summary {
  size_t objects = 0;
  size_t admitted = 0;
  size_t mutated = 0;
  size_t denied = 0;
  size_t skipped = 0;
  size_t errors = 0;

  std::string line() const {
    std::string text = std::to_string(objects) + (objects == 1 ? " object: " : " objects: ") +
                       std::to_string(admitted) + " admitted (" + std::to_string(mutated) +
                       " mutated), " + std::to_string(denied) + " denied";
    if (skipped > 0) {
      text += "; " + std::to_string(skipped) + " skipped (not a Pod or Pod controller)";
    }
    if (errors > 0) {
      text += "; " + std::to_string(errors) + (errors == 1 ? " input error" : " input errors");
    }
    return text;
  }
};

using JsonWriter = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

void writeString(JsonWriter& w, std::string_view value) {
  w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
}

void writeField(JsonWriter& w, std::string_view key, std::string_view value) {
  w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  writeString(w, value);
}

void writeOptionalField(JsonWriter& w, std::string_view key, std::string_view value) {
  w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  if (value.empty()) {
    w.Null();
  } else {
    writeString(w, value);
  }
}

void writePosition(JsonWriter& w, const InputObject& input) {
  writeField(w, "file", input.file);
  w.Key("index");
  w.Int(input.index);
  if (input.item >= 0) {
    w.Key("item");
    w.Int(input.item);
  }
  w.Key("line");
  w.Int(input.line);
  writeField(w, "apiVersion", stringMember(input.json.get(), "apiVersion"));
  writeField(w, "kind", stringMember(input.json.get(), "kind"));
  writeField(w, "name", nameOf(*input.json));
  if (nameOf(*input.json).empty()) writeField(w, "generateName", generateNameOf(*input.json));
}

void writeViolations(JsonWriter& w, std::string_view key, const std::vector<Violation>& list) {
  w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  w.StartArray();
  for (const Violation& violation : list) {
    w.StartObject();
    writeField(w, "rule", violation.rule.name());
    writeField(w, "field", violation.field);
    writeField(w, "message", violation.format());
    w.EndObject();
  }
  w.EndArray();
}

void writeRecord(JsonWriter& w, const Record& record) {
  w.StartObject();
  writePosition(w, *record.input);
  writeField(w, "namespace", record.namespaceName);
  writeField(w, "class", className(record.mutation.workloadClass));
  writeField(w, "reason", classReason(record.mutation));
  writeOptionalField(w, "profile", record.mutation.profile);
  writeOptionalField(w, "profileReason", record.mutation.profileReason);
  w.Key("admitted");
  w.Bool(record.admitted());
  w.Key("mutated");
  w.Bool(record.isMutated());
  w.Key("patch");
  JsonDocument patch;
  if (record.patch.empty() ||
      patch.Parse(record.patch.data(), record.patch.size()).HasParseError()) {
    patch.SetArray();
  }
  patch.Accept(w);
  w.Key("injected");
  w.StartArray();
  for (const std::string& change : record.mutation.changes) writeString(w, change);
  w.EndArray();
  w.Key("warnings");
  w.StartArray();
  for (const std::string& warning : record.warnings) writeString(w, warning);
  w.EndArray();
  writeViolations(w, "ruleWarnings", record.validation.warnings);
  writeViolations(w, "denials", record.validation.denials);
  writeViolations(w, "audited", record.validation.audited);
  writeOptionalField(w, "message", record.denial);
  w.EndObject();
}

void printJson(const std::vector<InputObject>& objects, const std::vector<Record>& records,
               const std::vector<InputError>& errors, const Summary& summary) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.SetIndent(' ', 2);
  w.StartObject();
  w.Key("objects");
  w.StartArray();
  for (const Record& record : records) writeRecord(w, record);
  w.EndArray();
  w.Key("skipped");
  w.StartArray();
  for (const InputObject& object : objects) {
    if (object.record) continue;
    w.StartObject();
    writePosition(w, object);
    w.EndObject();
  }
  w.EndArray();
  w.Key("errors");
  w.StartArray();
  for (const InputError& error : errors) {
    w.StartObject();
    writeField(w, "file", error.file);
    w.Key("line");
    w.Int(error.line);
    w.Key("column");
    w.Int(error.column);
    writeField(w, "message", error.message);
    w.EndObject();
  }
  w.EndArray();
  w.Key("summary");
  w.StartObject();
  for (const auto& [key, count] :
       {std::pair{"objects", summary.objects}, std::pair{"admitted", summary.admitted},
        std::pair{"mutated", summary.mutated}, std::pair{"denied", summary.denied},
        std::pair{"skipped", summary.skipped}, std::pair{"errors", summary.errors}}) {
    w.Key(key);
    w.Uint64(count);
  }
  w.EndObject();
  w.EndObject();
  std::cout << std::string_view(buffer.GetString(), buffer.GetSize()) << "\n";
}

// The objects as the API server would store them, in input order, ready for
// `kubectl apply -f -`; kubectl's warning and denial lines go to stderr.
void printYaml(const std::vector<InputObject>& objects, const std::vector<Record>& records,
               const Summary& summary) {
  bool first = true;
  for (const InputObject& object : objects) {
    if (!first) std::cout << "---\n";
    first = false;
    std::cout << toYaml(object.record ? *records[*object.record].mutated : *object.json);
  }
  for (const Record& record : records) {
    for (const std::string& warning : record.warnings) std::cerr << "Warning: " << warning << "\n";
    if (!record.admitted()) std::cerr << kubectlDenial(record) << "\n";
  }
  std::cerr << summary.line() << "\n";
}

void printRecords(const std::vector<InputObject>& objects, const std::vector<Record>& records,
                  const std::vector<InputError>& errors, const Summary& summary, Format format) {
  switch (format) {
    case Format::Text: {
      const Style style(colourWanted());
      for (const Record& record : records) printText(record, style);
      std::cout << summary.line() << "\n";
      break;
    }
    case Format::Json:
      printJson(objects, records, errors, summary);
      break;
    case Format::Yaml:
      // A partial set applied by a pipeline is worse than none.
      if (errors.empty()) printYaml(objects, records, summary);
      break;
  }
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

}  // namespace

int checkCommand(const Arguments& args) {
  CheckOptions options;
  if (const std::optional<int> exitCode = parseOptions(args, options)) return *exitCode;

  const ProfileLoadResult loaded = loadProfileDirectory(options.profilesDir);
  if (!loaded.ok()) {
    std::cerr << "aiadmit check: the profiles in " << options.profilesDir << " cannot be used:\n";
    for (const ProfileError& error : loaded.errors) std::cerr << error.format() << "\n";
    return 2;
  }
  const Engine engine(loaded.set, options.enforcement);

  std::vector<Source> sources;
  std::vector<InputError> errors;
  for (const std::string& path : options.paths) {
    collectSources(path, options.recursive, sources);
  }
  std::vector<InputObject> objects;
  for (const Source& source : sources) {
    if (source.unreadable) {
      errors.push_back(*source.unreadable);
    } else {
      parseSource(source, objects, errors);
    }
  }
  if (objects.empty() && errors.empty()) {
    errors.push_back({"", 0, 0, "no objects in the input"});
  }

  std::vector<Record> records;
  Summary summary;
  for (InputObject& object : objects) {
    if (object.kind == WorkloadKind::Other) {
      ++summary.skipped;
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
  summary.errors = errors.size();
  for (const InputError& error : errors) std::cerr << "error: " << error.format() << "\n";

  if (options.summary) {
    printReport(objects, records, options);
  } else {
    printRecords(objects, records, errors, summary, options.format);
  }
  if (!errors.empty()) return 2;
  return summary.denied > 0 ? 1 : 0;
}

}  // namespace aiadmit
