// The Prometheus text format's rules that more than one family needs.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace aiadmit {

// A label value as the text format escapes it: backslash, quote, newline.
inline std::string prometheusLabel(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (const char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

// A sample's value: "%.9g", as many digits as a gauge of seconds or bytes needs.
inline std::string prometheusNumber(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.9g", value);
  return buffer;
}

// A family's HELP and TYPE lines.
inline void appendFamilyHeader(std::string& out, std::string_view name, std::string_view type,
                               std::string_view help) {
  out.append("# HELP ").append(name).append(" ").append(help).append("\n# TYPE ");
  out.append(name).append(" ").append(type).append("\n");
}

}  // namespace aiadmit
