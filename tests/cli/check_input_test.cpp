// What `aiadmit check` reads: stdin named as kubectl names it, broken and
// odd documents named by file and line, objects in files, multi-document
// YAML, JSON streams and Lists, directories, and each object's namespace.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/support/check_harness.h"
#include "tests/support/test_support.h"

namespace aiadmit {
namespace {

using namespace testing;

TEST(CheckInput, StdinIsNamedAsKubectlNamesIt) {
  const CommandResult result = check({"-"}, kDeniedPod);
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_NE(result.out.find("error when creating \"STDIN\": admission webhook"), std::string::npos)
      << result.out;

  const CommandResult broken = check({"-o", "json", "-"}, kBrokenYaml);
  EXPECT_EQ(broken.exitCode, 2);
  EXPECT_EQ(broken.err, "error: STDIN:5:11: invalid YAML: illegal map value\n");
  const auto report = parseJson(broken.out);
  const JsonValue& error = (*member(report.get(), "errors"))[0];
  EXPECT_EQ(str(member(&error, "file")), "STDIN");
  EXPECT_EQ(member(&error, "line")->GetInt(), 5);
  EXPECT_EQ(member(&error, "column")->GetInt(), 11);
}

TEST(CheckInput, DocumentsThatAreNotObjectsAreNamedByLine) {
  const std::string text = std::string(kAdmittedJob) +
                           "---\n"
                           "- just\n- a list\n"
                           "---\n"
                           "metadata:\n  name: nameless\n"
                           "---\n"
                           "apiVersion: apps/v1\nkind: Deployment\nspec: {}\n";
  const CommandResult result = check({"-"}, text);
  EXPECT_EQ(result.exitCode, 2);
  EXPECT_EQ(result.err,
            "error: STDIN:18: a manifest is an object with apiVersion and kind, not a list\n"
            "error: STDIN:21: apiVersion not set, kind not set\n"
            "error: STDIN:24: Deployment has neither metadata.name nor metadata.generateName\n");
  EXPECT_EQ(lines(result.out).back(), "1 object: 1 admitted (1 mutated), 0 denied; 3 input errors");
}

// Files, multi-document YAML, JSON streams and Lists: where each object is.
TEST(CheckInput, PositionsOfObjectsInDocumentsAndLists) {
  TempDir dir;
  writeFile(dir.file("a.yaml"), std::string("---\n# empty\n---\n") + kAdmittedJob + R"(---
apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: ConfigMap
    metadata: {name: settings}
  - apiVersion: v1
    kind: Pod
    metadata:
      name: typo
    spec:
      restartPolicy: Never
      containers:
        - name: main
          image: main:1.0
          resources:
            limits:
              nvidia.com/gpus: 1
)");
  writeFile(dir.file("b.json"),
            R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1"},
 "spec": {"containers": [{"name": "c", "image": "i"}]}}
{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}}
{"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "p-"},
 "spec": {"containers": [{"name": "c", "image": "i"}]}})");
  writeFile(dir.file("notes.txt"), "not a manifest");
  std::filesystem::create_directories(dir.file("sub"));
  writeFile(dir.file("sub/c.yaml"), kAdmittedJob);

  const CommandResult result = check({"-o", "json", "-n", "team-a", dir.path()});
  EXPECT_EQ(result.exitCode, 1) << result.err;
  const auto report = parseJson(result.out);
  struct Expected {
    std::string file;
    int index, item, line;
    std::string kind, name;
  };
  const std::vector<Expected> expected = {
      {"a.yaml", 0, -1, 4, "Job", "finetune"},
      {"a.yaml", 1, 1, 21, "Pod", "typo"},
      {"b.json", 0, -1, 1, "Pod", "p1"},
      {"b.json", 2, -1, 4, "Pod", ""},
  };
  const JsonValue* objects = member(report.get(), "objects");
  ASSERT_EQ(objects->Size(), expected.size()) << result.out;
  for (size_t i = 0; i < expected.size(); ++i) {
    const JsonValue& record = (*objects)[static_cast<rapidjson::SizeType>(i)];
    SCOPED_TRACE(i);
    EXPECT_EQ(str(member(&record, "file")), dir.file(expected[i].file));
    EXPECT_EQ(member(&record, "index")->GetInt(), expected[i].index);
    EXPECT_EQ(member(&record, "item") ? member(&record, "item")->GetInt() : -1, expected[i].item);
    EXPECT_EQ(member(&record, "line")->GetInt(), expected[i].line);
    EXPECT_EQ(str(member(&record, "kind")), expected[i].kind);
    EXPECT_EQ(str(member(&record, "name")), expected[i].name);
    EXPECT_EQ(str(member(&record, "namespace")), "team-a");
  }
  EXPECT_EQ(str(member(&(*objects)[3], "generateName")), "p-");
  const JsonValue* skipped = member(report.get(), "skipped");
  ASSERT_EQ(skipped->Size(), 2u);
  EXPECT_EQ(str(member(&(*skipped)[0], "kind")), "ConfigMap");
  EXPECT_EQ(member(&(*skipped)[0], "item")->GetInt(), 0);
  EXPECT_EQ(str(member(&(*skipped)[1], "kind")), "Service");
  EXPECT_EQ(member(&(*skipped)[1], "line")->GetInt(), 3);

  // -R reads subdirectories too; files named on the command line are read
  // whatever their name.
  const CommandResult recursive = check({"-R", dir.path()});
  EXPECT_EQ(lines(recursive.out).back(),
            "5 objects: 4 admitted (2 mutated), 1 denied; 2 skipped (not a kind that runs Pods)")
      << recursive.out;
  const CommandResult named = check({dir.file("notes.txt")});
  EXPECT_EQ(named.exitCode, 2);
  EXPECT_EQ(named.err, "error: " + dir.file("notes.txt") +
                           ":1: a manifest is an object with apiVersion and kind, not a string\n");

  // The text names generated objects by their prefix and the namespace given.
  const CommandResult text = check({"--namespace=team-a", dir.file("b.json")});
  EXPECT_NE(text.out.find("pod/p-* (ns team-a)\n"), std::string::npos) << text.out;
}

TEST(CheckInput, ObjectsKeepTheirOwnNamespace) {
  std::string job = kAdmittedJob;
  job.replace(job.find("  name: finetune\n"), 17, "  name: finetune\n  namespace: ml\n");
  const CommandResult result = check({"-n", "team-a", "-"}, job);
  EXPECT_NE(result.out.find("job/finetune (ns ml)\n"), std::string::npos) << result.out;
}

}  // namespace
}  // namespace aiadmit
