#include "webhook/codec/warnings.h"

#include "webhook/codec/text.h"

namespace aiadmit {

namespace {

constexpr std::string_view kProfileOpen = " (profile ";
constexpr std::string_view kProfileClose = ")";
constexpr std::string_view kEllipsis = "...";
// The shortest a line is cut to, whatever the profile's name.
constexpr size_t kShortestLine = 19;

bool isContinuationByte(char byte) {
  return (static_cast<unsigned char>(byte) & 0xC0) == 0x80;
}

}  // namespace

std::string warningLine(std::string_view text) {
  return concat(kWarningPrefix, text);
}

std::string profileWarning(std::string_view line, std::string_view profile) {
  return concat(kWarningPrefix, line, kProfileOpen, profile, kProfileClose);
}

size_t profileWarningFrame(std::string_view profile) {
  return kWarningPrefix.size() + kProfileOpen.size() + profile.size() + kProfileClose.size();
}

std::string fittedProfileLine(std::string_view line, std::string_view profile) {
  const size_t frame = profileWarningFrame(profile);
  // Profile names are at most 63 characters, so there is always room left.
  const size_t budget =
      kMaxWarningLength > frame + kShortestLine ? kMaxWarningLength - frame : kShortestLine;
  return cutAtUtf8(line, budget);
}

std::string cutAtUtf8(std::string_view text, size_t limit) {
  if (text.size() <= limit) return std::string(text);
  size_t cut = limit - kEllipsis.size();
  while (cut > 0 && isContinuationByte(text[cut])) --cut;
  std::string out(text.substr(0, cut));
  out += kEllipsis;
  return out;
}

}  // namespace aiadmit
