#include "webhook/codec/yaml_json.h"

#include "webhook/codec/json_parse.h"
#include "webhook/codec/yaml_json_keys.h"
#include "webhook/codec/yaml_scalars.h"

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
#include <unordered_map>
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

// A scalar as it may serve as a key: its text, and whether it is plain.
struct KeyText {
  std::string text;
  bool plain = true;
};

// Builds JSON documents from yaml-cpp's parse events. Working on events
// rather than on YAML::Node lets it bound what a text can cost: yaml-cpp 0.7
// never returns on some invalid input (a stray `,` at the top level: `[],`,
// `- a\n,`, `, a`), emitting events without end at the same place, and
// aliases can stand for billions of nodes.
class JsonBuilder : public YAML::EventHandler {
 public:
  JsonBuilder(std::vector<ManifestDocument>& out, size_t textSize, DuplicateKeys duplicates)
      : out_(out),
        duplicates_(duplicates),
        // A document cannot have more nodes than characters but for
        // aliases, which are allowed ten times that.
        nodeBudget_(10000 + 10 * textSize) {}

  void OnDocumentStart(const YAML::Mark& mark) override {
    count(mark);
    document_ = std::make_shared<JsonDocument>();
    anchors_.clear();
    stack_.clear();
    found_.clear();
    rootLine_ = 0;
  }

  void OnDocumentEnd() override {
    countUnmarked();
    if (document_ && rootLine_ > 0 && !document_->IsNull()) {
      out_.push_back({std::move(document_), rootLine_, std::move(found_)});
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
    add(mark, std::move(copy), it->second.nodes, YAML::NullAnchor, it->second.key, false);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    count(mark);
    spend(mark, 1);
    if (hasNoncharacter(value)) fail(mark, kNoncharacters);
    // Quoted scalars ("8", 'true') carry the non-specific tag "!": always strings.
    const bool plain = tag != "!" && tag != kStringTag;
    JsonValue json =
        plain ? resolvePlainScalar(value, allocator()) : makeString(value, allocator());
    const bool mergeKey = value == kMergeKey && (tag == "?" || tag == kMergeTag);
    add(mark, std::move(json), 1, anchor, KeyText{value, plain}, mergeKey);
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
  static constexpr rapidjson::SizeType kNoMember = ~rapidjson::SizeType{0};

  struct Anchored {
    JsonValue value;
    size_t nodes = 0;
    std::optional<KeyText> key;  // a scalar's text, for use as a key
  };

  // A key of a mapping: where it was written, and its member.
  struct KeySet {
    std::string identity;  // as go-yaml compares keys; "" when only a merge set it
    int line = 0;          // where first written; 0 when only a merge set it
    rapidjson::SizeType member = kNoMember;
  };

  struct Collection {
    JsonValue value;  // array or object
    YAML::Mark mark;
    YAML::anchor_t anchor = YAML::NullAnchor;
    size_t nodes = 1;
    // Mappings alternate key and value.
    bool expectingKey = true;
    std::string key;  // the JSON key whose value comes next
    bool keyIsMerge = false;
    YAML::Mark keyMark;
    std::unordered_map<std::string, KeySet> keys;  // by JSON key
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
    add(collection.mark, std::move(collection.value), collection.nodes, collection.anchor,
        std::nullopt, false);
  }

  // The field path of `key` in the mapping on top of the stack.
  std::string pathTo(std::string_view key) const {
    std::string path;
    for (size_t i = 0; i + 1 < stack_.size(); ++i) {
      const Collection& outer = stack_[i];
      if (outer.value.IsArray()) {
        appendFieldIndex(path, outer.value.Size());
      } else {
        appendFieldKey(path, outer.key);
      }
    }
    appendFieldKey(path, key);
    return path;
  }

  void duplicate(DuplicateKey::Kind kind, const YAML::Mark& mark, int firstLine,
                 const std::string& key) {
    if (duplicates_ == DuplicateKeys::Keep) {
      found_.push_back({kind, mark.line + 1, mark.column + 1, firstLine, key, pathTo(key)});
    } else if (kind != DuplicateKey::Kind::Merged) {  // a merge is no duplicate in YAML
      fail(mark, "duplicate key \"" + key + "\" (first at line " + std::to_string(firstLine) + ")");
    }
  }

  // A key written in the mapping: go-yaml v2 sets it again if it was set,
  // and sigs.k8s.io/yaml then gives one JSON key for keys go-yaml tells apart.
  void writeKey(Collection& map, const YamlKey& key, const YAML::Mark& mark) {
    map.key = key.json;
    KeySet& set = map.keys[key.json];
    if (set.line > 0) {
      duplicate(set.identity == key.identity ? DuplicateKey::Kind::Repeated
                                             : DuplicateKey::Kind::Ambiguous,
                mark, set.line, key.json);
    } else {
      set.line = mark.line + 1;
    }
    set.identity = key.identity;
  }

  void setMember(Collection& map, const std::string& key, JsonValue value) {
    KeySet& set = map.keys[key];
    if (set.member != kNoMember) {
      (map.value.MemberBegin() + set.member)->value = std::move(value);
      return;
    }
    set.member = map.value.MemberCount();
    map.value.AddMember(makeString(key, allocator()), value, allocator());
  }

  // go-yaml v2 sets the keys of a merge where the `<<` stands: over those
  // written before it, under those written after it; of a list of mappings,
  // the last first, so that the earlier win.
  void merge(Collection& map, JsonValue& value, const YAML::Mark& mark) {
    std::vector<JsonValue*> sources;
    if (value.IsObject()) {
      sources.push_back(&value);
    } else if (value.IsArray()) {
      for (JsonValue& item : value.GetArray()) sources.push_back(&item);
    }
    if (sources.empty() && !value.IsArray()) {
      fail(mark, "<< merges a mapping or a list of mappings");
    }
    std::unordered_map<std::string, bool> overridden;
    for (auto source = sources.rbegin(); source != sources.rend(); ++source) {
      if (!(*source)->IsObject()) fail(mark, "<< merges a mapping or a list of mappings");
      for (auto& [name, item] : (*source)->GetObject()) {
        const std::string key(name.GetString(), name.GetStringLength());
        const auto written = map.keys.find(key);
        if (written != map.keys.end() && written->second.line > 0 && !overridden[key]) {
          overridden[key] = true;
          duplicate(DuplicateKey::Kind::Merged, map.keyMark, written->second.line, key);
        }
        setMember(map, key, JsonValue(item, allocator()));
      }
    }
  }

  void add(const YAML::Mark& mark, JsonValue value, size_t nodes, YAML::anchor_t anchor,
           const std::optional<KeyText>& keyText, bool mergeKey) {
    if (anchor != YAML::NullAnchor) {
      Anchored& anchored = anchors_[anchor];
      anchored.value.CopyFrom(value, allocator());
      anchored.nodes = nodes;
      anchored.key = keyText;
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
      if (!keyText && value.IsNull()) fail(mark, kNullKey);
      if (!keyText) fail(mark, "a mapping key must be a string");
      top.expectingKey = false;
      top.keyIsMerge = mergeKey;
      top.keyMark = mark;
      if (mergeKey) {
        top.key = std::string(kMergeKey);
        return;
      }
      std::string why;
      const std::optional<YamlKey> key = resolveYamlKey(keyText->text, keyText->plain, why);
      if (!key) fail(mark, why);
      writeKey(top, *key, mark);
      return;
    }
    top.expectingKey = true;
    if (top.keyIsMerge) {
      merge(top, value, mark);
    } else {
      setMember(top, top.key, std::move(value));
    }
  }

  std::vector<ManifestDocument>& out_;
  DuplicateKeys duplicates_;
  size_t nodeBudget_;  // shared by the documents of one text
  int furthest_ = -1;  // the furthest place an event started at
  size_t sinceProgress_ = 0;
  std::shared_ptr<JsonDocument> document_;
  int rootLine_ = 0;
  std::vector<DuplicateKey> found_;
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

bool parseYaml(std::string_view text, std::vector<ManifestDocument>& out, ManifestError& error,
               DuplicateKeys duplicates) {
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
    JsonBuilder builder(documents, text.size(), duplicates);
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

// Forwards SAX events to a document, refusing deep nesting and, unless
// they are kept, duplicate keys, and remembering where it stopped.
template <typename Handler>
class StrictJsonHandler : public DepthLimiter<Handler> {
  using Base = DepthLimiter<Handler>;
  using Base::handler_;

 public:
  StrictJsonHandler(Handler& handler, const rapidjson::StringStream& stream,
                    DuplicateKeys duplicates)
      : Base(handler, static_cast<size_t>(kMaxDepth)), stream_(stream), duplicates_(duplicates) {}

  bool String(const char* s, rapidjson::SizeType n, bool copy) {
    if (hasNoncharacter({s, n})) return stop(kNoncharacters);
    return handler_.String(s, n, copy);
  }
  bool Key(const char* s, rapidjson::SizeType n, bool copy) {
    if (hasNoncharacter({s, n})) return stop(kNoncharacters);
    const auto [seen, added] = keys_.back().try_emplace(std::string(s, n), stream_.Tell());
    if (!added) {
      if (duplicates_ == DuplicateKeys::Refuse)
        return stop("duplicate key \"" + seen->first + "\"");
      repeated_.emplace_back(stream_.Tell(), seen->second);
    }
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
  // Where each repeated key is and where it was first, in reading order.
  const std::vector<std::pair<size_t, size_t>>& repeated() const { return repeated_; }
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
  DuplicateKeys duplicates_;
  std::vector<std::unordered_map<std::string, size_t>> keys_;  // each key's offset
  std::vector<std::pair<size_t, size_t>> repeated_;
  std::string problem_;
  size_t problemOffset_ = 0;
};

// One JSON value from `stream`, fed to a document by Populate.
struct JsonValueParse {
  rapidjson::StringStream& stream;
  DuplicateKeys duplicates;
  rapidjson::ParseResult result;
  std::string problem;
  size_t problemOffset = 0;
  std::vector<std::pair<size_t, size_t>> repeated;

  template <typename Handler>
  bool operator()(Handler& handler) {
    StrictJsonHandler<Handler> strict(handler, stream, duplicates);
    rapidjson::Reader reader;
    // Iterative: hostile nesting is stopped by the handler, not by our stack.
    result =
        reader.Parse<rapidjson::kParseStopWhenDoneFlag | rapidjson::kParseValidateEncodingFlag |
                     rapidjson::kParseIterativeFlag>(stream, strict);
    problem = strict.problem();
    problemOffset = strict.problemOffset();
    repeated = strict.repeated();
    return !result.IsError();
  }
};

// A stream of JSON values, as kubectl's decoder reads a file that starts with `{`.
// Go's decoder keeps the last of a repeated member; the object read here
// holds them all until then.
void keepLastAsKubectl(const std::vector<size_t>& lineStarts, size_t offset,
                       const JsonValueParse& parse, ManifestDocument& document) {
  // The 1-based line and column of an offset of the text.
  auto position = [&](size_t at) {
    const auto next = std::upper_bound(lineStarts.begin(), lineStarts.end(), offset + at);
    const size_t line = static_cast<size_t>(next - lineStarts.begin());
    return std::pair{static_cast<int>(line), static_cast<int>(offset + at - next[-1]) + 1};
  };
  const std::vector<RepeatedMember> members = keepLastMembers(*document.json);
  // Both lists are in reading order, one entry per repeated key.
  for (size_t i = 0; i < members.size() && i < parse.repeated.size(); ++i) {
    const auto [line, column] = position(parse.repeated[i].first);
    document.duplicateKeys.push_back({DuplicateKey::Kind::Repeated, line, column,
                                      position(parse.repeated[i].second).first, members[i].key,
                                      members[i].path});
  }
}

bool parseJsonStream(std::string_view text, size_t start, std::vector<ManifestDocument>& out,
                     ManifestError& error, DuplicateKeys duplicates) {
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
  std::vector<size_t> lineStarts;  // made once a document repeats a key
  while (true) {
    while (offset < end && isJsonSpace(buffer[offset])) ++offset;
    if (offset >= end) return true;
    rapidjson::StringStream stream(buffer.c_str() + offset);
    JsonValueParse parse{stream, duplicates, {}, {}, 0, {}};
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
    if (!parse.repeated.empty()) {
      if (lineStarts.empty()) {
        lineStarts.push_back(0);
        for (size_t i = 0; i < end; ++i) {
          if (text[i] == '\n') lineStarts.push_back(i + 1);
        }
      }
      keepLastAsKubectl(lineStarts, offset, parse, document);
    }
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

bool parseManifests(std::string_view text, std::vector<ManifestDocument>& out, ManifestError& error,
                    DuplicateKeys duplicates) {
  const size_t start = jsonStart(text);
  if (start == std::string_view::npos) return parseYaml(text, out, error, duplicates);
  // kubectl decides by the first character too: such text is JSON or nothing,
  // never flow-style YAML that would read `"b": }` as null.
  return parseJsonStream(text, start, out, error, duplicates);
}

bool parseManifests(std::string_view text, std::vector<ManifestDocument>& out, std::string* error) {
  ManifestError parseError;
  if (parseManifests(text, out, parseError)) return true;
  *error = "line " + std::to_string(parseError.line) + ", column " +
           std::to_string(parseError.column) + ": " + parseError.message;
  return false;
}

}  // namespace aiadmit
