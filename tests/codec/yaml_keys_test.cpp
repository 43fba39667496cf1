// Mapping keys as kubectl reads them, and keys set twice: kubectl keeps the
// last value (YAML and JSON), lets a `<<` merge override the keys written
// before it, and turns keys such as `on` or 0x1F into the JSON keys "true"
// and "31". The expected values are what kubectl v1.37 printed for the same
// text (`kubectl label --local -f FILE -o json`, tests/e2e/duplicate_keys_e2e_test.cpp).
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "tests/support/check_harness.h"
#include "webhook/codec/yaml_json.h"
#include "webhook/codec/yaml_json_keys.h"

namespace aiadmit {
namespace {

using namespace testing;
using Kind = DuplicateKey::Kind;

std::vector<ManifestDocument> kept(const std::string& text) {
  std::vector<ManifestDocument> documents;
  ManifestError error;
  EXPECT_TRUE(parseManifests(text, documents, error, DuplicateKeys::Keep))
      << error.line << ":" << error.column << ": " << error.message;
  return documents;
}

ManifestError refused(const std::string& text, DuplicateKeys duplicates) {
  std::vector<ManifestDocument> documents;
  ManifestError error;
  EXPECT_FALSE(parseManifests(text, documents, error, duplicates)) << text;
  return error;
}

void expectKey(const DuplicateKey& key, Kind kind, int line, int column, int firstLine,
               const std::string& path) {
  EXPECT_EQ(key.kind, kind) << path;
  EXPECT_EQ(key.line, line) << path;
  EXPECT_EQ(key.column, column) << path;
  EXPECT_EQ(key.firstLine, firstLine) << path;
  EXPECT_EQ(key.path, path);
}

constexpr char kGpuPod[] = R"(apiVersion: v1
kind: Pod
metadata:
  name: first
  labels:
    team: a
    team: b
  name: second
spec:
  containers:
    - name: main
      image: main:1
      resources:
        limits:
          nvidia.com/gpu: 1
          nvidia.com/gpu: 2
)";

TEST(YamlKeys, ARepeatedKeyKeepsItsLastValueWhereverItIs) {
  const auto documents = kept(kGpuPod);
  ASSERT_EQ(documents.size(), 1u);
  const JsonValue* pod = documents[0].json.get();
  EXPECT_EQ(str(member(member(pod, "metadata"), "name")), "second");
  EXPECT_EQ(str(member(member(member(pod, "metadata"), "labels"), "team")), "b");
  const JsonValue& limits = (*pod)["spec"]["containers"][0]["resources"]["limits"];
  EXPECT_EQ(limits.MemberCount(), 1u);
  EXPECT_EQ(limits["nvidia.com/gpu"].GetInt(), 2);

  const std::vector<DuplicateKey>& keys = documents[0].duplicateKeys;
  ASSERT_EQ(keys.size(), 3u);
  expectKey(keys[0], Kind::Repeated, 7, 5, 6, "metadata.labels.team");
  expectKey(keys[1], Kind::Repeated, 8, 3, 4, "metadata.name");
  expectKey(keys[2], Kind::Repeated, 16, 11, 15,
            "spec.containers[0].resources.limits[nvidia.com/gpu]");
  EXPECT_EQ(keys[2].key, "nvidia.com/gpu");

  // Read for anything but check, a key set twice leaves the text unusable.
  const ManifestError error = refused(kGpuPod, DuplicateKeys::Refuse);
  EXPECT_EQ(error.line, 7);
  EXPECT_EQ(error.message, "duplicate key \"team\" (first at line 6)");
}

TEST(YamlKeys, ASectionWrittenTwiceIsReplacedWholeNotMerged) {
  const auto documents = kept(
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
      "data: {x: '1'}\nmetadata:\n  labels: {app: b}\n");
  ASSERT_EQ(documents.size(), 1u);
  EXPECT_EQ(toJson((*documents[0].json)["metadata"]), R"({"labels":{"app":"b"}})");
  ASSERT_EQ(documents[0].duplicateKeys.size(), 1u);
  expectKey(documents[0].duplicateKeys[0], Kind::Repeated, 6, 1, 3, "metadata");
}

TEST(YamlKeys, EachDocumentOfAStreamHasItsOwnKeys) {
  const auto documents = kept("a: 1\na: 2\n---\nb: 1\n---\nc: 1\nc: 2\nc: 3\n");
  ASSERT_EQ(documents.size(), 3u);
  EXPECT_EQ(documents[0].duplicateKeys.size(), 1u);
  EXPECT_TRUE(documents[1].duplicateKeys.empty());
  ASSERT_EQ(documents[2].duplicateKeys.size(), 2u);
  expectKey(documents[2].duplicateKeys[1], Kind::Repeated, 8, 1, 6, "c");
  EXPECT_EQ((*documents[2].json)["c"].GetInt(), 3);
}

// go-yaml v2 sets a merge's keys where the `<<` stands (YAML 1.1 would have
// the mapping's own keys win wherever they are written).
TEST(YamlKeys, AMergeOverridesTheKeysWrittenBeforeItAsKubectlReadsIt) {
  const auto documents = kept(R"(x: &x {a: 1, b: 1}
y: &y {a: 2, c: 2}
before:
  a: 0
  <<: *x
after:
  <<: *x
  a: 0
two:
  <<: *x
  <<: *y
list:
  <<: [*x, *y]
)");
  ASSERT_EQ(documents.size(), 1u);
  const JsonValue& root = *documents[0].json;
  EXPECT_EQ(root["before"]["a"].GetInt(), 1);
  EXPECT_EQ(root["after"]["a"].GetInt(), 0);
  EXPECT_EQ(root["two"]["a"].GetInt(), 2) << "a later << sets its keys over an earlier one's";
  EXPECT_EQ(root["list"]["a"].GetInt(), 1) << "of one merge's mappings the earlier win";
  EXPECT_EQ(root["list"]["c"].GetInt(), 2);
  ASSERT_EQ(documents[0].duplicateKeys.size(), 1u);
  expectKey(documents[0].duplicateKeys[0], Kind::Merged, 5, 3, 4, "before.a");
  // Not a duplicate key in YAML: read for anything but check, it is kubectl's value.
  std::vector<ManifestDocument> strict;
  ManifestError error;
  ASSERT_TRUE(parseManifests("a: 0\n<<: {a: 1}\n", strict, error));
  EXPECT_EQ((*strict[0].json)["a"].GetInt(), 1);
}

TEST(YamlKeys, KeysAreTheJsonKeysKubectlMakesOfThem) {
  const auto documents = kept(R"(on: a
"off": b
y: c
0x1F: d
012: e
1.5: f
1e6: g
3.14159265358979: h
'0x1F': i
1_000: j
)");
  ASSERT_EQ(documents.size(), 1u);
  const JsonValue& root = *documents[0].json;
  EXPECT_EQ(str(member(&root, "true")), "c") << "on and y are both the key true";
  EXPECT_EQ(str(member(&root, "off")), "b") << "a quoted key is a string";
  EXPECT_EQ(str(member(&root, "31")), "d");
  EXPECT_EQ(str(member(&root, "10")), "e") << "012 is octal";
  EXPECT_EQ(str(member(&root, "1.5")), "f");
  EXPECT_EQ(str(member(&root, "1e+06")), "g");
  EXPECT_EQ(str(member(&root, "3.1415927")), "h") << "float keys are written as 32-bit floats";
  EXPECT_EQ(str(member(&root, "0x1F")), "i");
  EXPECT_EQ(str(member(&root, "1000")), "j");
  ASSERT_EQ(documents[0].duplicateKeys.size(), 1u);
  expectKey(documents[0].duplicateKeys[0], Kind::Repeated, 3, 1, 1, "true");

  for (const auto& [text, message] :
       {std::tuple{"~: a\n", "a null key, which kubectl cannot turn into JSON"},
        std::tuple{"a: {null: b}\n", "a null key, which kubectl cannot turn into JSON"},
        std::tuple{"18446744073709551615: a\n",
                   "an integer key above 9223372036854775807, which kubectl cannot turn into "
                   "JSON"}}) {
    EXPECT_EQ(refused(text, DuplicateKeys::Keep).message, message) << text;
  }
}

// go-yaml v2 holds 1 and "1" as two keys; sigs.k8s.io/yaml then writes both
// as "1" in the order of a Go map, which is random.
TEST(YamlKeys, KeysThatBecomeOneJsonKeyAreAmbiguous) {
  const auto documents =
      kept("metadata:\n  labels:\n    1: a\n    \"1\": b\n    2.0: c\n    2: d\n");
  ASSERT_EQ(documents.size(), 1u);
  ASSERT_EQ(documents[0].duplicateKeys.size(), 2u);
  expectKey(documents[0].duplicateKeys[0], Kind::Ambiguous, 4, 5, 3, "metadata.labels[1]");
  expectKey(documents[0].duplicateKeys[1], Kind::Ambiguous, 6, 5, 5, "metadata.labels[2]");
  EXPECT_EQ(refused("1: a\n\"1\": b\n", DuplicateKeys::Refuse).message,
            "duplicate key \"1\" (first at line 1)");
}

TEST(YamlKeys, JsonKeepsTheLastMemberAsGoDecodesIt) {
  const auto documents = kept(R"({"kind": "Pod", "metadata": {"name": "a",
  "name": "b"},
 "spec": {"containers": [{"name": "c"}, {"name": "d", "resources": {"limits": {"x": 1}, "limits": {"y": 2}}}]},
 "metadata": {"name": "c", "labels": {"k": "1", "k": "2"}}}
{"a": 1}
{"b": 1, "b": 2})");
  ASSERT_EQ(documents.size(), 3u);
  EXPECT_EQ(
      toJson(*documents[0].json),
      R"({"kind":"Pod","spec":{"containers":[{"name":"c"},{"name":"d","resources":{"limits":{"y":2}}}]},)"
      R"("metadata":{"name":"c","labels":{"k":"2"}}})");
  const std::vector<DuplicateKey>& keys = documents[0].duplicateKeys;
  ASSERT_EQ(keys.size(), 4u);
  expectKey(keys[0], Kind::Repeated, 2, 3, 1, "metadata.name");
  expectKey(keys[1], Kind::Repeated, 3, 89, 3, "spec.containers[1].resources.limits");
  expectKey(keys[2], Kind::Repeated, 4, 2, 1, "metadata");
  expectKey(keys[3], Kind::Repeated, 4, 49, 4, "metadata.labels.k");
  EXPECT_TRUE(documents[1].duplicateKeys.empty());
  ASSERT_EQ(documents[2].duplicateKeys.size(), 1u);
  EXPECT_EQ(documents[2].duplicateKeys[0].line, 6);
  EXPECT_EQ((*documents[2].json)["b"].GetInt(), 2);
}

TEST(YamlKeys, FloatKeysAreWrittenAsGoWritesA32BitFloat) {
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  for (const auto& [value, text] :
       {std::pair{0.1, "0.1"}, std::pair{1.5, "1.5"}, std::pair{1e6, "1e+06"},
        std::pair{1e20, "1e+20"}, std::pair{3.14159265358979, "3.1415927"}, std::pair{0.0, "0"},
        std::pair{-0.0, "-0"}, std::pair{123456.0, "123456"}, std::pair{1234567.0, "1.234567e+06"},
        std::pair{0.0001, "0.0001"}, std::pair{0.00001, "1e-05"},
        std::pair{16777217.0, "1.6777216e+07"}, std::pair{2.5e-10, "2.5e-10"},
        std::pair{-1.25, "-1.25"}, std::pair{100.0, "100"}, std::pair{kInfinity, ".inf"},
        std::pair{-kInfinity, "-.inf"}}) {
    EXPECT_EQ(goFloat32Text(value), text) << value;
  }
}

}  // namespace
}  // namespace aiadmit
