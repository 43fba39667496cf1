// AIA015 through the engine's /validate path: GPU servers without a memory limit.
// Manifests that break the rule and near misses that must pass, each under
// profiles that deny, warn and switch every rule off.
#include "tests/support/engine_harness.h"
#include "tests/support/validator_harness.h"

namespace aiadmit {
namespace {

using namespace testing;

const std::vector<RuleCase> kCases = {
    {"ServerWithoutMemoryLimit", "default",
     realtimeDeployment(
         "",
         R"({name: vllm, image: vllm, ports: [{containerPort: 8000}], readinessProbe: {tcpSocket: {port: 8000}}, resources: {limits: {nvidia.com/gpu: 1}, requests: {memory: 32Gi}}})",
         kDeclaredRealtime),
     "spec.template.spec.containers[0].resources.limits"},
    {"MemoryLimitSet", "default", realtimeDeployment("", kServingContainer, kDeclaredRealtime),
     ""}};

AIADMIT_RULE_ACTIONS_TEST(AIA015, kCases);

// The field path says which container; a long container name must not push
// it out of the 120 characters a warning has.
TEST(RuleEdges, AWarningKeepsItsFieldPathWhateverTheContainerName) {
  EngineWebhook server;
  const std::string name(63, 'v');
  const std::string deployment =
      yamlToJson(realtimeDeployment("", "{name: " + name +
                                            ", image: vllm, ports: [{containerPort: 8000}], "
                                            "readinessProbe: {tcpSocket: {port: 8000}}, "
                                            "resources: {limits: {nvidia.com/gpu: 1}}}"));
  const ReviewResponse response =
      parseReviewResponse(server.post("/validate", makeReview(deployment, "CREATE", "w")).body);
  EXPECT_TRUE(response.allowed) << response.message;
  ASSERT_EQ(response.warnings.size(), 1u);
  EXPECT_EQ(response.warnings[0].rfind("aiadmit: [AIA015] containers[0].resources.limits: ", 0), 0u)
      << response.warnings[0];
  EXPECT_LE(response.warnings[0].size(), kMaxWarningLength);
}

}  // namespace
}  // namespace aiadmit
