// Text for messages: "did you mean" (the closest of a few known names to what
// a manifest or a profile wrote) and quoting, one way for every message.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace aiadmit {

// Levenshtein distance, ignoring ASCII case: resource names are
// case-sensitive, so "nvidia.com/GPU" (distance 0) still deserves the
// suggestion "nvidia.com/gpu".
size_t editDistance(std::string_view a, std::string_view b);

struct Suggestion {
  std::string_view name;  // empty when there were no candidates
  size_t distance = 0;
};

// The candidate closest to `text`; ties go to the earlier candidate, so the
// order of `candidates` states preference.
Suggestion closestName(std::string_view text, const std::vector<std::string_view>& candidates);

// The closest candidate when it is close enough to be what was meant: within
// max(2, a third of the text's length) edits; empty otherwise.
std::string_view plausibleName(std::string_view text,
                               const std::vector<std::string_view>& candidates);

// The text in double quotes, as messages name values: "nvidia.com/gpu".
std::string inQuotes(std::string_view text);
// The text with ASCII letters in lower case.
std::string lowercase(std::string_view text);

// The pieces one after another, made in one allocation: a chain of `+` makes
// and frees a string at every step, on the request path for each message.
template <typename... Pieces>
std::string concat(const Pieces&... pieces) {
  std::string out;
  out.reserve((std::string_view(pieces).size() + ...));
  (out.append(std::string_view(pieces)), ...);
  return out;
}

// `"a", "b" or "c"`.
std::string quotedList(const std::vector<std::string_view>& names, std::string_view conjunction);

}  // namespace aiadmit
