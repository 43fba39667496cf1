// Small helpers over RapidJSON values so that request-path code reads like the
// Kubernetes field paths it walks, without exceptions or allocations for reads.
#pragma once

#include <rapidjson/document.h>

#include <limits>
#include <span>
#include <string>
#include <string_view>

namespace aiadmit {

using JsonValue = rapidjson::Value;
using JsonDocument = rapidjson::Document;
using JsonAllocator = rapidjson::Document::AllocatorType;

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
// address.
void copySharingStrings(const JsonValue& from, JsonValue& to, JsonAllocator& alloc);

// Appends `text` to `out` as a JSON string, quotes included, escaped byte for
// byte as RapidJSON's Writer escapes it: a quote, a backslash and control
// characters (\b \t \n \f \r, the others as \u00XX); every other byte as
// it is. For text written without a Writer (the admission answer, log
// lines).
void appendJsonString(std::string& out, std::string_view text);

// Compact serialisation (for patches, logs of shapes, tests).
std::string toJson(const JsonValue& value);

}  // namespace aiadmit
