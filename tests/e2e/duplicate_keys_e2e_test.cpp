// Keys set twice in a manifest, on the real API server. kubectl (apply
// client-side with every --validate, apply --server-side, create) reads YAML
// with go-yaml v2 and JSON with Go's decoder, and sends what they give: the
// last value of a repeated key, a << merge's value over the keys written
// before it. Neither kubectl nor the API server says a word of it. `aiadmit
// check` warns of each such key, and the value it reads at each is the one
// stored; in an opted-in namespace aiadmit refuses what check refuses and
// stores what check predicts. An object that kubectl does not apply (its
// second metadata has no name), or of which it keeps one of two keys at
// random, is that object's problem alone: the objects around it are stored
// and checked.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "tests/e2e/support/e2e_cluster.h"
#include "webhook/cluster/cluster_snapshot.h"

namespace aiadmit::e2e {
namespace {

std::string fixture(const std::string& name) {
  return testing::sourceDir() + "/tests/golden/check/duplicate-keys/" + name;
}

// The ways kubectl sends a file, each into a namespace of its own.
const std::vector<std::vector<std::string>>& kubectlWays() {
  static const std::vector<std::vector<std::string>> ways = {{"apply", "--validate=strict"},
                                                             {"apply", "--validate=warn"},
                                                             {"apply", "--validate=ignore"},
                                                             {"apply", "--server-side"},
                                                             {"create", "--validate=strict"}};
  return ways;
}

std::string joined(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& word : words) text += (text.empty() ? "" : " ") + word;
  return text;
}

CommandResult send(const std::vector<std::string>& way, const std::string& namespaceName,
                   const std::string& file) {
  std::vector<std::string> args = way;
  args.insert(args.end(), {"-n", namespaceName, "-f", file});
  return kubectl(args);
}

json checkReport(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {testing::binaryPath(), "check", "-o", "json"};
  argv.insert(argv.end(), args.begin(), args.end());
  const CommandResult result = testing::runCommand(argv);
  const json report = json::parse(result.out, nullptr, false);
  EXPECT_FALSE(report.is_discarded()) << result.out << result.err;
  return report;
}

// The objects `check -o yaml ARGS...` writes, as the API server stores them
// where aiadmit is not called (a server dry run in `namespaceName`): with its
// defaults, quantities as strings.
std::vector<json> storedAsCheckWrites(const std::vector<std::string>& args,
                                      const std::string& namespaceName) {
  std::vector<std::string> argv = {testing::binaryPath(), "check", "-o", "yaml"};
  argv.insert(argv.end(), args.begin(), args.end());
  const CommandResult written = testing::runCommand(argv);
  const CommandResult stored = kubectl(
      {"create", "--dry-run=server", "-n", namespaceName, "-o", "json", "-f", "-"}, written.out);
  EXPECT_EQ(stored.exitCode, 0) << stored.err << written.out << written.err;
  return jsonObjects(stored.out);
}

// The value at a field path as check names one:
// "spec.containers[0].resources.limits[nvidia.com/gpu]".
json valueAt(const json& object, const std::string& field) {
  const json* at = &object;
  size_t i = 0;
  while (i < field.size() && at != nullptr) {
    std::string step;
    if (field[i] == '[') {
      const size_t close = field.find(']', i);
      step = field.substr(i + 1, close - i - 1);
      i = close + 1;
    } else {
      const size_t next = field.find_first_of(".[", i);
      step = field.substr(i, next - i);
      i = next == std::string::npos ? field.size() : next;
    }
    if (i < field.size() && field[i] == '.') ++i;
    if (at->is_array()) {
      const size_t index = std::stoul(step);
      at = index < at->size() ? &(*at)[index] : nullptr;
    } else {
      at = at->is_object() && at->contains(step) ? &(*at)[step] : nullptr;
    }
  }
  return at == nullptr ? json() : *at;
}

// The kind and name of the object a warning or error of check's report is
// about, from its entry among the objects or the skipped.
json reportedObject(const json& report, const json& entry) {
  for (const char* list : {"objects", "skipped"}) {
    for (const json& object : report[list]) {
      if (object["file"] == entry["file"] && object["index"] == entry["index"] &&
          object.value("item", -1) == entry.value("item", -1)) {
        return object;
      }
    }
  }
  ADD_FAILURE() << "no object for " << entry.dump();
  return json();
}

const json* objectNamed(const std::vector<json>& objects, const std::string& kind,
                        const std::string& name) {
  for (const json& object : objects) {
    if (object.value("kind", "") == kind && object["metadata"].value("name", "") == name) {
      return &object;
    }
  }
  return nullptr;
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

TEST(E2eDuplicateKeys, KubectlStoresTheLastValueWithoutAWordAndCheckReadsTheSame) {
  for (const char* name : {"stored.yaml", "stored.json"}) {
    SCOPED_TRACE(name);
    const std::string file = fixture(name);
    const json report = checkReport({file});
    ASSERT_FALSE(report["inputWarnings"].empty());
    EXPECT_TRUE(report["errors"].empty()) << report["errors"].dump();
    const Namespace reference("dupkeys-reference", /*optedIn=*/false);
    const std::vector<json> predicted = storedAsCheckWrites({file}, reference.name());
    for (const std::vector<std::string>& way : kubectlWays()) {
      SCOPED_TRACE(joined(way));
      const Namespace plain("dupkeys", /*optedIn=*/false);
      const CommandResult sent = send(way, plain.name(), file);
      ASSERT_EQ(sent.exitCode, 0) << sent.err;
      EXPECT_EQ(lower(sent.out + sent.err).find("duplicate"), std::string::npos)
          << sent.out << sent.err;
      EXPECT_EQ(sent.err.find("Warning"), std::string::npos) << sent.err;
      for (const json& warning : report["inputWarnings"]) {
        const json object = reportedObject(report, warning);
        const std::string kind = object.value("kind", "");
        const std::string objectName = object.value("name", "");
        SCOPED_TRACE(kind + "/" + objectName + " " + warning["field"].get<std::string>());
        const json* expected = objectNamed(predicted, kind, objectName);
        ASSERT_NE(expected, nullptr);
        const json stored = kubectlJson({"get", "-n", plain.name(), kind, objectName});
        const std::string field = warning["field"];
        EXPECT_EQ(valueAt(withoutServerFields(stored), field),
                  valueAt(withoutServerFields(*expected), field));
        EXPECT_FALSE(valueAt(stored, field).is_null());
      }
    }
  }
}

TEST(E2eDuplicateKeys, InAnOptedInNamespaceAiadmitDecidesAsCheckDecided) {
  testing::TempDir work;
  ASSERT_TRUE(writeClusterSnapshot(work.file("cluster.yaml")));
  const Namespace optedIn("dupkeys");
  const Namespace reference("dupkeys-reference", /*optedIn=*/false);
  const std::string file = fixture("stored.yaml");
  const std::vector<std::string> args = {"--cluster", work.file("cluster.yaml"), "-n",
                                         optedIn.name(), file};
  const json report = checkReport(args);
  const std::vector<json> predicted = storedAsCheckWrites(args, reference.name());

  const CommandResult applied = kubectl({"apply", "-n", optedIn.name(), "-f", file});
  EXPECT_NE(applied.exitCode, 0) << "check denies one of them";
  ASSERT_FALSE(report["objects"].empty());
  for (const json& record : report["objects"]) {
    const std::string name = record["name"];
    SCOPED_TRACE(name);
    if (!record["admitted"].get<bool>()) {
      EXPECT_NE(applied.err.find("denied the request: " + record["message"].get<std::string>()),
                std::string::npos)
          << applied.err << "\ncheck says:\n"
          << record["message"];
      EXPECT_NE(kubectl({"get", "-n", optedIn.name(), "job", name}).exitCode, 0);
      continue;
    }
    const json* expected = objectNamed(predicted, record["kind"], name);
    ASSERT_NE(expected, nullptr);
    const json stored = kubectlJson({"get", "-n", optedIn.name(), "job", name});
    EXPECT_EQ(withoutServerFields(stored), withoutServerFields(*expected));
  }
}

TEST(E2eDuplicateKeys, AnObjectKubectlCannotApplyOrTellIsThatObjectsAlone) {
  const std::string file = fixture("refused.yaml");
  const json report = checkReport({file});
  std::set<std::string> judged;
  for (const json& record : report["objects"]) judged.insert(record["name"].get<std::string>());
  EXPECT_EQ(judged, (std::set<std::string>{"dup-before", "dup-after"}));
  ASSERT_EQ(report["errors"].size(), 2u) << report["errors"].dump();
  EXPECT_NE(report["errors"][0]["message"].get<std::string>().find("has neither metadata.name"),
            std::string::npos);
  EXPECT_NE(report["errors"][1]["message"].get<std::string>().find("at random"), std::string::npos);

  for (const std::vector<std::string>& way : kubectlWays()) {
    SCOPED_TRACE(joined(way));
    const Namespace plain("dupkeys", /*optedIn=*/false);
    const CommandResult sent = send(way, plain.name(), file);
    // The Job whose second metadata has no name is refused, by kubectl,
    // alone: those before and after it are stored.
    EXPECT_NE(sent.exitCode, 0);
    const bool nameless = sent.err.find("resource name may not be empty") != std::string::npos ||
                          sent.err.find("name or generateName is required") != std::string::npos;
    EXPECT_TRUE(nameless) << sent.err;
    for (const char* name : {"dup-before", "dup-after"}) {
      EXPECT_EQ(kubectl({"get", "-n", plain.name(), "job", name}).exitCode, 0) << name;
    }
    // The Job with the keys 1 and "1" is stored with one of the two values.
    const json either = kubectlJson({"get", "-n", plain.name(), "job", "dup-either"});
    const std::string label = valueAt(either, "metadata.labels[1]").get<std::string>();
    EXPECT_TRUE(label == "integer" || label == "string") << label;
  }
}

}  // namespace
}  // namespace aiadmit::e2e
