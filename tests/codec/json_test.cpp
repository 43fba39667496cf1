// Reads over RapidJSON values: member lookup by any view of a key.
#include "webhook/codec/json.h"

#include <gtest/gtest.h>

#include <string>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "tests/support/test_support.h"

namespace aiadmit {
namespace {

TEST(JsonMember, AKeyGivenAsAViewIntoALongerStringIsFound) {
  const auto object = testing::parseJson(R"({"limits":1,"lim":2})");
  const std::string text = "limits.memory";
  const std::string_view limits = std::string_view(text).substr(0, 6);
  ASSERT_NE(member(object.get(), limits), nullptr);
  EXPECT_EQ(member(object.get(), limits)->GetInt(), 1);
  EXPECT_EQ(member(object.get(), std::string_view(text).substr(0, 3))->GetInt(), 2);
  EXPECT_EQ(member(object.get(), std::string_view(text).substr(0, 4)), nullptr);
  EXPECT_EQ(member(object.get(), ""), nullptr);
}

TEST(JsonMember, KeysWithNulAreComparedWhole) {
  JsonDocument doc;
  doc.SetObject();
  JsonValue key("a\0b", 3, doc.GetAllocator());
  JsonValue one(1);
  doc.AddMember(key, one, doc.GetAllocator());
  EXPECT_NE(member(&doc, std::string_view("a\0b", 3)), nullptr);
  EXPECT_EQ(member(&doc, "a"), nullptr);
}

// RapidJSON's writer on the same text: the reference for the escaping.
std::string writtenByRapidJson(std::string_view text) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
  return {buffer.GetString(), buffer.GetSize()};
}

// Every byte at every place of texts of every length up to 40 (blocks of 16,
// words of 8 and what is left) is escaped as RapidJSON's writer escapes it.
TEST(AppendJsonString, EscapesEveryByteWhereverItIsAsRapidJsonDoes) {
  for (size_t length = 1; length <= 40; ++length) {
    for (size_t at = 0; at < length; ++at) {
      for (int byte = 0; byte < 256; ++byte) {
        std::string text(length, 'a');
        text[at] = static_cast<char>(byte);
        std::string out = "x";
        appendJsonString(out, text);
        ASSERT_EQ(out, "x" + writtenByRapidJson(text)) << "byte " << byte << " at " << at;
      }
    }
  }
  std::string out;
  appendJsonString(out, "");
  EXPECT_EQ(out, R"("")");
  const std::string mixed =
      "caf\xc3\xa9 \"quoted\"\n\tand\\ a \x01 control, long enough to span blocks";
  out.clear();
  appendJsonString(out, mixed);
  EXPECT_EQ(out, writtenByRapidJson(mixed));
}

// Names of every length up to 40, copied (short ones inline in the value)
// and in place: each is found by itself and by no name of its length that
// differs in one byte, wherever that byte is.
TEST(JsonMember, EachNameIsFoundAndNoNameThatDiffersInOneByte) {
  for (const bool copied : {true, false}) {
    for (size_t length = 1; length <= 40; ++length) {
      std::string name;
      for (size_t n = 0; n < length; ++n) name += static_cast<char>('a' + n % 26);
      std::string inPlace = name;  // outlives `doc`
      JsonDocument doc;
      doc.SetObject();
      JsonValue key = copied ? JsonValue(name.data(), static_cast<rapidjson::SizeType>(length),
                                         doc.GetAllocator())
                             : JsonValue(rapidjson::StringRef(inPlace.data(), length));
      JsonValue value(static_cast<unsigned>(length));
      doc.AddMember(key, value, doc.GetAllocator());
      ASSERT_NE(member(&doc, name), nullptr) << name;
      EXPECT_EQ(member(&doc, name)->GetUint(), length);
      for (size_t at = 0; at < length; ++at) {
        std::string other = name;
        other[at] = 'Z';
        EXPECT_EQ(member(&doc, other), nullptr) << other;
      }
      EXPECT_EQ(member(&doc, name.substr(0, length - 1)), nullptr);
      EXPECT_EQ(member(&doc, name + "a"), nullptr);
    }
  }
}

}  // namespace
}  // namespace aiadmit

namespace aiadmit {
namespace {

// An empty view without a pointer (stringMember of an absent field) makes an
// empty string: RapidJSON's copy must never be handed a null pointer.
TEST(Json, AnEmptyViewWithoutAPointerMakesAnEmptyString) {
  JsonDocument document;
  document.SetObject();
  const std::string_view absent = stringMember(&document, "name");
  ASSERT_EQ(absent.data(), nullptr);
  setString(document, "name", absent, document.GetAllocator());
  ASSERT_TRUE(member(&document, "name")->IsString());
  EXPECT_EQ(stringMember(&document, "name"), "");
  EXPECT_EQ(makeString(std::string_view(), document.GetAllocator()).GetStringLength(), 0u);
}

}  // namespace
}  // namespace aiadmit
