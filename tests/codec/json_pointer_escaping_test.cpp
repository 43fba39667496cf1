// RFC 6901 escaping of pointer tokens, said once for every pointer aiadmit
// writes (patches, the workload-type table) and reads (audit annotations).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "webhook/codec/json_pointer.h"

namespace aiadmit {
namespace {

TEST(PointerEscaping, SlashAndTildeAreEscaped) {
  std::string pointer;
  appendEscapedPointerToken(pointer, "nvidia.com/gpu");
  appendEscapedPointerToken(pointer, "a~b");
  EXPECT_EQ(pointer, "/nvidia.com~1gpu/a~0b");
  EXPECT_EQ(unescapedPointerToken("nvidia.com~1gpu"), "nvidia.com/gpu");
  EXPECT_EQ(unescapedPointerToken("a~0b"), "a~b");
}

TEST(PointerEscaping, EveryTokenComesBackAsItWas) {
  const std::vector<std::string> tokens = {"",   "plain", "aiadmit.dev/class", "~",    "/",
                                           "~1", "~0",    "a/~b~/c",           "~~//", "é/€"};
  std::string pointer;
  for (const std::string& token : tokens) {
    std::string one;
    appendEscapedPointerToken(one, token);
    EXPECT_EQ(unescapedPointerToken(one.substr(1)), token) << one;
    pointer += one;
  }
  EXPECT_EQ(pointerTokens(pointer), tokens) << pointer;
}

TEST(PointerEscaping, ATildeAtTheEndStaysATilde) {
  // Not a valid escape; read as the character, as before.
  EXPECT_EQ(unescapedPointerToken("a~"), "a~");
}

}  // namespace
}  // namespace aiadmit
