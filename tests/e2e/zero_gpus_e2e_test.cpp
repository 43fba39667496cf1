// A GPU count of 0 is a container without GPUs, as Helm charts switch a GPU
// off: the Job of a chart's CPU-only run and a workflow's JobSet step are
// admitted, and their controllers' Pods are created and bound to CPU nodes,
// as they would be without aiadmit. Beside them, the same Job aimed at the
// GPU pool is refused (AIA007), as is any Pod there that asks for no GPU.
#include <gtest/gtest.h>

#include "tests/e2e/support/e2e_cluster.h"
#include "tests/e2e/support/workloads.h"

namespace aiadmit::e2e {
namespace {

constexpr const char* kZeroGpuLimits = R"({"limits": {"nvidia.com/gpu": "0", "memory": "1Gi"}})";

// A chart's Job with its GPU switched off (`gpu: 0` in its values): its
// container's `resources`, and `podSpecExtra` (JSON members, each followed by
// a comma) in its Pods' spec.
std::string cpuOnlyJob(const std::string& resources = kZeroGpuLimits,
                       const std::string& podSpecExtra = "") {
  return R"({
  "apiVersion": "batch/v1", "kind": "Job",
  "metadata": {"name": "evaluate"},
  "spec": {"parallelism": 2, "completions": 2,
           "template": {"spec": {)" +
         podSpecExtra + R"("restartPolicy": "Never",
             "containers": [{"name": "evaluate", "image": "registry.example/evaluate:1",
                             "resources": )" +
         resources + "}]}}}}";
}

// A workflow engine's step as a JobSet whose author declared it batch work
// and whose GPUs a parameter set to 0, asked as a request alone: the API
// server refuses that of any extended resource in a Job or Pod ("Limit must
// be set for non overcommitable resources"), though it stores the JobSet, and
// aiadmit adds the limit of 0 it requires.
constexpr const char* kWorkflowStep = R"({
  "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
  "metadata": {"name": "step", "annotations": {"aiadmit.dev/workload": "batch"}},
  "spec": {"replicatedJobs": [{"name": "shards", "replicas": 2,
    "template": {"spec": {"parallelism": 1, "completions": 1, "backoffLimit": 0,
      "template": {"spec": {"restartPolicy": "Never",
        "containers": [{"name": "shard", "image": "registry.example/shard:1",
          "resources": {"requests": {"nvidia.com/gpu": "0", "memory": "1Gi"},
                        "limits": {"memory": "1Gi"}}}]}}}}}]}})";

// What the Pods of the namespace show: created, bound to CPU nodes, asking
// for 0 GPUs, without the pool's toleration or selector.
void expectCpuPodsWithZeroGpus(const Namespace& ns) {
  for (const json& pod : podsOf(ns.name())) {
    const std::string name = pod["metadata"]["name"];
    EXPECT_FALSE(isGpuNode(pod["spec"].value("nodeName", ""))) << name;
    const json& resources = pod["spec"]["containers"][0]["resources"];
    EXPECT_EQ(resources["limits"].value("nvidia.com/gpu", ""), "0") << name;
    EXPECT_EQ(resources["requests"].value("nvidia.com/gpu", ""), "0") << name;
    EXPECT_FALSE(pod["spec"].contains("nodeSelector")) << name;
    for (const json& toleration : pod["spec"].value("tolerations", json::array())) {
      EXPECT_NE(toleration.value("key", ""), "accelerator") << name;
    }
  }
}

TEST(E2eZeroGpus, AChartsCpuOnlyJobIsAdmittedAndItsPodsCreated) {
  Namespace ns("zero-job");
  const CommandResult applied = kubectl({"apply", "-n", ns.name(), "-f", "-"}, cpuOnlyJob());
  ASSERT_EQ(applied.exitCode, 0) << applied.err;
  EXPECT_NE(applied.out.find("job.batch/evaluate created"), std::string::npos) << applied.out;
  EXPECT_TRUE(aiadmitWarnings(applied.err).empty()) << applied.err;

  ASSERT_TRUE(podsBound(ns.name(), 2)) << kubectl({"get", "pods,events", "-n", ns.name()}).out;
  EXPECT_EQ(expectUnpatchedCreates("pods", ns.name(), controllerUser("job-controller")), 2u);
  expectCpuPodsWithZeroGpus(ns);
  const json job = stored("job", ns.name(), "evaluate");
  ASSERT_TRUE(job.is_object());
  EXPECT_FALSE(job["metadata"].value("annotations", json::object()).contains("aiadmit.dev/class"))
      << "a Job that asks for no GPU is no AI workload";
}

TEST(E2eZeroGpus, AWorkflowsStepOfZeroGpusIsCreatedWithoutGpus) {
  Namespace plain("zero-plain", false);
  const CommandResult refused = kubectl({"apply", "-n", plain.name(), "-f", "-"},
                                        cpuOnlyJob(R"({"requests": {"nvidia.com/gpu": "0"}})"));
  EXPECT_NE(refused.exitCode, 0) << "the API server stored a request without its limit";
  EXPECT_NE(refused.err.find("Limit must be set for non overcommitable resources"),
            std::string::npos)
      << refused.err;

  Namespace ns("zero-jobset");
  const CommandResult applied = kubectl({"apply", "-n", ns.name(), "-f", "-"}, kWorkflowStep);
  ASSERT_EQ(applied.exitCode, 0) << applied.err;
  EXPECT_NE(applied.err.find("Warning: aiadmit: added limit nvidia.com/gpu=0 to container shard"),
            std::string::npos)
      << applied.err;
  for (const std::string& warning : aiadmitWarnings(applied.err)) {
    EXPECT_EQ(warning.find("toleration"), std::string::npos) << warning;
    EXPECT_EQ(warning.find("[AIA"), std::string::npos) << warning;
  }

  ASSERT_TRUE(podsBound(ns.name(), 2)) << kubectl({"get", "jobs,pods,events", "-n", ns.name()}).out;
  EXPECT_EQ(expectUnpatchedCreates("jobs", ns.name(), kJobSetUser), 2u);
  EXPECT_EQ(expectUnpatchedCreates("pods", ns.name(), controllerUser("job-controller")), 2u);
  expectCpuPodsWithZeroGpus(ns);
}

// The near case: the same Job aimed at the GPU pool by a node selector asks
// for no GPU there, and AIA007 refuses it as any such Pod.
TEST(E2eZeroGpus, TheSameJobAimedAtTheGpuPoolIsRefused) {
  Namespace ns("zero-pool");
  const CommandResult refused =
      kubectl({"apply", "-n", ns.name(), "-f", "-"},
              cpuOnlyJob(kZeroGpuLimits, R"("nodeSelector": {"accelerator": "nvidia"}, )"));
  EXPECT_NE(refused.exitCode, 0) << refused.out;
  EXPECT_NE(refused.err.find("denied the request: [AIA007] spec.template.spec"), std::string::npos)
      << refused.err;
  EXPECT_TRUE(kubectlJson({"get", "jobs", "-n", ns.name()})["items"].empty());
}

// A Pod bound by spec.nodeName skips the scheduler and the pool's taint: on
// a GPU node of the pool without asking for a GPU, AIA007 refuses it from
// the live view's Nodes. Beside it what runs: the same Pod on a CPU node, and
// a node debugger sharing the GPU node's namespaces (`kubectl debug node/`).
std::string boundPod(const std::string& name, const std::string& node,
                     const std::string& specExtra = "") {
  return R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": ")" + name +
         R"("}, "spec": {"nodeName": ")" + node + R"(", )" + specExtra +
         R"("restartPolicy": "Never", "containers": [{"name": "tool", "image": "busybox"}]}})";
}

TEST(E2eZeroGpus, APodBoundByNameToAGpuNodeIsRefusedAndElsewhereAdmitted) {
  Namespace ns("bound-by-name");
  const CommandResult refused =
      kubectl({"apply", "-n", ns.name(), "-f", "-"}, boundPod("on-gpu", "gpu-node-1"));
  EXPECT_NE(refused.exitCode, 0) << refused.out;
  EXPECT_NE(refused.err.find("denied the request: [AIA007] spec.nodeName: spec.nodeName "
                             "\"gpu-node-1\" is a node of the GPU pool"),
            std::string::npos)
      << refused.err;

  const CommandResult onCpu =
      kubectl({"apply", "-n", ns.name(), "-f", "-"}, boundPod("on-cpu", "cpu-node-1"));
  EXPECT_EQ(onCpu.exitCode, 0) << onCpu.err;
  const CommandResult debugger =
      kubectl({"apply", "-n", ns.name(), "-f", "-"},
              boundPod("debugger", "gpu-node-1", R"("hostPID": true, )"));
  EXPECT_EQ(debugger.exitCode, 0) << debugger.err;
  // A second apply of what was admitted is no new refusal.
  EXPECT_EQ(
      kubectl({"apply", "-n", ns.name(), "-f", "-"}, boundPod("on-cpu", "cpu-node-1")).exitCode, 0);
  const json pods = kubectlJson({"get", "pods", "-n", ns.name()});
  EXPECT_EQ(pods["items"].size(), 2u) << pods.dump();
}

}  // namespace
}  // namespace aiadmit::e2e
