// The command sessions the docs show (a fenced block of `$ COMMAND` lines,
// each followed by what it prints) run as shown, from the repository's root,
// and print what the docs say they print: a doc whose figures drift from the
// build fails here. A session runs when every command of it is `aiadmit`'s
// (or `echo $?`) on files of the repository; the others (a cluster's, a file
// the reader makes) are left to the tests that own them.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "tests/support/test_support.h"

namespace aiadmit {
namespace {

using testing::sourceDir;

struct Step {
  std::string command;
  std::string expected;  // what it prints, lines joined with '\n'
};
struct Session {
  std::string doc;
  int line = 0;
  std::vector<Step> steps;
};

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<Session> sessionsOf(const std::string& doc) {
  std::vector<Session> sessions;
  const std::vector<std::string> lines = linesOf(testing::readFile(sourceDir() + "/" + doc));
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("```", 0) != 0 || i + 1 >= lines.size() ||
        lines[i + 1].rfind("$ ", 0) != 0) {
      continue;
    }
    Session session{doc, static_cast<int>(i + 2), {}};
    for (++i; i < lines.size() && lines[i].rfind("```", 0) != 0; ++i) {
      if (lines[i].rfind("$ ", 0) == 0) {
        session.steps.push_back({lines[i].substr(2), ""});
      } else {
        session.steps.back().expected += lines[i] + "\n";
      }
    }
    sessions.push_back(std::move(session));
  }
  return sessions;
}

// Whether every step is aiadmit's on files that exist, or `echo $?`, and
// nothing printed is elided.
bool runnable(const Session& session) {
  for (const Step& step : session.steps) {
    if (step.expected.find("...") != std::string::npos) return false;
    if (step.command == "echo $?") continue;
    std::istringstream words(step.command);
    std::string program;
    words >> program;
    if (program != "aiadmit" && program != "build/aiadmit") return false;
    for (std::string word; words >> word;) {
      const bool path = word.find('/') != std::string::npos || word.ends_with(".yaml") ||
                        word.ends_with(".yml") || word.ends_with(".json");
      if (word[0] == '-' || !path) continue;
      if (!std::filesystem::exists(sourceDir() + "/" + word)) return false;
    }
  }
  return true;
}

// Runs the session's steps in one shell at the repository's root, each
// step's output (stdout and stderr) ended by a marker; `echo $?` prints the
// status of the step before it.
std::vector<std::string> run(const Session& session) {
  std::string script = "cd " + sourceDir() + " || exit 99\nlast=0\n";
  for (const Step& step : session.steps) {
    if (step.command == "echo $?") {
      script += "echo $last; echo @@end\n";
      continue;
    }
    std::string command = step.command;
    if (command.rfind("aiadmit ", 0) == 0) command = "build/aiadmit " + command.substr(8);
    command = testing::binaryPath() + command.substr(13);  // "build/aiadmit"
    script += command + " 2>&1; last=$?; echo @@end\n";
  }
  const testing::CommandResult result = testing::runCommand({"/bin/bash", "-c", script});
  std::vector<std::string> outputs(1);
  for (const std::string& line : linesOf(result.out)) {
    if (line == "@@end") {
      outputs.emplace_back();
    } else {
      outputs.back() += line + "\n";
    }
  }
  outputs.pop_back();
  return outputs;
}

TEST(DocsSessions, EverySessionTheDocsShowPrintsWhatTheyShow) {
  std::vector<std::string> docs = {"README.md", "profiles/README.md"};
  for (const auto& entry : std::filesystem::directory_iterator(sourceDir() + "/docs")) {
    if (entry.path().extension() == ".md")
      docs.push_back("docs/" + entry.path().filename().string());
  }
  int ran = 0;
  for (const std::string& doc : docs) {
    for (const Session& session : sessionsOf(doc)) {
      if (!runnable(session)) continue;
      ++ran;
      const std::vector<std::string> outputs = run(session);
      ASSERT_EQ(outputs.size(), session.steps.size()) << session.doc << ":" << session.line;
      for (size_t i = 0; i < outputs.size(); ++i) {
        EXPECT_EQ(outputs[i], session.steps[i].expected)
            << session.doc << ":" << session.line << ": $ " << session.steps[i].command;
      }
    }
  }
  // README's check session, check.md's first, rollout.md's summary and
  // profiles/README.md's lint at least.
  EXPECT_GE(ran, 4);
}

}  // namespace
}  // namespace aiadmit
