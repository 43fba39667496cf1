// The README's defaults of serve's limits and deadlines are those of
// ServerOptions and its TransportLimits: a changed default fails here until
// the README says the new one.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <string>

#include "tests/support/test_support.h"
#include "webhook/serving/server_flags.h"

namespace aiadmit {
namespace {

using testing::readFile;
using testing::sourceDir;

// What the README gives each flag as its default: the rows of the Operations
// table ("| `--max-body-bytes` | 8 MiB | 413 ... |", the default first in its
// cell) and the flags the text names with "(default X)".
std::map<std::string, std::string> documentedDefaults(const std::string& readme) {
  std::map<std::string, std::string> found;
  const std::regex row(R"(\n *\| `(--[a-z-]+)` \| ([^ |,]+)[^|]*\|)");
  for (auto it = std::sregex_iterator(readme.begin(), readme.end(), row);
       it != std::sregex_iterator(); ++it) {
    found[(*it)[1].str()] = (*it)[2].str();
  }
  const std::regex inText(R"(`(--[a-z-]+)` \(default ([^ )]+)\))");
  for (auto it = std::sregex_iterator(readme.begin(), readme.end(), inText);
       it != std::sregex_iterator(); ++it) {
    found[(*it)[1].str()] = (*it)[2].str();
  }
  return found;
}

// The first word of a default ("8" of "8 MiB"), as documentedDefaults takes it.
std::string firstWord(const std::string& value) {
  return value.substr(0, value.find(' '));
}

TEST(TransportDefaultsDoc, ReadmeGivesEachFlagItsDefault) {
  const std::string readme = readFile(sourceDir() + "/README.md");
  const std::map<std::string, std::string> documented = documentedDefaults(readme);
  for (const ServerFlagDefault& flag : serverFlagDefaults()) {
    // 0 is "one per core", which the README says in words.
    if (flag.flag == "--io-threads") continue;
    const auto at = documented.find(flag.flag);
    ASSERT_NE(at, documented.end()) << flag.flag << " has no default in the README";
    EXPECT_EQ(at->second, firstWord(flag.value)) << flag.flag;
    if (flag.value.find(' ') == std::string::npos) continue;
    // A size with its unit: "8 MiB" stands whole in the row.
    EXPECT_NE(readme.find("| `" + flag.flag + "` | " + flag.value), std::string::npos)
        << flag.flag << " is not given as " << flag.value;
  }
}

TEST(TransportDefaultsDoc, ReadmeDocumentsNoFlagServeLacks) {
  const std::string readme = readFile(sourceDir() + "/README.md");
  std::map<std::string, bool> known;
  for (const ServerFlagDefault& flag : serverFlagDefaults()) known[flag.flag] = true;
  for (const auto& [flag, value] : documentedDefaults(readme)) {
    if (flag.rfind("--max-", 0) != 0 && flag.find("-timeout") == std::string::npos) continue;
    EXPECT_TRUE(known.count(flag)) << flag << " (default " << value << ") is no flag of serve";
  }
}

TEST(TransportDefaultsDoc, DefaultsReadAsTheHelpWritesThem) {
  std::map<std::string, std::string> defaults;
  for (const ServerFlagDefault& flag : serverFlagDefaults()) defaults[flag.flag] = flag.value;
  const TransportLimits limits;
  EXPECT_EQ(defaults.at("--max-connections"), std::to_string(limits.maxConnections));
  EXPECT_EQ(defaults.at("--max-body-bytes"),
            std::to_string(limits.maxBodyBytes / (1024 * 1024)) + " MiB");
  EXPECT_EQ(defaults.at("--idle-timeout"), std::to_string(limits.idleTimeout.count() / 1000) + "s");
  const std::string help = serverFlagsHelp();
  for (const auto& [flag, value] : defaults) {
    EXPECT_NE(help.find("(default " + value + ")"), std::string::npos) << flag;
  }
}

}  // namespace
}  // namespace aiadmit
