// A section of a YAML document read from one table of its fields: each
// field's key and how its value is read, checked, bounded and stored. The
// keys the section accepts are the table's keys, and a field that a document
// leaves out (or writes wrongly) keeps its member's initializer, so a default
// is stated only there.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "webhook/policy/yaml_fields.h"

namespace aiadmit::yaml_fields {

// Reads `value`, found at `field`, into `section`, recording what is wrong.
template <typename Section>
using ReadField = std::function<void(Reader& reader, const YAML::Node& value,
                                     const std::string& field, Section& section)>;

template <typename Section>
struct Field {
  std::string_view key;
  ReadField<Section> read;
};

template <typename Section>
using Fields = std::vector<Field<Section>>;

// What is wrong with a string, or "" (as Reader::strings takes it).
using Check = std::function<std::string(const std::string& value)>;

// The mapping holds only the table's keys, each once.
template <typename Section>
bool knownFields(Reader& reader, const YAML::Node& node, const std::string& field,
                 const Fields<Section>& fields) {
  std::vector<std::string_view> keys;
  keys.reserve(fields.size());
  for (const Field<Section>& each : fields) keys.push_back(each.key);
  return reader.mapping(node, field, keys);
}

// Each field the mapping sets (and is not null), in the table's order.
template <typename Section>
void readEachField(Reader& reader, const YAML::Node& node, const std::string& field,
                   const Fields<Section>& fields, Section& section) {
  for (const Field<Section>& each : fields) {
    reader.optional(node, each.key, field, [&](const YAML::Node& value, const std::string& path) {
      each.read(reader, value, path, section);
    });
  }
}

// Both; false when `node` is not a mapping, and nothing was read.
template <typename Section>
bool readFields(Reader& reader, const YAML::Node& node, const std::string& field,
                const Fields<Section>& fields, Section& section) {
  if (!knownFields(reader, node, field, fields)) return false;
  readEachField(reader, node, field, fields, section);
  return true;
}

// ---- how a field is read ----

template <typename Section>
ReadField<Section> boolean(bool Section::*member) {
  return [member](Reader& reader, const YAML::Node& value, const std::string& field,
                  Section& section) {
    section.*member = reader.boolean(value, field).value_or(section.*member);
  };
}

template <typename Number>
void storeCount(Number& target, int64_t count) {
  target = static_cast<Number>(count);
}
template <typename Number>
void storeCount(std::optional<Number>& target, int64_t count) {
  target = static_cast<Number>(count);
}

// A whole number from `minimum` to `maximum`.
template <typename Section, typename Number>
ReadField<Section> count(Number Section::*member, int64_t minimum, int64_t maximum) {
  return [member, minimum, maximum](Reader& reader, const YAML::Node& value,
                                    const std::string& field, Section& section) {
    if (const std::optional<int64_t> number = reader.count(value, field, minimum, maximum)) {
      storeCount(section.*member, *number);
    }
  };
}

// A string that `check` accepts. The check also judges the member's value
// when the field is no string, as an empty name is wrong too.
template <typename Section>
ReadField<Section> text(std::string Section::*member, Check check) {
  return [member, check](Reader& reader, const YAML::Node& value, const std::string& field,
                         Section& section) {
    section.*member = reader.string(value, field).value_or(section.*member);
    if (const std::string problem = check(section.*member); !problem.empty()) {
      reader.error(value, field, problem);
    }
  };
}

// A check that accepts only `allowed` (an empty entry allows "" but is not
// listed in the message).
inline Check oneOfThese(std::vector<std::string_view> allowed) {
  return [allowed](const std::string& value) -> std::string {
    if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return "";
    return inQuotes(value) + " is not one of " + listOf(allowed);
  };
}

// A list of strings that `check` accepts, each once; `whenEmpty`, when not
// "", is the message for an empty list.
template <typename Section>
ReadField<Section> strings(std::vector<std::string> Section::*member, Check check,
                           std::string whenEmpty = "") {
  return [member, check, whenEmpty](Reader& reader, const YAML::Node& value,
                                    const std::string& field, Section& section) {
    section.*member = reader.strings(value, field, check);
    if (!whenEmpty.empty() && value.IsSequence() && value.size() == 0) {
      reader.error(value, field, whenEmpty);
    }
  };
}

// A mapping of strings whose keys and values the checks accept.
template <typename Section>
ReadField<Section> stringMap(std::map<std::string, std::string> Section::*member, Check checkKey,
                             Check checkValue) {
  return [member, checkKey, checkValue](Reader& reader, const YAML::Node& value,
                                        const std::string& field, Section& section) {
    section.*member = reader.stringMap(value, field, checkKey, checkValue);
  };
}

}  // namespace aiadmit::yaml_fields
