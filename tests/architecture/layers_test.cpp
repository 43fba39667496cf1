// The source folders are layers, each including only the layers below it
// (docs/architecture.md): the codecs, the Kubernetes object model, the
// cluster view and its API client, the waiting analysis, policy, mutators
// and validators, the engine, serving, the CLI. This test reads every source
// file and fails on an include that runs upward or sideways, and on a file of
// the lower rooms without a header of its own.
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
      {"webhook/codec", 0},   {"webhook/model", 1}, {"webhook/cluster", 2}, {"webhook/waiting", 3},
      {"webhook/policy", 4},  {"mutators", 5},      {"validators", 5},      {"webhook/engine", 6},
      {"webhook/serving", 7}, {"webhook/cli", 8},
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

// In the rooms every layer above builds on, each .cpp is the implementation of
// the header of its name: what a file offers is found by its name.
TEST(Layers, EachFileOfTheLowerRoomsHasItsOwnHeader) {
  std::vector<std::string> orphans;
  size_t files = 0;
  for (const char* room :
       {"webhook/codec", "webhook/model", "webhook/cluster", "webhook/waiting"}) {
    for (const auto& entry : fs::directory_iterator(fs::path(AIADMIT_SOURCE_DIR) / room)) {
      if (entry.path().extension() != ".cpp") continue;
      ++files;
      fs::path header = entry.path();
      header.replace_extension(".h");
      if (!fs::exists(header))
        orphans.push_back(std::string(room) + "/" + entry.path().filename().string());
    }
  }
  EXPECT_GT(files, 40u) << "the rooms were not found";
  EXPECT_TRUE(orphans.empty()) << [&] {
    std::string text = "files without a header of their own:\n";
    for (const auto& line : orphans) text += "  " + line + "\n";
    return text;
  }();
}

TEST(Layers, TheCheckSeesAnUpwardInclude) {
  // The classification must notice what it exists to refuse.
  ASSERT_TRUE(layerOf("webhook/codec/json.h"));
  EXPECT_LT(layerRanks().at(*layerOf("webhook/codec/json.h")),
            layerRanks().at(*layerOf("webhook/engine/engine.h")));
  EXPECT_EQ(layerRanks().at(*layerOf("mutators/mutator.h")),
            layerRanks().at(*layerOf("validators/validator.h")));
  EXPECT_LT(layerRanks().at(*layerOf("webhook/model/pod_reader.h")),
            layerRanks().at(*layerOf("webhook/cluster/cluster_view.h")));
  EXPECT_FALSE(layerOf("tests/support/test_support.h"));
}

}  // namespace
