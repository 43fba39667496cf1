#include "webhook/check.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <iostream>

#include "webhook/engine.h"
#include "webhook/json_patch.h"
#include "webhook/profile_loader.h"
#include "webhook/yaml_json.h"

namespace aiadmit {

namespace {

constexpr const char* kCheckHelp = R"(Usage: aiadmit check [options] FILE_OR_DIR...

Shows what the webhook would do with each object in the files, without a
cluster: its class and why, its profile, what would be injected, and every
warning and denial as kubectl would print them. Files hold YAML or JSON,
several documents each, or List objects; a directory means its .yaml, .yml
and .json files; - reads stdin. Objects that are not Pods, Jobs, CronJobs,
Deployments, StatefulSets or ReplicaSets are skipped and counted.

Options:
  --profiles DIR      profile directory (default: the shipped profiles)
  -n, --namespace NS  namespace of objects that name none (default: default)
  -o, --output FORMAT text (default), json (one record per object) or
                      yaml (the mutated objects, for kubectl apply -f -)
  -R, --recursive     read directories recursively
  -h, --help          this help

Exit status: 0 when every object is admitted, 1 when any is denied, 2 when
the input or the profiles cannot be used.
)";

enum class Format { Text, Json, Yaml };

struct Input {
  std::string file;  // as given, for messages
  std::string text;
};

struct Record {
  std::string file;
  int index = 0;
  std::string kind;
  std::string namespaceName;
  std::string name;
  Evaluation mutation;
  Evaluation validation;
  std::string patch;  // JSON Patch array, or ""
  std::vector<std::string> warnings;
  std::string denial;  // the 403 message, or ""
  std::shared_ptr<JsonDocument> mutated;
};

bool collectInputs(const std::string& path, bool recursive, std::vector<Input>& out,
                   std::string* error) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (path != "-" && fs::is_directory(path, ec)) {
    std::vector<std::string> files;
    auto consider = [&](const fs::directory_entry& entry) {
      const std::string extension = entry.path().extension().string();
      if (entry.is_regular_file(ec) &&
          (extension == ".yaml" || extension == ".yml" || extension == ".json")) {
        files.push_back(entry.path().string());
      }
    };
    if (recursive) {
      for (const auto& entry : fs::recursive_directory_iterator(path, ec)) consider(entry);
    } else {
      for (const auto& entry : fs::directory_iterator(path, ec)) consider(entry);
    }
    if (ec) {
      *error = path + ": " + ec.message();
      return false;
    }
    std::sort(files.begin(), files.end());
    for (const std::string& file : files) {
      if (!collectInputs(file, recursive, out, error)) return false;
    }
    return true;
  }
  Input input;
  input.file = path;
  if (!readAll(path, input.text)) {
    *error = path + ": cannot read";
    return false;
  }
  out.push_back(std::move(input));
  return true;
}

// A List (kind List or FooList with items) stands for its items.
void expandLists(const std::shared_ptr<JsonDocument>& document,
                 std::vector<std::shared_ptr<JsonDocument>>& out) {
  const std::string_view kind = stringMember(document.get(), "kind");
  const JsonValue* items = member(document.get(), "items");
  if (kind.size() >= 4 && kind.substr(kind.size() - 4) == "List" && isArray(items)) {
    for (const JsonValue& item : items->GetArray()) {
      auto copy = std::make_shared<JsonDocument>();
      copy->CopyFrom(item, copy->GetAllocator());
      out.push_back(std::move(copy));
    }
    return;
  }
  out.push_back(document);
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

Record evaluate(const Engine& engine, const std::string& file, int index,
                const std::shared_ptr<JsonDocument>& object, WorkloadKind kind,
                const std::string& defaultNamespace) {
  Record record;
  record.file = file;
  record.index = index;
  record.kind = std::string(stringMember(object.get(), "kind"));
  const JsonValue* metadata = member(object.get(), "metadata");
  record.name = std::string(stringMember(metadata, "name"));
  if (record.name.empty()) record.name = std::string(stringMember(metadata, "generateName"));
  record.namespaceName = std::string(stringMember(metadata, "namespace"));
  if (record.namespaceName.empty()) record.namespaceName = defaultNamespace;

  AdmissionSubject subject;
  subject.object = object.get();
  subject.kind = kind;
  subject.namespaceName = record.namespaceName;
  subject.operation = Operation::Create;

  auto mutated = std::make_shared<JsonDocument>();
  if (engine.mutateInto(subject, *mutated, &record.mutation)) {
    record.patch = diffToJsonPatch(*object, *mutated);
  }
  if (record.patch.empty()) {
    mutated = object;
  }
  record.mutated = mutated;

  // The validating webhook sees the object after every mutation.
  subject.object = mutated.get();
  const AdmissionOutcome outcome = engine.validate(subject, &record.validation);
  record.warnings = outcome.warnings();
  if (!outcome.isAllowed()) record.denial = outcome.message();
  return record;
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

void printText(const Record& record, const Style& style) {
  std::cout << style.bold(lower(record.kind) + "/" + record.name) << " (ns " << record.namespaceName
            << ")\n";
  const Evaluation& eval = record.mutation;
  if (eval.workloadClass == WorkloadClass::None) {
    std::cout
        << "  class:    none (no aiadmit.dev/workload annotation and no accelerator request)\n";
  } else {
    std::cout << "  class:    " << className(eval.workloadClass) << " (" << eval.classReason
              << ")\n";
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
  if (!record.denial.empty()) {
    std::cout << "  "
              << style.red("Error from server (Forbidden): error when creating \"" + record.file +
                           "\": admission webhook \"validate.aiadmit.dev\" denied the request: " +
                           record.denial)
              << "\n";
  } else {
    std::cout << "  " << (record.patch.empty() ? "admitted" : "admitted, mutated") << "\n";
  }
  std::cout << "\n";
}

void writeString(rapidjson::Writer<rapidjson::StringBuffer>& w, std::string_view key,
                 std::string_view value) {
  w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
}

void writeJsonRecord(rapidjson::Writer<rapidjson::StringBuffer>& w, const Record& record) {
  w.StartObject();
  writeString(w, "file", record.file);
  w.Key("index");
  w.Int(record.index);
  writeString(w, "kind", record.kind);
  writeString(w, "namespace", record.namespaceName);
  writeString(w, "name", record.name);
  writeString(w, "class", className(record.mutation.workloadClass));
  writeString(w, "reason", record.mutation.classReason);
  writeString(w, "profile", record.mutation.profile);
  w.Key("admitted");
  w.Bool(record.denial.empty());
  w.Key("patch");
  if (record.patch.empty()) {
    w.StartArray();
    w.EndArray();
  } else {
    w.RawValue(record.patch.data(), record.patch.size(), rapidjson::kArrayType);
  }
  w.Key("injected");
  w.StartArray();
  for (const std::string& change : record.mutation.changes) {
    w.String(change.data(), static_cast<rapidjson::SizeType>(change.size()));
  }
  w.EndArray();
  w.Key("warnings");
  w.StartArray();
  for (const std::string& warning : record.warnings) {
    w.String(warning.data(), static_cast<rapidjson::SizeType>(warning.size()));
  }
  w.EndArray();
  w.Key("denials");
  w.StartArray();
  for (const Violation& violation : record.validation.denials) {
    w.StartObject();
    writeString(w, "rule", violation.rule.name());
    writeString(w, "field", violation.field);
    writeString(w, "message", violation.format());
    w.EndObject();
  }
  w.EndArray();
  if (!record.denial.empty()) writeString(w, "message", record.denial);
  w.EndObject();
}

}  // namespace

int checkCommand(const Arguments& args) {
  std::string profilesDir = defaultProfilesDir();
  std::string defaultNamespace = "default";
  Format format = Format::Text;
  bool recursive = false;
  std::vector<std::string> paths;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    auto value = [&](const std::string& flag, std::string& out) {
      if (arg == flag && i + 1 < args.size()) {
        out = args[++i];
        return true;
      }
      if (arg.rfind(flag + "=", 0) == 0) {
        out = arg.substr(flag.size() + 1);
        return true;
      }
      return false;
    };
    std::string text;
    if (arg == "-h" || arg == "--help") {
      std::cout << kCheckHelp;
      return 0;
    }
    if (value("--profiles", profilesDir) || value("--namespace", defaultNamespace) ||
        value("-n", defaultNamespace)) {
      continue;
    }
    if (value("--output", text) || value("-o", text)) {
      if (text == "text") {
        format = Format::Text;
      } else if (text == "json") {
        format = Format::Json;
      } else if (text == "yaml") {
        format = Format::Yaml;
      } else {
        std::cerr << "aiadmit check: -o must be text, json or yaml\n";
        return 2;
      }
      continue;
    }
    if (arg == "-R" || arg == "--recursive") {
      recursive = true;
      continue;
    }
    if (arg.size() > 1 && arg[0] == '-') {
      std::cerr << "aiadmit check: unknown option " << arg << "\n\n" << kCheckHelp;
      return 2;
    }
    paths.push_back(arg);
  }
  if (paths.empty()) {
    std::cerr << "aiadmit check: name at least one file, directory or -\n\n" << kCheckHelp;
    return 2;
  }

  const ProfileLoadResult loaded = loadProfileDirectory(profilesDir);
  if (!loaded.ok()) {
    for (const ProfileError& error : loaded.errors) std::cerr << error.format() << "\n";
    return 2;
  }
  const Engine engine(loaded.set);

  std::vector<Input> inputs;
  std::string error;
  for (const std::string& path : paths) {
    if (!collectInputs(path, recursive, inputs, &error)) {
      std::cerr << "aiadmit check: " << error << "\n";
      return 2;
    }
  }

  std::vector<Record> records;
  size_t skipped = 0;
  for (const Input& input : inputs) {
    std::vector<ManifestDocument> documents;
    if (!parseManifests(input.text, documents, &error)) {
      std::cerr << "aiadmit check: " << input.file << ": invalid YAML: " << error << "\n";
      return 2;
    }
    int index = 0;
    for (const ManifestDocument& document : documents) {
      std::vector<std::shared_ptr<JsonDocument>> objects;
      expandLists(document.json, objects);
      for (const auto& object : objects) {
        if (!object->IsObject()) {
          std::cerr << "aiadmit check: " << input.file << ": line " << document.line
                    << ": a document is not an object\n";
          return 2;
        }
        const WorkloadKind kind = workloadKindOfObject(*object);
        if (kind == WorkloadKind::Other) {
          ++skipped;
        } else {
          records.push_back(evaluate(engine, input.file, index, object, kind, defaultNamespace));
        }
        ++index;
      }
    }
  }

  size_t denied = 0, mutated = 0;
  for (const Record& record : records) {
    if (!record.denial.empty()) {
      ++denied;
    } else if (!record.patch.empty()) {
      ++mutated;
    }
  }

  switch (format) {
    case Format::Text: {
      const Style style(isatty(STDOUT_FILENO) != 0);
      for (const Record& record : records) printText(record, style);
      std::cout << records.size() << (records.size() == 1 ? " object: " : " objects: ")
                << records.size() - denied << " admitted (" << mutated << " mutated), " << denied
                << " denied";
      if (skipped > 0) {
        std::cout << "; " << skipped << " skipped (not a Pod or Pod controller)";
      }
      std::cout << "\n";
      break;
    }
    case Format::Json: {
      rapidjson::StringBuffer buffer;
      rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
      writer.StartArray();
      for (const Record& record : records) writeJsonRecord(writer, record);
      writer.EndArray();
      std::cout << std::string_view(buffer.GetString(), buffer.GetSize()) << "\n";
      break;
    }
    case Format::Yaml: {
      bool first = true;
      for (const Record& record : records) {
        if (!first) std::cout << "---\n";
        first = false;
        std::cout << toYaml(*record.mutated);
      }
      break;
    }
  }
  return denied > 0 ? 1 : 0;
}

}  // namespace aiadmit
