// The strict reading of YAML configuration that profiles and WorkloadType
// documents share: every field checked against the known ones (with "did you
// mean"), types checked without YAML 1.1's guesses, keys set twice refused,
// and every problem kept with its file, line, column and field, so that an
// author sees all the mistakes of a file at once.
#pragma once

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "webhook/codec/text.h"
#include "webhook/policy/profile_loader.h"

namespace aiadmit::yaml_fields {

// ---- Kubernetes name syntax (k8s.io/apimachinery/pkg/util/validation) ----

inline bool isAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

inline bool isLowerAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

// RFC 1123 subdomain: lowercase labels joined by dots, at most 253.
inline bool isDnsSubdomain(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  for (char c : name) {
    if (!isLowerAlnum(c) && c != '-' && c != '.') return false;
  }
  return isLowerAlnum(name.front()) && isLowerAlnum(name.back()) &&
         name.find("..") == std::string_view::npos && name.find(".-") == std::string_view::npos &&
         name.find("-.") == std::string_view::npos;
}

// The name part of a label key, and a label value when not empty.
inline bool isLabelName(std::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  for (char c : name) {
    if (!isAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return isAlnum(name.front()) && isAlnum(name.back());
}

// A label, annotation or taint key: [prefix/]name.
inline bool isQualifiedName(std::string_view key) {
  const size_t slash = key.find('/');
  if (slash == std::string_view::npos) return isLabelName(key);
  return isDnsSubdomain(key.substr(0, slash)) && isLabelName(key.substr(slash + 1));
}

inline bool isLabelValue(std::string_view value) {
  return value.empty() || isLabelName(value);
}

inline std::string listOf(std::span<const std::string_view> options);
inline std::string listOf(std::initializer_list<std::string_view> options) {
  return listOf(std::span<const std::string_view>(options.begin(), options.size()));
}
inline std::string listOf(std::span<const std::string_view> options) {
  std::string list;
  for (std::string_view option : options) {
    if (option.empty()) continue;
    list += (list.empty() ? "" : ", ") + std::string(option);
  }
  return list;
}

// Walks one YAML document, keeping the field path and collecting errors, so a
// profile author sees every mistake of a file at once.
class Reader {
 public:
  Reader(const std::string& file, std::vector<ProfileError>& errors)
      : file_(file), errors_(errors) {}

  void error(const YAML::Node& node, const std::string& field, const std::string& message) {
    error(locationOf(node), field, message);
  }

  void error(SourceLocation location, const std::string& field, const std::string& message) {
    ProfileError e;
    e.file = file_;
    e.line = location.line;
    e.column = location.column;
    e.field = field;
    e.message = message;
    errors_.push_back(std::move(e));
    ++count_;
  }

  static SourceLocation locationOf(const YAML::Node& node) {
    if (!node.IsDefined()) return {};
    const YAML::Mark mark = node.Mark();
    if (mark.line < 0) return {};
    return {mark.line + 1, mark.column + 1};
  }

  int errorCount() const { return count_; }

  static std::string join(const std::string& field, const std::string& key) {
    return field.empty() ? key : field + "." + key;
  }
  static std::string index(const std::string& field, size_t i) {
    return field + "[" + std::to_string(i) + "]";
  }

  // A mapping whose keys are strings, each once, and all in `allowed`.
  bool mapping(const YAML::Node& node, const std::string& field,
               std::initializer_list<std::string_view> allowed) {
    return mapping(node, field, std::span<const std::string_view>(allowed.begin(), allowed.size()));
  }
  bool mapping(const YAML::Node& node, const std::string& field,
               std::span<const std::string_view> allowed) {
    if (!node.IsMap()) {
      error(node, field.empty() ? "document" : field, "must be a mapping, got " + kindOf(node));
      return false;
    }
    std::set<std::string> seen;
    for (const auto& entry : node) {
      if (!entry.first.IsScalar()) {
        error(entry.first, field.empty() ? "document" : field, "keys must be strings");
        continue;
      }
      const std::string key = entry.first.Scalar();
      if (!seen.insert(key).second) {
        error(entry.first, join(field, key), "is set twice");
      } else if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        const std::string_view suggestion = plausibleName(key, {allowed.begin(), allowed.end()});
        error(entry.first, join(field, key),
              suggestion.empty() ? "unknown field (known fields: " + listOf(allowed) + ")"
                                 : "unknown field; did you mean " + std::string(suggestion) + "?");
      }
    }
    return true;
  }

  std::optional<std::string> string(const YAML::Node& node, const std::string& field) {
    if (!node.IsScalar()) {
      error(node, field, "must be a string, got " + kindOf(node));
      return std::nullopt;
    }
    return node.Scalar();
  }

  // Only plain true or false: a quoted "true" or YAML 1.1's yes/on are
  // refused, because whoever wrote them may have meant something else.
  std::optional<bool> boolean(const YAML::Node& node, const std::string& field) {
    if (node.IsScalar() && node.Tag() == "?") {
      const std::string& text = node.Scalar();
      if (text == "true" || text == "True" || text == "TRUE") return true;
      if (text == "false" || text == "False" || text == "FALSE") return false;
    }
    error(node, field, "must be true or false, got " + describe(node));
    return std::nullopt;
  }

  std::optional<int64_t> count(const YAML::Node& node, const std::string& field, int64_t minimum,
                               int64_t maximum) {
    std::optional<int64_t> value;
    if (node.IsScalar() && node.Tag() == "?") value = parseWholeNumber(node.Scalar());
    if (!value) {
      error(node, field, "must be a whole number, got " + describe(node));
      return std::nullopt;
    }
    if (*value < minimum) {
      error(node, field, "must be at least " + std::to_string(minimum) + ", got " + node.Scalar());
      return std::nullopt;
    }
    if (*value > maximum) {
      error(node, field, "must be at most " + std::to_string(maximum) + ", got " + node.Scalar());
      return std::nullopt;
    }
    return value;
  }

  // A list of strings; `check` vets each entry and returns an error message
  // or "". Duplicates are refused.
  template <typename Check>
  std::vector<std::string> strings(const YAML::Node& node, const std::string& field, Check check) {
    std::vector<std::string> out;
    if (!node.IsSequence()) {
      error(node, field, "must be a list of strings, got " + kindOf(node));
      return out;
    }
    for (size_t i = 0; i < node.size(); ++i) {
      const std::string path = index(field, i);
      auto value = string(node[i], path);
      if (!value) continue;
      if (const std::string problem = check(*value); !problem.empty()) {
        error(node[i], path, problem);
      } else if (std::find(out.begin(), out.end(), *value) != out.end()) {
        error(node[i], path, inQuotes(*value) + " is listed twice");
      } else {
        out.push_back(*value);
      }
    }
    return out;
  }

  // A mapping of strings; `checkKey` and `checkValue` return an error or "".
  template <typename CheckKey, typename CheckValue>
  std::map<std::string, std::string> stringMap(const YAML::Node& node, const std::string& field,
                                               CheckKey checkKey, CheckValue checkValue) {
    std::map<std::string, std::string> out;
    if (!node.IsMap()) {
      error(node, field, "must be a mapping of strings, got " + kindOf(node));
      return out;
    }
    for (const auto& entry : node) {
      if (!entry.first.IsScalar()) {
        error(entry.first, field, "keys must be strings");
        continue;
      }
      const std::string key = entry.first.Scalar();
      const std::string path = join(field, key);
      if (out.count(key) != 0) {
        error(entry.first, path, "is set twice");
        continue;
      }
      if (const std::string problem = checkKey(key); !problem.empty()) {
        error(entry.first, path, problem);
        continue;
      }
      if (entry.second.IsNull()) {
        error(entry.first, path, "needs a value (write \"\" for an empty one)");
        continue;
      }
      auto value = string(entry.second, path);
      if (!value) continue;
      if (const std::string problem = checkValue(*value); !problem.empty()) {
        error(entry.second, path, problem);
        continue;
      }
      out[key] = *value;
    }
    return out;
  }

  // Calls `fn` with the child at `key` unless it is absent or null.
  template <typename Fn>
  void optional(const YAML::Node& parent, std::string_view key, const std::string& field, Fn fn) {
    if (!parent.IsMap()) return;
    const YAML::Node node = parent[std::string(key)];
    if (!node.IsDefined() || node.IsNull()) return;
    const std::string path = join(field, std::string(key));
    fn(node, path);
  }

  static std::string kindOf(const YAML::Node& node) {
    switch (node.Type()) {
      case YAML::NodeType::Map:
        return "a mapping";
      case YAML::NodeType::Sequence:
        return "a list";
      case YAML::NodeType::Null:
        return "nothing";
      case YAML::NodeType::Scalar:
        return "a scalar";
      case YAML::NodeType::Undefined:
        break;
    }
    return "nothing";
  }

 private:
  static std::optional<int64_t> parseWholeNumber(const std::string& text) {
    size_t i = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
    if (i == text.size()) return std::nullopt;
    int64_t value = 0;
    for (; i < text.size(); ++i) {
      if (text[i] < '0' || text[i] > '9') return std::nullopt;
      if (value > (std::numeric_limits<int64_t>::max() - (text[i] - '0')) / 10) return std::nullopt;
      value = value * 10 + (text[i] - '0');
    }
    return text[0] == '-' ? -value : value;
  }

  static std::string describe(const YAML::Node& node) {
    if (!node.IsScalar()) return kindOf(node);
    if (node.Tag() == "!") return "the quoted string " + inQuotes(node.Scalar());
    return inQuotes(node.Scalar());
  }

  const std::string& file_;
  std::vector<ProfileError>& errors_;
  int count_ = 0;
};

inline bool oneOf(Reader& r, const YAML::Node& node, const std::string& field,
                  const std::string& value, std::initializer_list<std::string_view> allowed) {
  if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return true;
  r.error(node, field, inQuotes(value) + " is not one of " + listOf(allowed));
  return false;
}

// Calls readSpec(spec) with the document's spec; a spec that is missing or
// null is an error of the document, as every aiadmit document has one.
template <class ReadSpec>
void readRequiredSpec(Reader& r, const YAML::Node& document, ReadSpec readSpec) {
  const YAML::Node spec = document["spec"];
  if (!spec.IsDefined() || spec.IsNull()) {
    r.error(document, "spec", "is required");
    return;
  }
  readSpec(spec);
}

}  // namespace aiadmit::yaml_fields
