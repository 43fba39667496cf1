#include "webhook/codec/json.h"

#include <array>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace aiadmit {

const JsonValue* member(const JsonValue* value, std::string_view key) {
  if (value == nullptr || !value->IsObject()) return nullptr;
  // Not RapidJSON's FindMember: with a plain pointer it would read the key
  // up to a NUL, which a view into a longer string lacks.
  for (auto it = value->MemberBegin(), end = value->MemberEnd(); it != end; ++it) {
    if (std::string_view(it->name.GetString(), it->name.GetStringLength()) == key) {
      return &it->value;
    }
  }
  return nullptr;
}

JsonValue* member(JsonValue* value, std::string_view key) {
  return const_cast<JsonValue*>(member(static_cast<const JsonValue*>(value), key));
}

std::string_view stringOf(const JsonValue* value) {
  if (value == nullptr || !value->IsString()) return {};
  return {value->GetString(), value->GetStringLength()};
}

bool isObject(const JsonValue* value) {
  return value != nullptr && value->IsObject();
}
bool isArray(const JsonValue* value) {
  return value != nullptr && value->IsArray();
}

JsonValue makeString(std::string_view text, JsonAllocator& alloc) {
  // An empty view may hold no pointer at all (stringMember of an absent
  // field), and RapidJSON copies with memcpy, which must not be given null.
  if (text.empty()) return JsonValue("", 0, alloc);
  return JsonValue(text.data(), static_cast<rapidjson::SizeType>(text.size()), alloc);
}

void setMember(JsonValue& object, std::string_view key, JsonValue&& value, JsonAllocator& alloc) {
  if (JsonValue* existing = member(&object, key)) {
    *existing = std::move(value);
    return;
  }
  object.AddMember(makeString(key, alloc), value, alloc);
}

void setString(JsonValue& object, std::string_view key, std::string_view value,
               JsonAllocator& alloc) {
  setMember(object, key, makeString(value, alloc), alloc);
}

namespace {

// The member at `key` as an empty value of `type` (an object or an array)
// unless it already is one.
JsonValue& ensureContainer(JsonValue& parent, std::string_view key, rapidjson::Type type,
                           JsonAllocator& alloc) {
  JsonValue* existing = member(&parent, key);
  if (existing == nullptr) {
    parent.AddMember(makeString(key, alloc), JsonValue(type), alloc);
    return (parent.MemberEnd() - 1)->value;
  }
  if (existing->GetType() == type) return *existing;
  if (type == rapidjson::kObjectType) {
    existing->SetObject();
  } else {
    existing->SetArray();
  }
  return *existing;
}

}  // namespace

JsonValue& ensureObject(JsonValue& parent, std::string_view key, JsonAllocator& alloc) {
  return ensureContainer(parent, key, rapidjson::kObjectType, alloc);
}

JsonValue& ensureArray(JsonValue& parent, std::string_view key, JsonAllocator& alloc) {
  return ensureContainer(parent, key, rapidjson::kArrayType, alloc);
}

const JsonValue* elementWith(const JsonValue* list, std::string_view key, std::string_view value) {
  if (!isArray(list)) return nullptr;
  for (const JsonValue& element : list->GetArray()) {
    if (stringMember(&element, key) == value) return &element;
  }
  return nullptr;
}

namespace {

// From this many elements on, an array is copied through a document's SAX
// handler, which gives each object exactly the members it has: AddMember
// makes room for 16 (512 bytes) in an object of two, and in a review of many
// small objects (long env lists) the copy took six times the document.
// Shorter arrays, all of a review of ordinary size, take the faster way.
constexpr rapidjson::SizeType kCopiedThroughSaxFrom = 64;

// A copy that shares the strings `from` refers to (an in-situ parse's),
// objects at their own size.
void copyThroughSax(const JsonValue& from, JsonValue& to, JsonAllocator& alloc) {
  rapidjson::GenericDocument<rapidjson::UTF8<>, JsonAllocator> copy(&alloc);
  auto generator = [&from](auto& handler) { return from.Accept(handler); };
  copy.Populate(generator);
  to.Swap(copy);
}

}  // namespace

void copySharingStrings(const JsonValue& from, JsonValue& to, JsonAllocator& alloc) {
  switch (from.GetType()) {
    case rapidjson::kObjectType:
      to.SetObject();
      for (auto it = from.MemberBegin(), end = from.MemberEnd(); it != end; ++it) {
        JsonValue name(rapidjson::StringRef(it->name.GetString(), it->name.GetStringLength()));
        JsonValue value;
        copySharingStrings(it->value, value, alloc);
        to.AddMember(name, value, alloc);
      }
      break;
    case rapidjson::kArrayType:
      if (from.Size() >= kCopiedThroughSaxFrom) return copyThroughSax(from, to, alloc);
      to.SetArray();
      to.Reserve(from.Size(), alloc);
      for (const JsonValue& element : from.GetArray()) {
        JsonValue value;
        copySharingStrings(element, value, alloc);
        to.PushBack(value, alloc);
      }
      break;
    case rapidjson::kStringType:
      to.SetString(rapidjson::StringRef(from.GetString(), from.GetStringLength()));
      break;
    default:  // numbers, booleans and null: copied as they are, with no allocation
      to.CopyFrom(from, alloc);
      break;
  }
}

namespace {

// Whether any of the 8 bytes of `word` needs escaping: a quote, a backslash
// or a control character. (The usual bit tricks: a byte below 0x20, or one
// that is zero once XORed with the quote or the backslash, sets its bit 7.)
bool anyEscaped(uint64_t word) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHighs = 0x8080808080808080ULL;
  const uint64_t quote = word ^ (kOnes * '"');
  const uint64_t backslash = word ^ (kOnes * '\\');
  return (((word - kOnes * 0x20) | (quote - kOnes) | (backslash - kOnes)) & ~word & ~quote &
          ~backslash & kHighs) != 0;
}

#if defined(__SSE2__)
// How many of the 16 bytes at `p` come before the first that needs escaping;
// 16 when none does. Bytes from 0x80 (UTF-8) need none: the comparison with
// 0x1F is unsigned.
size_t plainPrefix16(const char* p) {
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i quote = _mm_cmpeq_epi8(bytes, _mm_set1_epi8('"'));
  const __m128i backslash = _mm_cmpeq_epi8(bytes, _mm_set1_epi8('\\'));
  const __m128i control =
      _mm_cmpeq_epi8(_mm_subs_epu8(bytes, _mm_set1_epi8(0x1F)), _mm_setzero_si128());
  const auto stops = static_cast<unsigned>(
      _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), control)));
  return stops == 0 ? 16 : static_cast<size_t>(__builtin_ctz(stops));
}
#endif

}  // namespace

void appendJsonString(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  // The control characters JSON writes as a letter; the others as \u00XX.
  static constexpr auto kShortEscapes = [] {
    std::array<char, 0x20> letters{};
    letters['\b'] = 'b';
    letters['\t'] = 't';
    letters['\n'] = 'n';
    letters['\f'] = 'f';
    letters['\r'] = 'r';
    return letters;
  }();
  out.push_back('"');
  size_t plain = 0;  // where the run of bytes not yet copied begins
  size_t i = 0;
  while (i < text.size()) {
    // A block at a time while one is left, then a word, then byte by byte.
#if defined(__SSE2__)
    if (i + 16 <= text.size()) {
      const size_t run = plainPrefix16(text.data() + i);
      i += run;
      if (run == 16) continue;
    }
#endif
    if (i + sizeof(uint64_t) <= text.size()) {
      uint64_t word;
      std::memcpy(&word, text.data() + i, sizeof word);
      if (!anyEscaped(word)) {
        i += sizeof word;
        continue;
      }
    }
    const auto c = static_cast<unsigned char>(text[i++]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(text.data() + plain, i - 1 - plain);
    plain = i;
    out.push_back('\\');
    if (c == '"' || c == '\\') {
      out.push_back(static_cast<char>(c));
    } else if (kShortEscapes[c] != 0) {
      out.push_back(kShortEscapes[c]);
    } else {
      out += "u00";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
    }
  }
  out.append(text.data() + plain, text.size() - plain);
  out.push_back('"');
}

std::string toJson(const JsonValue& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  return {buffer.GetString(), buffer.GetSize()};
}

}  // namespace aiadmit
