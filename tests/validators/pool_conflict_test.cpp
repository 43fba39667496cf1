// AIA008 through the engine's /validate path: GPU Pods whose node selection excludes the pool or
// does not tolerate its taint. Manifests that break the rule and near misses that must pass, each
// under profiles that deny, warn and switch every rule off.
#include "tests/support/engine_harness.h"
#include "tests/support/validator_harness.h"

namespace aiadmit {
namespace {

using namespace testing;

const std::vector<RuleCase> kCases = {
    {"SelectorForAnotherAccelerator", "default",
     replaced(realtimeDeployment("", kServingContainer), "nodeSelector: {accelerator: nvidia}",
              "nodeSelector: {accelerator: amd}"),
     "spec.template.spec.nodeSelector"},
    {"AffinityExcludesThePool", "default",
     realtimeDeployment(R"(
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions: [{key: zone, operator: Exists}, {key: accelerator, operator: NotIn, values: [nvidia, amd]}])",
                        kServingContainer),
     "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
     ".nodeSelectorTerms[0].matchExpressions[1]"},
    {"NoTolerationForThePoolTaint", "default",
     replaced(realtimeDeployment("", kServingContainer),
              "tolerations: [{key: accelerator, operator: Equal, value: gpu, effect: "
              "NoSchedule}]",
              "tolerations: [{key: accelerator, operator: Equal, value: tpu}]"),
     "spec.template.spec.tolerations"},
    {"OneAffinityTermReachesThePool", "default",
     realtimeDeployment(R"(
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions: [{key: accelerator, operator: In, values: [amd]}]
            - matchExpressions: [{key: accelerator, operator: In, values: [nvidia, amd]}])",
                        kServingContainer),
     ""},
    {"NarrowerSelectorInsideThePool", "default",
     replaced(realtimeDeployment("", kServingContainer), "nodeSelector: {accelerator: nvidia}",
              "nodeSelector: {accelerator: nvidia, nvidia.com/gpu.product: H100}"),
     ""},
    // Knative refuses tolerations in a Service as it ships; its Deployment
    // gets the pool's from controlled.mutate.
    {"KnativeServiceWithoutTheTolerationKnativeRefuses", "default", R"(
apiVersion: serving.knative.dev/v1
kind: Service
metadata: {name: llm, namespace: default}
spec:
  template:
    spec:
      containers:
      - image: vllm
        resources: {limits: {nvidia.com/gpu: 1, memory: 16Gi}}
)",
     ""},
    {"KnativeServiceSelectingAnotherAccelerator", "default", R"(
apiVersion: serving.knative.dev/v1
kind: Service
metadata: {name: llm, namespace: default}
spec:
  template:
    spec:
      nodeSelector: {accelerator: amd}
      containers:
      - image: vllm
        resources: {limits: {nvidia.com/gpu: 1, memory: 16Gi}}
)",
     "spec.template.spec.nodeSelector"}};

AIADMIT_RULE_ACTIONS_TEST(AIA008, kCases);

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
  EngineWebhook::Options options;
  options.profilesDir = profiles.path();
  EngineWebhook server(options);
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
