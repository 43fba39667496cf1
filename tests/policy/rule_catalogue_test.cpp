// The rule catalogue is the one place that names the rules: the loader, the
// defaults and the documentation follow it.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "tests/support/test_support.h"
#include "webhook/policy/rules.h"

namespace aiadmit {
namespace {

using testing::readFile;
using testing::sourceDir;

TEST(RuleCatalogue, DefaultsComeFromTheCatalogue) {
  const RuleActions defaults;
  for (const RuleInfo& rule : kRuleCatalogue) {
    EXPECT_EQ(defaults.of(rule.id), rule.defaultAction) << rule.id.name();
    EXPECT_EQ(RuleId::parse(rule.id.name()), rule.id);
  }
  EXPECT_FALSE(RuleId::parse(RuleId{kLastRule + 1}.name())) << "no rule past the catalogue";
  EXPECT_FALSE(RuleId::parse("AIA000"));
}

TEST(RuleCatalogue, DocsHeadEachRuleWithItsCatalogueTitleInOrder) {
  const std::string docs = readFile(sourceDir() + "/docs/rules.md");
  const std::regex heading(R"(\n### (AIA\d{3}) — ([^\n]+))");
  std::vector<std::pair<std::string, std::string>> found;
  for (auto it = std::sregex_iterator(docs.begin(), docs.end(), heading);
       it != std::sregex_iterator(); ++it) {
    found.emplace_back((*it)[1].str(), (*it)[2].str());
  }
  ASSERT_EQ(found.size(), std::size(kRuleCatalogue));
  for (size_t i = 0; i < found.size(); ++i) {
    EXPECT_EQ(found[i].first, kRuleCatalogue[i].id.name());
    EXPECT_EQ(found[i].second, kRuleCatalogue[i].title) << found[i].first;
  }
}

TEST(RuleCatalogue, ReadmeTableHasARowPerRule) {
  const std::string readme = readFile(sourceDir() + "/README.md");
  for (const RuleInfo& rule : kRuleCatalogue) {
    EXPECT_NE(readme.find("\n| " + rule.id.name() + " | "), std::string::npos) << rule.id.name();
  }
  EXPECT_EQ(readme.find("\n| " + RuleId{kLastRule + 1}.name() + " | "), std::string::npos);
}

}  // namespace
}  // namespace aiadmit
