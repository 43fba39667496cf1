#include "webhook/codec/yaml_scalars.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <initializer_list>

namespace aiadmit {

namespace {

bool isOneOf(const std::string& text, std::initializer_list<const char*> options) {
  for (const char* option : options) {
    if (text == option) return true;
  }
  return false;
}

}  // namespace

JsonValue resolvePlainScalar(const std::string& text, JsonAllocator& alloc) {
  if (text.empty() || isOneOf(text, {"~", "null", "Null", "NULL"})) return JsonValue();
  if (isOneOf(text, {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON", "y", "Y"})) {
    return JsonValue(true);
  }
  if (isOneOf(text, {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF", "n", "N"})) {
    return JsonValue(false);
  }
  const char first = text[0];
  if ((first >= '0' && first <= '9') || first == '-' || first == '+' || first == '.') {
    const std::string digits = text.find('_') == std::string::npos ? text : [&] {
      std::string cleaned;
      for (char c : text) {
        if (c != '_') cleaned.push_back(c);
      }
      return cleaned;
    }();
    char* end = nullptr;
    errno = 0;
    const long long integer = std::strtoll(digits.c_str(), &end, 0);
    if (end != nullptr && *end == '\0' && errno == 0)
      return JsonValue(static_cast<int64_t>(integer));
    if (errno == ERANGE && first != '-') {  // above int64, as JSON's Uint64 reads it
      errno = 0;
      const unsigned long long large = std::strtoull(digits.c_str(), &end, 0);
      if (end != nullptr && *end == '\0' && errno == 0) {
        return JsonValue(static_cast<uint64_t>(large));
      }
    }
    errno = 0;
    const double real = std::strtod(digits.c_str(), &end);
    const bool looksNumeric = digits.find_first_not_of("0123456789+-.eE") == std::string::npos;
    if (looksNumeric && end != nullptr && *end == '\0' && errno == 0 && std::isfinite(real)) {
      return JsonValue(real);
    }
  }
  return JsonValue(text.data(), static_cast<rapidjson::SizeType>(text.size()), alloc);
}

}  // namespace aiadmit
