// Go durations, as the API server writes ?timeout= and as serve's flags take them.
#include "webhook/serving/duration.h"

#include <gtest/gtest.h>

namespace aiadmit {
namespace {

using std::chrono::milliseconds;
constexpr milliseconds kCeiling{30000};

TEST(Duration, ReadsGoDurations) {
  EXPECT_EQ(parseDuration("10s", kCeiling), milliseconds(10000));
  EXPECT_EQ(parseDuration("500ms", kCeiling), milliseconds(500));
  EXPECT_EQ(parseDuration("1m30s", milliseconds(3600000)), milliseconds(90000));
  EXPECT_EQ(parseDuration("1.5s", kCeiling), milliseconds(1500));
  EXPECT_EQ(parseDuration("2500000us", kCeiling), milliseconds(2500));
  EXPECT_EQ(parseDuration("0s", kCeiling), milliseconds(0));
}

TEST(Duration, ClampsHugeValuesWithoutOverflow) {
  EXPECT_EQ(parseDuration("1h", kCeiling), kCeiling);
  EXPECT_EQ(parseDuration("99999999999999999999999999999999h", kCeiling), kCeiling);
  EXPECT_EQ(parseDuration(std::string(5000, '9') + "s", kCeiling), kCeiling);
}

TEST(Duration, RefusesWhatIsNotADuration) {
  for (const char* text : {"", "s", "10", "-5s", "10x", "1.2.3s", "ms10", "1e9s", " 1s"}) {
    EXPECT_FALSE(parseDuration(text, kCeiling)) << text;
  }
}

TEST(Duration, ABareNumberIsSecondsOnlyWhenAsked) {
  EXPECT_EQ(parseDuration("5", kCeiling, true), milliseconds(5000));
  EXPECT_FALSE(parseDuration("5", kCeiling, false));
  EXPECT_FALSE(parseDuration("5s5", kCeiling, true));
}

}  // namespace
}  // namespace aiadmit
