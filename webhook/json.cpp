#include "webhook/json.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace aiadmit {

namespace {
rapidjson::GenericStringRef<char> keyRef(std::string_view key) {
  return rapidjson::StringRef(key.data(), key.size());
}
}  // namespace

const JsonValue* member(const JsonValue* value, std::string_view key) {
  if (value == nullptr || !value->IsObject()) return nullptr;
  auto it = value->FindMember(keyRef(key));
  return it == value->MemberEnd() ? nullptr : &it->value;
}

JsonValue* member(JsonValue* value, std::string_view key) {
  return const_cast<JsonValue*>(member(static_cast<const JsonValue*>(value), key));
}

std::string_view stringOf(const JsonValue* value) {
  if (value == nullptr || !value->IsString()) return {};
  return {value->GetString(), value->GetStringLength()};
}

bool isObject(const JsonValue* value) { return value != nullptr && value->IsObject(); }
bool isArray(const JsonValue* value) { return value != nullptr && value->IsArray(); }

JsonValue makeString(std::string_view text, JsonAllocator& alloc) {
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

JsonValue& ensureObject(JsonValue& parent, std::string_view key, JsonAllocator& alloc) {
  JsonValue* existing = member(&parent, key);
  if (existing != nullptr) {
    if (!existing->IsObject()) existing->SetObject();
    return *existing;
  }
  parent.AddMember(makeString(key, alloc), JsonValue(rapidjson::kObjectType), alloc);
  return (parent.MemberEnd() - 1)->value;
}

JsonValue& ensureArray(JsonValue& parent, std::string_view key, JsonAllocator& alloc) {
  JsonValue* existing = member(&parent, key);
  if (existing != nullptr) {
    if (!existing->IsArray()) existing->SetArray();
    return *existing;
  }
  parent.AddMember(makeString(key, alloc), JsonValue(rapidjson::kArrayType), alloc);
  return (parent.MemberEnd() - 1)->value;
}

std::string toJson(const JsonValue& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  return {buffer.GetString(), buffer.GetSize()};
}

size_t jsonNestingDepth(std::string_view text) {
  size_t depth = 0;
  size_t deepest = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        inString = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        inString = true;
        break;
      case '{':
      case '[':
        if (++depth > deepest) deepest = depth;
        break;
      case '}':
      case ']':
        if (depth > 0) --depth;
        break;
      default:
        break;
    }
  }
  return deepest;
}

}  // namespace aiadmit
