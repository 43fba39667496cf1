// `aiadmit check --cluster FILE`: the rules on the cluster view decide with a
// snapshot as `kubectl get nodes,resourceslices,deviceclasses,priorityclasses,
// localqueues -A -o yaml` prints it, through the real binary. Each rule is
// shown to act on a snapshot that holds the answer and to stay silent on
// one that does not (the kind is then unknown, never "does not exist").
// AIA017-AIA019 warn on a controller's object and refuse a bare Pod.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/test_support.h"

namespace aiadmit {
namespace {

using namespace testing;

// A GPU node of the seed cluster's pool with `gpus` GPUs allocatable.
std::string gpuNode(const std::string& name, int gpus) {
  return "apiVersion: v1\nkind: Node\nmetadata:\n  name: " + name +
         "\n  labels:\n    accelerator: nvidia\nspec:\n  taints:\n  - key: accelerator\n"
         "    value: gpu\n    effect: NoSchedule\nstatus:\n  allocatable:\n    cpu: \"96\"\n"
         "    memory: 1Ti\n    nvidia.com/gpu: \"" +
         std::to_string(gpus) + "\"\n";
}

// A v1 List of items, as kubectl prints a snapshot.
std::string list(const std::vector<std::string>& items) {
  std::string text = "apiVersion: v1\nkind: List\nitems:\n";
  for (const std::string& item : items) {
    bool first = true;
    size_t start = 0;
    while (start < item.size()) {
      const size_t end = item.find('\n', start);
      const std::string line = item.substr(start, end - start);
      text += (first ? "- " : "  ") + line + "\n";
      first = false;
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  return text;
}

const char* kEightGpuJob = R"(apiVersion: batch/v1
kind: Job
metadata:
  name: train-8
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          limits:
            nvidia.com/gpu: 8
)";

// `aiadmit check --profiles <shipped> [--cluster snapshot] -o json input`.
CommandResult check(const TempDir& dir, const std::string& snapshot, const std::string& input,
                    std::vector<std::string> extra = {}) {
  writeFile(dir.file("input.yaml"), input);
  // dra-example-driver's class is one the profiles allow, beside NVIDIA's.
  const std::string profiles =
      profilesAllowingDeviceClasses(dir, {"gpu.nvidia.com", "mig.nvidia.com", "gpu.example.com"});
  std::vector<std::string> argv = {binaryPath(), "check", "--profiles", profiles};
  if (!snapshot.empty()) {
    writeFile(dir.file("cluster.yaml"), snapshot);
    argv.push_back("--cluster");
    argv.push_back(dir.file("cluster.yaml"));
  }
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back(dir.file("input.yaml"));
  return runCommand(argv);
}

TEST(CheckCluster, EightGpuJobIsRefusedOnASnapshotOfFourGpuNodes) {
  TempDir dir;
  const CommandResult run =
      check(dir, list({gpuNode("gpu-a", 4), gpuNode("gpu-b", 4)}), kEightGpuJob);
  EXPECT_EQ(run.exitCode, 1) << run.out << run.err;
  EXPECT_NE(run.out.find("[AIA016] spec.template.spec.containers[0].resources.limits: the Pod "
                         "asks for 8 \"nvidia.com/gpu\" on one node, but the largest of the 2 "
                         "nodes it may land on has 4 (node gpu-a)"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("ask for at most 4 per Pod"), std::string::npos) << run.out;
}

TEST(CheckCluster, EightGpuJobIsAdmittedOnASnapshotOfEightGpuNodes) {
  TempDir dir;
  const CommandResult run =
      check(dir, list({gpuNode("gpu-a", 4), gpuNode("gpu-b", 8)}), kEightGpuJob);
  EXPECT_EQ(run.exitCode, 0) << run.out << run.err;
  EXPECT_EQ(run.out.find("AIA016"), std::string::npos) << run.out;
}

TEST(CheckCluster, WithoutASnapshotTheProfileAloneDecides) {
  TempDir dir;
  // The shipped profiles say 8 GPUs per node: the same Job passes AIA006.
  const CommandResult run = check(dir, "", kEightGpuJob);
  EXPECT_EQ(run.exitCode, 0) << run.out << run.err;
}

TEST(CheckCluster, NodesTheJobCannotLandOnDoNotCount) {
  TempDir dir;
  // A 16-GPU node without the pool's label and taint is not one the Job
  // (placed on the pool by the profile) may use.
  std::string other = gpuNode("big-elsewhere", 16);
  other.replace(other.find("accelerator: nvidia"), 19, "accelerator: other");
  const CommandResult run = check(dir, list({gpuNode("gpu-a", 4), other}), kEightGpuJob);
  EXPECT_EQ(run.exitCode, 1) << run.out << run.err;
  EXPECT_NE(run.out.find("largest of the 1 nodes it may land on has 4"), std::string::npos)
      << run.out;
}

TEST(CheckCluster, APoolWithNoNodeIsNotJudged) {
  TempDir dir;
  std::string other = gpuNode("cpu-only", 0);
  other.replace(other.find("accelerator: nvidia"), 19, "accelerator: other");
  const CommandResult run = check(dir, list({other}), kEightGpuJob);
  EXPECT_EQ(run.exitCode, 0) << run.out << run.err;
}

// spec.nodeName skips the scheduler and the pool's taint: a Pod bound by name
// to a node of the GPU pool aims at it as surely as by a selector, and is
// refused when it asks for no GPU. Beside it what runs: the same Pod asking
// for a GPU, bound to a node outside the pool, bound to a node the snapshot
// lacks, checked without a snapshot, and a node debugger sharing the node's
// namespaces (`kubectl debug node/NAME`).
std::string boundPod(const std::string& node, const std::string& extra = "") {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: tool\nspec:\n  nodeName: " + node + "\n" +
         extra + "  containers:\n  - name: tool\n    image: busybox\n";
}

TEST(CheckCluster, APodBoundByNameToANodeOfTheGpuPoolWithoutAGpuIsRefused) {
  TempDir dir;
  std::string cpuNode = gpuNode("cpu-a", 0);
  cpuNode.replace(cpuNode.find("accelerator: nvidia"), 19, "accelerator: none");
  const std::string snapshot = list({gpuNode("gpu-a", 8), cpuNode});
  const CommandResult run = check(dir, snapshot, boundPod("gpu-a"));
  EXPECT_EQ(run.exitCode, 1) << run.out << run.err;
  EXPECT_NE(run.out.find("[AIA007] spec.nodeName: spec.nodeName \"gpu-a\" is a node of the GPU "
                         "pool but no container asks for a GPU"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("leave spec.nodeName out and let the scheduler place it"),
            std::string::npos)
      << run.out;

  TempDir outside;
  const CommandResult elsewhere = check(outside, snapshot, boundPod("cpu-a"));
  EXPECT_EQ(elsewhere.exitCode, 0) << elsewhere.out << elsewhere.err;
  TempDir unknown;
  const CommandResult absent = check(unknown, snapshot, boundPod("gpu-z"));
  EXPECT_EQ(absent.exitCode, 0) << absent.out << absent.err;
  TempDir none;
  const CommandResult noView = check(none, "", boundPod("gpu-a"));
  EXPECT_EQ(noView.exitCode, 0) << noView.out << noView.err;
  TempDir debugger;
  const CommandResult debug =
      check(debugger, snapshot, boundPod("gpu-a", "  hostPID: true\n  hostNetwork: true\n"));
  EXPECT_EQ(debug.exitCode, 0) << debug.out << debug.err;
  EXPECT_EQ(debug.out.find("AIA007"), std::string::npos) << debug.out;
}

TEST(CheckCluster, APodBoundByNameToANodeOfTheGpuPoolThatAsksForAGpuIsAdmitted) {
  TempDir dir;
  std::string pod = boundPod("gpu-a");
  pod += "    resources:\n      limits:\n        nvidia.com/gpu: 1\n";
  const CommandResult run = check(dir, list({gpuNode("gpu-a", 8)}), pod);
  EXPECT_EQ(run.exitCode, 0) << run.out << run.err;
  EXPECT_EQ(run.out.find("AIA007"), std::string::npos) << run.out;
}

// Another vendor's real name is never a misspelling: with or without the
// cluster view, the AMD Job is admitted, and no profile placing amd.com/gpu
// says what to add. A misspelling of the profile's name is one, unless the
// cluster view shows a node that offers it.
TEST(CheckCluster, AnAcceleratorSomeNodeOffersIsNoMisspelling) {
  TempDir dir;
  std::string amdNode = gpuNode("mi300-a", 0);
  amdNode.replace(amdNode.find("accelerator: nvidia"), 19, "accelerator: amd");
  amdNode.replace(amdNode.find("nvidia.com/gpu"), 14, "amd.com/gpu");
  amdNode.replace(amdNode.find("\"0\""), 3, "\"8\"");
  std::string amdJob = kEightGpuJob;
  amdJob.replace(amdJob.find("nvidia.com/gpu: 8"), 17, "amd.com/gpu: 1");
  const std::string snapshot = list({gpuNode("gpu-a", 8), amdNode});

  const CommandResult offered = check(dir, snapshot, amdJob);
  EXPECT_EQ(offered.exitCode, 0) << offered.out << offered.err;
  EXPECT_EQ(offered.out.find("AIA003"), std::string::npos) << offered.out;
  const CommandResult profileOnly = check(dir, "", amdJob);
  EXPECT_EQ(profileOnly.exitCode, 0) << profileOnly.out << profileOnly.err;
  EXPECT_EQ(profileOnly.out.find("[AIA003]"), std::string::npos) << profileOnly.out;
  EXPECT_NE(profileOnly.out.find("no batch profile places amd.com/gpu; add one with it as "
                                 "gpu.resourceName"),
            std::string::npos)
      << profileOnly.out;

  // A share NVIDIA's device plugin may be configured to name is no
  // misspelling: with the view, that no node offers it now is a warning.
  std::string renamed = kEightGpuJob;
  renamed.replace(renamed.find("nvidia.com/gpu: 8"), 17, "nvidia.com/sharedgpu: 1");
  const CommandResult unoffered = check(dir, snapshot, renamed);
  EXPECT_EQ(unoffered.exitCode, 0) << unoffered.out << unoffered.err;
  EXPECT_NE(unoffered.out.find("Warning: aiadmit: [AIA003]"), std::string::npos) << unoffered.out;
  EXPECT_NE(unoffered.out.find("no node offers \"nvidia.com/sharedgpu\" now"), std::string::npos)
      << unoffered.out;
  EXPECT_EQ(check(dir, "", renamed).out.find("AIA003"), std::string::npos)
      << "without the view nothing says no node offers it";

  std::string typo = kEightGpuJob;
  typo.replace(typo.find("nvidia.com/gpu: 8"), 17, "nvidia.com/gpus: 1");
  const CommandResult misspelt = check(dir, snapshot, typo);
  EXPECT_EQ(misspelt.exitCode, 1) << misspelt.out << misspelt.err;
  EXPECT_NE(misspelt.out.find("[AIA003]"), std::string::npos) << misspelt.out;
}

const char* kQueuedJob = R"(apiVersion: batch/v1
kind: Job
metadata:
  name: queued
  namespace: team-a
  labels:
    kueue.x-k8s.io/queue-name: gpu-queue
spec:
  template:
    spec:
      restartPolicy: Never
      priorityClassName: ai-batch
      containers:
      - name: main
        image: busybox
        resources:
          limits:
            nvidia.com/gpu: 1
)";

std::string priorityClass(const std::string& name, int value) {
  return "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: " + name +
         "\nvalue: " + std::to_string(value) + "\n";
}

std::string localQueue(const std::string& ns, const std::string& name) {
  return "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  name: " + name +
         "\n  namespace: " + ns + "\nspec:\n  clusterQueue: gpu-cq\n";
}

// kQueuedJob's Pod template as a bare Pod of the same namespace.
const char* kQueuedPod = R"(apiVersion: v1
kind: Pod
metadata:
  name: queued
  namespace: team-a
  labels:
    kueue.x-k8s.io/queue-name: gpu-queue
spec:
  restartPolicy: Never
  priorityClassName: ai-batch
  containers:
  - name: main
    image: busybox
    resources:
      limits:
        nvidia.com/gpu: 1
)";

TEST(CheckCluster, APriorityClassThatDoesNotExistWarnsOnAJobAndRefusesABarePod) {
  TempDir dir;
  const std::string snapshot = list({priorityClass("ai-training", 1000)});
  const CommandResult run = check(dir, snapshot, kQueuedJob);
  EXPECT_EQ(run.exitCode, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("Warning: aiadmit: [AIA017] priorityClassName: PriorityClass "
                         "\"ai-batch\" does not exist; create it or name one that exists"),
            std::string::npos)
      << run.out;
  // Listed LocalQueues are not: the queue label stays unjudged.
  EXPECT_EQ(run.out.find("AIA018"), std::string::npos) << run.out;

  TempDir pod;
  const CommandResult bare = check(pod, snapshot, kQueuedPod);
  EXPECT_EQ(bare.exitCode, 1) << bare.out << bare.err;
  EXPECT_NE(bare.out.find("[AIA017] spec.priorityClassName: PriorityClass \"ai-batch\" does not "
                          "exist in the cluster"),
            std::string::npos)
      << bare.out;

  TempDir again;
  const CommandResult fixed = check(again, list({priorityClass("ai-batch", 500)}), kQueuedPod);
  EXPECT_EQ(fixed.exitCode, 0) << fixed.out << fixed.err;
  EXPECT_EQ(fixed.out.find("AIA017"), std::string::npos) << fixed.out;
}

TEST(CheckCluster, APriorityClassTheSnapshotLacksIsNotInjected) {
  // The batch profile's ai-batch is not in the snapshot: the Job gets no
  // class, so nothing names a missing one and AIA017 has nothing to refuse.
  const std::string snapshot = list({priorityClass("ai-training", 10000)});
  const std::string warning =
      "Warning: aiadmit: no PriorityClass ai-batch, not set; see "
      "manifests/components/priority-classes (profile batch)";
  TempDir dir;
  const CommandResult run = check(dir, snapshot, kEightGpuJob);
  EXPECT_EQ(run.exitCode, 0) << run.out << run.err;
  EXPECT_NE(run.out.find(warning), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("set priorityClassName"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("AIA017"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("admitted, mutated"), std::string::npos) << run.out;

  const CommandResult yaml = check(dir, snapshot, kEightGpuJob, {"-o", "yaml"});
  ASSERT_EQ(yaml.exitCode, 0) << yaml.out << yaml.err;
  EXPECT_EQ(yaml.out.find("priorityClassName"), std::string::npos) << yaml.out;
  EXPECT_NE(yaml.err.find(warning), std::string::npos) << yaml.err;

  // What the webhook returned, sent again: no patch, and the same warning.
  TempDir again;
  const CommandResult second = check(again, snapshot, yaml.out);
  EXPECT_EQ(second.exitCode, 0) << second.out << second.err;
  EXPECT_NE(second.out.find("  admitted\n"), std::string::npos) << second.out;
  EXPECT_NE(second.out.find(warning), std::string::npos) << second.out;

  TempDir created;
  const CommandResult withClass =
      check(created, list({priorityClass("ai-batch", 1000)}), kEightGpuJob);
  EXPECT_EQ(withClass.exitCode, 0) << withClass.out << withClass.err;
  EXPECT_NE(withClass.out.find("set priorityClassName ai-batch"), std::string::npos)
      << withClass.out;
  EXPECT_EQ(withClass.out.find("no PriorityClass"), std::string::npos) << withClass.out;
}

TEST(CheckCluster, AQueueLabelNamingNoLocalQueueOfTheNamespaceWarnsOnAJobAndRefusesABarePod) {
  TempDir dir;
  // gpu-queue exists, but in another namespace.
  const std::string snapshot = list({localQueue("team-b", "gpu-queue")});
  const CommandResult run = check(dir, snapshot, kQueuedJob);
  EXPECT_EQ(run.exitCode, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("Warning: aiadmit: [AIA018] LocalQueue \"gpu-queue\" does not exist in "
                         "namespace team-a; name one that exists"),
            std::string::npos)
      << run.out;

  TempDir pod;
  const CommandResult bare = check(pod, snapshot, kQueuedPod);
  EXPECT_EQ(bare.exitCode, 1) << bare.out << bare.err;
  EXPECT_NE(bare.out.find("[AIA018] metadata.labels[kueue.x-k8s.io/queue-name]: LocalQueue "
                          "\"gpu-queue\" does not exist in namespace team-a"),
            std::string::npos)
      << bare.out;
  EXPECT_NE(bare.out.find("kubectl get localqueues -n team-a"), std::string::npos) << bare.out;

  TempDir again;
  const CommandResult fixed = check(again, list({localQueue("team-a", "gpu-queue")}), kQueuedJob);
  EXPECT_EQ(fixed.exitCode, 0) << fixed.out << fixed.err;
  EXPECT_EQ(fixed.out.find("AIA018"), std::string::npos) << fixed.out;
}

TEST(CheckCluster, NoKindOfTheSnapshotMeansNothingIsJudged) {
  TempDir dir;
  // Only Nodes: priority classes and queues are unknown, not absent.
  const CommandResult run = check(dir, list({gpuNode("gpu-a", 8)}), kQueuedJob);
  EXPECT_EQ(run.exitCode, 0) << run.out << run.err;
}

// A DRA Job of the shape of Kueue's DRA example (the corpus's
// gpu-job-admitted), declared batch, using a template of the same input.
std::string draJob(const std::string& templateName) {
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
      resourceClaims:
      - name: gpu
        resourceClaimTemplateName: )" +
         templateName + R"(
      containers:
      - name: main
        image: busybox
        resources:
          claims:
          - name: gpu
)";
}

std::string claimTemplate(const std::string& name, const std::string& deviceClass, int count) {
  return "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata:\n  name: " + name +
         "\n  namespace: default\nspec:\n  spec:\n    devices:\n      requests:\n      - name: "
         "gpu\n        exactly:\n"
         "          deviceClassName: " +
         deviceClass +
         "\n          allocationMode: ExactCount\n          count: " + std::to_string(count) + "\n";
}

const char* kExampleDeviceClass = R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu.example.com
spec:
  selectors:
  - cel:
      expression: "device.driver == 'gpu.example.com'"
)";

// The recorded node-local slice of 8 GPUs of dra-example-driver, its class,
// and the node it is on, in the GPU pool with one device-plugin GPU.
std::string draSnapshot() {
  std::string node = gpuNode("dra-example-driver-cluster-worker", 1);
  return readFile(sourceDir() + "/tests/golden/cluster/resourceslices-dra-example-driver.yaml") +
         "\n---\n" + kExampleDeviceClass + "---\n" + node;
}

TEST(CheckCluster, DraDevicesCountAgainstTheResourceSlicesOfTheNode) {
  TempDir dir;
  const CommandResult run = check(
      dir, draSnapshot(), claimTemplate("gpus", "gpu.example.com", 9) + "---\n" + draJob("gpus"));
  EXPECT_EQ(run.exitCode, 1) << run.out << run.err;
  EXPECT_NE(run.out.find("[AIA016] spec.template.spec.resourceClaims[0]: the Pod asks for 9 "
                         "devices of class \"gpu.example.com\" on one node, but the largest of "
                         "the 1 nodes it may land on has 8"),
            std::string::npos)
      << run.out;

  TempDir again;
  const CommandResult fits = check(
      again, draSnapshot(), claimTemplate("gpus", "gpu.example.com", 8) + "---\n" + draJob("gpus"));
  EXPECT_EQ(fits.exitCode, 0) << fits.out << fits.err;
}

TEST(CheckCluster, AClaimTemplateOrDeviceClassThatDoesNotExistWarnsOnAJob) {
  TempDir dir;
  // The snapshot lists ResourceClaimTemplates (it holds one): "gpus" of the
  // input exists, "gpu-claim" does not.
  const std::string snapshot =
      draSnapshot() + "---\n" + claimTemplate("other", "gpu.example.com", 1);
  const CommandResult run = check(dir, snapshot, draJob("gpu-claim"));
  EXPECT_EQ(run.exitCode, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("Warning: aiadmit: [AIA019] ResourceClaimTemplate \"gpu-claim\" does not "
                         "exist in default; create it or name one that exists"),
            std::string::npos)
      << run.out;

  TempDir typo;
  const CommandResult misnamed = check(
      typo, draSnapshot(), claimTemplate("gpus", "gpu.example.co", 1) + "---\n" + draJob("gpus"));
  EXPECT_EQ(misnamed.exitCode, 0) << misnamed.out << misnamed.err;
  EXPECT_NE(misnamed.out.find("Warning: aiadmit: [AIA019] DeviceClass \"gpu.example.co\" does not "
                              "exist; name one that exists"),
            std::string::npos)
      << misnamed.out;

  TempDir unknown;
  // Without DeviceClasses or templates in the snapshot nothing is judged.
  const CommandResult silent = check(unknown, list({gpuNode("gpu-a", 8)}), draJob("gpu-claim"));
  EXPECT_EQ(silent.exitCode, 0) << silent.out << silent.err;
  EXPECT_EQ(silent.out.find("AIA019"), std::string::npos) << silent.out;
}

TEST(CheckCluster, AnUnusableSnapshotIsNamedByFileAndLine) {
  TempDir dir;
  const CommandResult run = check(
      dir, "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n", kEightGpuJob);
  EXPECT_EQ(run.exitCode, 2) << run.out << run.err;
  EXPECT_NE(run.err.find("cluster.yaml:"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("metadata.name"), std::string::npos) << run.err;

  const CommandResult missing = runCommand(
      {binaryPath(), "check", "--cluster", dir.file("absent.yaml"), dir.file("input.yaml")});
  EXPECT_EQ(missing.exitCode, 2) << missing.out << missing.err;
  EXPECT_NE(missing.err.find("absent.yaml"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace aiadmit
