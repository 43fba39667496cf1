// What `aiadmit check` decided for each object of its input, and how it
// prints that: text as kubectl users read it, JSON for machines, YAML of the
// objects as the API server would store them.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "webhook/engine/engine.h"
#include "webhook/model/accelerator_mentions.h"

namespace aiadmit::check_cli {

enum class Format { Text, Json, Yaml };

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

// Input that kubectl reads otherwise than it is written, and that check reads
// as kubectl does: a key set twice in a mapping.
struct InputWarning {
  std::string file;
  int index = 0;  // the document, as InputObject counts them
  int item = -1;  // the item of a List, or -1
  int line = 0;
  int column = 0;
  std::string field;  // the key's path in its object
  std::string message;

  std::string format() const { return InputError{file, line, column, message}.format(); }
};

// One object of the input, in the order kubectl would apply them.
struct InputObject {
  std::string file;
  int index = 0;  // document in the file, counting those that hold something
  int item = -1;  // position in the items of a List, or -1
  int line = 0;   // where the document starts
  std::shared_ptr<JsonDocument> json;
  // Its row when it is one of Kubernetes' own kinds (kubernetesKindOf).
  const WorkloadType* kubernetesKind = nullptr;
  std::optional<size_t> record;  // its Record, for the kinds aiadmit admits
  // A custom resource of a kind no row describes that asks for an
  // accelerator: its Pods would run GPUs nobody judged.
  std::optional<AcceleratorMention> notJudged;
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

std::string_view nameOf(const JsonValue& object);
std::string_view generateNameOf(const JsonValue& object);

// "NIMService/llama: not judged: ...": what to add so that aiadmit reads it.
std::string notJudgedLine(const InputObject& object);

struct Summary {
  size_t objects = 0;
  size_t admitted = 0;
  size_t mutated = 0;
  size_t denied = 0;
  size_t skipped = 0;
  size_t notJudged = 0;  // of the skipped
  size_t errors = 0;
  size_t warnings = 0;  // InputWarnings

  std::string line() const;
};

// Every record in `format`, then the summary line (text, YAML on stderr).
void printRecords(const std::vector<InputObject>& objects, const std::vector<Record>& records,
                  const std::vector<InputError>& errors, const std::vector<InputWarning>& warnings,
                  const Summary& summary, Format format);

}  // namespace aiadmit::check_cli
