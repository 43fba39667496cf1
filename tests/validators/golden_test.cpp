// The exact words a developer reads: each manifest of tests/golden/denials is
// sent to /validate (the engine's path, as `serve` answers) with the shipped profiles, and the
// answer (the denial message kubectl prints after `admission webhook
// "validate.aiadmit.dev" denied the request: `, then any warnings) must match
// the .txt beside it. AIADMIT_UPDATE_GOLDEN=1 rewrites the .txt files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/engine_harness.h"
#include "tests/support/test_support.h"
#include "webhook/codec/yaml_json.h"
#include "webhook/engine/admission.h"

namespace aiadmit {
namespace {

using namespace testing;

std::string goldenDir() {
  return sourceDir() + "/tests/golden/denials";
}

std::vector<std::string> goldenCases() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(goldenDir())) {
    if (entry.path().extension() == ".yaml") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// What the developer sees, in the form the .txt files keep it.
std::string rendered(const ReviewResponse& response) {
  std::string text;
  if (!response.allowed) text += response.message + "\n";
  if (!response.warnings.empty()) {
    text += "--- warnings\n";
    for (const std::string& warning : response.warnings) text += warning + "\n";
  }
  if (text.empty()) text = "--- admitted\n";
  return text;
}

class GoldenDenials : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = std::make_unique<EngineWebhook>(); }
  static void TearDownTestSuite() { server_.reset(); }
  static inline std::unique_ptr<EngineWebhook> server_;
};

TEST_F(GoldenDenials, MessagesMatchTheGoldenFiles) {
  const std::vector<std::string> cases = goldenCases();
  ASSERT_GE(cases.size(), 10u);
  const bool update = std::getenv("AIADMIT_UPDATE_GOLDEN") != nullptr;
  for (const std::string& name : cases) {
    SCOPED_TRACE(name);
    std::vector<ManifestDocument> documents;
    std::string error;
    ASSERT_TRUE(parseManifests(readFile(goldenDir() + "/" + name + ".yaml"), documents, &error))
        << error;
    ASSERT_EQ(documents.size(), 1u);
    const HttpResponse http =
        server_->post("/validate", makeReview(toJson(*documents[0].json), "CREATE", name));
    ASSERT_EQ(http.status, 200) << http.body;
    const ReviewResponse response = parseReviewResponse(http.body);
    if (!response.allowed) {
      EXPECT_EQ(response.statusCode, 403);
      EXPECT_EQ(response.statusReason, "Forbidden");
    }
    for (const std::string& warning : response.warnings) {
      EXPECT_LE(warning.size(), kMaxWarningLength) << warning;
    }

    const std::string actual = rendered(response);
    const std::string goldenFile = goldenDir() + "/" + name + ".txt";
    if (update) writeFile(goldenFile, actual);
    EXPECT_EQ(actual, readFile(goldenFile)) << "AIADMIT_UPDATE_GOLDEN=1 rewrites " << goldenFile;
  }
}

// The example of the rule catalogue, word for word.
TEST_F(GoldenDenials, TheCatalogueExample) {
  EXPECT_EQ(readFile(goldenDir() + "/aia003-gpus-typo.txt"),
            "[AIA003] spec.containers[0].resources.limits: \"nvidia.com/gpus\" is not a resource "
            "the pool of profile batch offers; did you mean \"nvidia.com/gpu\"?\n");
}

// Every violation of one object is in the one message, one line each, in rule order.
TEST_F(GoldenDenials, OneMessageListsEveryViolationInRuleOrder) {
  const std::string text = readFile(goldenDir() + "/many-violations.txt");
  std::vector<std::string> rules;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    const std::string line = text.substr(start, end - start);
    if (line.rfind("---", 0) == 0) break;
    EXPECT_EQ(line.rfind("[AIA", 0), 0u) << line;
    rules.push_back(line.substr(1, 6));
    start = end + 1;
  }
  EXPECT_GE(rules.size(), 5u) << text;
  EXPECT_TRUE(std::is_sorted(rules.begin(), rules.end())) << text;
}

}  // namespace
}  // namespace aiadmit
