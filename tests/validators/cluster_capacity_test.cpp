// AIA016 refuses only a definite, lasting "no", through `aiadmit check
// --cluster` as the webhook decides with its live view: a pool scaled to
// zero or one whose autoscaler adds larger nodes, a driver whose slices are
// missing for now, taints whose tolerations the API server gives Pods on its
// own, and KEP-5004 init containers that reuse the containers' devices.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "tests/support/test_support.h"

namespace aiadmit {
namespace {

using namespace testing;

std::string node(const std::string& name, const std::string& labels, const std::string& taints,
                 int gpus) {
  std::string text = "apiVersion: v1\nkind: Node\nmetadata:\n  name: " + name + "\n";
  if (!labels.empty()) text += "  labels:\n" + labels;
  if (!taints.empty()) text += "spec:\n  taints:\n" + taints;
  text += "status:\n  allocatable:\n    cpu: \"96\"\n    memory: 1Ti\n";
  if (gpus >= 0) text += "    nvidia.com/gpu: \"" + std::to_string(gpus) + "\"\n";
  return text;
}

// A node of the shipped profiles' pool (label and taint) with `gpus` GPUs.
std::string poolNode(const std::string& name, int gpus) {
  return node(name, "    accelerator: nvidia\n",
              "  - key: accelerator\n    value: gpu\n    effect: NoSchedule\n", gpus);
}

std::string cpuNode(const std::string& name) {
  return node(name, "    kubernetes.io/os: linux\n", "", -1);
}

// A GKE GPU node: tainted nvidia.com/gpu=present:NoSchedule, a toleration
// only the ExtendedResourceToleration admission gives Pods.
std::string gkeNode(const std::string& name, int gpus) {
  return node(name, "    cloud.google.com/gke-accelerator: nvidia-h100-80gb\n",
              "  - key: nvidia.com/gpu\n    value: present\n    effect: NoSchedule\n", gpus);
}

// A v1 List of items, as kubectl prints a snapshot.
std::string list(const std::vector<std::string>& items) {
  std::string text = "apiVersion: v1\nkind: List\nitems:\n";
  for (const std::string& item : items) {
    bool first = true;
    size_t start = 0;
    while (start < item.size()) {
      const size_t end = item.find('\n', start);
      text += (first ? "- " : "  ") + item.substr(start, end - start) + "\n";
      first = false;
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  return text;
}

std::string replacedOnce(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// The shipped profiles, each edited by `edit`, with dra-example-driver's
// class allowed beside NVIDIA's.
using ProfileEdit = std::function<std::string(std::string)>;

std::string writeProfiles(const TempDir& dir, const ProfileEdit& edit) {
  const std::string profiles = dir.file("profiles");
  std::filesystem::create_directories(profiles);
  for (const char* name : {"batch.yaml", "realtime.yaml", "training.yaml"}) {
    std::string text = readFile(sourceDir() + "/profiles/" + name);
    text = replacedOnce(text, "\n  gpu:\n",
                        "\n  gpu:\n    deviceClasses: [gpu.nvidia.com, gpu.example.com]\n");
    writeFile(profiles + "/" + name, edit ? edit(text) : text);
  }
  return profiles;
}

// The pool autoscaled: its autoscaler adds nodes of at most `most` GPUs.
ProfileEdit autoscaled(int most, int gpusPerNode) {
  return [=](std::string text) {
    return replacedOnce(text, "    gpusPerNode: 8\n",
                        "    gpusPerNode: " + std::to_string(gpusPerNode) +
                            "\n    maxNodeGpus: " + std::to_string(most) + "\n");
  };
}

// GKE's pool: selected by its accelerator label, no toleration of its own.
std::string onGke(std::string text) {
  return replacedOnce(text,
                      "      accelerator: nvidia\n    tolerations:\n      - key: accelerator\n"
                      "        operator: Equal\n        value: gpu\n        effect: NoSchedule\n",
                      "      cloud.google.com/gke-accelerator: nvidia-h100-80gb\n");
}

// A pool the profile names by no label at all: any node with GPUs will do.
std::string anyNode(std::string text) {
  return replacedOnce(text,
                      "  placement:\n    nodeSelector:\n      accelerator: nvidia\n"
                      "    tolerations:\n      - key: accelerator\n        operator: Equal\n"
                      "        value: gpu\n        effect: NoSchedule\n",
                      "");
}

CommandResult check(const std::string& snapshot, const std::string& input,
                    const ProfileEdit& edit = {}) {
  TempDir dir;
  writeFile(dir.file("input.yaml"), input);
  writeFile(dir.file("cluster.yaml"), snapshot);
  return runCommand({binaryPath(), "check", "--profiles", writeProfiles(dir, edit), "--cluster",
                     dir.file("cluster.yaml"), dir.file("input.yaml")});
}

std::string gpuJob(int gpus) {
  return R"(apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          limits:
            nvidia.com/gpu: )" +
         std::to_string(gpus) + "\n";
}

// A model server as a Deployment: its template has none of the tolerations
// admission plugins give Pods.
std::string gpuDeployment(int gpus) {
  return R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: server
spec:
  replicas: 1
  selector: {matchLabels: {app: server}}
  template:
    metadata: {labels: {app: server}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai
        ports: [{containerPort: 8000}]
        readinessProbe: {tcpSocket: {port: 8000}}
        resources:
          limits:
            memory: 64Gi
            nvidia.com/gpu: )" +
         std::to_string(gpus) + "\n";
}

bool mentions(const CommandResult& run, const std::string& text) {
  return run.out.find(text) != std::string::npos;
}

// --- Pools that are not what they will be.

TEST(ClusterCapacity, APoolScaledToZeroIsNotJudged) {
  // Only CPU nodes, and a profile that names its pool by no label: they
  // match, with no GPU at all. The GPU nodes come when the Job asks.
  const CommandResult run = check(list({cpuNode("cpu-a"), cpuNode("cpu-b")}), gpuJob(8), anyNode);
  EXPECT_EQ(run.exitCode, 0) << run.out << run.err;
  EXPECT_FALSE(mentions(run, "AIA016")) << run.out;
}

TEST(ClusterCapacity, ASelectionThatKeepsThePodOffEveryGpuNodeIsWarnedNeverRefused) {
  // GKE's GPU nodes, and the shipped pool (accelerator=nvidia) that none of
  // them carries: the Job would wait for a node of that pool to be added.
  const CommandResult run = check(list({gkeNode("gke-a", 8), cpuNode("cpu-a")}), gpuJob(1));
  EXPECT_EQ(run.exitCode, 0) << run.out << run.err;
  EXPECT_TRUE(mentions(run, "AIA016")) << run.out;
  EXPECT_TRUE(mentions(run,
                       "Warning: aiadmit: [AIA016] no node it may land on has "
                       "\"nvidia.com/gpu\" now; check its node selection"))
      << run.out;
  // Near miss: a node of the pool has GPUs, however few.
  const CommandResult pool = check(list({gkeNode("gke-a", 8), poolNode("gpu-a", 1)}), gpuJob(1));
  EXPECT_EQ(pool.exitCode, 0) << pool.out << pool.err;
  EXPECT_FALSE(mentions(pool, "AIA016")) << pool.out;
}

TEST(ClusterCapacity, PoolNodesWithNoGpuYetAreNotJudged) {
  // The pool's nodes before their device plugin registers: zero allocatable.
  const CommandResult run = check(list({poolNode("gpu-a", 0)}), gpuJob(8));
  EXPECT_EQ(run.exitCode, 0) << run.out << run.err;
}

TEST(ClusterCapacity, AnAutoscaledPoolIsJudgedByTheNodesItCanAdd) {
  // 4-GPU nodes now; the autoscaler adds 8-GPU ones.
  const std::string snapshot = list({poolNode("gpu-a", 4), poolNode("gpu-b", 4)});
  const CommandResult fits = check(snapshot, gpuJob(8), autoscaled(8, 8));
  EXPECT_EQ(fits.exitCode, 0) << fits.out << fits.err;
  EXPECT_FALSE(mentions(fits, "AIA016")) << fits.out;

  // Without the mark the same pool is what it is now.
  const CommandResult fixedSize = check(snapshot, gpuJob(8));
  EXPECT_EQ(fixedSize.exitCode, 1) << fixedSize.out << fixedSize.err;
  EXPECT_TRUE(mentions(fixedSize, "[AIA016]")) << fixedSize.out;
}

TEST(ClusterCapacity, AboveTheAutoscalersLargestNodeIsStillRefused) {
  const CommandResult run = check(list({poolNode("gpu-a", 4)}), gpuJob(16), autoscaled(8, 16));
  EXPECT_EQ(run.exitCode, 1) << run.out << run.err;
  EXPECT_TRUE(mentions(run,
                       "[AIA016] spec.template.spec.containers[0].resources.limits: the Pod asks "
                       "for 16 \"nvidia.com/gpu\" on one node, but the largest of the 1 nodes it "
                       "may land on has 4 (node gpu-a) and the nodes its autoscaler adds have at "
                       "most 8 (spec.gpu.maxNodeGpus of profile batch), so it would stay Pending "
                       "forever; ask for at most 8 per Pod"))
      << run.out;
  EXPECT_TRUE(mentions(run, "raise maxNodeGpus in profile batch")) << run.out;

  // Scaled to zero: nothing now, 8-GPU nodes on demand.
  const CommandResult empty = check(list({cpuNode("cpu-a")}), gpuJob(16), autoscaled(8, 16));
  EXPECT_EQ(empty.exitCode, 1) << empty.out << empty.err;
  EXPECT_TRUE(mentions(empty,
                       "but none of the nodes it may land on exists now and the nodes "
                       "its autoscaler adds have at most 8"))
      << empty.out;
  const CommandResult within = check(list({cpuNode("cpu-a")}), gpuJob(8), autoscaled(8, 16));
  EXPECT_EQ(within.exitCode, 0) << within.out << within.err;
}

TEST(ClusterCapacity, CurrentNodesLargerThanTheAutoscalersStillCount) {
  const CommandResult run = check(list({poolNode("gpu-a", 16)}), gpuJob(16), autoscaled(8, 16));
  EXPECT_EQ(run.exitCode, 0) << run.out << run.err;
}

TEST(ClusterCapacity, OtherResourcesOfAnAutoscaledPoolAreNotJudged) {
  // maxNodeGpus counts nvidia.com/gpu; how many MIG slices an added node
  // brings is not known.
  std::string job = gpuJob(1);
  job = replacedOnce(job, "nvidia.com/gpu: 1", "nvidia.com/mig-1g.10gb: 40");
  const CommandResult run = check(list({poolNode("gpu-a", 8)}), job, autoscaled(8, 8));
  EXPECT_EQ(run.exitCode, 0) << run.out << run.err;
  EXPECT_FALSE(mentions(run, "AIA016")) << run.out;
}

// --- Taints of the pool that Pods are given tolerations for.

TEST(ClusterCapacity, GkeTaintedNodesCountForADeployment) {
  // GKE's GPU nodes are tainted nvidia.com/gpu=present:NoSchedule; the API
  // server tolerates it on each Pod that asks for nvidia.com/gpu, never on
  // the Deployment's template.
  const std::string snapshot =
      list({cpuNode("cpu-a"), gkeNode("gke-h100-a", 8), gkeNode("gke-h100-b", 8)});
  const CommandResult fits = check(snapshot, gpuDeployment(8), anyNode);
  EXPECT_EQ(fits.exitCode, 0) << fits.out << fits.err;
  EXPECT_FALSE(mentions(fits, "AIA016")) << fits.out;

  const CommandResult tooMany = check(snapshot, gpuDeployment(16), anyNode);
  EXPECT_EQ(tooMany.exitCode, 1) << tooMany.out << tooMany.err;
  EXPECT_TRUE(mentions(tooMany,
                       "the Pod asks for 16 \"nvidia.com/gpu\" on one node, but the "
                       "largest of the 3 nodes it may land on has 8 (node gke-h100-a)"))
      << tooMany.out;
}

TEST(ClusterCapacity, GkeTaintedNodesCountBesideAnUntaintedSmallerOne) {
  // A profile aimed at GKE's label: the 8-GPU nodes are tainted, a 4-GPU
  // node is not. Judging the template as written would see only the latter.
  const std::string untainted =
      node("gke-small", "    cloud.google.com/gke-accelerator: nvidia-h100-80gb\n", "", 4);
  const std::string snapshot = list({untainted, gkeNode("gke-h100-a", 8)});
  const CommandResult run = check(snapshot, gpuDeployment(8), onGke);
  EXPECT_EQ(run.exitCode, 0) << run.out << run.err;
  EXPECT_FALSE(mentions(run, "AIA016")) << run.out;
}

TEST(ClusterCapacity, TaintsOfOtherResourcesStillKeepTheTemplateOff) {
  // Only the resources the Pod asks for are tolerated: a node tainted for
  // another device is not one it may land on.
  const std::string other =
      node("fpga-a", "    cloud.google.com/gke-accelerator: nvidia-h100-80gb\n",
           "  - key: example.com/fpga\n    effect: NoSchedule\n", 16);
  const std::string snapshot = list({gkeNode("gke-h100-a", 8), other});
  const CommandResult run = check(snapshot, gpuDeployment(16), onGke);
  EXPECT_EQ(run.exitCode, 1) << run.out << run.err;
  EXPECT_TRUE(mentions(run, "largest of the 1 nodes it may land on has 8 (node gke-h100-a)"))
      << run.out;
}

// A RuntimeClass whose scheduling aims Pods at the nodes of its runtime and
// tolerates their taint, as a platform team sets up the GPU Operator's.
const char* kRuntimeClass = R"(apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata:
  name: nvidia
handler: nvidia
scheduling:
  nodeSelector:
    runtime: nvidia
  tolerations:
  - key: runtime
    operator: Equal
    value: nvidia
    effect: NoSchedule
)";

std::string runtimeNode(const std::string& name, int gpus) {
  return node(name, "    runtime: nvidia\n",
              "  - key: runtime\n    value: nvidia\n    effect: NoSchedule\n", gpus);
}

// Nodes of the runtime (tainted, 8 GPUs), a smaller GPU node without it, and
// a CPU node.
std::string runtimeSnapshot(bool withClass) {
  std::vector<std::string> items = {cpuNode("cpu-a"), node("small", "", "", 4),
                                    runtimeNode("rt-a", 8), runtimeNode("rt-b", 8)};
  if (withClass) items.emplace_back(kRuntimeClass);
  return list(items);
}

std::string withRuntimeClass(std::string deployment) {
  return replacedOnce(deployment, "      containers:\n",
                      "      runtimeClassName: nvidia\n      containers:\n");
}

TEST(ClusterCapacity, ARuntimeClassAddsItsTolerationsAndNodeSelector) {
  const CommandResult fits =
      check(runtimeSnapshot(true), withRuntimeClass(gpuDeployment(8)), anyNode);
  EXPECT_EQ(fits.exitCode, 0) << fits.out << fits.err;
  EXPECT_FALSE(mentions(fits, "AIA016")) << fits.out;

  // Its nodeSelector leaves the runtime's two nodes.
  const CommandResult tooMany =
      check(runtimeSnapshot(true), withRuntimeClass(gpuDeployment(16)), anyNode);
  EXPECT_EQ(tooMany.exitCode, 1) << tooMany.out << tooMany.err;
  EXPECT_TRUE(mentions(tooMany, "the largest of the 2 nodes it may land on has 8 (node rt-a)"))
      << tooMany.out;
}

TEST(ClusterCapacity, ARuntimeClassTheViewDoesNotHoldTakesEveryTaintAsTolerated) {
  // The class may tolerate the runtime's taint: its nodes count.
  const CommandResult fits =
      check(runtimeSnapshot(false), withRuntimeClass(gpuDeployment(8)), anyNode);
  EXPECT_EQ(fits.exitCode, 0) << fits.out << fits.err;
  EXPECT_FALSE(mentions(fits, "AIA016")) << fits.out;

  // More than any node has is still more than any node has.
  const CommandResult tooMany =
      check(runtimeSnapshot(false), withRuntimeClass(gpuDeployment(16)), anyNode);
  EXPECT_EQ(tooMany.exitCode, 1) << tooMany.out << tooMany.err;
  EXPECT_TRUE(mentions(tooMany, "the largest of the 4 nodes it may land on has 8")) << tooMany.out;
}

// --- DRA: devices of a driver, and KEP-5004 init containers.

const char* kExampleDeviceClass = R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu.example.com
spec:
  selectors:
  - cel:
      expression: "device.driver == 'gpu.example.com'"
)";

// dra-example-driver's recorded slice of 8 GPUs, its class, and its node.
std::string draSnapshot() {
  return readFile(sourceDir() + "/tests/golden/cluster/resourceslices-dra-example-driver.yaml") +
         "\n---\n" + kExampleDeviceClass + "---\n" +
         list({poolNode("dra-example-driver-cluster-worker", 0)});
}

// A batch Job whose containers are `containers` (YAML items of the PodSpec,
// initContainers included).
std::string allowingKep5004(std::string text) {
  const std::string list = "    allowedResources:\n";
  const size_t at = text.find(list);
  if (at == std::string::npos) return text;  // training: no DRA Job lands there
  return text.insert(at + list.size(),
                     "      - deviceclass.resource.kubernetes.io/gpu.example.com\n");
}

CommandResult checkDra(const std::string& snapshot, const std::string& input) {
  return check(snapshot, input, allowingKep5004);
}

std::string draJob(const std::string& podSpec) {
  return R"(apiVersion: batch/v1
kind: Job
metadata:
  name: dra-job
  annotations:
    aiadmit.dev/workload: batch
spec:
  template:
    spec:
      restartPolicy: Never
)" + podSpec;
}

std::string kep5004(const std::string& name, int devices, const std::string& restartPolicy = "") {
  return "      - name: " + name + "\n        image: busybox\n" +
         (restartPolicy.empty() ? "" : "        restartPolicy: " + restartPolicy + "\n") +
         "        resources:\n          limits:\n            deviceclass.resource.kubernetes.io/"
         "gpu.example.com: " +
         std::to_string(devices) + "\n";
}

TEST(ClusterCapacity, InitContainersReuseTheDevicesOfTheContainers) {
  // 8 for the init container, then 8 for the trainer: the scheduler needs 8.
  const CommandResult run =
      checkDra(draSnapshot(), draJob("      initContainers:\n" + kep5004("fetch", 8) +
                                     "      containers:\n" + kep5004("trainer", 8)));
  EXPECT_EQ(run.exitCode, 0) << run.out << run.err;
  EXPECT_FALSE(mentions(run, "AIA016")) << run.out;
}

TEST(ClusterCapacity, SidecarsAddToTheContainersDevices) {
  // A sidecar runs beside the trainer: 1 + 8 on a node of 8.
  const CommandResult run =
      checkDra(draSnapshot(), draJob("      initContainers:\n" + kep5004("proxy", 1, "Always") +
                                     "      containers:\n" + kep5004("trainer", 8)));
  EXPECT_EQ(run.exitCode, 1) << run.out << run.err;
  EXPECT_TRUE(mentions(run,
                       "[AIA016] spec.template.spec.initContainers[0].resources.limits: "
                       "the Pod asks for 9 devices of class \"gpu.example.com\" on one node, "
                       "but the largest of the 1 nodes it may land on has 8"))
      << run.out;

  // An init container after the sidecar runs beside it: 1 + 8 again.
  const CommandResult after = check(
      draSnapshot(), draJob("      initContainers:\n" + kep5004("proxy", 1, "Always") +
                            kep5004("fetch", 8) + "      containers:\n" + kep5004("trainer", 1)));
  EXPECT_EQ(after.exitCode, 1) << after.out << after.err;
  EXPECT_TRUE(mentions(after, "asks for 9 devices of class \"gpu.example.com\"")) << after.out;
}

TEST(ClusterCapacity, ADriverWithNoSlicesIsNotJudged) {
  // ResourceSlices are listed (a NIC driver's), DeviceClasses too, and none
  // of the GPU driver's: it is being upgraded, or has not registered yet.
  const std::string nicSlice = R"(apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: worker-nic
spec:
  driver: nic.example.com
  nodeName: dra-example-driver-cluster-worker
  pool:
    generation: 0
    name: worker
    resourceSliceCount: 1
  devices:
  - name: nic-0
)";
  const std::string snapshot = std::string(kExampleDeviceClass) + "---\n" + nicSlice + "---\n" +
                               list({poolNode("dra-example-driver-cluster-worker", 0)});
  const CommandResult run =
      checkDra(snapshot, draJob("      containers:\n" + kep5004("trainer", 2)));
  EXPECT_EQ(run.exitCode, 0) << run.out << run.err;
  EXPECT_FALSE(mentions(run, "AIA016")) << run.out;
}

// Every device tainted by its driver and by a DeviceTaintRule: a taint
// passes (maintenance, a device being checked), so AIA016 counts the
// devices as it counts them untainted and never refuses for a taint.
TEST(ClusterCapacity, TaintedDevicesStillCount) {
  std::string snapshot = draSnapshot();
  for (int i = 0; i < 8; ++i) {
    snapshot = replacedOnce(snapshot, "\n      name: gpu-" + std::to_string(i) + "\n",
                            "\n      name: gpu-" + std::to_string(i) +
                                "\n      taints: [{key: gpu.example.com/unhealthy, effect: "
                                "NoExecute}]\n");
  }
  snapshot += R"(---
apiVersion: resource.k8s.io/v1
kind: DeviceTaintRule
metadata:
  name: drain-worker
spec:
  deviceSelector: {driver: gpu.example.com}
  taint: {key: example.com/maintenance, value: firmware, effect: NoSchedule}
)";
  const CommandResult fits = checkDra(snapshot, draJob("      containers:\n" + kep5004("t", 8)));
  EXPECT_EQ(fits.exitCode, 0) << fits.out << fits.err;
  EXPECT_FALSE(mentions(fits, "AIA016")) << fits.out;
  const CommandResult tainted = checkDra(snapshot, draJob("      containers:\n" + kep5004("t", 9)));
  const CommandResult untainted =
      checkDra(draSnapshot(), draJob("      containers:\n" + kep5004("t", 9)));
  EXPECT_EQ(tainted.exitCode, 1) << tainted.out << tainted.err;
  const std::string refusal =
      "[AIA016] spec.template.spec.containers[0].resources.limits: the Pod asks for 9 devices of "
      "class \"gpu.example.com\" on one node, but the largest of the 1 nodes it may land on has 8";
  EXPECT_TRUE(mentions(tainted, refusal)) << tainted.out;
  EXPECT_TRUE(mentions(untainted, refusal)) << "the same answer, tainted or not";
}

}  // namespace
}  // namespace aiadmit
