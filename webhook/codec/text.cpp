#include "webhook/codec/text.h"

#include <algorithm>
#include <numeric>

namespace aiadmit {

namespace {
char lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}
}  // namespace

std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = lower(c);
  return out;
}

size_t editDistance(std::string_view a, std::string_view b) {
  if (a.size() < b.size()) std::swap(a, b);
  // One row of the table, as long as the shorter text; names are short, so it
  // lives on the stack unless a manifest sends something unusual.
  constexpr size_t kStackRow = 128;
  size_t stackRow[kStackRow + 1];
  std::vector<size_t> heapRow;
  size_t* row = stackRow;
  if (b.size() > kStackRow) {
    heapRow.resize(b.size() + 1);
    row = heapRow.data();
  }
  std::iota(row, row + b.size() + 1, size_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      const size_t substitution = diagonal + (lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitution});
      diagonal = above;
    }
  }
  return row[b.size()];
}

Suggestion closestName(std::string_view text, const std::vector<std::string_view>& candidates) {
  Suggestion best;
  for (std::string_view candidate : candidates) {
    const size_t distance = editDistance(text, candidate);
    if (best.name.empty() || distance < best.distance) best = {candidate, distance};
  }
  return best;
}

std::string_view plausibleName(std::string_view text,
                               const std::vector<std::string_view>& candidates) {
  const Suggestion closest = closestName(text, candidates);
  return closest.distance <= std::max<size_t>(2, text.size() / 3) ? closest.name
                                                                  : std::string_view{};
}

std::string inQuotes(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  out += text;
  out += '"';
  return out;
}

std::string quotedList(const std::vector<std::string_view>& names, std::string_view conjunction) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0 && i + 1 == names.size()) {
      out += ' ';
      out += conjunction;
      out += ' ';
    } else if (i > 0) {
      out += ", ";
    }
    out += inQuotes(names[i]);
  }
  return out;
}

}  // namespace aiadmit
