// Parsing JSON into a RapidJSON document: RapidJSON's own reader in place,
// and, for a body the request path reads, a shorter reader for the JSON that
// Kubernetes sends (ASCII, integers) that gives the same document and hands
// everything else to RapidJSON's.
#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <type_traits>

#include "webhook/codec/json.h"
#include "webhook/codec/json_parse.h"

namespace aiadmit {

namespace {

// Kubernetes objects are nearly always pure ASCII; checking that first lets
// the parser skip per-character UTF-8 validation, its most expensive part.
bool isAscii(const char* text, size_t size) {
  unsigned char any = 0;
  for (size_t i = 0; i < size; ++i) any |= static_cast<unsigned char>(text[i]);
  return any < 0x80;
}

// Counts the values that go into the document (keys aside) and refuses more
// than `maxValues` in the same pass: a value costs the document and its parse
// stack several times the bytes it takes in the text.
template <typename Handler>
class ValueLimiter : public DepthLimiter<Handler> {
  using Base = DepthLimiter<Handler>;

 public:
  ValueLimiter(Handler& handler, size_t maxDepth, size_t maxValues)
      : Base(handler, maxDepth), values_{.bound = maxValues} {}

  bool Null() { return count() && Base::Null(); }
  bool Bool(bool b) { return count() && Base::Bool(b); }
  bool Int(int i) { return count() && Base::Int(i); }
  bool Uint(unsigned u) { return count() && Base::Uint(u); }
  bool Int64(int64_t i) { return count() && Base::Int64(i); }
  bool Uint64(uint64_t u) { return count() && Base::Uint64(u); }
  bool Double(double d) { return count() && Base::Double(d); }
  bool String(const char* s, rapidjson::SizeType n, bool copy) {
    return count() && Base::String(s, n, copy);
  }
  bool StartObject() { return count() && Base::StartObject(); }
  bool StartArray() { return count() && Base::StartArray(); }
  bool tooMany() const { return values_.exceeded; }

 private:
  bool count() { return values_.take(); }
  BoundedCount values_;
};

std::string tooManyValues(size_t maxValues) {
  return "JSON holds more than " + std::to_string(maxValues) + " values";
}

// RapidJSON 1.1.0 takes an escaped low surrogate with no high one before it
// ("\uDC00") and writes the three bytes of that code point, which are not
// UTF-8: a string no client could decode when it is echoed back in a patch
// or a warning. Such a string is refused.
template <typename Handler>
class SurrogateGuard : public ValueLimiter<Handler> {
 public:
  using ValueLimiter<Handler>::ValueLimiter;

  bool String(const char* s, rapidjson::SizeType n, bool copy) {
    return isUtf8(s, n) && ValueLimiter<Handler>::String(s, n, copy);
  }
  bool Key(const char* s, rapidjson::SizeType n, bool copy) {
    return isUtf8(s, n) && ValueLimiter<Handler>::Key(s, n, copy);
  }
  bool loneSurrogate() const { return loneSurrogate_; }

 private:
  // A surrogate's code point in UTF-8 is 0xED followed by 0xA0-0xBF.
  bool isUtf8(const char* s, size_t n) {
    for (const char* at = s; (at = static_cast<const char*>(std::memchr(at, 0xED, n - (at - s))));
         ++at) {
      if (static_cast<size_t>(at - s) + 1 < n && static_cast<unsigned char>(at[1]) >= 0xA0) {
        loneSurrogate_ = true;
        return false;
      }
    }
    return true;
  }
  bool loneSurrogate_ = false;
};

struct InSituParse {
  char* text;
  size_t size;
  size_t maxDepth;
  size_t maxValues;
  rapidjson::ParseResult result;
  bool tooDeep = false;
  bool tooMany = false;
  bool loneSurrogate = false;

  template <typename Handler>
  bool operator()(Handler& handler) {
    SurrogateGuard<Handler> limiter(handler, maxDepth, maxValues);
    rapidjson::Reader reader;
    // The recursive parser calls StartObject/StartArray before descending, so
    // the limiter stops hostile nesting before it costs stack.
    rapidjson::InsituStringStream stream(text);
    if (isAscii(text, size)) {
      result = reader.Parse<rapidjson::kParseInsituFlag>(stream, limiter);
    } else {
      result = reader.Parse<rapidjson::kParseInsituFlag | rapidjson::kParseValidateEncodingFlag>(
          stream, limiter);
    }
    tooDeep = limiter.tooDeep();
    tooMany = limiter.tooMany();
    loneSurrogate = limiter.loneSurrogate();
    return !result.IsError();
  }
};

// RapidJSON 1.1.0 takes the continuation bytes a UTF-8 lead byte announces
// without looking for the end: a text ending inside such a sequence would be
// read, and in situ written, past its terminating NUL.
bool endsInsideUtf8Sequence(const char* text, size_t size) {
  for (size_t back = 1; back <= 3 && back <= size; ++back) {
    const auto byte = static_cast<unsigned char>(text[size - back]);
    const size_t continuations = byte >= 0xC2 && byte <= 0xDF   ? 1
                                 : byte >= 0xE0 && byte <= 0xEF ? 2
                                 : byte >= 0xF0 && byte <= 0xF4 ? 3
                                                                : 0;
    if (continuations > back) return true;
  }
  return false;
}

// ---- The short reader ----
//
// It sends the document the SAX events RapidJSON's reader sends for the same
// text (kParseInsituFlag: strings unescaped in place and NUL-terminated, keys
// likewise; a number as Uint, Int, Uint64 or Int64 by the same bounds), so the
// document is the same value for value. It declines, and RapidJSON's reader
// parses the text again from the start, at anything else: a byte outside
// ASCII, a fraction or an exponent, more than 18 digits, a surrogate escape,
// nesting beyond the limit, and every error, whose message is RapidJSON's.

// Bytes the text is padded with, so that the string scan may read a whole
// block past the terminating NUL.
constexpr size_t kPadding = 32;

// How many bytes at `p` continue an unescaped run of a string, up to one
// block: the run ends at a quote, a backslash, a control character or a
// byte outside ASCII. Each such byte sets its bit 7 in `stops` (a byte
// outside ASCII has it already; a subtraction borrows below 0x20 and from a
// byte that is zero once XORed with the quote or the backslash). A borrow
// may set bits above the lowest, never below it.
constexpr size_t kBlock = sizeof(uint64_t);
inline size_t plainRun(const char* p) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHighs = 0x8080808080808080ULL;
  uint64_t word;
  std::memcpy(&word, p, sizeof word);
  const uint64_t quote = (word ^ (kOnes * '"')) - kOnes;
  const uint64_t backslash = (word ^ (kOnes * '\\')) - kOnes;
  const uint64_t control = word - kOnes * 0x20;
  const uint64_t stops = (quote | backslash | control | word) & kHighs;
  return stops == 0 ? kBlock : static_cast<size_t>(__builtin_ctzll(stops)) / 8;
}

inline bool isSpace(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

inline int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Takes the events of a value that is read but left out of the document.
struct NullSink {
  bool StartObject() { return true; }
  bool StartArray() { return true; }
  bool EndObject(rapidjson::SizeType) { return true; }
  bool EndArray(rapidjson::SizeType) { return true; }
  bool Key(const char*, rapidjson::SizeType, bool) { return true; }
  bool String(const char*, rapidjson::SizeType, bool) { return true; }
  bool Bool(bool) { return true; }
  bool Null() { return true; }
  bool Int(int32_t) { return true; }
  bool Uint(uint32_t) { return true; }
  bool Int64(int64_t) { return true; }
  bool Uint64(uint64_t) { return true; }
};

inline bool oneOf(std::span<const std::string_view> keys, std::string_view key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

// One loop over the text with the open containers on a stack of its own:
// no call per value, and the position stays in a register (as a member it
// would be read again after every byte the unescaping writes).
class ShortReader {
 public:
  ShortReader(char* text, size_t size, size_t maxDepth, size_t maxValues,
              const OmittedMember* omitted)
      : text_(text),
        end_(text + size),
        maxDepth_(std::min(maxDepth, kMaxLevels)),
        valuesLeft_(maxValues),
        omitted_(omitted) {}

  bool operator()(JsonDocument& document) {
    char* p = value(skipSpace(text_), document, maxDepth_);
    // Trailing text, or a NUL before the end: RapidJSON's error.
    parsed_ = p != nullptr && skipSpace(p) == end_;
    return parsed_;
  }
  bool parsed() const { return parsed_; }
  // Declined because the document would hold more values than allowed.
  bool tooMany() const { return tooMany_; }

 private:
  // Deeper nesting is declined when the limit is higher still (RapidJSON's
  // reader takes it then).
  static constexpr size_t kMaxLevels = 256;

  // Left uninitialised in the stack's array: each is written when opened.
  struct Level {
    rapidjson::SizeType count;
    bool object;
    bool onPath;  // an object on the omitted member's path, or the one that holds it
  };

  // The API server sends JSON without whitespace: one comparison for that.
  static char* skipSpace(char* p) {
    while (static_cast<unsigned char>(*p) <= ' ' && isSpace(*p)) ++p;
    return p;
  }

  // `p` at `c`, past any whitespace before it; nullptr when `c` is not next.
  // The comparison a reader makes anyway comes first, so text without
  // whitespace pays nothing for it.
  static char* at(char* p, char c) {
    if (*p == c) return p;
    p = skipSpace(p);
    return *p == c ? p : nullptr;
  }

  // The padding keeps the read in bounds.
  static bool literal(const char* p, const char* word, size_t size) {
    return std::memcmp(p, word, size) == 0;
  }

  // Reads the value at `p` (past any whitespace) into `sink`, nesting at
  // most `maxDepth` deep; the position after it, or nullptr to decline. Into
  // the document it follows the path of the omitted member (the top object
  // is on it; an object is when its key is the next step's) and reads the
  // member into a NullSink: checked as strictly, and left out.
  template <typename Sink>
  char* value(char* p, Sink& sink, size_t maxDepth) {
    constexpr bool kFollowsPath = !std::is_same_v<Sink, NullSink>;
    std::array<Level, kMaxLevels> levels;
    size_t depth = 0;
    // Whether the next container opened is on the path (the top one is). A
    // key of a container on the path sets it; no other container opens
    // before the next such key or the end, so it is never stale then.
    bool nextOnPath = kFollowsPath && omitted_ != nullptr;
    bool keyNext = false;  // in an object, after "{" or ","
    // At the top of the loop `p` is past any whitespace.
    for (;;) {
      bool omitted = false;
      if (keyNext) {
        char* key = nullptr;
        rapidjson::SizeType length = 0;
        if (*p != '"' || (p = string(p, key, length)) == nullptr) return nullptr;
        if ((p = at(p, ':')) == nullptr) return nullptr;
        p = skipSpace(p + 1);
        if constexpr (kFollowsPath) {
          if (levels[depth - 1].onPath) {
            const std::string_view name(key, length);
            const size_t step = depth - 1;
            if (step == omitted_->path.size()) {
              omitted = name == omitted_->key;
            } else {
              nextOnPath = oneOf(omitted_->path[step], name);
            }
          }
        }
        if (omitted) {
          NullSink null;
          if ((p = value(p, null, maxDepth - depth)) == nullptr) return nullptr;
        } else {
          sink.Key(key, length, false);
        }
      }
      bool closing = false;  // `p` is at the end of the innermost container
      if (!omitted) {
        if constexpr (kFollowsPath) {
          if (valuesLeft_-- == 0) {
            tooMany_ = true;
            return nullptr;
          }
        }
        switch (*p) {
          case '"': {
            char* text = nullptr;
            rapidjson::SizeType length = 0;
            if ((p = string(p, text, length)) != nullptr) sink.String(text, length, false);
            break;
          }
          case '{':
          case '[': {
            if (depth == maxDepth) return nullptr;
            const bool object = *p == '{';
            levels[depth] = {0, object, nextOnPath && object};
            ++depth;
            nextOnPath = false;
            if (object) {
              sink.StartObject();
            } else {
              sink.StartArray();
            }
            p = skipSpace(p + 1);
            closing = *p == (object ? '}' : ']');
            if (!closing) {
              keyNext = object;
              continue;
            }
            break;
          }
          case 't':
            p = literal(p, "true", 4) && sink.Bool(true) ? p + 4 : nullptr;
            break;
          case 'f':
            p = literal(p, "false", 5) && sink.Bool(false) ? p + 5 : nullptr;
            break;
          case 'n':
            p = literal(p, "null", 4) && sink.Null() ? p + 4 : nullptr;
            break;
          default:
            p = number(p, sink);
            break;
        }
        if (p == nullptr) return nullptr;
      }
      // A value is complete: the next one, or the ends of containers.
      for (;;) {
        if (closing) {
          const Level& closed = levels[--depth];
          ++p;
          if (closed.object) {
            sink.EndObject(closed.count);
          } else {
            sink.EndArray(closed.count);
          }
        }
        if (depth == 0) return p;
        Level& level = levels[depth - 1];
        if (!omitted) ++level.count;
        omitted = false;
        const char close = level.object ? '}' : ']';
        if (*p != ',' && *p != close) p = skipSpace(p);
        if (*p == ',') {
          p = skipSpace(p + 1);
          keyNext = level.object;
          break;
        }
        if (*p != close) return nullptr;
        closing = true;
      }
    }
  }

  // At the opening quote: unescapes the string in place and NUL-terminates
  // it; `head` and `length` are its content.
  [[gnu::always_inline]] static char* string(char* p, char*& head, rapidjson::SizeType& length) {
    head = ++p;
    char* out = head;  // where unescaped content goes; `p` until the first escape
    for (;;) {
      const size_t run = plainRun(p);
      if (out != p) std::memmove(out, p, run);
      p += run;
      out += run;
      if (run == kBlock) continue;
      if (*p == '"') break;
      if (*p != '\\' || (p = unescape(p, out)) == nullptr) return nullptr;
    }
    *out = '\0';
    length = static_cast<rapidjson::SizeType>(out - head);
    return p + 1;
  }

  // At a backslash: writes what it stands for at `out`.
  static char* unescape(char* p, char*& out) {
    char plain = 0;
    switch (p[1]) {
      case '"':
      case '\\':
      case '/':
        plain = p[1];
        break;
      case 'b':
        plain = '\b';
        break;
      case 'f':
        plain = '\f';
        break;
      case 'n':
        plain = '\n';
        break;
      case 'r':
        plain = '\r';
        break;
      case 't':
        plain = '\t';
        break;
      case 'u':
        return unicode(p, out);
      default:
        return nullptr;
    }
    *out++ = plain;
    return p + 2;
  }

  // \uXXXX outside the surrogates, as UTF-8 (the padding keeps the reads in bounds).
  static char* unicode(char* p, char*& out) {
    unsigned codepoint = 0;
    for (int i = 2; i < 6; ++i) {
      const int digit = hexDigit(p[i]);
      if (digit < 0) return nullptr;
      codepoint = codepoint << 4 | static_cast<unsigned>(digit);
    }
    if (codepoint >= 0xD800 && codepoint <= 0xDFFF) return nullptr;
    if (codepoint < 0x80) {
      *out++ = static_cast<char>(codepoint);
    } else if (codepoint < 0x800) {
      *out++ = static_cast<char>(0xC0 | codepoint >> 6);
      *out++ = static_cast<char>(0x80 | (codepoint & 0x3F));
    } else {
      *out++ = static_cast<char>(0xE0 | codepoint >> 12);
      *out++ = static_cast<char>(0x80 | (codepoint >> 6 & 0x3F));
      *out++ = static_cast<char>(0x80 | (codepoint & 0x3F));
    }
    return p + 6;
  }

  // An integer of at most 18 digits, sent as RapidJSON sends it.
  template <typename Sink>
  static char* number(char* p, Sink& sink) {
    const bool minus = *p == '-';
    if (minus) ++p;
    const char* const digits = p;
    uint64_t magnitude = 0;
    while (*p >= '0' && *p <= '9') magnitude = magnitude * 10 + static_cast<unsigned>(*p++ - '0');
    const size_t count = static_cast<size_t>(p - digits);
    if (count == 0 || count > 18 || (*digits == '0' && count > 1)) return nullptr;
    if (*p == '.' || *p == 'e' || *p == 'E') return nullptr;
    if (minus) {
      if (magnitude <= 0x80000000ULL) {
        sink.Int(static_cast<int32_t>(~static_cast<uint32_t>(magnitude) + 1));
      } else {
        sink.Int64(static_cast<int64_t>(~magnitude + 1));
      }
    } else if (magnitude <= std::numeric_limits<uint32_t>::max()) {
      sink.Uint(static_cast<unsigned>(magnitude));
    } else {
      sink.Uint64(magnitude);
    }
    return p;
  }

  char* const text_;
  const char* const end_;
  const size_t maxDepth_;
  size_t valuesLeft_;
  const OmittedMember* const omitted_;
  bool parsed_ = false;
  bool tooMany_ = false;
};

// What the short reader leaves out, left out of RapidJSON's document: below
// `object`, the rest of the path from `step` on.
void eraseOmitted(JsonValue& object, const OmittedMember& omitted, size_t step = 0) {
  if (!object.IsObject()) return;
  for (auto entry = object.MemberBegin(); entry != object.MemberEnd();) {
    const std::string_view name(entry->name.GetString(), entry->name.GetStringLength());
    if (step == omitted.path.size() && name == omitted.key) {
      entry = object.EraseMember(entry);  // keeps the others' order
      continue;
    }
    if (step < omitted.path.size() && oneOf(omitted.path[step], name)) {
      eraseOmitted(entry->value, omitted, step + 1);
    }
    ++entry;
  }
}

template <typename Document>
std::string parseInSitu(char* text, size_t size, size_t maxDepth, size_t maxValues,
                        Document& document) {
  // InsituStringStream reads up to a NUL; a NUL inside the body must not end it early.
  if (std::char_traits<char>::find(text, size, '\0') != nullptr) {
    return "malformed JSON: NUL byte in body";
  }
  if (endsInsideUtf8Sequence(text, size)) return "malformed JSON: truncated UTF-8 at the end";
  InSituParse parse{text, size, maxDepth, maxValues, {}, false, false, false};
  document.Populate(parse);
  if (parse.tooDeep) return "JSON nested deeper than " + std::to_string(maxDepth) + " levels";
  if (parse.tooMany) return tooManyValues(maxValues);
  if (parse.loneSurrogate) {
    return std::string("malformed JSON at offset ") + std::to_string(parse.result.Offset()) +
           ": a UTF-16 low surrogate escape (\\uDC00-\\uDFFF) with no high surrogate before it";
  }
  if (parse.result.IsError()) {
    return std::string("malformed JSON at offset ") + std::to_string(parse.result.Offset()) + ": " +
           rapidjson::GetParseError_En(parse.result.Code());
  }
  return {};
}

}  // namespace

std::string parseJsonInSitu(char* text, size_t size, size_t maxDepth, JsonDocument& document) {
  return parseInSitu(text, size, maxDepth, std::numeric_limits<size_t>::max(), document);
}

std::string parseJsonCopy(std::string_view text, size_t maxDepth, std::string& buffer,
                          JsonDocument& document, const OmittedMember* omitted, size_t maxValues) {
  buffer.reserve(text.size() + kPadding);
  buffer.assign(text.data(), text.size());
  buffer.append(kPadding, '\0');
  ShortReader reader(buffer.data(), text.size(), maxDepth, maxValues, omitted);
  document.Populate(reader);
  if (reader.parsed()) return {};
  if (reader.tooMany()) {
    document.SetNull();
    return tooManyValues(maxValues);
  }
  // Declined: RapidJSON's reader on a fresh copy (the short one may have
  // unescaped part of this one in place).
  buffer.assign(text.data(), text.size());
  document.SetNull();
  std::string error = parseInSitu(buffer.data(), buffer.size(), maxDepth, maxValues, document);
  if (error.empty() && omitted != nullptr) eraseOmitted(document, *omitted);
  return error;
}

}  // namespace aiadmit
