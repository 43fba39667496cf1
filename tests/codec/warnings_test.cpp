// The one form of aiadmit's warning lines and the cut that keeps them within
// the API server's line as valid UTF-8.
#include "webhook/codec/warnings.h"

#include <gtest/gtest.h>

#include <string>

namespace aiadmit {
namespace {

TEST(WarningLine, EveryLineBeginsWithTheWebhooksName) {
  EXPECT_EQ(warningLine("class batch: kind Job"), "aiadmit: class batch: kind Job");
  EXPECT_EQ(warningLine(""), "aiadmit: ");
}

TEST(WarningLine, AProfilesLineNamesTheProfile) {
  const std::string line = profileWarning("added limit nvidia.com/gpu=1", "training-default");
  EXPECT_EQ(line, "aiadmit: added limit nvidia.com/gpu=1 (profile training-default)");
  EXPECT_EQ(line.size(), std::string("added limit nvidia.com/gpu=1").size() +
                             profileWarningFrame("training-default"));
}

TEST(CutAtUtf8, TextWithinTheLimitIsKeptWhole) {
  EXPECT_EQ(cutAtUtf8("short", 10), "short");
  EXPECT_EQ(cutAtUtf8("exactly10!", 10), "exactly10!");
}

TEST(CutAtUtf8, LongTextEndsInAnEllipsisWithinTheLimit) {
  const std::string cut = cutAtUtf8(std::string(200, 'x'), kMaxWarningLength);
  EXPECT_EQ(cut.size(), kMaxWarningLength);
  EXPECT_EQ(cut, std::string(kMaxWarningLength - 3, 'x') + "...");
}

TEST(CutAtUtf8, TheCutNeverSplitsAMultiByteCharacter) {
  // "é" is two bytes: a cut after 6 bytes would fall inside the third one.
  const std::string text = "aaaaa\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9";
  EXPECT_EQ(cutAtUtf8(text, 9), "aaaaa...");
  EXPECT_EQ(cutAtUtf8(text, 10), "aaaaa\xC3\xA9...");
  // A three-byte character ("€") is dropped whole, not in part.
  const std::string euros = "\xE2\x82\xAC\xE2\x82\xAC\xE2\x82\xAC";
  EXPECT_EQ(cutAtUtf8(euros, 8), "\xE2\x82\xAC...");
}

}  // namespace
}  // namespace aiadmit
