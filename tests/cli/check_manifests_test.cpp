// The manifest reader `check` shares with the tests: JSON streams, merge
// keys, duplicate keys, alias bombs, stray commas, and YAML written back
// readable.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "tests/support/check_harness.h"
#include "webhook/codec/yaml_json.h"
#include "webhook/codec/yaml_write.h"

namespace aiadmit {
namespace {

using namespace testing;

std::vector<ManifestDocument> parsed(const std::string& text) {
  std::vector<ManifestDocument> documents;
  ManifestError error;
  EXPECT_TRUE(parseManifests(text, documents, error))
      << error.line << ":" << error.column << ": " << error.message;
  return documents;
}

ManifestError refused(const std::string& text) {
  std::vector<ManifestDocument> documents;
  ManifestError error;
  EXPECT_FALSE(parseManifests(text, documents, error)) << text;
  return error;
}

TEST(Manifests, JsonStreamsAsKubectlReadsThem) {
  const auto documents =
      parsed("\xEF\xBB\xBF  {\"a\": 1}\n{\"b\": \"x\\/y\\u00e9\"}  {\"c\": 1.5}\n");
  ASSERT_EQ(documents.size(), 3u);
  EXPECT_EQ(toJson(*documents[0].json), R"({"a":1})");
  EXPECT_EQ(str(member(documents[1].json.get(), "b")), "x/y\xC3\xA9");
  EXPECT_EQ(documents[1].line, 2);
  EXPECT_EQ(documents[2].line, 2);
  EXPECT_DOUBLE_EQ((*documents[2].json)["c"].GetDouble(), 1.5);

  // As for kubectl, the first character decides: flow-style YAML is YAML
  // only after something else.
  const auto flow = parsed("# flow\n{a: 1, b: yes}\n---\n{c: 2}\n");
  ASSERT_EQ(flow.size(), 2u);
  EXPECT_EQ(toJson(*flow[0].json), R"({"a":1,"b":true})");
  EXPECT_NE(refused("{a: 1}\n").message.find("invalid JSON"), std::string::npos);

  ManifestError error = refused("{\"a\": 1,\n \"b\": }\n");
  EXPECT_EQ(error.line, 2);
  EXPECT_NE(error.message.find("invalid JSON"), std::string::npos) << error.message;
  error = refused("{\"a\": 1,\n \"a\": 2}");
  EXPECT_EQ(error.line, 2);
  EXPECT_EQ(error.message, "duplicate key \"a\"");
  error = refused(std::string("{\"a\": \"x\"}\n{\"b\": \"\0\"}", 20));
  EXPECT_EQ(error.message, "NUL byte in the text");
  error = refused("{\"a\": " + std::string(300, '[') + "}");
  EXPECT_NE(error.message.find("nested deeper than 200"), std::string::npos) << error.message;
  error = refused("{\"a\": \"x\xE0");  // a truncated UTF-8 sequence at the very end
  EXPECT_NE(error.message.find("invalid JSON"), std::string::npos) << error.message;
}

TEST(Manifests, MergeKeysAndDuplicateKeys) {
  const auto documents = parsed(R"(base: &base {a: 1, b: 2}
extra: &extra {b: 3, c: 4}
merged:
  <<: [*base, *extra]
  c: 5
quoted:
  "<<": text
)");
  ASSERT_EQ(documents.size(), 1u);
  const JsonValue* merged = member(documents[0].json.get(), "merged");
  EXPECT_EQ(member(merged, "a")->GetInt(), 1);
  EXPECT_EQ(member(merged, "b")->GetInt(), 2) << "earlier merged mappings win";
  EXPECT_EQ(member(merged, "c")->GetInt(), 5) << "keys written in the mapping win";
  EXPECT_EQ(member(merged, "<<"), nullptr);
  EXPECT_EQ(str(member(member(documents[0].json.get(), "quoted"), "<<")), "text");

  ManifestError error = refused("a:\n  x: 1\n  y: 2\n  x: 3\n");
  EXPECT_EQ(error.line, 4);
  EXPECT_EQ(error.message, "duplicate key \"x\" (first at line 2)");
  error = refused("a:\n  <<: 5\n");
  EXPECT_EQ(error.line, 2);
  EXPECT_EQ(error.message, "<< merges a mapping or a list of mappings");
  error = refused("? [a, b]\n: c\n");
  EXPECT_EQ(error.message, "a mapping key must be a string");
}

TEST(Manifests, AliasesThatExpandBeyondTheTextAreRefused) {
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n";
  for (char name = 'b'; name <= 'i'; ++name) {
    bomb += std::string(1, name) + ": &" + name + " [";
    for (int i = 0; i < 9; ++i) bomb += std::string(i ? ", *" : "*") + static_cast<char>(name - 1);
    bomb += "]\n";
  }
  const ManifestError error = refused(bomb);
  EXPECT_EQ(error.message, "aliases expand to far more than the text holds");

  // Anchors reused the ordinary way are fine.
  const auto documents =
      parsed("env: &env [{name: A, value: '1'}]\nc1: {env: *env}\nc2: {env: *env}\n");
  ASSERT_EQ(documents.size(), 1u);
  EXPECT_EQ(member(documents[0].json.get(), "c2")->operator[]("env").Size(), 1u);
}

// yaml-cpp 0.7 never returns from these; the builder counts its events.
TEST(Manifests, StrayCommasAtTheTopLevelAreRefusedWhereTheyAre) {
  for (const auto& [text, line, column] :
       {std::tuple{"[],", 1, 3}, std::tuple{"\n\n [],\n", 3, 4}, std::tuple{"- a\n,", 2, 1},
        std::tuple{", a", 1, 1}, std::tuple{"'a' ,", 1, 5}, std::tuple{"|\n  a\n,", 3, 1}}) {
    SCOPED_TRACE(text);
    const ManifestError error = refused(text);
    EXPECT_NE(error.message.find("makes no progress"), std::string::npos) << error.message;
    EXPECT_EQ(error.line, line);
    EXPECT_EQ(error.column, column);
  }
}

TEST(Manifests, TextThatIsNotYamlIsRefusedWhereItIs) {
  ManifestError error = refused("a: 1\nb: \xC3\x28\n");
  EXPECT_EQ(error.message, "invalid YAML: not UTF-8");
  EXPECT_EQ(error.line, 2);
  EXPECT_EQ(error.column, 4);
  error = refused(std::string(" \0\0\0/", 5));
  EXPECT_EQ(error.message, "invalid YAML: control characters are not allowed");
  EXPECT_EQ(error.column, 2);
  EXPECT_EQ(refused("a: &a [*a]\n").message, "an alias refers to the node that contains it");
  error = refused("a: 1\nb: \"x\\uffff\"\n");
  EXPECT_EQ(error.message, "U+FFFE and U+FFFF are not characters YAML can hold");
  EXPECT_EQ(error.line, 2);
  EXPECT_EQ(refused("{\"a\": \"\\ufffe\"}").message,
            "U+FFFE and U+FFFF are not characters YAML can hold");
  EXPECT_EQ(refused("a: 1\n  b: 2\n").line, 2);
}

TEST(Manifests, YamlWrittenBackReadsTheSame) {
  const std::string text = R"({"s": ["8", "yes", "~", "<<", "a: b", "multi\nline", "0x1F", "",
   "cr\r", "del\u007f", "\u0001", "caf\u00e9", " padded ", "---", "... a"],
 "n": [8, -3, 0.1, 1e300, 2.5e-7, 18446744073709551615],
 "<<": {"k": true}, "e": {}, "l": [], "z": null})";
  const auto documents = parsed(text);
  ASSERT_EQ(documents.size(), 1u);
  const std::string yaml = toYaml(*documents[0].json);
  EXPECT_NE(yaml.find("- 0.1\n"), std::string::npos) << "shortest form of a double\n" << yaml;
  EXPECT_NE(yaml.find("\"<<\":"), std::string::npos) << yaml;
  const auto again = parsed(yaml);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(*again[0].json, *documents[0].json) << yaml;
  EXPECT_TRUE((*again[0].json)["n"][5].IsUint64()) << "not turned into a double";

  // A document that is a string, or a key, starting with a document marker.
  for (const char* marker : {R"({"--- a": 1})", R"({"a": 1}
{"...": 2})"}) {
    for (const ManifestDocument& document : parsed(marker)) {
      const auto back = parsed(toYaml(*document.json));
      ASSERT_EQ(back.size(), 1u) << toYaml(*document.json);
      EXPECT_EQ(*back[0].json, *document.json);
    }
  }
  // Keys too long to be written as `key:`.
  const std::string longKey =
      "{\"" + std::string(300, 'k') + "\\r" + std::string(900, 'k') + "\": {\"a\": 1}}";
  const auto longKeyDocument = parsed(longKey);
  ASSERT_EQ(longKeyDocument.size(), 1u);
  const auto longKeyBack = parsed(toYaml(*longKeyDocument[0].json));
  ASSERT_EQ(longKeyBack.size(), 1u);
  EXPECT_EQ(*longKeyBack[0].json, *longKeyDocument[0].json);

  const auto scalar = parsed("\"---\"\n");
  ASSERT_EQ(scalar.size(), 1u);
  EXPECT_EQ(parsed(toYaml(*scalar[0].json)).size(), 1u) << toYaml(*scalar[0].json);
}

}  // namespace
}  // namespace aiadmit
