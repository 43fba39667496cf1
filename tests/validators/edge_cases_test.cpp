// Input at the edges of what the rules read: shapes the API server would
// refuse or never send, through every rule at once over the real server.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/test_support.h"

namespace aiadmit {
namespace {

using namespace testing;

// Shapes the API server would refuse or never send still get a well-formed
// decision, and the server keeps answering.
TEST(RuleInputs, OddShapesGetAnAnswer) {
  WebhookServer server;
  const std::vector<std::string> podSpecs = {
      R"({"containers":"x"})",
      R"({"containers":[1,null,{"resources":"x"},{"resources":{"limits":[]}}]})",
      R"({"containers":[{"resources":{"limits":{"nvidia.com/gpu":true,"amd.com/gpu":null,"gpu":{}}}}]})",
      R"({"containers":[{"resources":{"limits":{"nvidia.com/gpu":1e308},"requests":{"nvidia.com/gpu":"99999999999999999999999"}}}]})",
      R"({"initContainers":[{"restartPolicy":"Always","resources":{"limits":{"nvidia.com/gpu":"9223372036854775807"}}}],"containers":[{"resources":{"limits":{"nvidia.com/gpu":"9223372036854775807"}}}]})",
      R"({"nodeSelector":[],"tolerations":{},"affinity":[]})",
      R"({"nodeSelector":{"accelerator":5},"tolerations":[null,1,{"key":1}],"containers":[]})",
      R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[null,1,{"matchExpressions":[null,{"key":5},{"key":"accelerator","operator":"Gt","values":["x"]},{"key":"accelerator","operator":"In","values":[1,null]}]}]}}},"containers":[{"resources":{"limits":{"nvidia.com/gpu":1}}}]})",
      R"({"priorityClassName":7,"restartPolicy":[],"schedulerName":{},"containers":[{"name":3,"ports":"x","readinessProbe":1,"resources":{"limits":{"nvidia.com/gpu":"1"}}}]})",
  };
  int index = 0;
  for (const std::string kind : {"Pod", "Deployment", "Job", "CronJob"}) {
    for (const std::string& spec : podSpecs) {
      std::string object;
      const std::string annotations =
          R"({"aiadmit.dev/workload":"training","aiadmit.dev/gpu-container":"missing"})";
      if (kind == "Pod") {
        object = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":)" +
                 annotations + R"(,"ownerReferences":"x"},"spec":)" + spec + "}";
      } else if (kind == "CronJob") {
        object =
            R"({"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"c"},"spec":{"jobTemplate":{"spec":{"parallelism":"4","completionMode":5,"template":{"metadata":{"annotations":)" +
            annotations + R"(},"spec":)" + spec + "}}}}}";
      } else {
        object =
            R"({"apiVersion":")" + std::string(kind == "Job" ? "batch/v1" : "apps/v1") +
            R"(","kind":")" + kind +
            R"(","metadata":{"name":"x","labels":[]},"spec":{"replicas":-1,"template":{"metadata":{"annotations":)" +
            annotations + R"(,"labels":"y"},"spec":)" + spec + "}}}";
      }
      SCOPED_TRACE(object);
      for (const char* operation : {"CREATE", "UPDATE"}) {
        const std::string uid = "odd-" + std::to_string(index++);
        const HttpResponse http = server.post(
            "/validate",
            makeReview(object, operation, uid, std::string(operation) == "UPDATE" ? object : ""));
        ASSERT_EQ(http.status, 200) << http.body;
        const ReviewResponse response = parseReviewResponse(http.body);
        EXPECT_EQ(response.uid, uid);
        if (!response.allowed) {
          EXPECT_EQ(response.statusCode, 403) << response.message;
        }
      }
    }
  }
  EXPECT_EQ(server.get("/healthz").status, 200);
}

}  // namespace
}  // namespace aiadmit
