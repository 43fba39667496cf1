// Text for messages: the pieces a message is made of, joined in order.
#include "webhook/codec/text.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace aiadmit {
namespace {

TEST(Concat, JoinsStringsViewsAndLiteralsInOrder) {
  const std::string owned = "nvidia.com/gpu";
  const std::string_view view = std::string_view("=present:").substr(0, 1);
  EXPECT_EQ(concat("key ", owned, view, std::string_view(), "", "NoSchedule"),
            "key nvidia.com/gpu=NoSchedule");
  EXPECT_EQ(concat(""), "");
  // Longer than a short string's inline room, made in one allocation.
  const std::string longer = concat(owned, " ", owned, " ", owned);
  EXPECT_EQ(longer, "nvidia.com/gpu nvidia.com/gpu nvidia.com/gpu");
  EXPECT_EQ(longer.capacity(), longer.size());
}

}  // namespace
}  // namespace aiadmit
