// Mapping keys as kubectl reads them: go-yaml v2 resolves a plain key as it
// resolves any scalar (YAML 1.1), and sigs.k8s.io/yaml writes the result as
// a JSON key. Two keys go-yaml tells apart can become one JSON key (1 and
// "1"), and what kubectl keeps of them is then left to Go's map order.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "webhook/codec/json.h"

namespace aiadmit {

struct YamlKey {
  std::string json;      // the JSON key kubectl makes of it
  std::string identity;  // its type and value, as go-yaml compares keys
};

// Why a null key (`~:`, `null:`, `: a`) cannot be read: go-yaml reads it,
// sigs.k8s.io/yaml cannot write it as JSON.
inline constexpr const char* kNullKey = "a null key, which kubectl cannot turn into JSON";

// The key that the scalar `text` (plain: written without quotes or a string
// tag) is to kubectl, or nullopt with `why` when kubectl cannot turn it into
// a JSON key (null, or an integer above int64).
std::optional<YamlKey> resolveYamlKey(const std::string& text, bool plain, std::string& why);

// Go's strconv.FormatFloat(value, 'g', -1, 32): how sigs.k8s.io/yaml writes
// a float key ("1.5", "1e+06", "3.1415927").
std::string goFloat32Text(double value);

// A field path as denials name one: ".name" for a plain name, "[key]" for
// any other key (metadata.labels[app.kubernetes.io/name]), "[N]" for an item.
void appendFieldKey(std::string& path, std::string_view key);
void appendFieldIndex(std::string& path, size_t index);

// A member name that an object of a JSON document holds more than once.
struct RepeatedMember {
  std::string key;
  std::string path;  // of the member, its key included
};

// Leaves the last of each member name in every object of `value`, as Go's
// JSON decoder does, and returns each repeated name in the order a reader
// meets it (the second member's name, before what its value holds). Depth is
// the caller's to bound.
std::vector<RepeatedMember> keepLastMembers(JsonValue& value);

}  // namespace aiadmit
