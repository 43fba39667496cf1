// aiadmit's live view of the cluster, kept by list and watch with its own
// ServiceAccount: decisions follow the cluster within seconds. Serial: it
// reshapes the GPU nodes and deletes a PriorityClass that other tests use.
#include <gtest/gtest.h>

#include "tests/e2e/support/e2e_cluster.h"

namespace aiadmit::e2e {
namespace {

// A Job whose Pods name a priority class: the API server's own Priority
// admission refuses a Pod naming a missing class, but accepts the Job, whose
// Pods then fail one by one; AIA017 refuses the Job instead.
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

TEST(E2eClusterViewSerial, DeletingThePriorityClassAJobNamesRefusesItUntilItIsBack) {
  Namespace ns("priority");
  std::string last;
  ASSERT_EQ(answer(ns, kPriorityJob), "");
  json priorityClass = kubectlJson({"get", "priorityclass", "ai-batch"});
  ASSERT_TRUE(priorityClass.is_object());
  priorityClass = withoutServerFields(priorityClass);
  struct Recreate {
    json object;
    ~Recreate() { kubectl({"apply", "-f", "-"}, toText(object)); }
  } recreate{priorityClass};

  ASSERT_EQ(kubectl({"delete", "priorityclass", "ai-batch"}).exitCode, 0);
  ASSERT_TRUE(waitUntil([&] { return refusedBy(ns, "AIA017", last, kPriorityJob); },
                        std::chrono::seconds(10)))
      << last;
  EXPECT_NE(last.find("PriorityClass \"ai-batch\" does not exist"), std::string::npos) << last;

  ASSERT_EQ(kubectl({"apply", "-f", "-"}, toText(priorityClass)).exitCode, 0);
  EXPECT_TRUE(waitUntil([&] { return (last = answer(ns, kPriorityJob)).empty(); },
                        std::chrono::seconds(10)))
      << last;
}

}  // namespace
}  // namespace aiadmit::e2e
