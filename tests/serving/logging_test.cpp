// The request log's queue is bounded in bytes: a request line that would
// take it past its bound is dropped and counted, one that fits goes in.
// Each test case runs in a process of its own, with a queue of its own.
#include <gtest/gtest.h>

#include <string>

#include "webhook/serving/logging.h"

namespace aiadmit {
namespace {

// A request line of a little over 2 KiB: five fields cut to 512 bytes each.
ReviewAnswer longAnswer() {
  ReviewAnswer answer;
  answer.decision = Decision::Allowed;
  for (std::string* field :
       {&answer.uid, &answer.kind, &answer.namespaceName, &answer.name, &answer.operation}) {
    *field = std::string(100000, 'x');
  }
  return answer;
}

TEST(LogQueue, ALineOverTheQueuesBytesIsDroppedAndCounted) {
  ASSERT_TRUE(setupLogging("info", 2048));
  logRequest(Endpoint::Mutate, longAnswer(), 0.001);
  EXPECT_EQ(logLinesDropped(), 1u);
}

TEST(LogQueue, ALineThatFitsTheQueuesBytesGoesIn) {
  ASSERT_TRUE(setupLogging("info", 4096));
  logRequest(Endpoint::Mutate, longAnswer(), 0.001);
  flushLogging();
  EXPECT_EQ(logLinesDropped(), 0u);
}

}  // namespace
}  // namespace aiadmit
