// The source folders are layers, each including only the layers below it
// (docs/architecture.md): Kubernetes object semantics, policy, mutators and
// validators, the engine, the cluster view's API client, serving, the CLI. This test reads every
// source file and fails on an include that runs upward or sideways.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// Rank of each layer folder; a file may include its own folder and lower ranks.
// mutators/ and validators/ share a rank but never include each other.
const std::map<std::string, int>& layerRanks() {
  static const std::map<std::string, int> ranks = {
      {"webhook/kube", 0},   {"webhook/policy", 1},  {"mutators", 2},        {"validators", 2},
      {"webhook/engine", 3}, {"webhook/cluster", 4}, {"webhook/serving", 5}, {"webhook/cli", 6},
  };
  return ranks;
}

std::optional<std::string> layerOf(const std::string& relativePath) {
  std::optional<std::string> best;
  for (const auto& [folder, rank] : layerRanks()) {
    if (relativePath.rfind(folder + "/", 0) == 0 && (!best || folder.size() > best->size())) {
      best = folder;
    }
  }
  return best;
}

struct Include {
  std::string file;
  int line;
  std::string target;
};

std::vector<Include> projectIncludes(const fs::path& root) {
  std::vector<Include> includes;
  const std::regex includeLine(R"re(^\s*#\s*include\s*"([^"]+)")re");
  for (const char* top : {"webhook", "mutators", "validators"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / top)) {
      const auto extension = entry.path().extension();
      if (!entry.is_regular_file() || (extension != ".h" && extension != ".cpp")) continue;
      std::ifstream in(entry.path());
      std::string text;
      int number = 0;
      while (std::getline(in, text)) {
        ++number;
        std::smatch match;
        if (std::regex_search(text, match, includeLine)) {
          includes.push_back(
              {fs::relative(entry.path(), root).generic_string(), number, match[1].str()});
        }
      }
    }
  }
  return includes;
}

TEST(Layers, EveryIncludeRunsDownward) {
  const auto includes = projectIncludes(AIADMIT_SOURCE_DIR);
  ASSERT_GT(includes.size(), 100u) << "the source tree was not found";
  std::vector<std::string> upward;
  for (const auto& include : includes) {
    const auto from = layerOf(include.file);
    const auto to = layerOf(include.target);
    if (!from) {
      upward.push_back(include.file + " is in no layer folder");
      continue;
    }
    if (!to) {
      upward.push_back(include.file + ":" + std::to_string(include.line) + " includes \"" +
                       include.target + "\", which is in no layer folder");
      continue;
    }
    if (*from == *to) continue;
    const int fromRank = layerRanks().at(*from);
    const int toRank = layerRanks().at(*to);
    if (toRank >= fromRank) {
      upward.push_back(include.file + ":" + std::to_string(include.line) + " (" + *from +
                       ") includes \"" + include.target + "\" (" + *to + ")");
    }
  }
  EXPECT_TRUE(upward.empty()) << [&] {
    std::string text = "includes that do not run downward:\n";
    for (const auto& line : upward) text += "  " + line + "\n";
    return text;
  }();
}

TEST(Layers, TheCheckSeesAnUpwardInclude) {
  // The classification must notice what it exists to refuse.
  ASSERT_TRUE(layerOf("webhook/kube/json.h"));
  EXPECT_LT(layerRanks().at(*layerOf("webhook/kube/json.h")),
            layerRanks().at(*layerOf("webhook/engine/engine.h")));
  EXPECT_EQ(layerRanks().at(*layerOf("mutators/mutator.h")),
            layerRanks().at(*layerOf("validators/validator.h")));
  EXPECT_FALSE(layerOf("tests/support/test_support.h"));
}

}  // namespace
