// Small helpers over RapidJSON values so that request-path code reads like the
// Kubernetes field paths it walks, without exceptions or allocations for reads.
#pragma once

#include <rapidjson/document.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <string_view>

namespace aiadmit {

using JsonValue = rapidjson::Value;
using JsonDocument = rapidjson::Document;
using JsonAllocator = rapidjson::Document::AllocatorType;
// A document whose parse stack is taken from a pool as well (a JsonDocument's
// is malloc'd and freed by every parse): for one parsed again and again in
// memory kept from one parse to the next (webhook/engine/request_memory.h).
// Its values are JsonValues like any document's.
using PooledJsonDocument =
    rapidjson::GenericDocument<rapidjson::UTF8<>, JsonAllocator, JsonAllocator>;

// Whether `size` bytes at `a` and at `b` are the same. For names and keys,
// which are short: compared in words here, the caller makes no call (and so
// saves no registers on every lookup).
inline bool sameBytes(const char* a, const char* b, size_t size) {
  for (; size >= 8; a += 8, b += 8, size -= 8) {
    uint64_t x;
    uint64_t y;
    std::memcpy(&x, a, 8);
    std::memcpy(&y, b, 8);
    if (x != y) return false;
  }
  if (size >= 4) {  // the first four and the last four, which may overlap
    uint32_t x[2];
    uint32_t y[2];
    std::memcpy(&x[0], a, 4);
    std::memcpy(&y[0], b, 4);
    std::memcpy(&x[1], a + size - 4, 4);
    std::memcpy(&y[1], b + size - 4, 4);
    return x[0] == y[0] && x[1] == y[1];
  }
  for (; size > 0; ++a, ++b, --size) {
    if (*a != *b) return false;
  }
  return true;
}

// Member of an object, or nullptr when `value` is not an object or lacks `key`.
const JsonValue* member(const JsonValue* value, std::string_view key);
JsonValue* member(JsonValue* value, std::string_view key);

// String content of a string value; empty for anything else.
std::string_view stringOf(const JsonValue* value);
inline std::string_view stringMember(const JsonValue* object, std::string_view key) {
  return stringOf(member(object, key));
}

bool isObject(const JsonValue* value);
bool isArray(const JsonValue* value);

// The first element of the array `list` whose string member `key` is `value`
// (a volume or a container by name, a term's expression on a label key);
// nullptr when there is none or `list` is no array.
const JsonValue* elementWith(const JsonValue* list, std::string_view key, std::string_view value);

// The object at `key`, created (or replaced when it is not an object, e.g. null).
JsonValue& ensureObject(JsonValue& parent, std::string_view key, JsonAllocator& alloc);
// The array at `key`, created (or replaced when it is not an array).
JsonValue& ensureArray(JsonValue& parent, std::string_view key, JsonAllocator& alloc);

// Sets `key` to a copy of `value`, adding the member when it is absent.
void setMember(JsonValue& object, std::string_view key, JsonValue&& value, JsonAllocator& alloc);
void setString(JsonValue& object, std::string_view key, std::string_view value,
               JsonAllocator& alloc);

JsonValue makeString(std::string_view text, JsonAllocator& alloc);

// A deep copy of `from` into `to` whose strings are `from`'s own, referred to
// rather than copied, so `from` must outlive it: for a copy that is edited and
// then diffed against its original, where most strings then also compare by
// address. Faster than CopyFrom, which goes through a document's SAX stack.
void copySharingStrings(const JsonValue& from, JsonValue& to, JsonAllocator& alloc);

// Appends `text` to `out` as a JSON string, quotes included, escaped byte for
// byte as RapidJSON's Writer escapes it: a quote, a backslash and control
// characters (\b \t \n \f \r, the others as \u00XX); every other byte as
// it is. Runs of plain bytes are found 8 at a time and copied whole. For text
// written without a Writer (the admission answer, log lines).
void appendJsonString(std::string& out, std::string_view text);

// Compact serialisation (for patches, logs of shapes, tests).
std::string toJson(const JsonValue& value);

}  // namespace aiadmit
