// Admission warnings: what the API server keeps of them (it drops a warning
// line longer than 120 characters and keeps at most 4096 characters of all of
// a request's warnings) and the one form aiadmit gives every line.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace aiadmit {

inline constexpr size_t kMaxWarningLength = 120;
inline constexpr size_t kMaxWarningsTotal = 4096;

// What begins each of aiadmit's warning lines, so that `kubectl` users see
// which webhook spoke.
inline constexpr std::string_view kWarningPrefix = "aiadmit: ";

// "aiadmit: <text>".
std::string warningLine(std::string_view text);

// "aiadmit: <line> (profile <name>)": a change or a notice the profile asked for.
std::string profileWarning(std::string_view line, std::string_view profile);
// How many characters profileWarning adds to a line under `profile`.
size_t profileWarningFrame(std::string_view profile);
// `line` cut so that profileWarning(line, profile) fits the API server's
// 120-character line.
std::string fittedProfileLine(std::string_view line, std::string_view profile);

// `text` cut to at most `limit` bytes (limit > 3), ending in "..." when it was
// cut; the cut never splits a UTF-8 sequence, so the result stays valid text.
std::string cutAtUtf8(std::string_view text, size_t limit);

}  // namespace aiadmit
