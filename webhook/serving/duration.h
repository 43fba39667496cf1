// Durations as Go writes them ("10s", "500ms", "1m30s", "1.5h"), which is how
// the API server sends a webhook's ?timeout=, also accepted by serve's flags.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace aiadmit {

// The duration, clamped to `ceiling` (a huge value never overflows); nullopt
// for text that is not a non-negative Go duration. A bare number is seconds
// when `bareSeconds` is set (the flags' older form), else refused.
std::optional<std::chrono::milliseconds> parseDuration(std::string_view text,
                                                       std::chrono::milliseconds ceiling,
                                                       bool bareSeconds = false);

}  // namespace aiadmit
