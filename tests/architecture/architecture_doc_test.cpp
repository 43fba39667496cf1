// docs/architecture.md is the map a newcomer follows: the data flow, the
// layers and the exact steps of the four everyday tasks (add a rule, a
// mutator, a kind, a profile field). A step that names a file or a symbol the
// code no longer has sends the newcomer nowhere, so this test reads every
// file path and code name the document quotes and fails on one that is gone.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

std::string readText(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every identifier of the sources a step may name: the product's folders and
// the tests a step tells the newcomer to extend, but not this folder's own
// tests, which spell names that do not exist on purpose.
std::set<std::string> sourceIdentifiers(const fs::path& root) {
  std::set<std::string> names;
  for (const char* top : {"webhook", "mutators", "validators", "tests"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / top)) {
      const auto extension = entry.path().extension();
      if (!entry.is_regular_file() || (extension != ".h" && extension != ".cpp")) continue;
      if (entry.path().parent_path().filename() == "architecture") continue;
      const std::string text = readText(entry.path());
      size_t position = 0;
      while (position < text.size()) {
        const auto isWordCharacter = [&](size_t at) {
          return std::isalnum(static_cast<unsigned char>(text[at])) != 0 || text[at] == '_';
        };
        if (!isWordCharacter(position)) {
          ++position;
          continue;
        }
        const size_t start = position;
        while (position < text.size() && isWordCharacter(position)) ++position;
        names.insert(text.substr(start, position - start));
      }
    }
  }
  return names;
}

// The spans between backticks, inline code only (fenced blocks are diagrams).
std::vector<std::string> quotedSpans(const std::string& markdown) {
  std::vector<std::string> spans;
  std::istringstream lines(markdown);
  std::string line;
  bool inFence = false;
  while (std::getline(lines, line)) {
    if (line.rfind("```", 0) == 0) {
      inFence = !inFence;
      continue;
    }
    if (inFence) continue;
    size_t open = line.find('`');
    while (open != std::string::npos) {
      const size_t close = line.find('`', open + 1);
      if (close == std::string::npos) break;
      spans.push_back(line.substr(open + 1, close - open - 1));
      open = line.find('`', close + 1);
    }
  }
  return spans;
}

bool looksLikePath(const std::string& span) {
  static const std::regex path(
      R"(^(webhook|mutators|validators|tests|docs|profiles|manifests|bench|scripts|certs)(/[A-Za-z0-9_.-]+)*/?$)");
  return std::regex_match(span, path);
}

// `MutatorDeclaration::runsOn()`, `ruleCatalogue`, `resolveTemplates`:
// a code name has a capital letter or `::` and no spaces, dots or placeholders.
std::vector<std::string> codeNamesIn(const std::string& span) {
  static const std::regex name(R"(^[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*(\(\))?$)");
  if (!std::regex_match(span, name)) return {};
  const bool hasCapital = std::any_of(
      span.begin(), span.end(), [](char c) { return std::isupper(static_cast<unsigned char>(c)); });
  if (!hasCapital && span.find("::") == std::string::npos) return {};
  std::vector<std::string> parts;
  std::string rest = span.substr(0, span.find('('));
  for (size_t separator = rest.find("::"); separator != std::string::npos;
       separator = rest.find("::")) {
    parts.push_back(rest.substr(0, separator));
    rest = rest.substr(separator + 2);
  }
  parts.push_back(rest);
  return parts;
}

// What the document quotes that the tree does not have, one line each.
std::vector<std::string> missingSteps(const std::string& markdown, const fs::path& root,
                                      const std::set<std::string>& identifiers) {
  std::vector<std::string> missing;
  for (const std::string& span : quotedSpans(markdown)) {
    if (looksLikePath(span)) {
      if (!fs::exists(root / span)) missing.push_back("no file or folder " + span);
      continue;
    }
    for (const std::string& part : codeNamesIn(span)) {
      if (identifiers.count(part) == 0)
        missing.push_back("no code name " + part + " (in `" + span + "`)");
    }
  }
  return missing;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += "  " + line + "\n";
  return text;
}

const std::set<std::string>& identifiersOfTheTree() {
  static const std::set<std::string> identifiers = sourceIdentifiers(AIADMIT_SOURCE_DIR);
  return identifiers;
}

TEST(ArchitectureDoc, EveryFileAndNameItQuotesExists) {
  const fs::path root = AIADMIT_SOURCE_DIR;
  const std::string markdown = readText(root / "docs/architecture.md");
  ASSERT_GT(markdown.size(), 1000u) << "docs/architecture.md was not found";
  ASSERT_GT(identifiersOfTheTree().size(), 1000u) << "the source tree was not found";
  const std::vector<std::string> missing = missingSteps(markdown, root, identifiersOfTheTree());
  EXPECT_TRUE(missing.empty()) << "docs/architecture.md names what the tree lacks:\n"
                               << joined(missing);
}

TEST(ArchitectureDoc, HasTheStepsOfTheEverydayTasks) {
  const std::string markdown = readText(fs::path(AIADMIT_SOURCE_DIR) / "docs/architecture.md");
  for (const char* heading :
       {"## Adding a rule", "## Adding a claim rule", "## Adding a mutator", "## Adding a kind",
        "## Adding a profile field", "## The pipeline's vocabulary"}) {
    EXPECT_NE(markdown.find(std::string("\n") + heading + "\n"), std::string::npos)
        << "docs/architecture.md has no section \"" << heading << "\"";
  }
}

TEST(ArchitectureDoc, TheCheckSeesAStepThatIsGone) {
  const std::string markdown =
      "1. `mutators/no_such_mutator.h`: a constant of type `MutatorDeclaration`.\n"
      "2. Register it in `mutators/registry.cpp` and call `NoSuchRegistry::addMutator()`.\n"
      "```\n`not/checked/inside/a/fence.h`\n```\n";
  const std::vector<std::string> missing =
      missingSteps(markdown, AIADMIT_SOURCE_DIR, identifiersOfTheTree());
  EXPECT_EQ(missing, (std::vector<std::string>{
                         "no file or folder mutators/no_such_mutator.h",
                         "no code name NoSuchRegistry (in `NoSuchRegistry::addMutator()`)",
                         "no code name addMutator (in `NoSuchRegistry::addMutator()`)",
                     }));
}

}  // namespace
