// AIA009 through the engine's /validate path: GPU servers with no readiness probe and no port to
// give them one. Manifests that break the rule and near misses that must pass, each under profiles
// that deny, warn and switch every rule off.
#include "tests/support/validator_harness.h"

namespace aiadmit {
namespace {

using namespace testing;

// A vLLM server over `replicas` nodes in one StatefulSet, as its ranks start it: rank 0 serves,
// the others join its Ray cluster. It declares no port.
std::string multiNodeStatefulSet(int replicas) {
  return R"(apiVersion: apps/v1
kind: StatefulSet
metadata: {name: vllm, annotations: {aiadmit.dev/workload: realtime}}
spec:
  replicas: )" +
         std::to_string(replicas) + R"(
  serviceName: vllm
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}}
    spec:)" +
         kPoolPlacement +
         R"(
      containers:
      - name: vllm
        image: vllm/vllm-openai
        command: [sh, -c, 'if [ "$RANK" = 0 ]; then ray start --head && vllm serve m --pipeline-parallel-size 2; else ray start --block --address=vllm-0.vllm:6379; fi']
        env:
        - name: RANK
          valueFrom: {fieldRef: {fieldPath: "metadata.labels['apps.kubernetes.io/pod-index']"}}
        resources: {limits: {nvidia.com/gpu: 8, memory: 1000Gi}}
)";
}

const std::vector<RuleCase> kCases = {
    {"NoPortToProbe", "default",
     realtimeDeployment(
         "", R"({name: vllm, image: vllm, resources: {limits: {nvidia.com/gpu: 1, memory: 32Gi}}})",
         kDeclaredRealtime),
     "spec.template.spec.containers[0]"},
    {"ProfileWithoutProbes", "noprobe-team",
     realtimeDeployment(
         "",
         R"({name: vllm, image: vllm, ports: [{containerPort: 8000}], resources: {limits: {nvidia.com/gpu: 1, memory: 32Gi}}})",
         kDeclaredRealtime),
     "spec.template.spec.containers[0]"},
    {"PortLetsAiadmitInjectOne", "default",
     realtimeDeployment(
         "",
         R"({name: vllm, image: vllm, ports: [{containerPort: 8000}], resources: {limits: {nvidia.com/gpu: 1, memory: 32Gi}}})",
         kDeclaredRealtime),
     ""},
    {"OwnProbe", "noprobe-team", realtimeDeployment("", kServingContainer, kDeclaredRealtime), ""},
    // A server of no GPU: a chart's CPU-only run (0 GPUs), off the pool.
    {"ZeroGpus", "default", R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: server, annotations: {aiadmit.dev/workload: realtime}}
spec:
  selector: {matchLabels: {app: server}}
  template:
    metadata: {labels: {app: server}}
    spec:
      containers:
      - {name: vllm, image: vllm, resources: {limits: {nvidia.com/gpu: 0, memory: 32Gi}}}
)",
     ""},
    // The ranks of one multi-node server in one StatefulSet read their ordinal: only rank 0
    // serves, and a probe on the template would never pass on the others.
    {"RanksOfOneServer", "default", multiNodeStatefulSet(2), ""},
    {"OneRankAlone", "default", multiNodeStatefulSet(1), "spec.template.spec.containers[0]"},
    {"ReplicasThatDoNotReadTheirOrdinal", "default",
     replaced(multiNodeStatefulSet(2), "apps.kubernetes.io/pod-index",
              "statefulset.kubernetes.io/pod-name"),
     "spec.template.spec.containers[0]"}};

AIADMIT_RULE_ACTIONS_TEST(AIA009, kCases);

}  // namespace
}  // namespace aiadmit
