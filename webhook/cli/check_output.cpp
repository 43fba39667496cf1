#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iostream>

#include "webhook/cli/check_output.h"
#include "webhook/codec/json_pointer.h"
#include "webhook/codec/text.h"
#include "webhook/codec/yaml_json.h"
#include "webhook/codec/yaml_write.h"
#include "webhook/model/annotations.h"

namespace aiadmit::check_cli {

std::string_view nameOf(const JsonValue& object) {
  return stringMember(member(&object, "metadata"), "name");
}

std::string_view generateNameOf(const JsonValue& object) {
  return stringMember(member(&object, "metadata"), "generateName");
}

std::string Summary::line() const {
  std::string text = std::to_string(objects) + (objects == 1 ? " object: " : " objects: ") +
                     std::to_string(admitted) + " admitted (" + std::to_string(mutated) +
                     " mutated), " + std::to_string(denied) + " denied";
  if (skipped > 0) {
    text += "; " + std::to_string(skipped) + " skipped (not a kind that runs Pods";
    text += notJudged > 0 ? ", " + std::to_string(notJudged) + " of them not judged)" : ")";
  }
  if (errors > 0) {
    text += "; " + std::to_string(errors) + (errors == 1 ? " input error" : " input errors");
  }
  if (warnings > 0) {
    text +=
        "; " + std::to_string(warnings) + (warnings == 1 ? " input warning" : " input warnings");
  }
  return text;
}

std::string notJudgedLine(const InputObject& object) {
  const JsonValue& json = *object.json;
  const GroupVersion gv = splitApiVersion(stringMember(&json, "apiVersion"));
  const std::string kind(stringMember(&json, "kind"));
  std::string line = object.file + ":" + std::to_string(object.line) + ": " + kind + "/" +
                     std::string(nameOf(json)) + ": not judged: it asks for " +
                     object.notJudged->name + " at " + object.notJudged->pointer +
                     ", and no WorkloadType names " + kind + "." + std::string(gv.group) +
                     ": add one (aiadmit workload-types suggest on its CRD, "
                     "docs/workload-types.md) and its webhook rule";
  return line;
}

namespace {

// kubectl prints the name of the webhook that answered; manifests applied by
// people and pipelines go to this one (manifests/base/webhooks.yaml).
constexpr const char* kValidatingWebhook = "applied.validate.aiadmit.dev";

// ----------------------------------------------------------------- output

// "deployment/vllm", or "job/sample-job-*" for a generated name.
std::string objectLabel(const InputObject& input) {
  const std::string_view name = nameOf(*input.json);
  return lowercase(stringMember(input.json.get(), "kind")) + "/" +
         (name.empty() ? std::string(generateNameOf(*input.json)) + "*" : std::string(name));
}

std::string classReason(const Evaluation& evaluation) {
  if (evaluation.workloadClass != WorkloadClass::None) return evaluation.classReason;
  // A reason of an object that is no AI workload says what looked like one.
  return evaluation.classReason.empty()
             ? "no " + std::string(kWorkloadAnnotation) + " annotation and no accelerator request"
             : "no " + std::string(kWorkloadAnnotation) + " annotation; " + evaluation.classReason;
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

// Whether the record names the workload's templates: a custom resource's
// roles ("Master ×1, Worker ×8"), or a kind with several templates.
bool showsTemplates(const Evaluation& eval) {
  return eval.templates.size() > 1 || (!eval.templates.empty() && eval.customResource);
}

void printText(const Record& record, const Style& style) {
  std::cout << style.bold(objectLabel(*record.input)) << " (ns " << record.namespaceName << ")\n";
  const Evaluation& eval = record.mutation;
  if (showsTemplates(eval)) {
    std::cout << "  pods:     ";
    for (size_t i = 0; i < eval.templates.size(); ++i) {
      std::cout << (i > 0 ? ", " : "") << eval.templates[i];
    }
    std::cout << "\n";
  }
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

void writeIntField(JsonWriter& w, std::string_view key, int value) {
  w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  w.Int(value);
}

// The document of a file an object comes from, and its item in a List.
void writeDocument(JsonWriter& w, const std::string& file, int index, int item) {
  writeField(w, "file", file);
  writeIntField(w, "index", index);
  if (item >= 0) writeIntField(w, "item", item);
}

void writePosition(JsonWriter& w, const InputObject& input) {
  writeDocument(w, input.file, input.index, input.item);
  writeIntField(w, "line", input.line);
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
  // Whether the developer stated the class or aiadmit inferred it.
  if (record.mutation.workloadClass == WorkloadClass::None) {
    w.Key("classBasis");
    w.Null();
  } else {
    writeField(w, "classBasis", record.mutation.classDeclared ? "declared" : "inferred");
  }
  writeOptionalField(w, "profile", record.mutation.profile);
  writeOptionalField(w, "profileReason", record.mutation.profileReason);
  // Each pod template by role with its Pod count ("Worker ×8").
  w.Key("templates");
  w.StartArray();
  for (const std::string& entry : record.mutation.templates) writeString(w, entry);
  w.EndArray();
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

void writeInputWarnings(JsonWriter& w, const std::vector<InputWarning>& warnings) {
  w.Key("inputWarnings");
  w.StartArray();
  for (const InputWarning& warning : warnings) {
    w.StartObject();
    writeDocument(w, warning.file, warning.index, warning.item);
    writeIntField(w, "line", warning.line);
    writeIntField(w, "column", warning.column);
    writeField(w, "field", warning.field);
    writeField(w, "message", warning.message);
    w.EndObject();
  }
  w.EndArray();
}

void printJson(const std::vector<InputObject>& objects, const std::vector<Record>& records,
               const std::vector<InputError>& errors, const std::vector<InputWarning>& warnings,
               const Summary& summary) {
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
    if (object.notJudged) {
      w.Key("notJudged");
      w.StartObject();
      writeField(w, "asksFor", object.notJudged->name);
      writeField(w, "at", object.notJudged->pointer);
      writeField(w, "message", notJudgedLine(object));
      w.EndObject();
    }
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
  writeInputWarnings(w, warnings);
  w.Key("summary");
  w.StartObject();
  for (const auto& [key, count] :
       {std::pair{"objects", summary.objects}, std::pair{"admitted", summary.admitted},
        std::pair{"mutated", summary.mutated}, std::pair{"denied", summary.denied},
        std::pair{"skipped", summary.skipped}, std::pair{"notJudged", summary.notJudged},
        std::pair{"errors", summary.errors}, std::pair{"inputWarnings", summary.warnings}}) {
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

}  // namespace

void printRecords(const std::vector<InputObject>& objects, const std::vector<Record>& records,
                  const std::vector<InputError>& errors, const std::vector<InputWarning>& warnings,
                  const Summary& summary, Format format) {
  switch (format) {
    case Format::Text: {
      const Style style(colourWanted());
      for (const Record& record : records) printText(record, style);
      for (const InputObject& object : objects) {
        if (object.notJudged) std::cout << notJudgedLine(object) << "\n";
      }
      std::cout << summary.line() << "\n";
      break;
    }
    case Format::Json:
      printJson(objects, records, errors, warnings, summary);
      break;
    case Format::Yaml:
      // A partial set applied by a pipeline is worse than none.
      if (errors.empty()) printYaml(objects, records, summary);
      break;
  }
}

}  // namespace aiadmit::check_cli
