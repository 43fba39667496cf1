// parseJsonCopy against RapidJSON's reader (parseJsonInSitu): the same
// document, value type for value type, and the same error, for what the API
// server sends, for every edge of JSON the short reader takes or declines,
// and for texts made broken on purpose.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tests/support/json_differential.h"
#include "tests/support/test_support.h"
#include "webhook/codec/json.h"
#include "webhook/codec/json_parse.h"

namespace aiadmit {
namespace {

using testing::kNoManagedFields;

::testing::AssertionResult parsesAsRapidJson(const std::string& text,
                                             const OmittedMember* omitted = nullptr) {
  const std::string difference = testing::differenceFromRapidJson(text, omitted);
  if (difference.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << difference << " for " << text.substr(0, 200);
}

std::vector<std::string> referenceReviews() {
  std::vector<std::string> reviews;
  for (const char* name : {"gpu-pod", "gpu-deployment", "plain-pod"}) {
    reviews.push_back(testing::readFile(testing::sourceDir() + "/bench/reviews/" + name + ".json"));
  }
  return reviews;
}

TEST(JsonParseCopy, TheReferenceReviewsGiveRapidJsonsDocument) {
  for (const std::string& review : referenceReviews()) EXPECT_TRUE(parsesAsRapidJson(review));
}

TEST(JsonParseCopy, TheOmittedMemberIsLeftOutOfTheDocumentAndNothingElse) {
  for (const std::string& review : referenceReviews()) {
    EXPECT_TRUE(parsesAsRapidJson(review, &kNoManagedFields));
    std::string buffer;
    JsonDocument document;
    ASSERT_EQ(parseJsonCopy(review, 200, buffer, document, &kNoManagedFields), "");
    const JsonValue* request = member(&document, "request");
    const JsonValue* metadata = member(member(request, "object"), "metadata");
    ASSERT_NE(metadata, nullptr);
    EXPECT_EQ(member(metadata, "managedFields"), nullptr);
    EXPECT_NE(member(metadata, "name"), nullptr);
    EXPECT_NE(member(request, "userInfo"), nullptr);
    EXPECT_NE(member(request, "uid"), nullptr);
  }
  for (
      const char* text : {
          // The path's own keys elsewhere stay; every key of the name on it goes.
          R"({"request":{"object":{"metadata":{"managedFields":[{"a":1}],"name":"x"}}}})",
          R"({"request":{"object":{"metadata":{"name":"x","managedFields":{}}}}})",
          R"({"request":{"oldObject":{"metadata":{"managedFields":null}},"object":null}})",
          R"({"managedFields":1,"request":{"managedFields":2,"object":{"managedFields":3}}})",
          R"({"request":{"object":{"spec":{"metadata":{"managedFields":[1]}}}}})",
          R"({"x":{"request":{"object":{"metadata":{"managedFields":[1]}}}}})",
          R"({"request":{"object":{"metadata":{"managedFields":1,"managedFields":2,"k":3}}}})",
          R"({"request":{"object":{"metadata":{"managedFields":1}}},"request":{"object":{"metadata":{"managedFields":2}}}})",
          R"({"request":[{"object":{"metadata":{"managedFields":1}}}]})",
          R"({"request":{"object":"metadata"},"managedFields":{}})",
          R"([{"request":{"object":{"metadata":{"managedFields":1}}}}])",
          // Keys beside the path, before and after what leads on, all stay.
          R"({"request":{"userInfo":{"a":1},"object":{"metadata":{"managedFields":1}},"options":2}})",
          R"({"userInfo":1,"request":{"object":{"userInfo":2,"metadata":{"options":3}}}})",
          R"({"request":{"userInfo":{"object":{"metadata":{"managedFields":1}}},"uid":"u"}})",
          R"({"request":{"userInfo":[1 2]}})",
          // Left out, and still read as strictly: malformed, deep, or declined to RapidJSON.
          R"({"request":{"object":{"metadata":{"managedFields":[1 2]}}}})",
          R"({"request":{"object":{"metadata":{"managedFields":[1.5,"café"]}}}})",
          "{\"request\":{\"object\":{\"metadata\":{\"managedFields\":\"\xc3\xa9\"}}}}",
          R"({"request":{"object":{"metadata":{"managedFields":"\x"}}}})",
          R"({"request":{"object":{"metadata":{"managedFields":[}}}})",
          R"({"request":{"object":{"metadata":{"managedFields":)",
      }) {
    EXPECT_TRUE(parsesAsRapidJson(text, &kNoManagedFields));
  }
  for (const size_t depth : {190, 195, 196, 197, 200}) {
    const std::string prefix = R"({"request":{"object":{"metadata":{"managedFields":)";
    EXPECT_TRUE(parsesAsRapidJson(
        prefix + std::string(depth, '[') + std::string(depth, ']') + "}}}}", &kNoManagedFields));
  }
}

TEST(JsonParseCopy, NumbersAreTheTypesRapidJsonMakesThem) {
  for (const char* text : {"0",
                           "-0",
                           "7",
                           "-7",
                           "2147483647",
                           "2147483648",
                           "-2147483648",
                           "-2147483649",
                           "4294967295",
                           "4294967296",
                           "123456789012345678",
                           "-123456789012345678",
                           "1234567890123456789",
                           "9223372036854775807",
                           "-9223372036854775808",
                           "18446744073709551615",
                           "18446744073709551616",
                           "1.5",
                           "-0.0",
                           "1e5",
                           "1E-2",
                           "2.5e+3",
                           "[0,-1,4294967295,4294967296,1.25]"}) {
    EXPECT_TRUE(parsesAsRapidJson(text));
  }
}

TEST(JsonParseCopy, StringsAndEscapesAreUnescapedAsRapidJsonDoes) {
  for (const char* text : {
           R"("")",
           R"("plain")",
           R"("a\"b\\c\/d\be\ff\ng\rh\ti")",
           R"("\u0041\u00e9\u4e2d\uFFFF")",
           R"("a\u0000b")",
           R"("\ud83d\ude00")",
           R"("\ud800")",
           R"("\udc00x")",
           R"("\ud800\u0041")",
           R"("\x")",
           R"("\u12")",
           R"("\u12g4")",
           R"("caf\u00e9 and more text than one block of sixteen bytes \" after")",
           R"({"k:{\"name\":\"ranker\"}":{".":{}}})",
           "\"tab\there\"",
           "\"\xc3\xa9t\xc3\xa9\"",
           "\"\xff\xfe\"",
           "\"\xe2\x82\"",
       }) {
    EXPECT_TRUE(parsesAsRapidJson(text));
  }
  // Escapes at every offset within a block.
  for (size_t offset = 0; offset < 40; ++offset) {
    EXPECT_TRUE(parsesAsRapidJson("[\"" + std::string(offset, 'a') + "\\\"" +
                                  std::string(offset, 'b') + "\\u00e9" + std::string(20, 'c') +
                                  "\"]"));
  }
}

// A low surrogate escape with no high one before it would be written as bytes
// that are not UTF-8, and echoed back so in patches and warnings: refused,
// in keys too. A surrogate pair and the characters around the surrogates pass.
TEST(JsonParseCopy, ALoneLowSurrogateIsRefusedAndAPairIsNot) {
  for (const char* text : {R"({"name":"\udc00"})", R"({"name":"ok\uDFFFok"})", R"({"\udc80":1})",
                           R"(["\ud83d\ude00","\udc00"])"}) {
    std::string buffer;
    JsonDocument document;
    const std::string error = parseJsonCopy(text, 200, buffer, document, {});
    EXPECT_NE(error.find("low surrogate"), std::string::npos) << text << ": " << error;
  }
  for (const char* text : {R"({"name":"\ud83d\ude00"})", R"({"name":"\ud7ff\ue000"})",
                           "{\"name\":\"\xed\x9f\xbf\"}"}) {
    std::string buffer;
    JsonDocument document;
    EXPECT_EQ(parseJsonCopy(text, 200, buffer, document, {}), "") << text;
  }
}

TEST(JsonParseCopy, StructureWhitespaceAndErrorsAreRapidJsons) {
  for (const std::string& text :
       std::vector<std::string>{"",
                                " ",
                                "null",
                                " true ",
                                "false",
                                "nul",
                                "tru",
                                "falsey",
                                "[]",
                                "{}",
                                "[ ]",
                                "{ }",
                                " \t\r\n[ [ ] , { } ] \n",
                                R"({"a" : 1 , "b" :[ 1 , { } , [ ] ] })",
                                "[1,2,]",
                                R"({"a":1,})",
                                R"({"a"})",
                                "{1:2}",
                                "[1 2]",
                                R"("abc)",
                                R"("abc\)",
                                "[-]",
                                "[--1]",
                                "[+1]",
                                "[.5]",
                                "[1.]",
                                "[01]",
                                R"({"a":1}x)",
                                R"({"k":"v","k":"w"})",
                                "[",
                                "{",
                                R"({"a":)",
                                std::string("{\"a\":1}\0{", 9),
                                std::string("\"a\0b\"", 5),
                                std::string(300, '[') + std::string(300, ']'),
                                std::string(200, '[') + std::string(200, ']'),
                                std::string(201, '[') + std::string(201, ']')}) {
    EXPECT_TRUE(parsesAsRapidJson(text));
  }
}

TEST(JsonParseCopy, BrokenReviewsFailAsRapidJsonFailsThem) {
  const std::vector<std::string> reviews = referenceReviews();
  const std::string alphabet = std::string("{}[]\":,\\ \t\n0123456789-.eEtruefalsnu") + "\x01\x80";
  std::mt19937 random(20261130);
  for (int round = 0; round < 20000; ++round) {
    std::string text = reviews[random() % reviews.size()];
    for (int edit = 1 + static_cast<int>(random() % 3); edit > 0; --edit) {
      const size_t at = random() % (text.size() + 1);
      const char c = alphabet[random() % alphabet.size()];
      switch (random() % 4) {
        case 0:
          if (at < text.size()) text.erase(at, 1 + random() % 3);
          break;
        case 1:
          text.insert(at, 1, c);
          break;
        case 2:
          if (at < text.size()) text[at] = c;
          break;
        default:
          text.resize(at);
          break;
      }
    }
    ASSERT_TRUE(parsesAsRapidJson(text));
    ASSERT_TRUE(parsesAsRapidJson(text, &kNoManagedFields));
  }
}

// The document's values (keys aside) are bounded: as many as allowed are
// read, one more is refused, whichever reader takes the text (the short one
// for ASCII integers, RapidJSON's for a fraction or a byte outside ASCII).
TEST(JsonParseCopy, ValuesBeyondTheBoundAreRefusedByBothReaders) {
  // An object and its three values: four.
  for (const std::string text : {R"({"a":1,"b":[2]})", R"({"a":1.5,"b":["é"]})"}) {
    std::string buffer;
    JsonDocument document;
    EXPECT_EQ(parseJsonCopy(text, 200, buffer, document, {}, 4), "") << text;
    EXPECT_EQ(parseJsonCopy(text, 200, buffer, document, {}, 3), "JSON holds more than 3 values")
        << text;
  }
}

// The omitted member's values are not counted where the short reader takes
// the text: the managedFields an object carries cost the document nothing.
TEST(JsonParseCopy, TheOmittedMemberDoesNotCountAgainstTheBound) {
  const std::string text = R"({"request":{"object":{"metadata":{"managedFields":[1,2,3,4,5]}}}})";
  std::string buffer;
  JsonDocument document;
  EXPECT_EQ(parseJsonCopy(text, 200, buffer, document, &kNoManagedFields, 4), "");
}

}  // namespace
}  // namespace aiadmit
