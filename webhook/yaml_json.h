// Kubernetes manifests as kubectl reads them: YAML (or JSON) documents turned
// into JSON values, plain scalars resolved as sigs.k8s.io/yaml does
// (YAML 1.1: 8 is a number, "8" a string, yes/on are true, ~ is null).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "webhook/json.h"

namespace aiadmit {

struct ManifestDocument {
  std::shared_ptr<JsonDocument> json;
  int line = 0;  // 1-based line where the document starts
};

// Appends every non-empty document of `text` to `out`. On invalid YAML returns
// false with `error` naming the line and column.
bool parseManifests(std::string_view text, std::vector<ManifestDocument>& out, std::string* error);

// One YAML document for a JSON value, readable back by kubectl to the same
// value: strings that would read as numbers, booleans or null are quoted.
std::string toYaml(const JsonValue& value);

}  // namespace aiadmit
