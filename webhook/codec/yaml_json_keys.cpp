#include "webhook/codec/yaml_json_keys.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>

#include "webhook/codec/yaml_scalars.h"

namespace aiadmit {

namespace {

// Whether a plain scalar can resolve to anything but a string: a null, a
// boolean (yes, on, y, ...) or a number. Most keys cannot, and skip the resolver.
bool mayResolve(std::string_view text) {
  return text.empty() ||
         std::string_view("0123456789+-.~nNtTfFyYoO").find(text[0]) != std::string_view::npos;
}

// Go's %f part of 'g': `digits` (no leading zeros) times 10^(point - digits).
std::string fixedText(const std::string& digits, int point) {
  std::string out;
  if (point > 0) {
    for (int i = 0; i < point; ++i) {
      out.push_back(i < static_cast<int>(digits.size()) ? digits[i] : '0');
    }
  } else {
    out = "0";
  }
  const int decimals = std::max(static_cast<int>(digits.size()) - point, 0);
  if (decimals > 0) out.push_back('.');
  for (int i = 0; i < decimals; ++i) {
    const int at = point + i;
    out.push_back(at >= 0 && at < static_cast<int>(digits.size()) ? digits[at] : '0');
  }
  return out;
}

}  // namespace

std::string goFloat32Text(double value) {
  const auto single = static_cast<float>(value);
  if (std::isnan(single)) return ".nan";
  if (std::isinf(single)) return single > 0 ? ".inf" : "-.inf";
  // The shortest digits that read back as the same float, as "-d.ddde-XX".
  char buffer[32];
  const auto written =
      std::to_chars(buffer, buffer + sizeof buffer, single, std::chars_format::scientific);
  const std::string_view text(buffer, static_cast<size_t>(written.ptr - buffer));
  const bool negative = text.front() == '-';
  const size_t e = text.find('e');
  std::string digits;
  for (char c : text.substr(negative ? 1 : 0, e - (negative ? 1 : 0))) {
    if (c != '.') digits.push_back(c);
  }
  int exponent = std::atoi(std::string(text.substr(e + 1)).c_str());
  if (digits == "0") {  // Go's zero has no digits and exponent 0
    digits.clear();
    exponent = 0;
  }
  std::string out = negative ? "-" : "";
  // Go uses %e for an exponent below -4 or from 6 (its precision for the
  // shortest form) on, %f otherwise.
  if (digits.empty() || (exponent >= -4 && exponent < 6)) {
    return out + fixedText(digits, digits.empty() ? 0 : exponent + 1);
  }
  out += digits.front();
  if (digits.size() > 1) out += "." + digits.substr(1);
  out += exponent < 0 ? "e-" : "e+";
  const int magnitude = std::abs(exponent);
  if (magnitude < 10) out += '0';
  return out + std::to_string(magnitude);
}

std::optional<YamlKey> resolveYamlKey(const std::string& text, bool plain, std::string& why) {
  if (!plain || !mayResolve(text)) return YamlKey{text, "s:" + text};
  JsonAllocator scratch;
  const JsonValue value = resolvePlainScalar(text, scratch);
  if (value.IsString()) return YamlKey{text, "s:" + text};
  if (value.IsNull()) {
    why = kNullKey;
    return std::nullopt;
  }
  if (value.IsBool()) {
    const std::string json = value.GetBool() ? "true" : "false";
    return YamlKey{json, "b:" + json};
  }
  if (value.IsInt64()) {
    const std::string json = std::to_string(value.GetInt64());
    return YamlKey{json, "i:" + json};
  }
  if (value.IsUint64()) {
    why = "an integer key above 9223372036854775807, which kubectl cannot turn into JSON";
    return std::nullopt;
  }
  char exact[40];
  std::snprintf(exact, sizeof exact, "%.17g", value.GetDouble());
  return YamlKey{goFloat32Text(value.GetDouble()), std::string("f:") + exact};
}

void appendFieldKey(std::string& path, std::string_view key) {
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  const bool plainName =
      !key.empty() && letter(key.front()) && std::all_of(key.begin(), key.end(), [&](char c) {
        return letter(c) || (c >= '0' && c <= '9') || c == '-';
      });
  if (!plainName) {
    path.append("[").append(key).append("]");
    return;
  }
  if (!path.empty()) path.push_back('.');
  path.append(key);
}

void appendFieldIndex(std::string& path, size_t index) {
  path.append("[").append(std::to_string(index)).append("]");
}

namespace {

void keepLast(JsonValue& value, std::string& path, std::vector<RepeatedMember>& found) {
  const size_t outer = path.size();
  if (value.IsArray()) {
    for (rapidjson::SizeType i = 0; i < value.Size(); ++i) {
      appendFieldIndex(path, i);
      keepLast(value[i], path, found);
      path.resize(outer);
    }
    return;
  }
  if (!value.IsObject()) return;
  std::unordered_map<std::string_view, rapidjson::SizeType> last;
  std::vector<rapidjson::SizeType> dropped;
  for (rapidjson::SizeType i = 0; i < value.MemberCount(); ++i) {
    auto& [name, item] = *(value.MemberBegin() + i);
    const std::string_view key(name.GetString(), name.GetStringLength());
    appendFieldKey(path, key);
    const auto [seen, added] = last.try_emplace(key, i);
    if (!added) {
      found.push_back({std::string(key), path});
      dropped.push_back(seen->second);
      seen->second = i;
    }
    keepLast(item, path, found);
    path.resize(outer);
  }
  std::sort(dropped.rbegin(), dropped.rend());
  for (const rapidjson::SizeType i : dropped) value.EraseMember(value.MemberBegin() + i);
}

}  // namespace

std::vector<RepeatedMember> keepLastMembers(JsonValue& value) {
  std::vector<RepeatedMember> found;
  std::string path;
  keepLast(value, path, found);
  return found;
}

}  // namespace aiadmit
