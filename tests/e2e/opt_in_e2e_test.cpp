// Opting a namespace in changes nothing that runs: a GPU Deployment made
// before the label gets new Pods (a scale, a Pod deleted) exactly as its
// template says, through aiadmit's webhooks and unpatched; the Deployment is
// judged, and its Pods placed, when it is next applied.
#include <gtest/gtest.h>

#include "tests/e2e/support/e2e_cluster.h"
#include "tests/e2e/support/workloads.h"

namespace aiadmit::e2e {
namespace {

// A server that tolerates the seed pool's taint on its own and says nothing
// to aiadmit: it runs on a GPU node with no node selector.
std::string server(const std::string& image, int replicas) {
  json deployment = json::parse(R"({
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "embedder"},
    "spec": {"selector": {"matchLabels": {"app": "embedder"}},
             "template": {"metadata": {"labels": {"app": "embedder"}},
                          "spec": {"tolerations": [{"key": "accelerator", "operator": "Exists",
                                                    "effect": "NoSchedule"}],
                                   "containers": [{"name": "embedder",
                                                   "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}})");
  deployment["spec"]["replicas"] = replicas;
  deployment["spec"]["template"]["spec"]["containers"][0]["image"] = image;
  return deployment.dump();
}

// Whether aiadmit answers for the namespace now: a dry-run GPU Pod comes
// back stamped (the API server sees the label a moment after it is set).
bool aiadmitCalledIn(const Namespace& ns) {
  const std::string pod = R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "probe"},
    "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "registry.example/cuda:12",
                             "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}})";
  const CommandResult created = kubectl({"create", "--dry-run=server", "-n", ns.name(), "-o",
                                         "jsonpath={.metadata.annotations}", "-f", "-"},
                                        pod);
  return created.out.find("aiadmit.dev/class") != std::string::npos;
}

TEST(E2eOptIn, PodsOfADeploymentMadeBeforeTheLabelAreAdmittedUnchangedUntilItIsApplied) {
  Namespace ns("opt-in", /*optedIn=*/false);
  ASSERT_EQ(
      kubectl({"apply", "-n", ns.name(), "-f", "-"}, server("registry.example/emb:1", 1)).exitCode,
      0);
  ASSERT_TRUE(podsBound(ns.name(), 1));
  const json before = podsOf(ns.name()).at(0);

  ASSERT_EQ(kubectl({"label", "namespace", ns.name(), "aiadmit.dev/enabled=true"}).exitCode, 0);
  ASSERT_TRUE(waitUntil([&] { return aiadmitCalledIn(ns); }, std::chrono::seconds(30)));

  // A scale and a Pod deleted: the ReplicaSet makes three Pods after the label.
  ASSERT_EQ(kubectl({"scale", "deployment/embedder", "--replicas=3", "-n", ns.name()}).exitCode, 0);
  ASSERT_TRUE(podsBound(ns.name(), 3));
  ASSERT_EQ(kubectl({"delete", "pod", before["metadata"]["name"], "-n", ns.name(),
                     "--grace-period=0", "--force"})
                .exitCode,
            0);
  ASSERT_TRUE(podsBound(ns.name(), 3));
  for (const json& pod : podsOf(ns.name())) {
    const std::string name = pod["metadata"]["name"];
    EXPECT_EQ(pod["spec"]["tolerations"], before["spec"]["tolerations"]) << name;
    EXPECT_FALSE(pod["spec"].contains("nodeSelector")) << name;
    EXPECT_FALSE(pod["spec"].contains("priorityClassName")) << name;
    EXPECT_FALSE(pod["metadata"].value("annotations", json::object()).contains("aiadmit.dev/class"))
        << name;
    EXPECT_TRUE(isGpuNode(pod["spec"]["nodeName"])) << name;
  }
  // They went through aiadmit, which let them be.
  const AllowedRequests creates =
      expectAllowed("pods", ns.name(), controllerUser("replicaset-controller"), {"create"});
  EXPECT_GE(creates.reachedAiadmit, 3u);

  // Applied again, with a new image: now the Deployment is judged, and the
  // Pods of its new ReplicaSet carry the pool's placement and the stamp (no
  // kubelet makes a Pod Ready here, so the rollout stops at its first surge
  // Pod).
  const CommandResult reapplied =
      kubectl({"apply", "-n", ns.name(), "-f", "-"}, server("registry.example/emb:2", 3));
  ASSERT_EQ(reapplied.exitCode, 0) << reapplied.err;
  EXPECT_NE(reapplied.err.find("Warning: aiadmit: added node selector accelerator=nvidia"),
            std::string::npos)
      << reapplied.err;
  ASSERT_TRUE(waitUntil(
      [&] {
        const std::vector<json> pods = podsOf(ns.name());
        for (const json& pod : pods) {
          if (pod["spec"].value("nodeSelector", json::object()).value("accelerator", "") ==
                  "nvidia" &&
              !pod["spec"].value("nodeName", "").empty() &&
              pod["metadata"]["annotations"].value("aiadmit.dev/class", "") == "realtime") {
            return true;
          }
        }
        return false;
      },
      std::chrono::seconds(90)))
      << kubectl({"get", "pods,events", "-n", ns.name(), "-o", "wide"}).out;
}

}  // namespace
}  // namespace aiadmit::e2e
