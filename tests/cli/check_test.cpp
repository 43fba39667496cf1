// `aiadmit check` run as developers and pipelines run it: over the corpus
// against golden outputs (text and JSON), agreeing with the real server's
// answers, its YAML output applied by nothing but what kubectl's patch gives
// and valid against the Kubernetes schema, stdin, exit codes, broken and odd
// input named by file and line, and colour only on a terminal. Also the
// manifest reader it shares with the tests: JSON streams, merge keys,
// duplicate keys, alias bombs, and YAML written back readable.
//
// AIADMIT_UPDATE_GOLDEN=1 rewrites tests/golden/check/ instead of comparing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <tuple>

#include "tests/support/test_support.h"
#include "webhook/engine/admission.h"
#include "webhook/kube/workload.h"
#include "webhook/kube/workload_type.h"
#include "webhook/kube/yaml_json.h"

namespace aiadmit {
namespace {

using namespace testing;

std::string goldenDir() {
  return sourceDir() + "/tests/golden/check";
}

std::string profilesDir() {
  return sourceDir() + "/profiles";
}

// `aiadmit check --profiles <shipped> ARGS...` with `input` on stdin.
CommandResult check(std::vector<std::string> args, const std::string& input = "") {
  std::vector<std::string> argv = {binaryPath(), "check", "--profiles", profilesDir()};
  argv.insert(argv.end(), args.begin(), args.end());
  return runCommand(argv, input);
}

// Over the corpus from its own directory, so that file names in the output
// are the same on every machine.
CommandResult checkCorpus(std::vector<std::string> args) {
  std::vector<std::string> argv = {"env",   "-C",         corpusDir(),  binaryPath(),
                                   "check", "--profiles", profilesDir()};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back("manifests");
  return runCommand(argv);
}

void compareWithGolden(const std::string& actual, const std::string& name) {
  const std::string file = goldenDir() + "/" + name;
  if (const char* update = std::getenv("AIADMIT_UPDATE_GOLDEN"); update && *update == '1') {
    std::filesystem::create_directories(goldenDir());
    writeFile(file, actual);
  }
  EXPECT_EQ(actual, readFile(file)) << "AIADMIT_UPDATE_GOLDEN=1 rewrites " << file;
}

// What `check` reads: an object of a kind the workload-type table describes.
bool isWorkload(const JsonValue& object) {
  return WorkloadTypeTable::builtIn()->findForObject(object) != nullptr;
}

std::vector<CorpusObject> corpusWorkloads() {
  std::vector<CorpusObject> workloads;
  for (CorpusObject& object : corpusObjects()) {
    if (isWorkload(*parseJson(object.json))) workloads.push_back(std::move(object));
  }
  return workloads;
}

std::string str(const JsonValue* value) {
  return std::string(stringOf(value));
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::vector<ManifestDocument> parseYamlOutput(const std::string& text) {
  std::vector<ManifestDocument> documents;
  std::string error;
  EXPECT_TRUE(parseManifests(text, documents, &error)) << error << "\n" << text;
  return documents;
}

// Built-in kinds, which kubernetes-models has schemas for.
bool isBuiltIn(const JsonValue& object) {
  const std::string apiVersion = str(member(&object, "apiVersion"));
  const size_t slash = apiVersion.find('/');
  const std::string group = slash == std::string::npos ? "" : apiVersion.substr(0, slash);
  return group.find('.') == std::string::npos || group.ends_with(".k8s.io");
}

const char kAdmittedJob[] = R"(apiVersion: batch/v1
kind: Job
metadata:
  name: finetune
  annotations:
    aiadmit.dev/workload: training
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: trainer
          image: trainer:1.0
          resources:
            limits:
              nvidia.com/gpu: 1
)";

const char kDeniedPod[] = R"(apiVersion: v1
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
)";

// A mapping value where a key was expected: line 5, column 11.
const char kBrokenYaml[] = R"(apiVersion: v1
kind: Pod
metadata:
  name: broken
    labels: x
spec: {}
)";

// ------------------------------------------------------------- the corpus

TEST(CheckCorpus, TextMatchesTheGoldenFile) {
  const CommandResult result = checkCorpus({});
  EXPECT_EQ(result.exitCode, 1) << result.err;  // the corpus has denials
  EXPECT_EQ(result.err, "");
  EXPECT_EQ(result.out.find('\033'), std::string::npos) << "colour without a terminal";
  compareWithGolden(result.out, "corpus.txt");

  // One block per object of a kind aiadmit admits, in file order, and a summary.
  const std::vector<CorpusObject> workloads = corpusWorkloads();
  std::vector<std::string> headers;
  for (const std::string& line : lines(result.out)) {
    if (!line.empty() && line[0] != ' ' && line.find(" (ns ") != std::string::npos) {
      headers.push_back(line.substr(0, line.find(" (ns ")));
    }
  }
  ASSERT_EQ(headers.size(), workloads.size()) << result.out;
  for (size_t i = 0; i < workloads.size(); ++i) {
    std::string kind = workloads[i].kind;
    std::transform(kind.begin(), kind.end(), kind.begin(), ::tolower);
    EXPECT_EQ(headers[i].rfind(kind + "/", 0), 0u) << headers[i];
  }
  const std::string summary = lines(result.out).back();
  EXPECT_EQ(summary.rfind(std::to_string(workloads.size()) + " objects: ", 0), 0u) << summary;
  EXPECT_NE(summary.find(" skipped (not a kind that runs Pods)"), std::string::npos);
}

TEST(CheckCorpus, JsonParsesBackAndMatchesTheGoldenFile) {
  const CommandResult result = checkCorpus({"-o", "json"});
  EXPECT_EQ(result.exitCode, 1) << result.err;
  EXPECT_EQ(result.err, "");
  compareWithGolden(result.out, "corpus.json");

  const auto report = parseJson(result.out);
  ASSERT_TRUE(report->IsObject());
  const JsonValue* objects = member(report.get(), "objects");
  const JsonValue* skipped = member(report.get(), "skipped");
  const JsonValue* summary = member(report.get(), "summary");
  ASSERT_TRUE(isArray(objects) && isArray(skipped) && isObject(summary));
  EXPECT_TRUE(member(report.get(), "errors")->Empty());

  const std::vector<CorpusObject> workloads = corpusWorkloads();
  ASSERT_EQ(objects->Size(), workloads.size());
  EXPECT_EQ(objects->Size() + skipped->Size(), corpusObjects().size());

  size_t admitted = 0, mutated = 0, denied = 0;
  for (rapidjson::SizeType i = 0; i < objects->Size(); ++i) {
    const JsonValue& record = (*objects)[i];
    const CorpusObject& object = workloads[i];
    SCOPED_TRACE(object.file + "#" + std::to_string(object.index));
    EXPECT_EQ(str(member(&record, "file")), "manifests/" + object.file);
    EXPECT_EQ(member(&record, "index")->GetInt(), object.index);
    EXPECT_EQ(str(member(&record, "kind")), object.kind);
    EXPECT_EQ(str(member(&record, "name")), object.name);
    EXPECT_FALSE(str(member(&record, "namespace")).empty());
    EXPECT_FALSE(str(member(&record, "class")).empty());
    EXPECT_FALSE(str(member(&record, "reason")).empty());

    const bool isAdmitted = member(&record, "admitted")->GetBool();
    const bool isMutated = member(&record, "mutated")->GetBool();
    EXPECT_EQ(isMutated, !member(&record, "patch")->Empty());
    EXPECT_EQ(isMutated, !member(&record, "injected")->Empty());
    for (const JsonValue& warning : member(&record, "warnings")->GetArray()) {
      EXPECT_LE(warning.GetStringLength(), kMaxWarningLength);
    }
    const JsonValue* denials = member(&record, "denials");
    if (isAdmitted) {
      EXPECT_TRUE(denials->Empty());
      EXPECT_TRUE(member(&record, "message")->IsNull());
      ++admitted;
      if (isMutated) ++mutated;
      continue;
    }
    ++denied;
    // The message kubectl prints is the rule denials, one line each, in order.
    const std::vector<std::string> messageLines = lines(str(member(&record, "message")));
    ASSERT_EQ(messageLines.size(), denials->Size());
    for (rapidjson::SizeType d = 0; d < denials->Size(); ++d) {
      const std::string rule = str(member(&(*denials)[d], "rule"));
      EXPECT_EQ(rule.size(), 6u);
      EXPECT_EQ(rule.rfind("AIA", 0), 0u);
      EXPECT_EQ(messageLines[d], str(member(&(*denials)[d], "message")));
      EXPECT_EQ(messageLines[d].rfind("[" + rule + "] " + str(member(&(*denials)[d], "field")), 0),
                0u);
    }
  }
  EXPECT_EQ(member(summary, "objects")->GetUint64(), workloads.size());
  EXPECT_EQ(member(summary, "admitted")->GetUint64(), admitted);
  EXPECT_EQ(member(summary, "mutated")->GetUint64(), mutated);
  EXPECT_EQ(member(summary, "denied")->GetUint64(), denied);
  EXPECT_EQ(member(summary, "skipped")->GetUint64(), skipped->Size());
  EXPECT_GT(mutated, 0u);
  EXPECT_GT(denied, 0u);
}

// The same decisions as the running webhook: the patch of /mutate, and the
// answer of /validate for the object that patch makes.
TEST(CheckCorpus, AnswersAsTheServerDoes) {
  const CommandResult result = checkCorpus({"-o", "json"});
  const auto report = parseJson(result.out);
  const JsonValue* objects = member(report.get(), "objects");
  ASSERT_TRUE(isArray(objects));
  const std::vector<CorpusObject> workloads = corpusWorkloads();
  ASSERT_EQ(objects->Size(), workloads.size());

  WebhookServer server;
  for (rapidjson::SizeType i = 0; i < objects->Size(); ++i) {
    const JsonValue& record = (*objects)[i];
    const CorpusObject& object = workloads[i];
    SCOPED_TRACE(object.file + "#" + std::to_string(object.index));
    const std::string ns = str(member(&record, "namespace"));
    const std::string uid = "check-" + std::to_string(i);

    const ReviewResponse mutation = parseReviewResponse(
        server.post("/mutate", makeReview(object.json, "CREATE", uid, "", ns)).body);
    ASSERT_TRUE(mutation.allowed);
    std::string mutated = object.json;
    std::vector<std::string> expectedWarnings;
    if (mutation.patch.empty()) {
      EXPECT_TRUE(member(&record, "patch")->Empty());
      expectedWarnings = mutation.warnings;
    } else {
      EXPECT_EQ(*parseJson(mutation.patch), *member(&record, "patch"));
      // The server's warnings for a patch: the class, then one per injected change.
      EXPECT_EQ(mutation.warnings.size(), 1 + member(&record, "injected")->Size());
      mutated = applyPatch(object.json, mutation.patch);
      ASSERT_FALSE(mutated.empty());
    }

    const ReviewResponse validation = parseReviewResponse(
        server.post("/validate", makeReview(mutated, "CREATE", uid, "", ns)).body);
    expectedWarnings.insert(expectedWarnings.end(), validation.warnings.begin(),
                            validation.warnings.end());
    EXPECT_EQ(validation.allowed, member(&record, "admitted")->GetBool());
    if (!validation.allowed) {
      EXPECT_EQ(validation.message, str(member(&record, "message")));
    }
    std::vector<std::string> warnings;
    for (const JsonValue& warning : member(&record, "warnings")->GetArray()) {
      warnings.push_back(str(&warning));
    }
    EXPECT_EQ(warnings, expectedWarnings);
  }
}

// -o yaml: every object of the input, mutated ones as kubectl's patch makes
// them, valid against the schema, and checked again: nothing left to inject.
TEST(CheckCorpus, YamlIsWhatThePatchesMakeAndValidAgainstTheSchema) {
  const CommandResult json = checkCorpus({"-o", "json"});
  const CommandResult yaml = checkCorpus({"-o", "yaml"});
  EXPECT_EQ(yaml.exitCode, 1);
  const auto report = parseJson(json.out);
  const JsonValue* records = member(report.get(), "objects");
  ASSERT_TRUE(isArray(records));

  const std::vector<CorpusObject> corpus = corpusObjects();
  const std::vector<ManifestDocument> documents = parseYamlOutput(yaml.out);
  ASSERT_EQ(documents.size(), corpus.size());
  std::vector<std::string> schemaChecked;
  size_t builtInWorkloads = 0;
  rapidjson::SizeType next = 0;
  for (size_t i = 0; i < corpus.size(); ++i) {
    SCOPED_TRACE(corpus[i].file + "#" + std::to_string(corpus[i].index));
    const JsonValue& written = *documents[i].json;
    const auto original = parseJson(corpus[i].json);
    if (!isWorkload(*original)) {
      EXPECT_EQ(written, *original) << "skipped objects are passed through";
    } else {
      ASSERT_LT(next, records->Size());
      const JsonValue* patch = member(&(*records)[next++], "patch");
      if (patch->Empty()) {
        EXPECT_EQ(written, *original);
      } else {
        const std::string patched = applyPatch(corpus[i].json, toJson(*patch));
        ASSERT_FALSE(patched.empty());
        EXPECT_EQ(written, *parseJson(patched));
      }
    }
    if (isBuiltIn(written)) {
      schemaChecked.push_back(toJson(written));
      if (isWorkload(written)) ++builtInWorkloads;
    }
  }
  EXPECT_EQ(next, records->Size());
  ASSERT_GT(schemaChecked.size(), builtInWorkloads);
  const CommandResult schema = validateSchemas(schemaChecked);
  EXPECT_EQ(schema.exitCode, 0) << schema.out << schema.err;

  // Denials and warnings go where kubectl prints them: stderr.
  EXPECT_NE(yaml.err.find("Error from server (Forbidden): error when creating \"manifests/"),
            std::string::npos)
      << yaml.err;
  EXPECT_NE(yaml.err.find("Warning: aiadmit: [AIA015]"), std::string::npos) << yaml.err;

  // Through stdin, as in `check -o yaml | check -`: idempotent, same denials.
  const CommandResult again = check({"-"}, yaml.out);
  EXPECT_EQ(again.exitCode, 1) << again.err;
  const std::string summary = lines(again.out).back();
  const JsonValue* counts = member(report.get(), "summary");
  EXPECT_EQ(summary, std::to_string(member(counts, "objects")->GetUint64()) +
                         " objects: " + std::to_string(member(counts, "admitted")->GetUint64()) +
                         " admitted (0 mutated), " +
                         std::to_string(member(counts, "denied")->GetUint64()) + " denied; " +
                         std::to_string(member(counts, "skipped")->GetUint64()) +
                         " skipped (not a kind that runs Pods)");
}

// --------------------------------------------------------- exit and input

TEST(CheckExit, ZeroWhenEveryObjectIsAdmitted) {
  TempDir dir;
  writeFile(dir.file("job.yaml"), kAdmittedJob);
  const CommandResult result = check({dir.file("job.yaml")});
  EXPECT_EQ(result.exitCode, 0) << result.out << result.err;
  EXPECT_NE(result.out.find("job/finetune (ns default)\n"
                            "  class:    training (annotation aiadmit.dev/workload=training on the "
                            "object)\n"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("  admitted, mutated\n"), std::string::npos) << result.out;
  EXPECT_EQ(lines(result.out).back(), "1 object: 1 admitted (1 mutated), 0 denied");
}

TEST(CheckExit, OneWhenAnyObjectIsDenied) {
  TempDir dir;
  writeFile(dir.file("a-job.yaml"), kAdmittedJob);
  writeFile(dir.file("b-pod.yaml"), kDeniedPod);
  const CommandResult result = check({dir.path()});
  EXPECT_EQ(result.exitCode, 1) << result.out << result.err;
  EXPECT_NE(result.out.find("  Error from server (Forbidden): error when creating \"" +
                            dir.file("b-pod.yaml") +
                            "\": admission webhook \"applied.validate.aiadmit.dev\" denied the "
                            "request: [AIA003] spec.containers[0].resources.limits: "
                            "\"nvidia.com/gpus\" is not a resource this cluster offers; did you "
                            "mean \"nvidia.com/gpu\"?\n"),
            std::string::npos)
      << result.out;
  EXPECT_EQ(lines(result.out).back(), "2 objects: 1 admitted (1 mutated), 1 denied");
}

TEST(CheckExit, TwoWhenInputIsUnusableButTheRestIsStillChecked) {
  TempDir dir;
  writeFile(dir.file("a-broken.yaml"), kBrokenYaml);
  writeFile(dir.file("b-pod.yaml"), kDeniedPod);
  const CommandResult result = check({dir.path(), dir.file("missing.yaml")});
  EXPECT_EQ(result.exitCode, 2);
  EXPECT_EQ(result.err, "error: " + dir.file("a-broken.yaml") +
                            ":5:11: invalid YAML: illegal map value\n"
                            "error: " +
                            dir.file("missing.yaml") + ": the path does not exist\n");
  EXPECT_NE(result.out.find("pod/typo (ns default)"), std::string::npos) << result.out;
  EXPECT_EQ(lines(result.out).back(), "1 object: 0 admitted (0 mutated), 1 denied; 2 input errors");

  // A pipeline gets nothing rather than part of the set.
  const CommandResult yaml = check({"-o", "yaml", dir.path()});
  EXPECT_EQ(yaml.exitCode, 2);
  EXPECT_EQ(yaml.out, "");
}

TEST(CheckExit, TwoForUnusableProfilesOptionsOrNoObjects) {
  TempDir dir;
  writeFile(dir.file("job.yaml"), kAdmittedJob);
  std::filesystem::create_directories(dir.file("profiles"));
  writeFile(dir.file("profiles/broken.yaml"), "name: [\n");
  const CommandResult profiles =
      runCommand({binaryPath(), "check", "--profiles", dir.file("profiles"), dir.file("job.yaml")});
  EXPECT_EQ(profiles.exitCode, 2);
  EXPECT_NE(profiles.err.find("cannot be used"), std::string::npos) << profiles.err;
  EXPECT_NE(profiles.err.find("broken.yaml:"), std::string::npos) << profiles.err;

  EXPECT_EQ(check({"--output", "wide", dir.file("job.yaml")}).exitCode, 2);
  EXPECT_EQ(check({"--frobnicate", dir.file("job.yaml")}).exitCode, 2);
  EXPECT_EQ(check({dir.file("job.yaml"), "-n"}).exitCode, 2);
  EXPECT_EQ(check({}).exitCode, 2);

  const CommandResult empty = check({"-"}, "# nothing here\n---\n");
  EXPECT_EQ(empty.exitCode, 2);
  EXPECT_EQ(empty.err, "error: no objects in the input\n");
}

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

// ------------------------------------------------------------------ colour

// `script` gives the command a terminal.
CommandResult onTerminal(const std::string& command, const std::string& environment = "") {
  return runCommand({"script", "-qec", environment + " " + command, "/dev/null"});
}

TEST(CheckColour, OnlyOnATerminalAndNeverForMachines) {
  TempDir dir;
  writeFile(dir.file("pod.yaml"), kDeniedPod);
  const std::string command =
      binaryPath() + " check --profiles " + profilesDir() + " " + dir.file("pod.yaml");
  const CommandResult coloured = onTerminal(command, "env -u NO_COLOR TERM=xterm");
  EXPECT_NE(coloured.out.find("\033[31mError from server (Forbidden)"), std::string::npos)
      << coloured.out;
  EXPECT_NE(coloured.out.find("\033[1mpod/typo\033[0m"), std::string::npos) << coloured.out;

  EXPECT_EQ(onTerminal(command, "env NO_COLOR=1 TERM=xterm").out.find('\033'), std::string::npos);
  EXPECT_EQ(onTerminal(command + " -o json", "env -u NO_COLOR TERM=xterm").out.find('\033'),
            std::string::npos);
  EXPECT_EQ(onTerminal(command + " -o yaml", "env -u NO_COLOR TERM=xterm").out.find('\033'),
            std::string::npos);
}

// ------------------------------------------------------- manifest reading

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
