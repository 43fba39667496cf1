#include "webhook/kube/yaml_json.h"

#include "webhook/kube/yaml_scalars.h"

#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <utility>

namespace aiadmit {

namespace {

constexpr int kMaxDepth = 200;
constexpr const char* kNoncharacters = "U+FFFE and U+FFFF are not characters YAML can hold";

// U+FFFE or U+FFFF: YAML has no way to write them, and yaml-cpp turns them
// into U+FFFD in quoted scalars.
bool hasNoncharacter(std::string_view text) {
  return text.find("\xEF\xBF\xBE") != std::string_view::npos ||
         text.find("\xEF\xBF\xBF") != std::string_view::npos;
}
constexpr const char* kMergeTag = "tag:yaml.org,2002:merge";
constexpr const char* kStringTag = "tag:yaml.org,2002:str";

// Thrown by the builder to stop yaml-cpp, which has no other way to be stopped.
struct StopParsing {
  ManifestError error;
};

// Builds JSON documents from yaml-cpp's parse events. Working on events
// rather than on YAML::Node lets it bound what a text can cost: yaml-cpp 0.7
// never returns on some invalid input (a stray `,` at the top level: `[],`,
// `- a\n,`, `, a`), emitting events without end at the same place, and
// aliases can stand for billions of nodes.
class JsonBuilder : public YAML::EventHandler {
 public:
  JsonBuilder(std::vector<ManifestDocument>& out, size_t textSize)
      : out_(out),
        // A document cannot have more nodes than characters but for
        // aliases, which are allowed ten times that.
        nodeBudget_(10000 + 10 * textSize) {}

  void OnDocumentStart(const YAML::Mark& mark) override {
    count(mark);
    document_ = std::make_shared<JsonDocument>();
    anchors_.clear();
    stack_.clear();
    rootLine_ = 0;
  }

  void OnDocumentEnd() override {
    countUnmarked();
    if (document_ && rootLine_ > 0 && !document_->IsNull()) {
      out_.push_back({std::move(document_), rootLine_});
    }
    document_.reset();
  }

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    count(mark);
    spend(mark, 1);
    add(mark, JsonValue(), 1, anchor, std::nullopt, false);
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    count(mark);
    const auto it = anchors_.find(anchor);
    if (it == anchors_.end()) fail(mark, "an alias refers to the node that contains it");
    // Aliases are shared nodes: a few lines can stand for billions of them.
    spend(mark, it->second.nodes);
    JsonValue copy(it->second.value, allocator());
    add(mark, std::move(copy), it->second.nodes, YAML::NullAnchor, it->second.scalar, false);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    count(mark);
    spend(mark, 1);
    if (hasNoncharacter(value)) fail(mark, kNoncharacters);
    // Quoted scalars ("8", 'true') carry the non-specific tag "!": always strings.
    JsonValue json = tag == "!" || tag == kStringTag ? makeString(value, allocator())
                                                     : resolvePlainScalar(value, allocator());
    const bool mergeKey = value == kMergeKey && (tag == "?" || tag == kMergeTag);
    add(mark, std::move(json), 1, anchor, value, mergeKey);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, anchor, JsonValue(rapidjson::kArrayType));
  }
  void OnSequenceEnd() override { close(); }

  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, anchor, JsonValue(rapidjson::kObjectType));
  }
  void OnMapEnd() override { close(); }

 private:
  struct Anchored {
    JsonValue value;
    size_t nodes = 0;
    std::optional<std::string> scalar;  // the text of a scalar, for use as a key
  };

  struct Collection {
    JsonValue value;  // array or object
    YAML::Mark mark;
    YAML::anchor_t anchor = YAML::NullAnchor;
    size_t nodes = 1;
    // Mappings alternate key and value.
    bool expectingKey = true;
    std::string key;
    bool keyIsMerge = false;
    std::vector<std::pair<std::string, int>> keyLines;
    std::vector<std::pair<JsonValue, YAML::Mark>> merges;
  };

  JsonAllocator& allocator() { return document_->GetAllocator(); }

  // Events that start something carry the place they start at, and a place
  // starts only a few: a document, a collection, a key. Ends carry none, and
  // follow one another for at most the nesting depth.
  void count(const YAML::Mark& mark) {
    last_ = mark;
    if (mark.pos > furthest_) {
      furthest_ = mark.pos;
      sinceProgress_ = 0;
    } else {
      countUnmarked();
    }
  }
  void countUnmarked() {
    if (++sinceProgress_ > 4 * static_cast<size_t>(kMaxDepth) + 64) {
      fail(last_,
           "invalid YAML: the parser makes no progress here (a stray ',' at the top level?)");
    }
  }

  void spend(const YAML::Mark& mark, size_t nodes) {
    if (nodes > nodeBudget_) fail(mark, "aliases expand to far more than the text holds");
    nodeBudget_ -= nodes;
  }

  [[noreturn]] void fail(const YAML::Mark& mark, std::string message) {
    throw StopParsing{{mark.line + 1, mark.column + 1, std::move(message)}};
  }

  void open(const YAML::Mark& mark, YAML::anchor_t anchor, JsonValue value) {
    count(mark);
    spend(mark, 1);
    if (stack_.size() >= static_cast<size_t>(kMaxDepth)) {
      fail(mark, "nested deeper than " + std::to_string(kMaxDepth) + " levels");
    }
    if (!stack_.empty() && stack_.back().value.IsObject() && stack_.back().expectingKey) {
      fail(mark, "a mapping key must be a string");
    }
    Collection collection;
    collection.value = std::move(value);
    collection.mark = mark;
    collection.anchor = anchor;
    stack_.push_back(std::move(collection));
  }

  void close() {
    countUnmarked();
    Collection collection = std::move(stack_.back());
    stack_.pop_back();
    if (collection.value.IsObject()) merge(collection);
    add(collection.mark, std::move(collection.value), collection.nodes, collection.anchor,
        std::nullopt, false);
  }

  // Keys written in the mapping win over merged ones; earlier merged
  // mappings win over later ones.
  void merge(Collection& map) {
    for (auto& [value, mark] : map.merges) {
      std::vector<JsonValue*> sources;
      if (value.IsObject()) {
        sources.push_back(&value);
      } else if (value.IsArray()) {
        for (JsonValue& item : value.GetArray()) sources.push_back(&item);
      }
      if (sources.empty() && !value.IsArray()) {
        fail(mark, "<< merges a mapping or a list of mappings");
      }
      for (JsonValue* source : sources) {
        if (!source->IsObject()) fail(mark, "<< merges a mapping or a list of mappings");
        for (rapidjson::SizeType i = 0; i < source->MemberCount(); ++i) {
          auto& [name, item] = *(source->MemberBegin() + i);
          if (member(&map.value, stringOf(&name)) == nullptr) {
            map.value.AddMember(name, item, allocator());
          }
        }
      }
    }
  }

  void add(const YAML::Mark& mark, JsonValue value, size_t nodes, YAML::anchor_t anchor,
           const std::optional<std::string>& scalar, bool mergeKey) {
    if (anchor != YAML::NullAnchor) {
      Anchored& anchored = anchors_[anchor];
      anchored.value.CopyFrom(value, allocator());
      anchored.nodes = nodes;
      anchored.scalar = scalar;
    }
    if (stack_.empty()) {
      static_cast<JsonValue&>(*document_) = std::move(value);
      rootLine_ = mark.line + 1;
      return;
    }
    Collection& top = stack_.back();
    top.nodes += nodes;
    if (top.value.IsArray()) {
      top.value.PushBack(value, allocator());
      return;
    }
    if (top.expectingKey) {
      if (!scalar) fail(mark, "a mapping key must be a string");
      top.expectingKey = false;
      top.keyIsMerge = mergeKey;
      top.key = *scalar;
      if (mergeKey) return;
      for (const auto& [seen, line] : top.keyLines) {
        if (seen == top.key) {
          fail(mark, "duplicate key \"" + seen + "\" (first at line " + std::to_string(line) + ")");
        }
      }
      top.keyLines.emplace_back(top.key, mark.line + 1);
      return;
    }
    top.expectingKey = true;
    if (top.keyIsMerge) {
      top.merges.emplace_back(std::move(value), mark);
    } else {
      top.value.AddMember(makeString(top.key, allocator()), value, allocator());
    }
  }

  std::vector<ManifestDocument>& out_;
  size_t nodeBudget_;  // shared by the documents of one text
  int furthest_ = -1;  // the furthest place an event started at
  size_t sinceProgress_ = 0;
  std::shared_ptr<JsonDocument> document_;
  int rootLine_ = 0;
  std::map<YAML::anchor_t, Anchored> anchors_;
  std::vector<Collection> stack_;
  YAML::Mark last_;
};

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

// The offset of the first byte that YAML does not allow: not part of
// well-formed UTF-8 (overlong forms, surrogates and code points above
// U+10FFFF included), or a control character other than tab, line feed and
// carriage return; npos when there is none. kubectl's YAML reader refuses
// such text, while yaml-cpp passes bad UTF-8 on and takes NUL bytes for
// UTF-16 or UTF-32.
size_t unreadableByte(std::string_view text, std::string& why) {
  size_t i = 0;
  while (i < text.size()) {
    const auto byte = [&](size_t at) { return static_cast<unsigned char>(text[at]); };
    const unsigned char lead = byte(i);
    size_t length = 0;
    unsigned char low = 0x80, high = 0xBF;  // allowed range of the second byte
    if (lead < 0x80) {
      if ((lead < 0x20 && lead != '\t' && lead != '\n' && lead != '\r') || lead == 0x7F) {
        why = "control characters are not allowed";
        return i;
      }
      ++i;
      continue;
    }
    why = "not UTF-8";
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      if (lead == 0xE0) low = 0xA0;
      if (lead == 0xED) high = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      if (lead == 0xF0) low = 0x90;
      if (lead == 0xF4) high = 0x8F;
    } else {
      return i;
    }
    if (i + length > text.size() || byte(i + 1) < low || byte(i + 1) > high) return i;
    for (size_t k = 2; k < length; ++k) {
      if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return i;
    }
    i += length;
  }
  return std::string_view::npos;
}

bool parseYaml(std::string_view text, std::vector<ManifestDocument>& out, ManifestError& error) {
  std::string why;
  if (const size_t bad = unreadableByte(text, why); bad != std::string_view::npos) {
    locate(text, bad, error);
    error.message = "invalid YAML: " + why;
    return false;
  }
  std::vector<ManifestDocument> documents;
  try {
    std::istringstream stream{std::string(text)};
    YAML::Parser parser(stream);
    JsonBuilder builder(documents, text.size());
    while (parser.HandleNextDocument(builder)) {
    }
  } catch (const StopParsing& stop) {
    error = stop.error;
    return false;
  } catch (const YAML::Exception& e) {
    error = {e.mark.line + 1, e.mark.column + 1, "invalid YAML: " + e.msg};
    return false;
  }
  out.insert(out.end(), std::make_move_iterator(documents.begin()),
             std::make_move_iterator(documents.end()));
  return true;
}

bool isJsonSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

// Forwards SAX events to a document, refusing duplicate keys and deep
// nesting, and remembering where it stopped.
template <typename Handler>
class StrictJsonHandler : public DepthLimiter<Handler> {
  using Base = DepthLimiter<Handler>;
  using Base::handler_;

 public:
  StrictJsonHandler(Handler& handler, const rapidjson::StringStream& stream)
      : Base(handler, static_cast<size_t>(kMaxDepth)), stream_(stream) {}

  bool String(const char* s, rapidjson::SizeType n, bool copy) {
    if (hasNoncharacter({s, n})) return stop(kNoncharacters);
    return handler_.String(s, n, copy);
  }
  bool Key(const char* s, rapidjson::SizeType n, bool copy) {
    if (hasNoncharacter({s, n})) return stop(kNoncharacters);
    std::vector<std::string>& keys = keys_.back();
    const std::string_view key(s, n);
    for (const std::string& seen : keys) {
      if (seen == key) return stop("duplicate key \"" + seen + "\"");
    }
    keys.emplace_back(key);
    return handler_.Key(s, n, copy);
  }
  bool StartObject() {
    if (!Base::StartObject()) return refused();
    keys_.emplace_back();
    return true;
  }
  bool EndObject(rapidjson::SizeType n) {
    keys_.pop_back();
    return Base::EndObject(n);
  }
  bool StartArray() { return Base::StartArray() || refused(); }

  const std::string& problem() const { return problem_; }
  size_t problemOffset() const { return problemOffset_; }

 private:
  bool refused() {
    if (!this->tooDeep()) return false;
    return stop("nested deeper than " + std::to_string(kMaxDepth) + " levels");
  }
  bool stop(std::string problem) {
    problem_ = std::move(problem);
    problemOffset_ = stream_.Tell();
    return false;
  }
  const rapidjson::StringStream& stream_;
  std::vector<std::vector<std::string>> keys_;
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
  // The reader stops at a NUL; the padding after it keeps RapidJSON 1.1's
  // UTF-8 check, which reads up to three bytes past a truncated sequence at
  // the end, inside the buffer.
  const std::string buffer = std::string(text) + std::string(4, '\0');
  const size_t end = text.size();
  size_t offset = start;
  while (true) {
    while (offset < end && isJsonSpace(buffer[offset])) ++offset;
    if (offset >= end) return true;
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

}  // namespace

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
