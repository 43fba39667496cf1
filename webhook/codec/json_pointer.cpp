#include "webhook/codec/json_pointer.h"

#include <algorithm>

namespace aiadmit {

void appendEscapedPointerToken(std::string& pointer, std::string_view token) {
  pointer.push_back('/');
  for (char c : token) {
    if (c == '~') {
      pointer += "~0";
    } else if (c == '/') {
      pointer += "~1";
    } else {
      pointer.push_back(c);
    }
  }
}

std::string unescapedPointerToken(std::string_view escaped) {
  std::string token;
  token.reserve(escaped.size());
  for (size_t i = 0; i < escaped.size(); ++i) {
    if (escaped[i] == '~' && i + 1 < escaped.size()) {
      token.push_back(escaped[i + 1] == '1' ? '/' : '~');
      ++i;
    } else {
      token.push_back(escaped[i]);
    }
  }
  return token;
}

namespace {

// Calls `visit` with each unescaped token of `pointer` in turn, while it
// returns true; returns false when one did not. A token is a view into the
// pointer unless it holds an escape, which only then costs a copy.
template <typename Visit>
bool forEachToken(std::string_view pointer, Visit&& visit) {
  if (pointer.empty()) return true;
  size_t start = pointer.front() == '/' ? 1 : 0;
  std::string unescaped;
  for (;;) {
    const size_t slash = pointer.find('/', start);
    const std::string_view escaped = pointer.substr(
        start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    std::string_view token = escaped;
    if (escaped.find('~') != std::string_view::npos) {
      unescaped = unescapedPointerToken(escaped);
      token = unescaped;
    }
    if (!visit(token)) return false;
    if (slash == std::string_view::npos) return true;
    start = slash + 1;
  }
}

}  // namespace

std::vector<std::string> pointerTokens(std::string_view pointer) {
  std::vector<std::string> tokens;
  forEachToken(pointer, [&](std::string_view token) {
    tokens.emplace_back(token);
    return true;
  });
  return tokens;
}

bool isPlainName(std::string_view token) {
  if (token.empty()) return false;
  return std::all_of(token.begin(), token.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

void appendFieldPathMember(std::string& path, std::string_view token) {
  if (isPlainName(token)) {
    if (!path.empty()) path.push_back('.');
    path.append(token);
  } else {
    path.push_back('[');
    path.append(token);
    path.push_back(']');
  }
}

void appendFieldPathIndex(std::string& path, size_t index) {
  path += "[" + std::to_string(index) + "]";
}

std::optional<size_t> arrayIndexOf(std::string_view token) {
  if (token.empty() || token.size() > 9) return std::nullopt;
  if (token.size() > 1 && token[0] == '0') return std::nullopt;
  size_t index = 0;
  for (char c : token) {
    if (c < '0' || c > '9') return std::nullopt;
    index = index * 10 + static_cast<size_t>(c - '0');
  }
  return index;
}

const JsonValue* childAt(const JsonValue* value, std::string_view token) {
  if (value == nullptr) return nullptr;
  if (value->IsObject()) return member(value, token);
  if (value->IsArray()) {
    const auto index = arrayIndexOf(token);
    if (!index || *index >= value->Size()) return nullptr;
    return &(*value)[static_cast<rapidjson::SizeType>(*index)];
  }
  return nullptr;
}

GroupVersion splitApiVersion(std::string_view apiVersion) {
  const size_t slash = apiVersion.find('/');
  if (slash == std::string_view::npos) return {{}, apiVersion};
  return {apiVersion.substr(0, slash), apiVersion.substr(slash + 1)};
}

const JsonValue* valueAt(const JsonValue& root, std::string_view pointer) {
  const JsonValue* value = &root;
  const bool found = forEachToken(pointer, [&](std::string_view token) {
    value = childAt(value, token);
    return value != nullptr;
  });
  return found ? value : nullptr;
}

JsonValue* ensureObjectAt(JsonValue& root, std::string_view pointer, JsonAllocator& alloc) {
  JsonValue* value = &root;
  const bool reached = forEachToken(pointer, [&](std::string_view token) {
    if (value->IsArray()) {
      const auto index = arrayIndexOf(token);
      if (!index || *index >= value->Size()) return false;
      value = &(*value)[static_cast<rapidjson::SizeType>(*index)];
      return true;
    }
    if (!value->IsObject()) return false;
    // What is there stays as it is (an array of worker groups); only a
    // missing member is created, as an object.
    JsonValue* existing = member(value, token);
    value = existing != nullptr ? existing : &ensureObject(*value, token, alloc);
    return true;
  });
  return reached && value->IsObject() ? value : nullptr;
}

std::string fieldPathOf(const JsonValue& root, std::string_view pointer) {
  std::string path;
  const JsonValue* value = &root;
  forEachToken(pointer, [&](std::string_view token) {
    const auto index = arrayIndexOf(token);
    if (value != nullptr && value->IsArray() && index) {
      appendFieldPathIndex(path, *index);
    } else {
      appendFieldPathMember(path, token);
    }
    value = childAt(value, token);
    return true;
  });
  return path;
}

}  // namespace aiadmit
