// `aiadmit explain --cluster SNAPSHOT`: the snapshot as kubectl writes it
// (YAML), the namespace it explains by default, -A, names, both outputs and
// the exit codes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/test_support.h"

namespace aiadmit {
namespace {

using nlohmann::json;
using testing::runCommand;

constexpr const char* kSnapshot = R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: a100-0
    labels: {cloud.google.com/gke-nodepool: a100}
  spec:
    taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
  status:
    allocatable: {cpu: "32", nvidia.com/gpu: "4"}
- apiVersion: v1
  kind: Pod
  metadata: {name: big, namespace: default, creationTimestamp: "2026-12-01T10:00:00Z"}
  spec:
    containers:
    - name: main
      resources: {limits: {nvidia.com/gpu: "8"}}
    tolerations: [{key: nvidia.com/gpu, operator: Exists}]
  status: {phase: Pending}
- apiVersion: v1
  kind: Pod
  metadata: {name: untolerated, namespace: ml}
  spec:
    containers:
    - name: main
      resources: {limits: {nvidia.com/gpu: "1"}}
  status: {phase: Pending}
- apiVersion: v1
  kind: Pod
  metadata: {name: web, namespace: ml}
  spec:
    containers: [{name: nginx}]
  status: {phase: Pending}
)";

struct Explained {
  int exitCode = -1;
  std::string out;
  std::string err;
};

Explained explain(std::vector<std::string> args, const std::string& snapshot = kSnapshot) {
  testing::TempDir dir;
  testing::writeFile(dir.file("snapshot.yaml"), snapshot);
  std::vector<std::string> argv = {testing::binaryPath(), "explain", "--cluster",
                                   dir.file("snapshot.yaml")};
  argv.insert(argv.end(), args.begin(), args.end());
  const testing::CommandResult result = runCommand(argv);
  return {result.exitCode, result.out, result.err};
}

TEST(ExplainCommand, JsonListsEachWaitingWorkloadWithItsCauseAndEachPoolsIdleGpus) {
  const Explained result = explain({"-A", "-o", "json"});
  EXPECT_EQ(result.exitCode, 1) << result.err;
  const json report = json::parse(result.out);
  ASSERT_EQ(report["waiting"].size(), 2u) << result.out;
  const json& first = report["waiting"][0];
  EXPECT_EQ(first["kind"], "Pod");
  EXPECT_EQ(first["namespace"], "default");
  EXPECT_EQ(first["name"], "big");
  EXPECT_EQ(first["gpus"], 8);
  EXPECT_EQ(first["cause"], "no-node-can-hold");
  EXPECT_FALSE(first["fix"].get<std::string>().empty());
  EXPECT_EQ(first["since"], "2026-12-01T10:00:00Z");
  EXPECT_TRUE(first["scheduler"]["agrees"].is_null());
  EXPECT_EQ(report["waiting"][1]["cause"], "untolerated-taint");
  ASSERT_EQ(report["idle"].size(), 1u);
  EXPECT_EQ(report["idle"][0]["pool"], "a100");
  EXPECT_EQ(report["idle"][0]["gpus"], 4);
  EXPECT_EQ(report["idle"][0]["idleGpus"], 4);
  EXPECT_EQ(report["idle"][0]["waitingPods"], 2);
}

TEST(ExplainCommand, ItExplainsTheDefaultNamespaceUnlessToldOtherwise) {
  const json byDefault = json::parse(explain({"-o", "json"}).out);
  ASSERT_EQ(byDefault["waiting"].size(), 1u);
  EXPECT_EQ(byDefault["waiting"][0]["name"], "big");
  const json ml = json::parse(explain({"-n", "ml", "-o", "json"}).out);
  ASSERT_EQ(ml["waiting"].size(), 1u);
  EXPECT_EQ(ml["waiting"][0]["name"], "untolerated");
  const json named = json::parse(explain({"-A", "-o", "json", "untolerated"}).out);
  ASSERT_EQ(named["waiting"].size(), 1u);
}

TEST(ExplainCommand, TheTextGroupsByCauseWithWhyAndFix) {
  const Explained result = explain({"-A"});
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_NE(result.out.find("2 GPU workloads wait for 9 GPUs."), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("\nno-node-can-hold: 1 workload, 8 GPUs\n  Pod default/big: 8 GPUs"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("    fix: add the toleration {key: nvidia.com/gpu"), std::string::npos);
  EXPECT_NE(result.out.find("a100: 4 of 4 GPUs idle on 1 node, while 2 Pods wait for it"),
            std::string::npos)
      << result.out;
}

TEST(ExplainCommand, NothingWaitingExitsZero) {
  const Explained result = explain({"-n", "empty"});
  EXPECT_EQ(result.exitCode, 0) << result.out << result.err;
  EXPECT_NE(result.out.find("No GPU work waits."), std::string::npos);
}

TEST(ExplainCommand, UsageAndInputErrorsExitTwo) {
  EXPECT_EQ(runCommand({testing::binaryPath(), "explain"}).exitCode, 2);
  EXPECT_EQ(explain({"-n", "ml", "-A"}).exitCode, 2);
  EXPECT_EQ(explain({"-o", "yaml"}).exitCode, 2);
  EXPECT_EQ(explain({"--bogus"}).exitCode, 2);
  const Explained broken = explain({}, "items: [\n");
  EXPECT_EQ(broken.exitCode, 2);
  EXPECT_NE(broken.err.find("snapshot.yaml:"), std::string::npos) << broken.err;
  EXPECT_EQ(runCommand({testing::binaryPath(), "explain", "--cluster", "/nonexistent"}).exitCode,
            2);
}

// A DRA node whose 2 GPUs a DeviceTaintRule drains, a claim of 1 that waits
// for one, and a pool fragmented by small Pods, as kubectl prints them.
constexpr const char* kTaintedAndSpread = R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: dra-0, labels: {cloud.google.com/gke-nodepool: dra}}
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {name: dra-0-gpu.nvidia.com-x7k2p}
  spec:
    driver: gpu.nvidia.com
    nodeName: dra-0
    pool: {name: dra-0, generation: 1, resourceSliceCount: 1}
    devices: [{name: gpu-0}, {name: gpu-1}]
- apiVersion: resource.k8s.io/v1
  kind: DeviceClass
  metadata: {name: gpu.nvidia.com}
  spec:
    selectors: [{cel: {expression: "device.driver == 'gpu.nvidia.com'"}}]
- apiVersion: resource.k8s.io/v1
  kind: DeviceTaintRule
  metadata: {name: firmware-upgrade}
  spec:
    deviceSelector: {driver: gpu.nvidia.com, pool: dra-0}
    taint: {key: example.com/maintenance, value: firmware, effect: NoSchedule}
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaim
  metadata: {name: one-gpu, namespace: ml}
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com}
- apiVersion: v1
  kind: Pod
  metadata: {name: drained, namespace: ml}
  spec:
    containers:
    - name: main
      resources: {claims: [{name: gpu}]}
    resourceClaims: [{name: gpu, resourceClaimName: one-gpu}]
  status:
    phase: Pending
    conditions:
    - type: PodScheduled
      status: "False"
      reason: Unschedulable
      message: "0/3 nodes are available: 1 cannot allocate all claims. still not schedulable"
- apiVersion: v1
  kind: Node
  metadata: {name: a100-0, labels: {cloud.google.com/gke-nodepool: a100}}
  status: {allocatable: {nvidia.com/gpu: "4"}}
- apiVersion: v1
  kind: Node
  metadata: {name: a100-1, labels: {cloud.google.com/gke-nodepool: a100}}
  status: {allocatable: {nvidia.com/gpu: "4"}}
- apiVersion: v1
  kind: Pod
  metadata: {name: small-0, namespace: ml}
  spec:
    nodeName: a100-0
    containers: [{name: main, resources: {limits: {nvidia.com/gpu: "3"}}}]
  status: {phase: Running}
- apiVersion: v1
  kind: Pod
  metadata: {name: small-1, namespace: ml}
  spec:
    nodeName: a100-1
    containers: [{name: main, resources: {limits: {nvidia.com/gpu: "3"}}}]
  status: {phase: Running}
- apiVersion: v1
  kind: Pod
  metadata: {name: pair, namespace: ml}
  spec:
    containers: [{name: main, resources: {limits: {nvidia.com/gpu: "2"}}}]
  status: {phase: Pending}
)";

TEST(ExplainCommand, DeviceTaintsAndFragmentedPoolsInBothOutputs) {
  const Explained result = explain({"-n", "ml", "-o", "json"}, kTaintedAndSpread);
  EXPECT_EQ(result.exitCode, 1) << result.err;
  const json report = json::parse(result.out);
  ASSERT_EQ(report["waiting"].size(), 2u) << result.out;
  const json& drained =
      report["waiting"][0]["name"] == "drained" ? report["waiting"][0] : report["waiting"][1];
  const json& pair =
      report["waiting"][0]["name"] == "pair" ? report["waiting"][0] : report["waiting"][1];
  EXPECT_EQ(drained["cause"], "device-tainted");
  EXPECT_EQ(drained["scheduler"]["agrees"], true);
  EXPECT_EQ(drained["scheduler"]["source"], "scheduler");
  EXPECT_EQ(drained["scheduler"]["condition"], "PodScheduled");
  EXPECT_EQ(drained["scheduler"]["reason"], "Unschedulable");
  EXPECT_EQ(pair["cause"], "fragmented");
  ASSERT_EQ(report["idle"].size(), 2u);
  EXPECT_EQ(report["idle"][0]["pool"], "a100");
  EXPECT_EQ(report["idle"][0]["idleGpus"], 2);
  EXPECT_EQ(report["idle"][0]["unusableIdleGpus"], 2);
  EXPECT_EQ(report["idle"][1]["pool"], "dra");
  EXPECT_EQ(report["idle"][1]["idleGpus"], 0);
  EXPECT_EQ(report["idle"][1]["taintedGpus"], 2);
  EXPECT_EQ(report["idle"][0]["waitingByCause"], (json{{"fragmented", 1}}));

  const Explained text = explain({"-n", "ml"}, kTaintedAndSpread);
  EXPECT_NE(text.out.find("\nfragmented: 1 workload, 2 GPUs\n  Pod ml/pair: 2 GPUs in 1 Pod, "
                          "pool a100\n    why: pool a100 has 2 idle GPUs on 2 nodes that it may "
                          "use: 1,1; "),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("    fix: add the toleration {key: example.com/maintenance, operator: "
                          "Equal, value: firmware, effect: NoSchedule} to "
                          "spec.devices.requests[0].exactly.tolerations of ResourceClaim one-gpu, "
                          "or delete DeviceTaintRule firmware-upgrade"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("  a100: 2 of 8 GPUs idle on 2 nodes (all on nodes with room for none "
                          "of the Pods that wait), while 1 Pod waits for it: 1 fragmented\n"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("  dra: 0 of 2 GPUs idle on 1 node, 2 GPUs free but kept off by device "
                          "taints, while 1 Pod waits for it: 1 device-tainted\n"),
            std::string::npos)
      << text.out;
}

}  // namespace
}  // namespace aiadmit
