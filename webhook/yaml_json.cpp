#include "webhook/yaml_json.h"

#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <utility>

#include "webhook/yaml_load.h"

namespace aiadmit {

namespace {

constexpr int kMaxDepth = 200;
constexpr std::string_view kMergeKey = "<<";

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
    if (end != nullptr && *end == '\0' && errno == 0)
      return JsonValue(static_cast<int64_t>(integer));
    if (errno == ERANGE && first != '-') {  // above int64, as JSON's Uint64 reads it
      errno = 0;
      const unsigned long long large = std::strtoull(digits.c_str(), &end, 0);
      if (end != nullptr && *end == '\0' && errno == 0) {
        return JsonValue(static_cast<uint64_t>(large));
      }
    }
    errno = 0;
    const double real = std::strtod(digits.c_str(), &end);
    const bool looksNumeric = digits.find_first_not_of("0123456789+-.eE") == std::string::npos;
    if (looksNumeric && end != nullptr && *end == '\0' && errno == 0 && std::isfinite(real)) {
      return JsonValue(real);
    }
  }
  return JsonValue(text.data(), static_cast<rapidjson::SizeType>(text.size()), alloc);
}

// Plain `<<` (or one tagged !!merge) merges mappings; quoted, it is a key.
bool isMergeKey(const YAML::Node& key) {
  return key.IsScalar() && key.Scalar() == kMergeKey &&
         (key.Tag() == "?" || key.Tag() == "tag:yaml.org,2002:merge");
}

// One YAML document into one JSON value.
class YamlConverter {
 public:
  YamlConverter(JsonAllocator& alloc, size_t& nodeBudget, ManifestError& error)
      : alloc_(alloc), nodeBudget_(nodeBudget), error_(error) {}

  bool convert(const YAML::Node& node, JsonValue& out, int depth) {
    if (depth > kMaxDepth) {
      return fail(node, "nested deeper than " + std::to_string(kMaxDepth) + " levels");
    }
    // Aliases are shared nodes: a few lines can stand for billions of them.
    if (nodeBudget_ == 0) return fail(node, "aliases expand to far more than the text holds");
    --nodeBudget_;
    switch (node.Type()) {
      case YAML::NodeType::Null:
      case YAML::NodeType::Undefined:
        out.SetNull();
        return true;
      case YAML::NodeType::Scalar:
        // Quoted scalars ("8", 'true') carry the non-specific tag "!": always strings.
        if (node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str") {
          out.SetString(node.Scalar().data(),
                        static_cast<rapidjson::SizeType>(node.Scalar().size()), alloc_);
        } else {
          out = resolvePlainScalar(node.Scalar(), alloc_);
        }
        return true;
      case YAML::NodeType::Sequence:
        out.SetArray();
        for (const YAML::Node& item : node) {
          JsonValue value;
          if (!convert(item, value, depth + 1)) return false;
          out.PushBack(value, alloc_);
        }
        return true;
      case YAML::NodeType::Map:
        return convertMap(node, out, depth);
    }
    return true;
  }

 private:
  bool convertMap(const YAML::Node& node, JsonValue& out, int depth) {
    out.SetObject();
    std::vector<std::pair<std::string, int>> keyLines;
    std::vector<YAML::Node> merges;
    for (const auto& entry : node) {
      const YAML::Node& key = entry.first;
      if (isMergeKey(key)) {
        merges.push_back(entry.second);
        continue;
      }
      if (!key.IsScalar()) return fail(key, "a mapping key must be a string");
      const std::string& name = key.Scalar();
      for (const auto& [seen, line] : keyLines) {
        if (seen == name) {
          return fail(
              key, "duplicate key \"" + name + "\" (first at line " + std::to_string(line) + ")");
        }
      }
      keyLines.emplace_back(name, key.Mark().line + 1);
      JsonValue value;
      if (!convert(entry.second, value, depth + 1)) return false;
      out.AddMember(makeString(name, alloc_), value, alloc_);
    }
    // Keys written in the mapping win over merged ones; earlier merged mappings
    // win over later ones.
    for (const YAML::Node& merge : merges) {
      std::vector<YAML::Node> sources;
      if (merge.IsMap()) {
        sources.push_back(merge);
      } else if (merge.IsSequence()) {
        for (const YAML::Node& item : merge) sources.push_back(item);
      } else {
        return fail(merge, "<< merges a mapping or a list of mappings");
      }
      for (const YAML::Node& source : sources) {
        if (!source.IsMap()) return fail(source, "<< merges a mapping or a list of mappings");
        JsonValue merged;
        if (!convert(source, merged, depth + 1)) return false;
        for (auto it = merged.MemberBegin(); it != merged.MemberEnd(); ++it) {
          const std::string_view name(it->name.GetString(), it->name.GetStringLength());
          if (member(&out, name) == nullptr) out.AddMember(it->name, it->value, alloc_);
        }
      }
    }
    return true;
  }

  bool fail(const YAML::Node& node, std::string message) {
    error_ = {node.Mark().line + 1, node.Mark().column + 1, std::move(message)};
    return false;
  }

  JsonAllocator& alloc_;
  size_t& nodeBudget_;  // shared by the documents of one text
  ManifestError& error_;
};

bool parseYaml(std::string_view text, std::vector<ManifestDocument>& out, ManifestError& error) {
  std::vector<YAML::Node> documents;
  YamlLoadError loadError;
  if (!loadYamlDocuments(text, documents, loadError)) {
    error = {loadError.line, loadError.column, "invalid YAML: " + loadError.message};
    return false;
  }
  // Generous for anchors reused by hand; a document cannot have more nodes
  // than characters otherwise.
  size_t nodeBudget = 10000 + 10 * text.size();
  for (const YAML::Node& node : documents) {
    if (node.IsNull() || !node.IsDefined()) continue;
    ManifestDocument document;
    document.json = std::make_shared<JsonDocument>();
    document.line = node.Mark().line + 1;
    try {
      YamlConverter converter(document.json->GetAllocator(), nodeBudget, error);
      if (!converter.convert(node, *document.json, 0)) return false;
    } catch (const YAML::Exception& e) {
      error = {e.mark.line + 1, e.mark.column + 1, "invalid YAML: " + e.msg};
      return false;
    }
    out.push_back(std::move(document));
  }
  return true;
}

bool isJsonSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

void locate(std::string_view text, size_t offset, ManifestError& error) {
  error.line = 1;
  size_t lineStart = 0;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++error.line;
      lineStart = i + 1;
    }
  }
  error.column = static_cast<int>(offset - lineStart) + 1;
}

// Forwards SAX events to a document, refusing duplicate keys and deep
// nesting, and remembering where it stopped.
template <typename Handler>
class StrictJsonHandler {
 public:
  StrictJsonHandler(Handler& handler, const rapidjson::StringStream& stream)
      : handler_(handler), stream_(stream) {}

  bool Null() { return handler_.Null(); }
  bool Bool(bool b) { return handler_.Bool(b); }
  bool Int(int i) { return handler_.Int(i); }
  bool Uint(unsigned u) { return handler_.Uint(u); }
  bool Int64(int64_t i) { return handler_.Int64(i); }
  bool Uint64(uint64_t u) { return handler_.Uint64(u); }
  bool Double(double d) { return handler_.Double(d); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool copy) {
    return handler_.RawNumber(s, n, copy);
  }
  bool String(const char* s, rapidjson::SizeType n, bool copy) {
    return handler_.String(s, n, copy);
  }
  bool Key(const char* s, rapidjson::SizeType n, bool copy) {
    std::vector<std::string>& keys = keys_.back();
    const std::string_view key(s, n);
    for (const std::string& seen : keys) {
      if (seen == key) return stop("duplicate key \"" + seen + "\"");
    }
    keys.emplace_back(key);
    return handler_.Key(s, n, copy);
  }
  bool StartObject() {
    if (!enter()) return false;
    keys_.emplace_back();
    return handler_.StartObject();
  }
  bool EndObject(rapidjson::SizeType n) {
    keys_.pop_back();
    --depth_;
    return handler_.EndObject(n);
  }
  bool StartArray() { return enter() && handler_.StartArray(); }
  bool EndArray(rapidjson::SizeType n) {
    --depth_;
    return handler_.EndArray(n);
  }

  const std::string& problem() const { return problem_; }
  size_t problemOffset() const { return problemOffset_; }

 private:
  bool enter() {
    if (++depth_ <= static_cast<size_t>(kMaxDepth)) return true;
    return stop("nested deeper than " + std::to_string(kMaxDepth) + " levels");
  }
  bool stop(std::string problem) {
    problem_ = std::move(problem);
    problemOffset_ = stream_.Tell();
    return false;
  }
  Handler& handler_;
  const rapidjson::StringStream& stream_;
  std::vector<std::vector<std::string>> keys_;
  size_t depth_ = 0;
  std::string problem_;
  size_t problemOffset_ = 0;
};

// One JSON value from `stream`, fed to a document by Populate.
struct JsonValueParse {
  rapidjson::StringStream& stream;
  rapidjson::ParseResult result;
  std::string problem;
  size_t problemOffset = 0;

  template <typename Handler>
  bool operator()(Handler& handler) {
    StrictJsonHandler<Handler> strict(handler, stream);
    rapidjson::Reader reader;
    // Iterative: hostile nesting is stopped by the handler, not by our stack.
    result =
        reader.Parse<rapidjson::kParseStopWhenDoneFlag | rapidjson::kParseValidateEncodingFlag |
                     rapidjson::kParseIterativeFlag>(stream, strict);
    problem = strict.problem();
    problemOffset = strict.problemOffset();
    return !result.IsError();
  }
};

// A stream of JSON values, as kubectl's decoder reads a file that starts with `{`.
bool parseJsonStream(std::string_view text, size_t start, std::vector<ManifestDocument>& out,
                     ManifestError& error) {
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos) {
    locate(text, nul, error);
    error.message = "NUL byte in the text";
    return false;
  }
  const std::string buffer(text);  // the reader needs a terminating NUL
  size_t offset = start;
  while (true) {
    while (offset < buffer.size() && isJsonSpace(buffer[offset])) ++offset;
    if (offset >= buffer.size()) return true;
    rapidjson::StringStream stream(buffer.c_str() + offset);
    JsonValueParse parse{stream, {}, {}, 0};
    ManifestDocument document;
    document.json = std::make_shared<JsonDocument>();
    document.json->Populate(parse);
    if (parse.result.IsError()) {
      if (!parse.problem.empty()) {
        locate(text, offset + parse.problemOffset, error);
        error.message = parse.problem;
      } else {
        locate(text, offset + parse.result.Offset(), error);
        error.message =
            std::string("invalid JSON: ") + rapidjson::GetParseError_En(parse.result.Code());
      }
      return false;
    }
    ManifestError position;
    locate(text, offset, position);
    document.line = position.line;
    offset += stream.Tell();
    if (!document.json->IsNull()) out.push_back(std::move(document));
  }
}

// Where a JSON stream starts: the first `{` after a byte order mark and
// white space, or npos when the text is not JSON.
size_t jsonStart(std::string_view text) {
  size_t i = text.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
  while (i < text.size() && isJsonSpace(text[i])) ++i;
  return i < text.size() && text[i] == '{' ? i : std::string_view::npos;
}

void emitNumber(YAML::Emitter& out, const JsonValue& value) {
  if (value.IsInt64()) {
    out << value.GetInt64();
  } else if (value.IsUint64()) {
    out << value.GetUint64();
  } else {
    // The shortest text that reads back as the same double (0.1, not 0.10000000000000001).
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    writer.Double(value.GetDouble());
    out << std::string(buffer.GetString(), buffer.GetSize());
  }
}

void emit(YAML::Emitter& out, const JsonValue& value) {
  switch (value.GetType()) {
    case rapidjson::kNullType:
      out << YAML::Null;
      break;
    case rapidjson::kFalseType:
      out << false;
      break;
    case rapidjson::kTrueType:
      out << true;
      break;
    case rapidjson::kNumberType:
      emitNumber(out, value);
      break;
    case rapidjson::kStringType: {
      const std::string text(value.GetString(), value.GetStringLength());
      JsonDocument scratch;
      if (text == kMergeKey || !resolvePlainScalar(text, scratch.GetAllocator()).IsString()) {
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
                    ManifestError& error) {
  const size_t start = jsonStart(text);
  if (start == std::string_view::npos) return parseYaml(text, out, error);
  // kubectl decides by the first character too: such text is JSON or nothing,
  // never flow-style YAML that would read `"b": }` as null.
  return parseJsonStream(text, start, out, error);
}

bool parseManifests(std::string_view text, std::vector<ManifestDocument>& out, std::string* error) {
  ManifestError parseError;
  if (parseManifests(text, out, parseError)) return true;
  *error = "line " + std::to_string(parseError.line) + ", column " +
           std::to_string(parseError.column) + ": " + parseError.message;
  return false;
}

}  // namespace aiadmit
