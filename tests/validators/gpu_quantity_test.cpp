// AIA004 through the engine's /validate path: GPU quantities that are not positive whole numbers,
// in every container list. Manifests that break the rule and near misses that must pass, each under
// profiles that deny, warn and switch every rule off.
#include "tests/support/engine_harness.h"
#include "tests/support/validator_harness.h"

namespace aiadmit {
namespace {

using namespace testing;

const std::vector<RuleCase> kCases = {{"Half", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {limits: {nvidia.com/gpu: "0.5"}, requests: {nvidia.com/gpu: "0.5"}}})"),
                                       "spec.template.spec.containers[0].resources.limits"},
                                      {"Millis", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {limits: {nvidia.com/gpu: 500m}}})"),
                                       "spec.template.spec.containers[0].resources.limits"},
                                      {"NegativeInInitContainer", "default",
                                       gpuJob("batch", "", R"(
      initContainers:
      - {name: warm, image: w, resources: {limits: {nvidia.com/gpu: -1}}})",
                                              kOneGpu),
                                       "spec.template.spec.initContainers[0].resources.limits"},
                                      {"FractionBesideZero", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {limits: {nvidia.com/gpu: 0.5}}}
      - {name: helper, image: h, resources: {limits: {nvidia.com/gpu: 0}}})"),
                                       "spec.template.spec.containers[0].resources.limits"},
                                      // 0 is a container without GPUs, as the API server,
                                      // kube-scheduler and the device plugin take it.
                                      {"ZeroBesideAGpu", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {limits: {nvidia.com/gpu: 1}}}
      - {name: helper, image: h, resources: {limits: {nvidia.com/gpu: 0}}})"),
                                       ""},
                                      {"ZeroInEverySpelling", "default",
                                       gpuJob("batch", "", R"(
      initContainers:
      - {name: warm, image: w, resources: {limits: {nvidia.com/gpu: "0"}, requests: {nvidia.com/gpu: 0m}}})",
                                              R"(
      - {name: infer, image: i, resources: {limits: {nvidia.com/gpu: 1}}}
      - {name: helper, image: h, resources: {limits: {nvidia.com/gpu: "0e0"}}})"),
                                       ""},
                                      {"WholeNumbersInEveryForm", "default",
                                       gpuJob("batch", "", R"(
      initContainers:
      - {name: warm, image: w, resources: {limits: {nvidia.com/gpu: "1000m"}}})",
                                              R"(
      - {name: a, image: i, resources: {limits: {nvidia.com/gpu: 1e0}}}
      - {name: b, image: i, resources: {limits: {nvidia.com/gpu: "2"}, requests: {nvidia.com/gpu: 2000m}}})"),
                                       ""}};

AIADMIT_RULE_ACTIONS_TEST(AIA004, kCases);

// A GPU count that is not a whole number is AIA004's alone: such a Pod asks
// for no GPU, so it is not aimed at the pool and needs no toleration.
TEST(RuleEdges, ABadGpuQuantityIsReportedOnce) {
  EngineWebhook server;
  int index = 0;
  for (const std::string quantity : {"\"-1\"", "\"one\"", "-1"}) {
    SCOPED_TRACE(quantity);
    const std::string job = yamlToJson(R"(apiVersion: batch/v1
kind: Job
metadata: {name: run, annotations: {aiadmit.dev/workload: training}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: train, image: t, resources: {limits: {nvidia.com/gpu: )" +
                                       quantity + "}}}\n");
    const ReviewResponse response = parseReviewResponse(
        server.post("/validate", makeReview(job, "CREATE", "q-" + std::to_string(index++))).body);
    EXPECT_FALSE(response.allowed);
    EXPECT_EQ(response.message.rfind("[AIA004] ", 0), 0u) << response.message;
    EXPECT_EQ(response.message.find('\n'), std::string::npos) << response.message;
  }
}

}  // namespace
}  // namespace aiadmit
