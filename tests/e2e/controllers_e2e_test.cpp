// The controller manager's own work on workloads aiadmit mutated: the Pods a
// ReplicaSet or a Job creates pass both webhooks with an empty patch (the
// template already has everything) and the scheduler binds them to GPU
// nodes; scaling and applying the same file again roll nothing out.
#include <gtest/gtest.h>

#include "tests/e2e/support/e2e_cluster.h"
#include "tests/e2e/support/workloads.h"

namespace aiadmit::e2e {
namespace {

// Quantities as strings: the API server stores them so, and kubectl then
// finds nothing to change on a second apply.
constexpr const char* kRanker = R"({
  "apiVersion": "apps/v1", "kind": "Deployment",
  "metadata": {"name": "ranker"},
  "spec": {"replicas": 2,
           "selector": {"matchLabels": {"app": "ranker"}},
           "template": {"metadata": {"labels": {"app": "ranker"}},
                        "spec": {"containers": [{"name": "ranker", "image": "registry.example/ranker:1",
                                                 "ports": [{"containerPort": 8080}],
                                                 "resources": {"limits": {"nvidia.com/gpu": "1",
                                                                          "memory": "16Gi"}}}]}}}})";

constexpr const char* kEmbedJob = R"({
  "apiVersion": "batch/v1", "kind": "Job",
  "metadata": {"name": "embed", "annotations": {"aiadmit.dev/workload": "batch"}},
  "spec": {"parallelism": 2, "completions": 2,
           "template": {"spec": {"restartPolicy": "Never",
                                 "containers": [{"name": "embed", "image": "registry.example/embed:1",
                                                 "resources": {"limits": {"nvidia.com/gpu": "2"}}}]}}}})";

void expectOnGpuNodesWithTheTemplatesPlacement(const std::vector<json>& pods,
                                               const std::string& workloadClass) {
  for (const json& pod : pods) {
    const std::string name = pod["metadata"]["name"];
    EXPECT_TRUE(isGpuNode(pod["spec"]["nodeName"])) << name << " on " << pod["spec"]["nodeName"];
    EXPECT_EQ(pod["metadata"]["annotations"].value("aiadmit.dev/class", ""), workloadClass) << name;
    EXPECT_EQ(pod["spec"]["nodeSelector"].value("accelerator", ""), "nvidia") << name;
  }
}

size_t replicaSets(const Namespace& ns) {
  const json sets = kubectlJson({"get", "replicasets", "-n", ns.name()});
  return sets.is_object() ? sets["items"].size() : 0;
}

TEST(E2eControllers, DeploymentPodsPassUnpatchedLandOnGpuNodesAndScaleRollsNothingOut) {
  Namespace ns("deployment");
  const CommandResult applied = kubectl({"apply", "-n", ns.name(), "-f", "-"}, kRanker);
  ASSERT_EQ(applied.exitCode, 0) << applied.err;
  EXPECT_NE(applied.err.find("Warning: aiadmit: added toleration accelerator=gpu:NoSchedule"),
            std::string::npos)
      << applied.err;

  ASSERT_TRUE(podsBound(ns.name(), 2)) << kubectl({"get", "events", "-n", ns.name()}).out;
  expectOnGpuNodesWithTheTemplatesPlacement(podsOf(ns.name()), "realtime");
  EXPECT_EQ(expectUnpatchedCreates("pods", ns.name(), controllerUser("replicaset-controller")), 2u);
  EXPECT_EQ(replicaSets(ns), 1u);

  const CommandResult again = kubectl({"apply", "-n", ns.name(), "-f", "-"}, kRanker);
  EXPECT_NE(again.out.find("deployment.apps/ranker unchanged"), std::string::npos) << again.out;
  const CommandResult scaled =
      kubectl({"scale", "deployment", "ranker", "-n", ns.name(), "--replicas=3"});
  ASSERT_EQ(scaled.exitCode, 0) << scaled.err;
  ASSERT_TRUE(podsBound(ns.name(), 3));
  expectOnGpuNodesWithTheTemplatesPlacement(podsOf(ns.name()), "realtime");
  EXPECT_EQ(expectUnpatchedCreates("pods", ns.name(), controllerUser("replicaset-controller")), 3u);
  EXPECT_EQ(replicaSets(ns), 1u) << "a scale or a second apply rolled the Deployment out";
  const json deployment = kubectlJson({"get", "deployment", "ranker", "-n", ns.name()});
  EXPECT_EQ(deployment["metadata"]["generation"], 2) << "only the scale changed the spec";
}

TEST(E2eControllers, JobPodsPassUnpatchedAndLandOnGpuNodes) {
  Namespace ns("job");
  const CommandResult applied = kubectl({"apply", "-n", ns.name(), "-f", "-"}, kEmbedJob);
  ASSERT_EQ(applied.exitCode, 0) << applied.err;

  ASSERT_TRUE(podsBound(ns.name(), 2)) << kubectl({"get", "events", "-n", ns.name()}).out;
  expectOnGpuNodesWithTheTemplatesPlacement(podsOf(ns.name()), "batch");
  EXPECT_EQ(expectUnpatchedCreates("pods", ns.name(), controllerUser("job-controller")), 2u);
  const json job = kubectlJson({"get", "job", "embed", "-n", ns.name()});
  EXPECT_EQ(job["spec"]["backoffLimit"], 6) << "the batch profile's Job settings";
  EXPECT_EQ(job["spec"]["template"]["spec"]["priorityClassName"], "ai-batch");
  for (const json& pod : podsOf(ns.name())) {
    EXPECT_EQ(pod["spec"]["priorityClassName"], "ai-batch");
    EXPECT_EQ(pod["spec"]["priority"], 1000) << "the PriorityClass the install ships";
  }
}

}  // namespace
}  // namespace aiadmit::e2e
