#include "webhook/yaml_json.h"

#include "webhook/yaml_load.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace aiadmit {

namespace {

constexpr int kMaxDepth = 200;

bool isOneOf(const std::string& text, std::initializer_list<const char*> options) {
  for (const char* option : options) {
    if (text == option) return true;
  }
  return false;
}

JsonValue resolvePlainScalar(const std::string& text, JsonAllocator& alloc) {
  if (text.empty() || isOneOf(text, {"~", "null", "Null", "NULL"})) return JsonValue();
  if (isOneOf(text, {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON", "y", "Y"})) {
    return JsonValue(true);
  }
  if (isOneOf(text, {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF", "n", "N"})) {
    return JsonValue(false);
  }
  const char first = text[0];
  if ((first >= '0' && first <= '9') || first == '-' || first == '+' || first == '.') {
    const std::string digits = text.find('_') == std::string::npos ? text : [&] {
      std::string cleaned;
      for (char c : text) {
        if (c != '_') cleaned.push_back(c);
      }
      return cleaned;
    }();
    char* end = nullptr;
    errno = 0;
    const long long integer = std::strtoll(digits.c_str(), &end, 0);
    if (end != nullptr && *end == '\0' && errno == 0) return JsonValue(static_cast<int64_t>(integer));
    errno = 0;
    const double real = std::strtod(digits.c_str(), &end);
    const bool looksNumeric = digits.find_first_not_of("0123456789+-.eE") == std::string::npos;
    if (looksNumeric && end != nullptr && *end == '\0' && errno == 0 && std::isfinite(real)) {
      return JsonValue(real);
    }
  }
  return JsonValue(text.data(), static_cast<rapidjson::SizeType>(text.size()), alloc);
}

bool convert(const YAML::Node& node, JsonValue& out, JsonAllocator& alloc, int depth,
             std::string* error) {
  if (depth > kMaxDepth) {
    *error = "line " + std::to_string(node.Mark().line + 1) + ": nested too deeply";
    return false;
  }
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      out.SetNull();
      return true;
    case YAML::NodeType::Scalar:
      // Quoted scalars ("8", 'true') carry the non-specific tag "!": always strings.
      if (node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str") {
        out.SetString(node.Scalar().data(), static_cast<rapidjson::SizeType>(node.Scalar().size()),
                      alloc);
      } else {
        out = resolvePlainScalar(node.Scalar(), alloc);
      }
      return true;
    case YAML::NodeType::Sequence:
      out.SetArray();
      for (const YAML::Node& item : node) {
        JsonValue value;
        if (!convert(item, value, alloc, depth + 1, error)) return false;
        out.PushBack(value, alloc);
      }
      return true;
    case YAML::NodeType::Map:
      out.SetObject();
      for (const auto& entry : node) {
        const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : std::string();
        JsonValue value;
        if (!convert(entry.second, value, alloc, depth + 1, error)) return false;
        setMember(out, key, std::move(value), alloc);
      }
      return true;
  }
  return true;
}

void emit(YAML::Emitter& out, const JsonValue& value) {
  switch (value.GetType()) {
    case rapidjson::kNullType: out << YAML::Null; break;
    case rapidjson::kFalseType: out << false; break;
    case rapidjson::kTrueType: out << true; break;
    case rapidjson::kNumberType:
      if (value.IsInt64()) {
        out << value.GetInt64();
      } else if (value.IsUint64()) {
        out << value.GetUint64();
      } else {
        out << value.GetDouble();
      }
      break;
    case rapidjson::kStringType: {
      const std::string text(value.GetString(), value.GetStringLength());
      JsonDocument scratch;
      // yaml-cpp writes some strings plain that read back as something else:
      // "--- a" (a root key would start a document) and text holding a
      // carriage return or another control character (a line break, or trimmed).
      const bool documentMarker = (text.rfind("---", 0) == 0 || text.rfind("...", 0) == 0) &&
                                  (text.size() == 3 || text.find_first_of(" \t\r\n") == 3);
      const bool control = std::any_of(text.begin(), text.end(),
                                       [](char c) { return (c >= 0 && c < 0x20) || c == 0x7F; });
      if (documentMarker || control ||
          !resolvePlainScalar(text, scratch.GetAllocator()).IsString()) {
        out << YAML::DoubleQuoted << text;
      } else {
        out << text;
      }
      break;
    }
    case rapidjson::kArrayType:
      if (value.Empty()) out << YAML::Flow;
      out << YAML::BeginSeq;
      for (const JsonValue& item : value.GetArray()) emit(out, item);
      out << YAML::EndSeq;
      break;
    case rapidjson::kObjectType:
      if (value.ObjectEmpty()) out << YAML::Flow;
      out << YAML::BeginMap;
      for (auto it = value.MemberBegin(); it != value.MemberEnd(); ++it) {
        out << YAML::Key;
        emit(out, it->name);
        out << YAML::Value;
        emit(out, it->value);
      }
      out << YAML::EndMap;
      break;
  }
}

}  // namespace

std::string toYaml(const JsonValue& value) {
  YAML::Emitter out;
  out.SetIndent(2);
  out.SetSeqFormat(YAML::Block);
  emit(out, value);
  return std::string(out.c_str(), out.size()) + "\n";
}

bool parseManifests(std::string_view text, std::vector<ManifestDocument>& out,
                    std::string* error) {
  std::vector<YAML::Node> documents;
  YamlLoadError loadError;
  if (!loadYamlDocuments(text, documents, loadError)) {
    *error = "line " + std::to_string(loadError.line) + ", column " +
             std::to_string(loadError.column) + ": " + loadError.message;
    return false;
  }
  for (const YAML::Node& node : documents) {
    if (node.IsNull() || !node.IsDefined()) continue;
    ManifestDocument document;
    document.json = std::make_shared<JsonDocument>();
    document.line = node.Mark().line + 1;
    try {
      if (!convert(node, *document.json, document.json->GetAllocator(), 0, error)) return false;
    } catch (const YAML::Exception& e) {
      *error = "line " + std::to_string(e.mark.line + 1) + ": " + e.msg;
      return false;
    }
    // A tagged empty scalar ("!int" alone) is as empty as a blank document.
    if (document.json->IsNull()) continue;
    out.push_back(std::move(document));
  }
  return true;
}

}  // namespace aiadmit
