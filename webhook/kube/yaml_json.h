// Kubernetes manifests as kubectl reads them: YAML (or JSON) documents turned
// into JSON values, plain scalars resolved as sigs.k8s.io/yaml does
// (YAML 1.1: 8 is a number, "8" a string, yes/on are true, ~ is null).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "webhook/kube/json.h"

namespace aiadmit {

struct ManifestDocument {
  std::shared_ptr<JsonDocument> json;
  int line = 0;  // 1-based line where the document starts
};

struct ManifestError {
  int line = 0;  // 1-based
  int column = 0;
  std::string message;
};

// Appends every non-empty document of `text` to `out`, as kubectl splits a
// file: text whose first character is `{` is a stream of JSON objects,
// anything else YAML documents separated by `---`. Refuses what kubectl
// refuses or would read differently than written: text that is not UTF-8 or
// holds control characters, duplicate keys, keys that are not scalars,
// nesting deeper than 200 levels, aliases that expand far beyond the text.
// Supports `<<` merge keys (keys written in the mapping win). Never hangs on
// the input yaml-cpp 0.7 does not return from. On failure returns false with
// `error` at the line and column of the problem.
bool parseManifests(std::string_view text, std::vector<ManifestDocument>& out,
                    ManifestError& error);
// The same, with the error as "line N, column M: MESSAGE".
bool parseManifests(std::string_view text, std::vector<ManifestDocument>& out, std::string* error);

// One YAML document for a JSON value, readable back by kubectl to the same
// value: strings that would read as numbers, booleans, null or a merge key are
// quoted.
std::string toYaml(const JsonValue& value);

}  // namespace aiadmit
