// Golden files: expected output kept beside the tests in tests/golden/, and
// AIADMIT_UPDATE_GOLDEN=1 to rewrite them from the current output instead of
// comparing. Also the loaders' golden cases: each broken NAME.yaml is loaded
// and its errors must read exactly as NAME.err.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "mutators/mutator.h"
#include "tests/support/test_support.h"
#include "webhook/policy/profile_loader.h"

namespace aiadmit::testing {

inline bool updatingGoldenFiles() {
  const char* update = std::getenv("AIADMIT_UPDATE_GOLDEN");
  return update != nullptr && *update == '1';
}

// `actual` against the golden file `path`; with AIADMIT_UPDATE_GOLDEN=1 the
// file is written first.
inline void compareWithGoldenFile(const std::string& actual, const std::string& path) {
  if (updatingGoldenFiles()) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    writeFile(path, actual);
  }
  EXPECT_EQ(actual, readFile(path)) << "AIADMIT_UPDATE_GOLDEN=1 rewrites " << path;
}

// The NAME of every NAME.yaml in `dir`, sorted.
inline std::vector<std::string> goldenCaseNames(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".yaml") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// A golden case's name as a test name: gtest allows no '-'.
inline std::string goldenCaseTestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

// Loader errors one a line, as `profiles lint` prints them.
inline std::string formatLoadErrors(const std::vector<ProfileError>& errors) {
  std::string out;
  for (const ProfileError& error : errors) out += error.format() + "\n";
  return out;
}

// Loads the broken case NAME.yaml of `dir` as profiles/NAME.yaml into
// `result`: refused, no profile set built, with the errors of NAME.err, each
// naming its line and column. The caller checks what its loader promises beyond that.
inline void expectGoldenLoadErrors(const std::string& dir, const std::string& name,
                                   ProfileLoadResult& result) {
  const std::string text = readFile(dir + "/" + name + ".yaml");
  ASSERT_FALSE(text.empty()) << dir << "/" << name << ".yaml";
  result = loadProfileText(text, "profiles/" + name + ".yaml", mutationSwitches());
  EXPECT_FALSE(result.ok());
  EXPECT_EQ(result.set, nullptr) << "a set with errors must not be built";
  const std::string actual = formatLoadErrors(result.errors);
  const std::string expectedPath = dir + "/" + name + ".err";
  if (updatingGoldenFiles()) writeFile(expectedPath, actual);
  EXPECT_EQ(actual, readFile(expectedPath));
  for (const ProfileError& error : result.errors) {
    EXPECT_GT(error.line, 0) << "every error names a line: " << error.format();
    EXPECT_GT(error.column, 0) << error.format();
  }
}

// How many errors the golden cases of `dir` hold together.
inline size_t goldenLoadErrorCount(const std::string& dir) {
  size_t errors = 0;
  for (const std::string& name : goldenCaseNames(dir)) {
    errors += loadProfileText(readFile(dir + "/" + name + ".yaml"), name, mutationSwitches())
                  .errors.size();
  }
  return errors;
}

// The first ```yaml block after `heading` in the Markdown file at `path`, so
// that a documented example is tested as it is written; "" when there is none.
inline std::string documentedYamlBlock(const std::string& path, const std::string& heading) {
  const std::string text = readFile(path);
  const size_t at = text.find(heading);
  if (at == std::string::npos) return "";
  const size_t start = text.find("```yaml\n", at);
  if (start == std::string::npos) return "";
  const size_t end = text.find("```\n", start + 8);
  return text.substr(start + 8, end - start - 8);
}

}  // namespace aiadmit::testing
