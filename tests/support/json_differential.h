// The short reader (parseJsonCopy) against RapidJSON's reader
// (parseJsonInSitu): the same document, value type for value type, and the
// same error. Shared by the parser's tests and its differential fuzz target,
// which is why it does not depend on GoogleTest.
#pragma once

#include <algorithm>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "webhook/codec/json.h"
#include "webhook/codec/json_parse.h"

namespace aiadmit::testing {

// "" when equal as RapidJSON stores them: the same type and number flags (an
// Int is not a Uint64 of the same value), strings byte for byte and
// NUL-terminated, members in order (a key twice included); else where not.
inline std::string valueDifference(const JsonValue& a, const JsonValue& b,
                                   const std::string& at = "") {
  if (a.GetType() != b.GetType()) return at + ": type differs";
  if (a.IsNumber()) {
    const bool sameKind = a.IsInt() == b.IsInt() && a.IsUint() == b.IsUint() &&
                          a.IsInt64() == b.IsInt64() && a.IsUint64() == b.IsUint64() &&
                          a.IsDouble() == b.IsDouble();
    const bool sameNumber = a.IsDouble()   ? a.GetDouble() == b.GetDouble()
                            : a.IsUint64() ? a.GetUint64() == b.GetUint64()
                                           : a.GetInt64() == b.GetInt64();
    if (!sameKind || !sameNumber) return at + ": number differs";
  } else if (a.IsString()) {
    const rapidjson::SizeType length = a.GetStringLength();
    if (length != b.GetStringLength() || std::memcmp(a.GetString(), b.GetString(), length) != 0 ||
        a.GetString()[length] != '\0' || b.GetString()[length] != '\0') {
      return at + ": string differs";
    }
  } else if (a.IsArray()) {
    if (a.Size() != b.Size()) return at + ": size differs";
    for (rapidjson::SizeType i = 0; i < a.Size(); ++i) {
      std::string difference = valueDifference(a[i], b[i], at + "/" + std::to_string(i));
      if (!difference.empty()) return difference;
    }
  } else if (a.IsObject()) {
    if (a.MemberCount() != b.MemberCount()) return at + ": member count differs";
    for (auto i = a.MemberBegin(), j = b.MemberBegin(); i != a.MemberEnd(); ++i, ++j) {
      const std::string name(i->name.GetString(), i->name.GetStringLength());
      std::string difference = valueDifference(i->name, j->name, at + "/" + name + " (name)");
      if (difference.empty()) difference = valueDifference(i->value, j->value, at + "/" + name);
      if (!difference.empty()) return difference;
    }
  } else if (a != b) {
    return at + ": value differs";
  }
  return {};
}

// The managedFields of a review's objects, as the admission decoder leaves
// them out.
inline constexpr std::string_view kRequest[] = {"request"};
inline constexpr std::string_view kObjects[] = {"object", "oldObject"};
inline constexpr std::string_view kMetadata[] = {"metadata"};
inline constexpr std::span<const std::string_view> kToMetadata[] = {kRequest, kObjects, kMetadata};
inline constexpr OmittedMember kNoManagedFields{kToMetadata, "managedFields"};

// The reference for a parse that omits: RapidJSON's document with the member
// erased wherever the path leads, found the slow way (every key of a name).
inline void eraseOmittedSlowly(JsonValue& value, const OmittedMember& omitted, size_t step = 0) {
  if (!value.IsObject()) return;
  const std::span<const std::string_view> leadOn =
      step < omitted.path.size() ? omitted.path[step] : std::span<const std::string_view>{};
  // By position: RapidJSON 1.1's member iterators compare ambiguously in C++20.
  for (rapidjson::SizeType i = 0; i < value.MemberCount();) {
    const auto entry = value.MemberBegin() + i;
    const std::string_view name(entry->name.GetString(), entry->name.GetStringLength());
    if (step == omitted.path.size() && name == omitted.key) {
      value.EraseMember(entry);
      continue;
    }
    if (std::find(leadOn.begin(), leadOn.end(), name) != leadOn.end()) {
      eraseOmittedSlowly(entry->value, omitted, step + 1);
    }
    ++i;
  }
}

// "" when parseJsonCopy gives `text` the document and the error RapidJSON's
// reader gives it (less the omitted members); else what differs.
inline std::string differenceFromRapidJson(std::string_view text,
                                           const OmittedMember* omitted = nullptr) {
  std::string buffer;
  JsonDocument copied;
  const std::string copyError = parseJsonCopy(text, 200, buffer, copied, omitted);
  std::string inSitu(text);
  JsonDocument reference;
  const std::string referenceError = parseJsonInSitu(inSitu.data(), inSitu.size(), 200, reference);
  if (copyError != referenceError) {
    return "error \"" + copyError + "\", RapidJSON's \"" + referenceError + "\"";
  }
  if (!copyError.empty()) return {};
  if (omitted != nullptr) eraseOmittedSlowly(reference, *omitted);
  return valueDifference(copied, reference);
}

}  // namespace aiadmit::testing
