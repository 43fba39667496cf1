// `aiadmit check` over the corpus as developers and pipelines run it:
// against golden outputs (text and JSON), agreeing with the real server's
// answers, and its YAML output what kubectl's patch makes and valid against
// the Kubernetes schema.
//
// AIADMIT_UPDATE_GOLDEN=1 rewrites tests/golden/check/ instead of comparing.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "tests/support/check_harness.h"
#include "tests/support/golden_files.h"
#include "tests/support/test_support.h"
#include "webhook/codec/yaml_json.h"
#include "webhook/engine/admission.h"
#include "webhook/model/workload.h"
#include "webhook/model/workload_type.h"

namespace aiadmit {
namespace {

using namespace testing;

std::string goldenDir() {
  return sourceDir() + "/tests/golden/check";
}

// Over the corpus from its own directory, so that file names in the output
// are the same on every machine.
CommandResult checkCorpus(std::vector<std::string> args) {
  std::vector<std::string> argv = {"env",   "-C",         corpusDir(),         binaryPath(),
                                   "check", "--profiles", shippedProfilesDir()};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back("manifests");
  return runCommand(argv);
}

void compareWithGolden(const std::string& actual, const std::string& name) {
  compareWithGoldenFile(actual, goldenDir() + "/" + name);
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
  EXPECT_NE(summary.find(" skipped (not a kind that runs Pods, 1 of them not judged)"),
            std::string::npos)
      << summary;
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
      // The server's warnings for a patch: the class, the notices (what the
      // profile asks that was left out, which check lists among the
      // warnings), then one per injected change.
      const auto changes = static_cast<std::ptrdiff_t>(member(&record, "injected")->Size());
      ASSERT_GE(static_cast<std::ptrdiff_t>(mutation.warnings.size()), 1 + changes);
      expectedWarnings.assign(mutation.warnings.begin() + 1, mutation.warnings.end() - changes);
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
  EXPECT_EQ(summary,
            std::to_string(member(counts, "objects")->GetUint64()) +
                " objects: " + std::to_string(member(counts, "admitted")->GetUint64()) +
                " admitted (0 mutated), " + std::to_string(member(counts, "denied")->GetUint64()) +
                " denied; " + std::to_string(member(counts, "skipped")->GetUint64()) +
                " skipped (not a kind that runs Pods, " +
                std::to_string(member(counts, "notJudged")->GetUint64()) + " of them not judged)");
}

}  // namespace
}  // namespace aiadmit
