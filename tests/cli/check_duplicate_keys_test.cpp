// `aiadmit check` on keys set twice: each object is checked as kubectl
// applies it (the last value of a repeated key, a `<<` merge over the keys
// before it) with a warning naming file, line and key; an object of which
// kubectl keeps one of two keys at random is an input error of its own, and
// the rest of the file is checked. The fixtures are the e2e test's, which
// holds the same answers to what the real API server stores.
#include <gtest/gtest.h>

#include <string>

#include "tests/support/check_harness.h"
#include "tests/support/test_support.h"

namespace aiadmit {
namespace {

using namespace testing;

std::string fixture(const std::string& name) {
  return sourceDir() + "/tests/golden/check/duplicate-keys/" + name;
}

const JsonValue* recordNamed(const JsonValue* report, const std::string& name) {
  for (const JsonValue& record : (*member(report, "objects")).GetArray()) {
    if (str(member(&record, "name")) == name) return &record;
  }
  ADD_FAILURE() << "no record of " << name;
  return nullptr;
}

TEST(CheckDuplicateKeys, EachObjectIsCheckedAsKubectlAppliesItWithAWarning) {
  const CommandResult result = check({"-o", "json", fixture("stored.yaml")});
  EXPECT_EQ(result.exitCode, 1) << result.err;  // dup-gpus-16 is denied, nothing is unusable
  const auto report = parseJson(result.out);
  ASSERT_TRUE(report) << result.out;

  // The last nvidia.com/gpu of each is what is judged: 16 is more than a node has.
  const JsonValue* sixteen = recordNamed(report.get(), "dup-gpus-16");
  ASSERT_NE(sixteen, nullptr);
  EXPECT_FALSE(member(sixteen, "admitted")->GetBool());
  EXPECT_EQ(str(member(&(*member(sixteen, "denials"))[0], "rule")), "AIA006");
  const JsonValue* one = recordNamed(report.get(), "dup-gpus-1");
  ASSERT_NE(one, nullptr);
  EXPECT_TRUE(member(one, "admitted")->GetBool());
  // The annotation written last in a List item decides the class.
  const JsonValue* listed = recordNamed(report.get(), "dup-in-list");
  ASSERT_NE(listed, nullptr);
  EXPECT_EQ(str(member(listed, "class")), "training");
  EXPECT_EQ(member(listed, "item")->GetInt(), 0);

  const JsonValue& warnings = *member(report.get(), "inputWarnings");
  ASSERT_EQ(warnings.Size(), 7u) << result.err;
  const JsonValue& limits = warnings[1];
  EXPECT_EQ(str(member(&limits, "file")), fixture("stored.yaml"));
  EXPECT_EQ(member(&limits, "index")->GetInt(), 0);
  EXPECT_EQ(member(&limits, "line")->GetInt(), 25);
  EXPECT_EQ(member(&limits, "column")->GetInt(), 15);
  EXPECT_EQ(str(member(&limits, "field")),
            "spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]");
  EXPECT_EQ(str(member(&warnings[3], "field")), "metadata.labels.team");
  EXPECT_NE(str(member(&warnings[3], "message")).find("the << merge here replaces"),
            std::string::npos);
  EXPECT_EQ(member(&warnings[4], "item")->GetInt(), 0);
  EXPECT_EQ(str(member(&warnings[4], "field")), "metadata.annotations[aiadmit.dev/workload]");
  EXPECT_EQ(str(member(&warnings[5], "field")), "metadata");
  EXPECT_EQ(member(member(report.get(), "summary"), "inputWarnings")->GetInt(), 7);
  EXPECT_TRUE(member(report.get(), "errors")->Empty());

  // On stderr as a compiler puts them, one per key, before the objects.
  EXPECT_NE(result.err.find("warning: " + fixture("stored.yaml") +
                            ":25:15: duplicate key "
                            "spec.template.spec.containers[0].resources.limits[nvidia.com/gpu] "
                            "(first at line 24): kubectl applies the value written here"),
            std::string::npos)
      << result.err;
}

TEST(CheckDuplicateKeys, TheTextSaysWhatWasReadOtherwiseThanWritten) {
  const CommandResult result = check({fixture("stored.json")});
  EXPECT_EQ(result.exitCode, 0) << result.err;
  EXPECT_EQ(lines(result.out).back(),
            "1 object: 1 admitted (1 mutated), 0 denied; 2 input warnings");
  EXPECT_EQ(result.err, "warning: " + fixture("stored.json") +
                            ":8:5: duplicate key spec.parallelism (first at line 7): kubectl "
                            "applies the value written here and drops the earlier one without a "
                            "warning; checked as applied\nwarning: " +
                            fixture("stored.json") +
                            ":11:53: duplicate key "
                            "spec.template.spec.containers[0].resources.limits[nvidia.com/gpu] "
                            "(first at line 11): kubectl applies the value written here and drops "
                            "the earlier one without a warning; checked as applied\n");
  // The last GPU count, 1, is what gets the /dev/shm of one GPU.
  EXPECT_NE(result.out.find("in container worker for 1 GPU"), std::string::npos) << result.out;
}

TEST(CheckDuplicateKeys, YamlOutputIsTheObjectAsApplied) {
  const CommandResult result = check({"-o", "yaml", fixture("stored.yaml")});
  EXPECT_EQ(result.exitCode, 1) << result.err;
  EXPECT_NE(result.out.find("name: dup-top-level\ndata:\n  model: mistral\n"), std::string::npos)
      << result.out;
  EXPECT_EQ(result.out.find("first-name"), std::string::npos);
  EXPECT_NE(result.out.find("  labels:\n    team: platform\n    tier: gpu\n"), std::string::npos)
      << result.out;
  // `on` is the key true to kubectl; "on" stays a string.
  EXPECT_NE(result.out.find("    \"on\": quoted\n    \"true\": plain\n"), std::string::npos)
      << result.out;
  EXPECT_NE(result.err.find("7 input warnings"), std::string::npos) << result.err;
}

TEST(CheckDuplicateKeys, WhatKubectlCannotApplyOrTellIsThatObjectsAlone) {
  const CommandResult result = check({"-o", "json", fixture("refused.yaml")});
  EXPECT_EQ(result.exitCode, 2);
  const auto report = parseJson(result.out);
  ASSERT_TRUE(report) << result.out;
  const JsonValue& objects = *member(report.get(), "objects");
  ASSERT_EQ(objects.Size(), 2u);
  EXPECT_EQ(str(member(&objects[0], "name")), "dup-before");
  EXPECT_EQ(str(member(&objects[1], "name")), "dup-after");
  EXPECT_EQ(member(&objects[1], "index")->GetInt(), 3);

  const JsonValue& errors = *member(report.get(), "errors");
  ASSERT_EQ(errors.Size(), 2u);
  EXPECT_EQ(member(&errors[0], "line")->GetInt(), 23);
  EXPECT_EQ(str(member(&errors[0], "message")),
            "Job has neither metadata.name nor metadata.generateName");
  EXPECT_EQ(member(&errors[1], "line")->GetInt(), 46);
  EXPECT_EQ(str(member(&errors[1], "message")),
            "duplicate key metadata.labels[1] (first at line 45), written as two keys that are "
            "both \"1\" in JSON: kubectl keeps one of them at random, so what it applies cannot "
            "be told; write the key once");
  // Why the Job has no name: its second metadata replaced the first.
  const JsonValue& warnings = *member(report.get(), "inputWarnings");
  ASSERT_EQ(warnings.Size(), 1u);
  EXPECT_EQ(str(member(&warnings[0], "field")), "metadata");
  EXPECT_EQ(member(&warnings[0], "line")->GetInt(), 27);
}

// A List whose own keys kubectl cannot tell leaves none of its items known;
// a key of an item concerns that item alone.
TEST(CheckDuplicateKeys, KeysOfAListAndOfItsItems) {
  const std::string items = R"(items:
  - apiVersion: v1
    kind: ConfigMap
    metadata: {name: a, labels: {1: x, "1": y}}
  - apiVersion: v1
    kind: ConfigMap
    metadata: {name: b}
)";
  const CommandResult itemOnly = check({"-o", "json", "-"}, "apiVersion: v1\nkind: List\n" + items);
  EXPECT_EQ(itemOnly.exitCode, 2);
  const auto report = parseJson(itemOnly.out);
  ASSERT_TRUE(report) << itemOnly.out;
  ASSERT_EQ(member(report.get(), "skipped")->Size(), 1u) << "item 1 is read";
  EXPECT_EQ(str(member(&(*member(report.get(), "skipped"))[0], "name")), "b");
  EXPECT_NE(
      itemOnly.err.find("error: STDIN:6:40: item 0 of the List: duplicate key metadata.labels[1]"),
      std::string::npos)
      << itemOnly.err;

  const CommandResult wholeList = check(
      {"-o", "json", "-"}, "apiVersion: v1\nkind: List\nmetadata: {1: x, \"1\": y}\n" + items);
  EXPECT_EQ(wholeList.exitCode, 2);
  const auto none = parseJson(wholeList.out);
  ASSERT_TRUE(none) << wholeList.out;
  EXPECT_TRUE(member(none.get(), "skipped")->Empty());
  EXPECT_EQ(wholeList.err,
            "error: STDIN:3:18: duplicate key metadata[1] (first at line 3), written as two keys "
            "that are both \"1\" in JSON: kubectl keeps one of them at random, so what it "
            "applies cannot be told; write the key once\n");
}

}  // namespace
}  // namespace aiadmit
