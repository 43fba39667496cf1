// The Prometheus text format's rules that more than one family needs.
#pragma once

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

}  // namespace aiadmit
