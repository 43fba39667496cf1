// UPDATE through the engine's /validate path: the new object is validated, but what the
// old object already had and the update did not touch is not held against
// it, so a label change on an old Deployment keeps working.
#include <gtest/gtest.h>

#include <string>

#include "tests/support/engine_harness.h"
#include "tests/support/test_support.h"
#include "webhook/codec/yaml_json.h"

namespace aiadmit {
namespace {

using namespace testing;

// A Deployment stored before the rules existed: a priority class the
// realtime profile does not allow (AIA011), no port to probe (AIA009) and no
// memory limit (AIA015, a warning). It declares itself realtime, so AIA009
// would deny it.
const std::string kOldDeployment = R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
  namespace: ml
  labels: {team: search}
  annotations: {aiadmit.dev/workload: realtime}
spec:
  replicas: 1
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}}
    spec:
      priorityClassName: high
      nodeSelector: {accelerator: nvidia}
      tolerations: [{key: accelerator, operator: Equal, value: gpu, effect: NoSchedule}]
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.6.3
        resources:
          limits: {nvidia.com/gpu: 1}
)";

std::string json(const std::string& yaml) {
  std::vector<ManifestDocument> documents;
  std::string error;
  EXPECT_TRUE(parseManifests(yaml, documents, &error)) << error;
  return documents.empty() ? "{}" : toJson(*documents[0].json);
}

std::string edited(std::string text, std::string_view from, std::string_view to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

class UpdateValidation : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = std::make_unique<EngineWebhook>(); }
  static void TearDownTestSuite() { server_.reset(); }

  static ReviewResponse update(const std::string& newYaml, const std::string& oldYaml) {
    const HttpResponse http =
        server_->post("/validate", makeReview(json(newYaml), "UPDATE", "u-update", json(oldYaml)));
    EXPECT_EQ(http.status, 200) << http.body;
    return parseReviewResponse(http.body);
  }
  static ReviewResponse create(const std::string& yaml) {
    const HttpResponse http = server_->post("/validate", makeReview(json(yaml), "CREATE", "u-c"));
    EXPECT_EQ(http.status, 200) << http.body;
    return parseReviewResponse(http.body);
  }

  static inline std::unique_ptr<EngineWebhook> server_;
};

TEST_F(UpdateValidation, TheOldObjectWouldBeRefusedToday) {
  const ReviewResponse response = create(kOldDeployment);
  EXPECT_FALSE(response.allowed);
  EXPECT_NE(response.message.find("[AIA009]"), std::string::npos) << response.message;
  EXPECT_NE(response.message.find("[AIA011]"), std::string::npos) << response.message;
  ASSERT_EQ(response.warnings.size(), 1u);
  EXPECT_NE(response.warnings[0].find("[AIA015]"), std::string::npos);
}

TEST_F(UpdateValidation, ALabelChangeKeepsWorking) {
  const ReviewResponse response = update(
      edited(kOldDeployment, "{team: search}", "{team: search, tier: gold}"), kOldDeployment);
  EXPECT_TRUE(response.allowed) << response.message;
  EXPECT_TRUE(response.warnings.empty()) << response.warnings.front();
}

TEST_F(UpdateValidation, ScalingKeepsWorking) {
  const ReviewResponse response =
      update(edited(kOldDeployment, "replicas: 1", "replicas: 3"), kOldDeployment);
  EXPECT_TRUE(response.allowed) << response.message;
}

TEST_F(UpdateValidation, TouchingAViolationReportsItAndOnlyIt) {
  const ReviewResponse response =
      update(edited(kOldDeployment, "priorityClassName: high", "priorityClassName: higher"),
             kOldDeployment);
  EXPECT_FALSE(response.allowed);
  EXPECT_EQ(response.message.rfind("[AIA011] spec.template.spec.priorityClassName: \"higher\"", 0),
            0u)
      << response.message;
  EXPECT_EQ(response.message.find("[AIA009]"), std::string::npos) << response.message;
}

TEST_F(UpdateValidation, ANewViolationIsRefused) {
  const ReviewResponse response =
      update(edited(kOldDeployment, "limits: {nvidia.com/gpu: 1}", "limits: {nvidia.com/gpu: 12}"),
             kOldDeployment);
  EXPECT_FALSE(response.allowed);
  EXPECT_EQ(response.message.rfind("[AIA006] ", 0), 0u) << response.message;
  EXPECT_EQ(response.message.find('\n'), std::string::npos) << response.message;
}

TEST_F(UpdateValidation, FixingAViolationIsAdmitted) {
  const ReviewResponse response =
      update(edited(kOldDeployment, "priorityClassName: high", "priorityClassName: ai-realtime"),
             kOldDeployment);
  EXPECT_TRUE(response.allowed) << response.message;
}

TEST_F(UpdateValidation, APodUpdateIsJudgedTheSameWay) {
  const std::string oldPod = R"(apiVersion: v1
kind: Pod
metadata:
  name: sweep
  namespace: ml
  annotations: {aiadmit.dev/workload: training}
spec:
  restartPolicy: Always
  nodeSelector: {accelerator: nvidia}
  tolerations: [{key: accelerator, operator: Equal, value: gpu, effect: NoSchedule}]
  containers:
  - name: sweep
    image: trainer
    resources: {limits: {nvidia.com/gpu: 1}}
)";
  EXPECT_FALSE(create(oldPod).allowed);
  const ReviewResponse labelled =
      update(edited(oldPod, "  name: sweep\n", "  name: sweep\n  labels: {phase: done}\n"), oldPod);
  EXPECT_TRUE(labelled.allowed) << labelled.message;
}

}  // namespace
}  // namespace aiadmit
