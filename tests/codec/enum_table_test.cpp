// One table for an enum's names, read both ways.
#include "webhook/codec/enum_table.h"

#include <gtest/gtest.h>

#include <string_view>

namespace aiadmit {
namespace {

enum class Colour { Red, Green, Blue, Unnamed };

constexpr EnumEntry<Colour> kColourNames[] = {
    {Colour::Red, "red"}, {Colour::Green, "green"}, {Colour::Blue, "blue"}};

TEST(EnumTable, NamesAndParsesFromTheSameRows) {
  for (const EnumEntry<Colour>& entry : kColourNames) {
    EXPECT_EQ(valueIn(kColourNames, entry.key, "?"), entry.value);
    EXPECT_EQ(keyIn(kColourNames, entry.value), entry.key);
  }
}

TEST(EnumTable, AKeyTheTableLeavesOutGetsTheFallback) {
  EXPECT_EQ(valueIn(kColourNames, Colour::Unnamed, "none"), "none");
  EXPECT_FALSE(keyIn(kColourNames, "purple").has_value());
  EXPECT_FALSE(keyIn(kColourNames, "Red").has_value()) << "names are exact";
}

TEST(EnumTable, ValuesNeedNotBeNames) {
  constexpr EnumEntry<Colour, int> kRanks[] = {{Colour::Red, 3}, {Colour::Blue, 1}};
  static_assert(valueIn(kRanks, Colour::Red, 0) == 3);
  EXPECT_EQ(valueIn(kRanks, Colour::Green, 0), 0);
  EXPECT_EQ(keyIn(kRanks, 1), Colour::Blue);
}

}  // namespace
}  // namespace aiadmit
