// docs/mistakes.md through the real server over TLS: every row's manifest is
// applied as the API server applies it (/mutate, the patch applied with
// kubectl, /mutate again, /validate), and must be refused by exactly the
// row's rules or fixed by the row's mutators and then admitted. The table's
// shape is checked too: a public report, a manifest that exists, an outcome
// that names rules of the catalogue or mutators of the registry.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <ostream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "mutators/mutator.h"
#include "tests/support/test_support.h"
#include "webhook/codec/yaml_json.h"
#include "webhook/model/pod_reader.h"
#include "webhook/model/quantity.h"
#include "webhook/model/workload_type.h"
#include "webhook/model/workload_type_builtin.h"
#include "webhook/policy/rules.h"

namespace aiadmit {
namespace {

using namespace testing;

const std::string kDoc = "docs/mistakes.md";

struct MistakeRow {
  int number = 0;
  std::string mistake;
  std::string report;              // the report's URL
  std::string manifest;            // relative to docs/
  bool refused = false;            // else fixed
  std::vector<std::string> names;  // rule IDs, or mutator names
};

std::vector<std::string> tableCells(const std::string& line) {
  std::vector<std::string> cells;
  size_t start = 1;
  for (size_t bar = line.find('|', start); bar != std::string::npos;
       start = bar + 1, bar = line.find('|', start)) {
    std::string cell = line.substr(start, bar - start);
    cell.erase(0, cell.find_first_not_of(' '));
    cell.erase(cell.find_last_not_of(' ') + 1);
    cells.push_back(cell);
  }
  return cells;
}

// The target of the cell's one markdown link; "" when it has none.
std::string linkTarget(const std::string& cell) {
  static const std::regex link(R"(^\[[^\]]+\]\(([^)]+)\)$)");
  std::smatch match;
  return std::regex_match(cell, match, link) ? match[1].str() : "";
}

// "refused: `AIA006`" or "fixed: `shared-memory`, `gpu-limits`".
void readOutcome(const std::string& cell, MistakeRow& row) {
  row.refused = cell.rfind("refused: ", 0) == 0;
  static const std::regex code("`([^`]+)`");
  for (auto it = std::sregex_iterator(cell.begin(), cell.end(), code); it != std::sregex_iterator();
       ++it) {
    row.names.push_back((*it)[1].str());
  }
}

// The rows of the doc's table, in order; an empty list when it has none.
std::vector<MistakeRow> mistakeRows() {
  std::vector<MistakeRow> rows;
  const std::string text = readFile(sourceDir() + "/" + kDoc);
  bool inTable = false;
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = std::min(text.find('\n', at), text.size());
    const std::string line = text.substr(at, end - at);
    at = end + 1;
    if (line.rfind("| # | mistake |", 0) == 0) {
      inTable = true;
      continue;
    }
    if (!inTable || line.rfind("|---", 0) == 0) continue;
    if (line.rfind("| ", 0) != 0) break;
    const std::vector<std::string> cells = tableCells(line);
    if (cells.size() != 5) break;
    MistakeRow row;
    row.number = std::atoi(cells[0].c_str());
    row.mistake = cells[1];
    row.report = linkTarget(cells[2]);
    row.manifest = linkTarget(cells[3]);
    readOutcome(cells[4], row);
    rows.push_back(std::move(row));
  }
  return rows;
}

// gtest prints a row by its manifest.
void PrintTo(const MistakeRow& row, std::ostream* out) {
  *out << row.manifest;
}

std::string rowName(const ::testing::TestParamInfo<MistakeRow>& info) {
  std::string name = std::filesystem::path(info.param.manifest).stem().string();
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

TEST(MistakesDoc, EveryRowHasAReportAManifestAndAnOutcome) {
  const std::vector<MistakeRow> rows = mistakeRows();
  ASSERT_EQ(rows.size(), 12u) << "the table of " << kDoc;
  static const std::regex report(R"(^https://github\.com/[\w.-]+/[\w.-]+/(issues|pull)/\d+$)");
  std::set<std::string> mutators;
  for (const auto& mutator : allMutators()) mutators.emplace(mutator->name);
  for (size_t i = 0; i < rows.size(); ++i) {
    const MistakeRow& row = rows[i];
    SCOPED_TRACE(row.mistake);
    EXPECT_EQ(row.number, static_cast<int>(i + 1));
    EXPECT_TRUE(std::regex_match(row.report, report)) << row.report;
    EXPECT_EQ(row.manifest.rfind("mistakes/", 0), 0u) << row.manifest;
    EXPECT_TRUE(std::filesystem::is_regular_file(sourceDir() + "/docs/" + row.manifest));
    ASSERT_FALSE(row.names.empty()) << "no rule or mutator named";
    for (const std::string& name : row.names) {
      if (row.refused) {
        EXPECT_TRUE(RuleId::parse(name).has_value()) << name;
      } else {
        EXPECT_TRUE(mutators.contains(name)) << name << " is no mutator";
      }
    }
  }
}

TEST(MistakesDoc, EveryManifestHasARow) {
  std::set<std::string> listed;
  for (const MistakeRow& row : mistakeRows()) listed.insert(row.manifest);
  for (const auto& entry : std::filesystem::directory_iterator(sourceDir() + "/docs/mistakes")) {
    if (entry.path().extension() != ".yaml") continue;
    EXPECT_TRUE(listed.contains("mistakes/" + entry.path().filename().string()))
        << entry.path() << " is in no row of " << kDoc;
  }
}

// One object from YAML as JSON text.
std::string manifestJson(const std::string& path) {
  std::vector<ManifestDocument> documents;
  std::string error;
  EXPECT_TRUE(parseManifests(readFile(path), documents, &error)) << error;
  EXPECT_EQ(documents.size(), 1u) << path;
  return documents.empty() ? "{}" : toJson(*documents[0].json);
}

std::string namespaceOf(const JsonValue& object) {
  const std::string_view name = stringMember(member(&object, "metadata"), "namespace");
  return name.empty() ? "default" : std::string(name);
}

// The rule IDs a denial names, one per line: "[AIA006] spec....".
std::set<std::string> deniedRules(const std::string& message) {
  std::set<std::string> rules;
  static const std::regex rule(R"(\[(AIA\d{3})\])");
  for (auto it = std::sregex_iterator(message.begin(), message.end(), rule);
       it != std::sregex_iterator(); ++it) {
    rules.insert((*it)[1].str());
  }
  return rules;
}

bool anyWarningContains(const ReviewResponse& review, const std::string& text) {
  return std::any_of(
      review.warnings.begin(), review.warnings.end(),
      [&](const std::string& warning) { return warning.find(text) != std::string::npos; });
}

// The object's first template as the engine resolves it: KServe's
// predictor.model is a container of the predictor's PodSpec.
struct FirstTemplate {
  WorkloadTypeTable table{builtInWorkloadTypes()};
  Resolution resolution;
  PodTemplateView view;
  explicit FirstTemplate(const JsonValue& object) {
    const WorkloadType* type = table.findForObject(object);
    if (type == nullptr) {
      ADD_FAILURE() << "no row for " << toJson(object);
      return;
    }
    resolution = resolveTemplates(*type, object);
    if (resolution.templates.empty()) {
      ADD_FAILURE() << "no template in " << toJson(object);
      return;
    }
    view = PodTemplateView::at(object, *type, resolution.templates.front());
  }
};

// Every container that asks for a GPU mounts a memory-backed emptyDir of
// its PodSpec at /dev/shm.
void expectSharedMemory(const JsonValue& object) {
  const FirstTemplate first(object);
  const PodTemplateView& view = first.view;
  const PodReader pod = PodReader::of(view);
  bool sawGpuContainer = false;
  for (const PodContainer& container : pod.containers()) {
    if (!pod.asksForAccelerator(container)) continue;
    sawGpuContainer = true;
    const JsonValue* mounts = member(container.json, "volumeMounts");
    const JsonValue* mount = elementWith(mounts, "mountPath", "/dev/shm");
    ASSERT_NE(mount, nullptr) << "container " << container.name << " has no /dev/shm";
    const JsonValue* volume =
        elementWith(member(view.spec, "volumes"), "name", stringMember(mount, "name"));
    EXPECT_EQ(stringMember(member(volume, "emptyDir"), "medium"), "Memory") << toJson(object);
  }
  EXPECT_TRUE(sawGpuContainer);
}

// Every GPU request of every container has a limit of the same amount.
void expectGpuLimits(const JsonValue& object) {
  const FirstTemplate first(object);
  const PodReader pod = PodReader::of(first.view);
  bool sawRequest = false;
  pod.forEachAccelerator([&](const ResourceEntry& entry) {
    if (entry.section != "requests") return;
    sawRequest = true;
    const JsonValue* limit = member(member(entry.container.resources(), "limits"), entry.name);
    ASSERT_NE(limit, nullptr) << entry.name;
    EXPECT_TRUE(Quantity::fromJson(*limit)->sameValue(*Quantity::fromJson(entry.value)));
  });
  EXPECT_TRUE(sawRequest);
}

// What each fixing mutator says it did, as a warning of /mutate.
const std::map<std::string, std::string> kFixWarnings = {
    {"shared-memory", "mounted memory-backed /dev/shm"}, {"gpu-limits", "added limit "}};

class MistakesDocRow : public ::testing::TestWithParam<MistakeRow> {
 protected:
  // The shipped profiles and the pools of docs/mistakes/profiles/.
  static void SetUpTestSuite() {
    dir_ = std::make_unique<TempDir>();
    for (const char* folder : {"/profiles", "/docs/mistakes/profiles"}) {
      for (const auto& entry :
           std::filesystem::directory_iterator(sourceDir() + std::string(folder))) {
        if (entry.path().extension() != ".yaml") continue;
        writeFile(dir_->file(entry.path().filename().string()), readFile(entry.path().string()));
      }
    }
    WebhookServer::Options options;
    options.profilesDir = dir_->path();
    server_ = std::make_unique<WebhookServer>(options);
  }
  static void TearDownTestSuite() {
    server_.reset();
    dir_.reset();
  }

  static ReviewResponse review(const std::string& path, const std::string& object,
                               const std::string& namespaceName, const std::string& uid) {
    const HttpResponse http =
        server_->post(path, makeReview(object, "CREATE", uid, "", namespaceName));
    EXPECT_EQ(http.status, 200) << http.body;
    return parseReviewResponse(http.body);
  }

  static inline std::unique_ptr<TempDir> dir_;
  static inline std::unique_ptr<WebhookServer> server_;
};

TEST_P(MistakesDocRow, IsRefusedOrFixedThroughTheServer) {
  const MistakeRow& row = GetParam();
  SCOPED_TRACE(row.manifest);
  const std::string object = manifestJson(sourceDir() + "/docs/" + row.manifest);
  const std::string namespaceName = namespaceOf(*parseJson(object));

  const ReviewResponse mutated = review("/mutate", object, namespaceName, "mutate");
  ASSERT_TRUE(mutated.allowed) << mutated.message;
  const std::string patched = mutated.patch.empty() ? object : applyPatch(object, mutated.patch);
  ASSERT_FALSE(patched.empty());
  const ReviewResponse again = review("/mutate", patched, namespaceName, "again");
  EXPECT_TRUE(again.patch.empty()) << "not idempotent: " << again.patch;
  const ReviewResponse validated = review("/validate", patched, namespaceName, "validate");

  if (row.refused) {
    EXPECT_FALSE(validated.allowed);
    EXPECT_EQ(deniedRules(validated.message),
              std::set<std::string>(row.names.begin(), row.names.end()))
        << validated.message;
    return;
  }
  EXPECT_TRUE(validated.allowed) << validated.message;
  const std::shared_ptr<JsonDocument> fixed = parseJson(patched);
  for (const std::string& mutator : row.names) {
    ASSERT_TRUE(kFixWarnings.contains(mutator)) << "no check for " << mutator;
    EXPECT_TRUE(anyWarningContains(mutated, kFixWarnings.at(mutator))) << mutator;
    if (mutator == "shared-memory") expectSharedMemory(*fixed);
    if (mutator == "gpu-limits") expectGpuLimits(*fixed);
  }
}

INSTANTIATE_TEST_SUITE_P(Rows, MistakesDocRow, ::testing::ValuesIn(mistakeRows()), rowName);

}  // namespace
}  // namespace aiadmit
