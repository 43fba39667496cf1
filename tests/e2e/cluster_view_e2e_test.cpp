// aiadmit's live view of the cluster, kept by list and watch with its own
// ServiceAccount: decisions follow the cluster within seconds. Serial: it
// reshapes the GPU nodes and deletes a PriorityClass that other tests use.
#include <gtest/gtest.h>

#include "tests/e2e/support/e2e_cluster.h"

namespace aiadmit::e2e {
namespace {

// A Job whose Pods name a priority class: the API server's own Priority
// admission refuses a Pod naming a missing class, but accepts the Job, whose
// Pods then fail one by one until the class exists; AIA017 warns of it at
// `kubectl apply` (a controller's object: the class may be on its way).
constexpr const char* kPriorityJob = R"({
  "apiVersion": "batch/v1", "kind": "Job",
  "metadata": {"name": "named-priority", "annotations": {"aiadmit.dev/workload": "batch"}},
  "spec": {"template": {"spec": {"restartPolicy": "Never", "priorityClassName": "ai-batch",
           "containers": [{"name": "main", "image": "registry.example/train:1",
                           "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}})";

// A batch Pod that needs a whole 8-GPU node and names its priority class.
constexpr const char* kEightGpus = R"({
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": "eight-gpus", "annotations": {"aiadmit.dev/workload": "batch"}},
  "spec": {"restartPolicy": "Never", "priorityClassName": "ai-batch",
           "containers": [{"name": "main", "image": "registry.example/train:1",
                           "resources": {"limits": {"nvidia.com/gpu": "8"}}}]}})";

// The suite's nodes as E2eSetup made them, again, whatever the test did.
struct SmallGpuClusterRestoredAtExit {
  ~SmallGpuClusterRestoredAtExit() {
    kubectl({"delete", "node", "gpu-node-big", "--ignore-not-found"});
    for (const NodeShape& node : smallGpuCluster()) EXPECT_TRUE(applyNode(node)) << node.name;
  }
};

// The answer to a server-side dry run of `object`: "" when admitted, else
// what kubectl printed.
std::string answer(const Namespace& ns, const char* object = kEightGpus) {
  const CommandResult created =
      kubectl({"create", "--dry-run=server", "-n", ns.name(), "-f", "-"}, object);
  return created.exitCode == 0 ? std::string() : created.err + " ";
}

bool refusedBy(const Namespace& ns, const std::string& rule, std::string& last,
               const char* object = kEightGpus) {
  last = answer(ns, object);
  return last.find("[" + rule + "]") != std::string::npos;
}

TEST(E2eClusterViewSerial, AnEightGpuPodIsRefusedOnFourGpuNodesAndAdmittedOnceAnEightGpuNodeJoins) {
  Namespace ns("view");
  SmallGpuClusterRestoredAtExit restore;
  std::string last;
  ASSERT_EQ(answer(ns), "") << "admitted on the 8-GPU nodes";

  for (int i = 1; i <= kGpuNodes; ++i) {
    ASSERT_TRUE(applyNode(gpuNode("gpu-node-" + std::to_string(i), 4)));
  }
  ASSERT_TRUE(waitUntil([&] { return refusedBy(ns, "AIA016", last); }, std::chrono::seconds(10)))
      << last;
  EXPECT_NE(last.find("admission webhook \"applied.validate.aiadmit.dev\" denied the request"),
            std::string::npos)
      << last;

  ASSERT_TRUE(applyNode(gpuNode("gpu-node-big", 8)));
  const auto joined = std::chrono::steady_clock::now();
  ASSERT_TRUE(waitUntil([&] { return (last = answer(ns)).empty(); }, std::chrono::seconds(10)))
      << "still refused 10 s after an 8-GPU node joined: " << last;
  const auto seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - joined).count();
  RecordProperty("admitted_after_node_joined_seconds", std::to_string(seconds));
  EXPECT_LT(seconds, 5.0);
}

TEST(E2eClusterViewSerial, APoolScaledToZeroRefusesNothingItCouldGrowFor) {
  Namespace ns("zero");
  SmallGpuClusterRestoredAtExit restore;
  std::string last;
  for (int i = 1; i <= kGpuNodes; ++i) {
    ASSERT_TRUE(applyNode(gpuNode("gpu-node-" + std::to_string(i), 4)));
  }
  ASSERT_TRUE(waitUntil([&] { return refusedBy(ns, "AIA016", last); }, std::chrono::seconds(10)))
      << last;
  // The autoscaler took every GPU node away: only CPU nodes are left, and
  // the pool may grow again with nodes of any size.
  for (int i = 1; i <= kGpuNodes; ++i) {
    ASSERT_EQ(kubectl({"delete", "node", "gpu-node-" + std::to_string(i)}).exitCode, 0);
  }
  EXPECT_TRUE(waitUntil([&] { return (last = answer(ns)).empty(); }, std::chrono::seconds(10)))
      << "refused with no GPU node left: " << last;
}

TEST(E2eClusterViewSerial, DeletingThePriorityClassAJobNamesWarnsOfItUntilItIsBack) {
  Namespace ns("priority");
  const auto dryRun = [&](const char* object) {
    return kubectl({"create", "--dry-run=server", "-n", ns.name(), "-f", "-"}, object);
  };
  ASSERT_EQ(dryRun(kPriorityJob).exitCode, 0);
  json priorityClass = kubectlJson({"get", "priorityclass", "ai-batch"});
  ASSERT_TRUE(priorityClass.is_object());
  priorityClass = withoutServerFields(priorityClass);
  struct Recreate {
    json object;
    ~Recreate() { kubectl({"apply", "-f", "-"}, toText(object)); }
  } recreate{priorityClass};

  ASSERT_EQ(kubectl({"delete", "priorityclass", "ai-batch"}).exitCode, 0);
  CommandResult last;
  ASSERT_TRUE(waitUntil(
      [&] {
        last = dryRun(kPriorityJob);
        return last.err.find("Warning: aiadmit: [AIA017]") != std::string::npos;
      },
      std::chrono::seconds(10)))
      << last.err;
  EXPECT_EQ(last.exitCode, 0) << "a Job is never refused for it: " << last.err;
  EXPECT_NE(last.err.find("PriorityClass \"ai-batch\" does not exist"), std::string::npos)
      << last.err;
  // A bare Pod naming it is refused, by the API server's Priority admission
  // before any webhook.
  const CommandResult pod = dryRun(kEightGpus);
  EXPECT_NE(pod.exitCode, 0);
  EXPECT_NE(pod.err.find("no PriorityClass with name ai-batch was found"), std::string::npos)
      << pod.err;

  ASSERT_EQ(kubectl({"apply", "-f", "-"}, toText(priorityClass)).exitCode, 0);
  EXPECT_TRUE(waitUntil(
      [&] {
        last = dryRun(kPriorityJob);
        return last.exitCode == 0 && last.err.find("[AIA017]") == std::string::npos;
      },
      std::chrono::seconds(10)))
      << last.err;
}

}  // namespace
}  // namespace aiadmit::e2e
