#include <gtest/gtest.h>

#include "webhook/model/quantity.h"

namespace aiadmit {
namespace {

TEST(Quantity, WholeNumbersInEveryForm) {
  for (const char* text : {"1", "8", "1e0", "1000m", "1E1", "+2", "0.001k", "1Ki", "1.5Ki"}) {
    const auto q = Quantity::parse(text);
    ASSERT_TRUE(q.has_value()) << text;
    EXPECT_TRUE(q->isWholeNumber()) << text;
    EXPECT_FALSE(q->isNegative()) << text;
  }
  EXPECT_EQ(Quantity::parse("1000m")->wholeValue(), 1);
  EXPECT_EQ(Quantity::parse("1e1")->wholeValue(), 10);
  EXPECT_EQ(Quantity::parse("1Ki")->wholeValue(), 1024);
  EXPECT_EQ(Quantity::parse("1.5Ki")->wholeValue(), 1536);
  EXPECT_EQ(Quantity::parse("2k")->wholeValue(), 2000);
}

TEST(Quantity, FractionsAreNotWhole) {
  for (const char* text : {"0.5", "500m", "1.25", "1e-1", "1500m", "1n"}) {
    const auto q = Quantity::parse(text);
    ASSERT_TRUE(q.has_value()) << text;
    EXPECT_FALSE(q->isWholeNumber()) << text;
    EXPECT_FALSE(q->wholeValue().has_value()) << text;
  }
}

TEST(Quantity, SignAndZero) {
  EXPECT_TRUE(Quantity::parse("-1")->isNegative());
  EXPECT_TRUE(Quantity::parse("0")->isZero());
  EXPECT_FALSE(Quantity::parse("-0")->isNegative());
  EXPECT_EQ(Quantity::parse("-3")->wholeValue(), -3);
}

TEST(Quantity, RejectsWhatTheApiServerRejects) {
  for (const char* text : {"", "abc", "1x", "1KiB", "--1", "1e", "e3", "1.2.3", " 1", "1 "}) {
    EXPECT_FALSE(Quantity::parse(text).has_value()) << "'" << text << "'";
  }
}

TEST(Quantity, HugeValuesDoNotOverflow) {
  const auto q = Quantity::parse("99999999999999999999999999999");
  ASSERT_TRUE(q.has_value());
  EXPECT_TRUE(q->isWholeNumber());
  EXPECT_FALSE(q->wholeValue().has_value());
  EXPECT_FALSE(Quantity::parse("1e99999999").has_value());  // exponent beyond any real quantity
  EXPECT_FALSE(Quantity::parse("8Ei")->wholeValue().has_value());
}

TEST(Quantity, FromJsonNumbersAndStrings) {
  JsonDocument doc;
  doc.Parse(R"([1, "1", 0.5, "500m", -1, true, null])");
  ASSERT_FALSE(doc.HasParseError());
  EXPECT_EQ(Quantity::fromJson(doc[0])->wholeValue(), 1);
  EXPECT_EQ(Quantity::fromJson(doc[1])->wholeValue(), 1);
  EXPECT_FALSE(Quantity::fromJson(doc[2])->isWholeNumber());
  EXPECT_FALSE(Quantity::fromJson(doc[3])->isWholeNumber());
  EXPECT_TRUE(Quantity::fromJson(doc[4])->isNegative());
  EXPECT_FALSE(Quantity::fromJson(doc[5]).has_value());
  EXPECT_FALSE(Quantity::fromJson(doc[6]).has_value());
}

}  // namespace
}  // namespace aiadmit
