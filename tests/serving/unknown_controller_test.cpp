// Objects made by a controller of a kind no row describes: serve counts them
// in /metrics by that kind and logs the kind once, over TLS as the API
// server calls it; objects of Kubernetes' own controllers and of the table's
// kinds are not counted. The count's label set stays bounded.
#include <gtest/gtest.h>

#include "tests/support/test_support.h"
#include "webhook/serving/metrics.h"

namespace aiadmit {
namespace {

using namespace testing;

std::string ownedDeployment(const std::string& name, const std::string& ownerApiVersion,
                            const std::string& ownerKind) {
  return R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":")" + name +
         R"(","namespace":"ml","ownerReferences":[{"apiVersion":")" + ownerApiVersion +
         R"(","kind":")" + ownerKind +
         R"(","name":"graph","uid":"u1","controller":true}]},)"
         R"("spec":{"replicas":1,"selector":{"matchLabels":{"app":"x"}},"template":{)"
         R"("metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"c","image":"i",)"
         R"("resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}}})";
}

TEST(UnknownControllers, ObjectsOfAKindNoRowNamesAreCountedByItAndLoggedOnce) {
  WebhookServer server;
  const std::string graph = "InferenceGraph.serving.example.com";
  for (const char* uid : {"u1", "u2"}) {
    const std::string review = makeReview(
        ownedDeployment("graph-a", "serving.example.com/v1", "InferenceGraph"), "CREATE", uid);
    ASSERT_EQ(server.post("/mutate", review).status, 200);
  }
  // The near cases: a kind of the table (JobSet), and a Job of a CronJob.
  ASSERT_EQ(server
                .post("/mutate",
                      makeReview(ownedDeployment("by-jobset", "jobset.x-k8s.io/v1alpha2", "JobSet"),
                                 "CREATE", "u3"))
                .status,
            200);
  ASSERT_EQ(server
                .post("/mutate",
                      makeReview(ownedDeployment("by-cron", "batch/v1", "CronJob"), "CREATE", "u4"))
                .status,
            200);
  const std::string metrics = server.get("/metrics").body;
  EXPECT_NE(
      metrics.find(R"(aiadmit_unknown_controller_objects_total{controller=")" + graph + R"("} 2)"),
      std::string::npos)
      << metrics;
  EXPECT_EQ(metrics.find("JobSet.jobset"), std::string::npos);
  EXPECT_EQ(metrics.find("CronJob.batch"), std::string::npos);

  ASSERT_TRUE(server.waitForOutput(R"("uid":"u4")", 5));
  const std::string logs = server.output();
  const std::string line = R"("controller":")" + graph + R"(")";
  const size_t first = logs.find(line);
  ASSERT_NE(first, std::string::npos) << logs;
  EXPECT_EQ(logs.find(line, first + 1), std::string::npos) << "logged once:\n" << logs;
}

TEST(UnknownControllers, TheKindsCountedAreBounded) {
  Metrics metrics;
  for (size_t i = 0; i < Metrics::kUnknownControllerKinds; ++i) {
    EXPECT_TRUE(metrics.recordUnknownController("Kind" + std::to_string(i) + ".example.com"));
  }
  EXPECT_FALSE(metrics.recordUnknownController("Kind0.example.com"));
  EXPECT_FALSE(metrics.recordUnknownController("OneTooMany.example.com"));
  EXPECT_FALSE(metrics.recordUnknownController("AnotherOne.example.com"));
  const std::string text = metrics.render();
  EXPECT_NE(text.find(R"(aiadmit_unknown_controller_objects_total{controller="other"} 2)"),
            std::string::npos);
  EXPECT_NE(
      text.find(R"(aiadmit_unknown_controller_objects_total{controller="Kind0.example.com"} 2)"),
      std::string::npos);
  EXPECT_EQ(text.find("OneTooMany"), std::string::npos);
}

}  // namespace
}  // namespace aiadmit
