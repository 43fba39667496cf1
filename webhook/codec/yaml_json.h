// Kubernetes manifests as kubectl reads them: YAML (or JSON) documents turned
// into JSON values, plain scalars resolved as sigs.k8s.io/yaml does
// (YAML 1.1: 8 is a number, "8" a string, yes/on are true, ~ is null).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "webhook/codec/json.h"

namespace aiadmit {

// A key that one mapping of a document sets twice, and which value kubectl
// keeps. kubectl (apply, client- or server-side, and create) reads YAML with
// go-yaml v2 and JSON with Go's decoder and sends the API server what they
// give: the last value of a repeated key, a `<<` merge over the keys written
// before it. Neither it nor the API server says a word about it.
struct DuplicateKey {
  enum class Kind {
    Repeated,  // the key is written again: the last value is kept
    Merged,    // a `<<` merge after the key replaces its value
    // Two keys that go-yaml tells apart (1 and "1", 1.0 and 1) become one
    // JSON key: kubectl keeps one of them at random.
    Ambiguous,
  };
  Kind kind = Kind::Repeated;
  int line = 0;  // 1-based, where the key is set again (the `<<` for Merged)
  int column = 0;
  int firstLine = 0;  // where it was set before
  std::string key;    // as kubectl's JSON names it
  // The field, as a denial names one: "spec.containers[0].resources.limits[nvidia.com/gpu]".
  std::string path;
};

struct ManifestDocument {
  std::shared_ptr<JsonDocument> json;
  int line = 0;  // 1-based line where the document starts
  // In the order they occur; kept only when read DuplicateKeys::Keep.
  std::vector<DuplicateKey> duplicateKeys;
};

enum class DuplicateKeys {
  Refuse,  // a duplicate key makes the text unusable
  Keep,    // read as kubectl reads it, each duplicate recorded in its document
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
// holds control characters, keys that are not scalars or are null, nesting
// deeper than 200 levels, aliases that expand far beyond the text, and,
// unless `duplicates` is Keep, a key set twice. Keys are the JSON keys
// kubectl makes of them (YAML 1.1: `on` and `y` are "true", 0x1F is "31").
// Supports `<<` merge keys as kubectl does: a merge sets its keys where it
// stands, over keys written before it and under those written after it, and
// of the mappings of one merge the earlier win. Never hangs on the input
// yaml-cpp 0.7 does not return from. On failure returns false with `error`
// at the line and column of the problem.
bool parseManifests(std::string_view text, std::vector<ManifestDocument>& out, ManifestError& error,
                    DuplicateKeys duplicates = DuplicateKeys::Refuse);
// The same, with the error as "line N, column M: MESSAGE".
bool parseManifests(std::string_view text, std::vector<ManifestDocument>& out, std::string* error);

}  // namespace aiadmit
