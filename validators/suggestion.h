// "Did you mean": the closest of a few known names to what a manifest wrote.
#pragma once

#include <cstddef>
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

}  // namespace aiadmit
