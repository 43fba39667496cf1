// The rule catalogue (its rows in validators/registry.cpp) is the one place
// that names the rules: the loader, the defaults and the documentation
// follow it.
#include <gtest/gtest.h>

#include <filesystem>
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
  for (const RuleInfo& rule : ruleCatalogue()) {
    EXPECT_EQ(defaults.of(rule.id, RuleTarget::BarePod), rule.defaultAction) << rule.id.name();
    EXPECT_EQ(defaults.of(rule.id, RuleTarget::Controller),
              rule.controllerDefault.value_or(rule.defaultAction))
        << rule.id.name();
    EXPECT_FALSE(defaults.isSet(rule.id));
    EXPECT_EQ(RuleId::parse(rule.id.name()), rule.id);
  }
  EXPECT_FALSE(RuleId::parse(RuleId{lastRule().number + 1}.name())) << "no rule past the catalogue";
  EXPECT_FALSE(RuleId::parse("AIA000"));
}

TEST(RuleCatalogue, ExistenceRulesWarnOnControllersAndDenyBarePods) {
  for (const RuleId rule : {AIA017, AIA018, AIA019}) {
    EXPECT_EQ(ruleInfo(rule).defaultFor(RuleTarget::BarePod), RuleAction::Deny) << rule.name();
    EXPECT_EQ(ruleInfo(rule).defaultFor(RuleTarget::Controller), RuleAction::Warn) << rule.name();
  }
  RuleActions set;
  set.set(AIA017, RuleAction::Deny);
  EXPECT_EQ(set.of(AIA017, RuleTarget::Controller), RuleAction::Deny) << "a profile's word wins";
  EXPECT_TRUE(set.isSet(AIA017));
}

TEST(RuleCatalogue, DocsHeadEachRuleWithItsCatalogueTitleInOrder) {
  const std::string docs = readFile(sourceDir() + "/docs/rules.md");
  const std::regex heading(R"(\n### (AIA\d{3}) — ([^\n]+))");
  std::vector<std::pair<std::string, std::string>> found;
  for (auto it = std::sregex_iterator(docs.begin(), docs.end(), heading);
       it != std::sregex_iterator(); ++it) {
    found.emplace_back((*it)[1].str(), (*it)[2].str());
  }
  ASSERT_EQ(found.size(), ruleCatalogue().size());
  for (size_t i = 0; i < found.size(); ++i) {
    EXPECT_EQ(found[i].first, ruleCatalogue()[i].id.name());
    EXPECT_EQ(found[i].second, ruleCatalogue()[i].title) << found[i].first;
  }
}

// docs/rules.md lists every rule in one table, what each rejects; the
// README points there rather than keeping a table that a new rule would
// have to change as well.
TEST(RuleCatalogue, TheRulesTableHasARowPerRuleAndTheReadmePointsToIt) {
  const std::string rules = readFile(sourceDir() + "/docs/rules.md");
  for (const RuleInfo& rule : ruleCatalogue()) {
    EXPECT_NE(rules.find("\n| " + rule.id.name() + " | "), std::string::npos) << rule.id.name();
  }
  EXPECT_EQ(rules.find("\n| " + RuleId{lastRule().number + 1}.name() + " | "), std::string::npos);
  const std::string readme = readFile(sourceDir() + "/README.md");
  EXPECT_EQ(readme.find("\n| " + RuleId{kFirstRule}.name() + " | "), std::string::npos)
      << "the README keeps no rule table of its own";
  EXPECT_NE(readme.find("](docs/rules.md#the-rules)"), std::string::npos);
}

// A range of rules from the first one ("AIA001 to AIA019", "AIA001–AIA020")
// claims to be the whole catalogue; it drifts when a rule is added, so the
// docs may say one only as far as the catalogue goes.
TEST(RuleCatalogue, DocsGiveTheWholeRangeAsTheCatalogueEndsIt) {
  std::vector<std::string> files = {sourceDir() + "/README.md",
                                    sourceDir() + "/profiles/README.md"};
  for (const auto& entry : std::filesystem::directory_iterator(sourceDir() + "/docs")) {
    if (entry.path().extension() == ".md") files.push_back(entry.path().string());
  }
  const std::string first = RuleId{kFirstRule}.name();
  const std::regex range(first + "(?: to |-|–|\\.\\.)(AIA\\d{3})");
  const std::string last = lastRule().name();
  for (const std::string& file : files) {
    const std::string text = readFile(file);
    for (auto it = std::sregex_iterator(text.begin(), text.end(), range);
         it != std::sregex_iterator(); ++it) {
      EXPECT_EQ((*it)[1].str(), last) << file << ": " << it->str();
    }
  }
}

}  // namespace
}  // namespace aiadmit
