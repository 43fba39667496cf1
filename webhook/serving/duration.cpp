#include "webhook/serving/duration.h"

#include <algorithm>
#include <cctype>

namespace aiadmit {

namespace {

// Milliseconds in one unit; 0 for an unknown unit. Units under a millisecond
// count, as fractions.
double unitMillis(std::string_view unit) {
  if (unit == "ns") return 1e-6;
  if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") return 1e-3;
  if (unit == "ms") return 1;
  if (unit == "s") return 1e3;
  if (unit == "m") return 6e4;
  if (unit == "h") return 3.6e6;
  return 0;
}

}  // namespace

std::optional<std::chrono::milliseconds> parseDuration(std::string_view text,
                                                       std::chrono::milliseconds ceiling,
                                                       bool bareSeconds) {
  if (text.empty()) return std::nullopt;
  const double limit = static_cast<double>(ceiling.count());
  double total = 0;
  size_t i = 0;
  while (i < text.size()) {
    // The number: digits with at most one point, read digit by digit and
    // saturated, so that "99999999999999999999999s" is only "very long".
    double number = 0;
    double scale = 0;  // 0 before the point, then 0.1, 0.01, ...
    bool digits = false;
    for (; i < text.size(); ++i) {
      const char c = text[i];
      if (c == '.' && scale == 0) {
        scale = 0.1;
      } else if (c >= '0' && c <= '9') {
        digits = true;
        if (scale == 0) {
          number = std::min(number * 10 + (c - '0'), 1e300);
        } else {
          number += (c - '0') * scale;
          scale /= 10;
        }
      } else {
        break;
      }
    }
    if (!digits) return std::nullopt;
    const size_t unitStart = i;
    while (i < text.size() && !std::isdigit(static_cast<unsigned char>(text[i])) &&
           text[i] != '.') {
      ++i;
    }
    const std::string_view unit = text.substr(unitStart, i - unitStart);
    if (unit.empty() && bareSeconds && unitStart == text.size() && total == 0) {
      total = number * 1e3;
      break;
    }
    const double millis = unitMillis(unit);
    if (millis == 0) return std::nullopt;
    total = std::min(total + number * millis, 1e300);
  }
  if (total >= limit) return ceiling;
  return std::chrono::milliseconds(static_cast<int64_t>(total));
}

}  // namespace aiadmit
