// Small helpers over RapidJSON values so that request-path code reads like the
// Kubernetes field paths it walks, without exceptions or allocations for reads.
#pragma once

#include <rapidjson/document.h>

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

// The object at `key`, created (or replaced when it is not an object, e.g. null).
JsonValue& ensureObject(JsonValue& parent, std::string_view key, JsonAllocator& alloc);
// The array at `key`, created (or replaced when it is not an array).
JsonValue& ensureArray(JsonValue& parent, std::string_view key, JsonAllocator& alloc);

// Sets `key` to a copy of `value`, adding the member when it is absent.
void setMember(JsonValue& object, std::string_view key, JsonValue&& value, JsonAllocator& alloc);
void setString(JsonValue& object, std::string_view key, std::string_view value,
               JsonAllocator& alloc);

JsonValue makeString(std::string_view text, JsonAllocator& alloc);

// Compact serialisation (for patches, logs of shapes, tests).
std::string toJson(const JsonValue& value);

// Nesting depth of a JSON text, counted without parsing it, so that a hostile
// body cannot exhaust the stack of any recursive walk further down the path.
// Returns the deepest level of [ and { outside strings.
size_t jsonNestingDepth(std::string_view text);

}  // namespace aiadmit
