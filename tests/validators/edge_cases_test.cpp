// Rules at the edges a platform team hits: a GPU quantity that asks for no
// GPU, warnings for long container names, and affinity terms that name the
// key of the pool's own required node affinity. Through the real server.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/test_support.h"
#include "webhook/kube/warnings.h"
#include "webhook/kube/yaml_json.h"

namespace aiadmit {
namespace {

using namespace testing;

std::string yamlToJson(const std::string& yaml) {
  std::vector<ManifestDocument> documents;
  std::string error;
  EXPECT_TRUE(parseManifests(yaml, documents, &error)) << error;
  EXPECT_EQ(documents.size(), 1u) << yaml;
  return documents.empty() ? "{}" : toJson(*documents[0].json);
}

// A realtime GPU Deployment on the shipped pool, with `container` as its one container.
std::string realtimeDeployment(const std::string& container) {
  return R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: server}
spec:
  replicas: 1
  selector: {matchLabels: {app: server}}
  template:
    metadata: {labels: {app: server}}
    spec:
      nodeSelector: {accelerator: nvidia}
      tolerations: [{key: accelerator, operator: Equal, value: gpu, effect: NoSchedule}]
      containers:
      - )" +
         container + "\n";
}

// A GPU count that is not a positive whole number is AIA004's alone: such a
// Pod asks for no GPU, so it is not aimed at the pool and needs no toleration.
TEST(RuleEdges, ABadGpuQuantityIsReportedOnce) {
  WebhookServer server;
  int index = 0;
  for (const std::string quantity : {"\"0\"", "\"-1\"", "\"one\"", "0", "-1"}) {
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

// The field path says which container; a long container name must not push
// it out of the 120 characters a warning has.
TEST(RuleEdges, AWarningKeepsItsFieldPathWhateverTheContainerName) {
  WebhookServer server;
  const std::string name(63, 'v');
  const std::string deployment =
      yamlToJson(realtimeDeployment("{name: " + name +
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

// A profile's required node affinity holds on a term that already names its
// key: /mutate narrows an In to the pool's values; what it cannot narrow is
// refused (AIA008), since the Pod could otherwise take its GPUs elsewhere.
TEST(RuleEdges, ATermThatReachesBeyondThePoolsAffinityIsNarrowedOrRefused) {
  TempDir profiles;
  writeFile(profiles.file("h100.yaml"), R"(apiVersion: aiadmit.dev/v1
kind: Profile
metadata: {name: h100}
spec:
  class: training
  gpu: {resourceName: nvidia.com/gpu}
  placement:
    requiredNodeAffinity: [{key: gpu.nvidia.com/class, operator: In, values: [H100]}]
)");
  WebhookServer::Options options;
  options.profilesDir = profiles.path();
  WebhookServer server(options);
  const auto job = [](const std::string& expression) {
    return yamlToJson(R"(apiVersion: batch/v1
kind: Job
metadata: {name: run, annotations: {aiadmit.dev/workload: training}}
spec:
  template:
    spec:
      restartPolicy: Never
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions: [{key: gpu.nvidia.com/class, operator: In, values: [H100]}]
            - matchExpressions: [)" +
                      expression + R"(]
      containers:
      - {name: train, image: t, resources: {limits: {nvidia.com/gpu: 1}}}
)");
  };
  int index = 0;
  const auto post = [&](const std::string& path, const std::string& object) {
    return parseReviewResponse(
        server.post(path, makeReview(object, "CREATE", "t-" + std::to_string(index++))).body);
  };
  const std::string field =
      "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
      "nodeSelectorTerms[1].matchExpressions[0]";

  const std::string wider = job("{key: gpu.nvidia.com/class, operator: In, values: [A100, H100]}");
  const ReviewResponse unmutated = post("/validate", wider);
  EXPECT_FALSE(unmutated.allowed);
  EXPECT_EQ(unmutated.message.rfind("[AIA008] " + field + ": ", 0), 0u) << unmutated.message;
  const ReviewResponse mutated = post("/mutate", wider);
  ASSERT_FALSE(mutated.patch.empty());
  const ReviewResponse narrowed = post("/validate", applyPatch(wider, mutated.patch));
  EXPECT_TRUE(narrowed.allowed) << narrowed.message;

  for (const char* expression : {"{key: gpu.nvidia.com/class, operator: NotIn, values: [A100]}",
                                 "{key: gpu.nvidia.com/class, operator: In, values: [A100]}"}) {
    SCOPED_TRACE(expression);
    const std::string object = job(expression);
    const ReviewResponse response = post("/mutate", object);
    EXPECT_EQ(response.patch.find("gpu.nvidia.com"), std::string::npos) << response.patch;
    const ReviewResponse refused =
        post("/validate", response.patch.empty() ? object : applyPatch(object, response.patch));
    EXPECT_FALSE(refused.allowed);
    EXPECT_EQ(refused.message.rfind("[AIA008] " + field + ": ", 0), 0u) << refused.message;
  }
}

}  // namespace
}  // namespace aiadmit
