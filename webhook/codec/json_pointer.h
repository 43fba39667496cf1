// RFC 6901 JSON Pointers over parsed documents: reading a value, creating the
// objects on the way to one, and the kubectl field path a pointer names.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "webhook/codec/json.h"

namespace aiadmit {

// An object's apiVersion as its parts: "apps/v1" is group "apps", version
// "v1"; "v1" is the core group ("") at version "v1".
struct GroupVersion {
  std::string_view group;
  std::string_view version;
};
GroupVersion splitApiVersion(std::string_view apiVersion);

// RFC 6901 escaping of one token, the one place that knows "~0" is "~" and
// "~1" is "/": appends "/" and the token escaped ("a/b~c" -> "/a~1b~0c").
void appendEscapedPointerToken(std::string& pointer, std::string_view token);
// An escaped token as the name it stands for ("a~1b~0c" -> "a/b~c").
std::string unescapedPointerToken(std::string_view escaped);
// The unescaped tokens of a pointer ("/a/b~1c" or, relative, "a/b~1c").
std::vector<std::string> pointerTokens(std::string_view pointer);
// Whether a token is a plain name a field path shows as ".name".
bool isPlainName(std::string_view token);
// ".name" (or "[key]" when it is not a plain name) and "[i]".
void appendFieldPathMember(std::string& path, std::string_view token);
void appendFieldPathIndex(std::string& path, size_t index);
// A decimal array index without leading zeros; nullopt otherwise.
std::optional<size_t> arrayIndexOf(std::string_view token);
// The member or element a token names; nullptr when there is none.
const JsonValue* childAt(const JsonValue* value, std::string_view token);

// The value at an escaped pointer, nullptr when absent. Array tokens must be
// decimal indexes.
const JsonValue* valueAt(const JsonValue& root, std::string_view pointer);
// The object at an escaped pointer, creating the members on the way that are
// missing; nullptr when the way runs through something else (a scalar, an
// array element that does not exist) or ends at a value that is no object.
JsonValue* ensureObjectAt(JsonValue& root, std::string_view pointer, JsonAllocator& alloc);
// The kubectl field path of an escaped pointer into `root`: members as
// ".name", map keys that are not plain names as "[key]", array elements as
// "[i]" ("spec.pytorchReplicaSpecs.Worker.template.spec.containers[0]").
std::string fieldPathOf(const JsonValue& root, std::string_view pointer);

}  // namespace aiadmit
