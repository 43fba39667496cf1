// The log as written to stdout: the line format, the levels, the request
// lines dropped and counted when the queue is full, and every line written
// out before the process exits. The lines go through spdlog's async logger,
// so each test points stdout (fd 1) at a file or a pipe of its own and reads
// it after flushLogging(). Each test case runs in a process of its own; run
// together, they set up a queue each and count drops from where they start.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/test_support.h"
#include "webhook/serving/logging.h"

namespace aiadmit {
namespace {

using namespace testing;

// Points stdout (fd 1) at `fd` until restore(); what stdio held goes out first.
class StdoutTo {
 public:
  explicit StdoutTo(int fd) {
    std::fflush(stdout);
    saved_ = dup(STDOUT_FILENO);
    dup2(fd, STDOUT_FILENO);
  }
  ~StdoutTo() { restore(); }
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stdout);
    dup2(saved_, STDOUT_FILENO);
    close(saved_);
    saved_ = -1;
  }

 private:
  int saved_ = -1;
};

std::string readAll(int fd) {
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, size_t(n));
  return text;
}

// What `log` writes to stdout, once flushLogging() has returned: nothing
// waits for the logging thread but flushLogging() itself.
template <class Log>
std::string writtenBy(Log log) {
  FILE* file = std::tmpfile();
  {
    StdoutTo redirect(fileno(file));
    log();
    flushLogging();
  }
  lseek(fileno(file), 0, SEEK_SET);
  std::string text = readAll(fileno(file));
  std::fclose(file);
  return text;
}

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

// "level msg" of each line, for the level tests.
std::vector<std::string> levelsAndMessages(const std::string& text) {
  std::vector<std::string> result;
  for (const std::string& line : linesOf(text)) {
    const auto doc = parseJson(line);
    result.push_back(std::string((*doc)["level"].GetString()) + " " + (*doc)["msg"].GetString());
  }
  return result;
}

ReviewAnswer answer(Decision decision, std::string uid) {
  ReviewAnswer answer;
  answer.decision = decision;
  answer.httpStatus = decision == Decision::Errored ? 400 : 200;
  answer.uid = std::move(uid);
  answer.operation = "CREATE";
  answer.kind = "Pod";
  answer.namespaceName = "ml";
  answer.name = "p";
  return answer;
}

const std::string kTimestamp = R"("\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")";

TEST(LogLines, AreOneJsonObjectEachInTheFixedFieldOrder) {
  ASSERT_TRUE(setupLogging("info"));
  ReviewAnswer denied = answer(Decision::Denied, "u-1");
  denied.evaluation.workloadClass = WorkloadClass::Batch;
  denied.evaluation.profile = "gpu-batch";
  denied.evaluation.denials.emplace_back().rule = AIA004;
  denied.evaluation.warnings.emplace_back().rule = AIA015;
  const std::string text = writtenBy([&] {
    logRequest(Endpoint::Mutate, denied, 0.25);
    logLifecycle("listening", {{"address", "127.0.0.1:8443"}});
    logError("invalid profile", {{"error", "a \"quoted\"\nline\x01"}});
  });
  const auto lines = linesOf(text);
  ASSERT_EQ(lines.size(), 3u) << text;
  EXPECT_EQ(text.back(), '\n');
  EXPECT_TRUE(std::regex_match(
      lines[0],
      std::regex(R"(\{"ts":)" + kTimestamp +
                 R"(,"level":"info","msg":"admission","endpoint":"mutate","uid":"u-1",)"
                 R"("operation":"CREATE","kind":"Pod","namespace":"ml","name":"p","class":"batch",)"
                 R"("profile":"gpu-batch","decision":"denied","rules":\["AIA004","AIA015"\],)"
                 R"("latency_us":250000,"status":200\})")))
      << lines[0];
  EXPECT_TRUE(std::regex_match(
      lines[1], std::regex(R"(\{"ts":)" + kTimestamp +
                           R"(,"level":"info","msg":"listening","address":"127.0.0.1:8443"\})")))
      << lines[1];
  EXPECT_TRUE(std::regex_match(
      lines[2],
      std::regex(
          R"(\{"ts":)" + kTimestamp +
          R"(,"level":"error","msg":"invalid profile","error":"a \\"quoted\\"\\nline\\u0001"\})")))
      << lines[2];
}

TEST(LogLines, CutEachFieldTo512Bytes) {
  ASSERT_TRUE(setupLogging("info"));
  const std::string text = writtenBy([] {
    logRequest(Endpoint::Validate, answer(Decision::Allowed, std::string(100000, 'x')), 0.001);
  });
  const auto lines = linesOf(text);
  ASSERT_EQ(lines.size(), 1u);
  const auto doc = parseJson(lines[0]);
  EXPECT_EQ((*doc)["uid"].GetString(), std::string(509, 'x') + "...");
}

TEST(LogLevels, AreTheFlagsNames) {
  for (const char* level : {"trace", "debug", "info", "warn", "warning", "error", "err", "off"}) {
    EXPECT_TRUE(setupLogging(level)) << level;
  }
  for (const char* level : {"", "INFO", "verbose", "critical"}) {
    EXPECT_FALSE(setupLogging(level)) << level;
  }
}

void logOneOfEach() {
  logInfo("profiles loaded");
  logRequest(Endpoint::Mutate, answer(Decision::Patched, "allowed"), 0.001);
  logRequest(Endpoint::Mutate, answer(Decision::Errored, "errored"), 0.001);
  logLifecycle("listening");
  logWarn("profile misconfigured for this cluster");
  logError("cannot listen");
}

TEST(LogLevels, InfoWritesEveryLine) {
  ASSERT_TRUE(setupLogging("info"));
  EXPECT_EQ(levelsAndMessages(writtenBy(logOneOfEach)),
            (std::vector<std::string>{
                "info profiles loaded", "info admission", "warn admission", "info listening",
                "warn profile misconfigured for this cluster", "error cannot listen"}));
}

TEST(LogLevels, WarnKeepsLifecycleLinesAndQuietensRequestLines) {
  ASSERT_TRUE(setupLogging("warn"));
  const std::string text = writtenBy(logOneOfEach);
  EXPECT_EQ(levelsAndMessages(text),
            (std::vector<std::string>{"warn admission", "info listening",
                                      "warn profile misconfigured for this cluster",
                                      "error cannot listen"}));
  EXPECT_NE(text.find(R"("uid":"errored")"), std::string::npos) << text;
}

TEST(LogLevels, ErrorKeepsLifecycleLinesAndErrors) {
  ASSERT_TRUE(setupLogging("error"));
  EXPECT_EQ(levelsAndMessages(writtenBy(logOneOfEach)),
            (std::vector<std::string>{"info listening", "error cannot listen"}));
}

TEST(LogLevels, OffWritesNothing) {
  ASSERT_TRUE(setupLogging("off"));
  EXPECT_EQ(writtenBy(logOneOfEach), "");
}

// stdout is a pipe that nobody reads and that is full: the logging thread
// blocks on its first line, and no line leaves the queue until the test
// reads the pipe. That is the condition the test waits on; nothing sleeps.
TEST(LogQueue, RequestLinesPastTheBudgetAreDroppedAndCountedAndTheRestWrittenInOrder) {
  ASSERT_TRUE(setupLogging("info", 4 * kLogLineBytes));  // four short request lines
  const uint64_t droppedBefore = logLinesDropped();

  int pipeFds[2];
  ASSERT_EQ(pipe(pipeFds), 0);
  fcntl(pipeFds[1], F_SETPIPE_SZ, 4096);
  fcntl(pipeFds[1], F_SETFL, O_NONBLOCK);
  size_t filler = 0;
  for (size_t chunk : {512, 1}) {
    const std::string bytes(chunk, '#');
    for (ssize_t n; (n = write(pipeFds[1], bytes.data(), chunk)) > 0;) filler += size_t(n);
  }
  fcntl(pipeFds[1], F_SETFL, 0);
  ASSERT_GT(filler, 0u);

  StdoutTo redirect(pipeFds[1]);
  for (int i = 0; i < 10; ++i) {
    logRequest(Endpoint::Mutate, answer(Decision::Allowed, "r" + std::to_string(i)), 0.001);
  }
  logLifecycle("reloading");  // never dropped
  const uint64_t dropped = logLinesDropped() - droppedBefore;
  // Nothing is checked while stdout is the pipe: a failure message would
  // wait behind the blocked line.
  std::string drained;
  std::thread reader([&] { drained = readAll(pipeFds[0]); });
  flushLogging();
  redirect.restore();
  close(pipeFds[1]);
  reader.join();
  close(pipeFds[0]);

  EXPECT_EQ(dropped, 6u);
  ASSERT_GE(drained.size(), filler);
  EXPECT_EQ(drained.substr(0, filler), std::string(filler, '#'));
  const auto lines = linesOf(drained.substr(filler));
  ASSERT_EQ(lines.size(), 5u) << drained.substr(filler);
  for (int i = 0; i < 4; ++i) {
    EXPECT_NE(lines[i].find(R"("uid":"r)" + std::to_string(i) + "\""), std::string::npos)
        << lines[i];
  }
  EXPECT_NE(lines[4].find(R"("msg":"reloading")"), std::string::npos) << lines[4];
}

TEST(LogQueue, FlushReturnsOnceEveryLineIsWritten) {
  ASSERT_TRUE(setupLogging("info"));
  const uint64_t droppedBefore = logLinesDropped();
  const std::string text = writtenBy([] {
    for (int i = 0; i < 2000; ++i) {
      logRequest(Endpoint::Mutate, answer(Decision::Allowed, "r" + std::to_string(i)), 0.001);
    }
    logLifecycle("stopped");
  });
  EXPECT_EQ(logLinesDropped(), droppedBefore);  // the 4 MiB budget holds 4,096 request lines
  const auto lines = linesOf(text);
  ASSERT_EQ(lines.size(), 2001u);
  EXPECT_NE(lines[1999].find(R"("uid":"r1999")"), std::string::npos) << lines[1999];
  EXPECT_NE(lines[2000].find(R"("msg":"stopped")"), std::string::npos) << lines[2000];
}

// The server flushes the log on its way out: every request line it logged,
// then "stopped", is in its output once it has exited.
TEST(LogQueue, TheServerWritesOutEveryLineBeforeItExits) {
  WebhookServer server;
  const std::string pod =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ml"},)"
      R"("spec":{"containers":[{"name":"c","image":"i"}]}})";
  constexpr int kRequests = 50;
  for (int i = 0; i < kRequests; ++i) {
    ASSERT_EQ(server.post("/mutate", makeReview(pod, "CREATE", "exit-" + std::to_string(i))).status,
              200);
  }
  EXPECT_EQ(server.terminate(), 0);
  // The process has exited; its last lines may still be on their way through the pipe.
  ASSERT_TRUE(server.waitForOutput("\"msg\":\"stopped\"", 10)) << server.output();
  int requests = 0;
  bool stoppedLast = false;
  for (const std::string& line : linesOf(server.output())) {
    if (line.find(R"("uid":"exit-)" + std::to_string(requests) + "\"") != std::string::npos) {
      ++requests;
    }
    stoppedLast = line.find(R"("msg":"stopped")") != std::string::npos;
  }
  EXPECT_EQ(requests, kRequests);
  EXPECT_TRUE(stoppedLast);
}

}  // namespace
}  // namespace aiadmit
