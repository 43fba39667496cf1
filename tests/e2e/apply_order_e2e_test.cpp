// Apply order: one `kubectl apply -f` of a file that holds a workload and
// what it names creates them one after the other, in the file's order, and
// aiadmit's view of the cluster is a watch a moment behind the API. Kubernetes
// accepts a workload that names what does not exist yet and converges; so
// does aiadmit (docs/rules.md, "Rules on the cluster view"): a controller's
// object is warned, never refused, and a bare Pod is refused only when the
// API, asked directly, does not have what the view lacks.
#include <gtest/gtest.h>

#include "tests/e2e/support/e2e_cluster.h"

namespace aiadmit::e2e {
namespace {

json list(json items) {
  return {{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}};
}

json localQueue(const std::string& name) {
  return {{"apiVersion", "kueue.x-k8s.io/v1beta1"},
          {"kind", "LocalQueue"},
          {"metadata", {{"name", name}}},
          {"spec", {{"clusterQueue", "gpus"}}}};
}

// A batch GPU Job in Kueue queue `queue`.
json queuedJob(const std::string& name, const std::string& queue) {
  const json container = {{"name", "main"},
                          {"image", "registry.example/train:1"},
                          {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}};
  const json podSpec = {{"restartPolicy", "Never"}, {"containers", json::array({container})}};
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata", {{"name", name}, {"labels", {{"kueue.x-k8s.io/queue-name", queue}}}}},
          {"spec", {{"suspend", true}, {"template", {{"spec", podSpec}}}}}};
}

TEST(E2eApplyOrder, AJobBeforeItsLocalQueueInOneFileIsStoredWithAWarning) {
  Namespace ns("order-queue");
  const CommandResult applied =
      kubectl({"apply", "-n", ns.name(), "-f", "-"},
              toText(list({queuedJob("queued", "late-queue"), localQueue("late-queue")})));
  ASSERT_EQ(applied.exitCode, 0) << applied.err;
  EXPECT_NE(applied.err.find("Warning: aiadmit: [AIA018]"), std::string::npos) << applied.err;
  EXPECT_NE(applied.out.find("job.batch/queued created"), std::string::npos) << applied.out;
  EXPECT_NE(applied.out.find("localqueue.kueue.x-k8s.io/late-queue created"), std::string::npos)
      << applied.out;
  // Applied again, the queue exists and the warning is gone.
  ASSERT_TRUE(waitUntil(
      [&] {
        const CommandResult again =
            kubectl({"apply", "-n", ns.name(), "-f", "-"},
                    toText(list({queuedJob("queued", "late-queue"), localQueue("late-queue")})));
        return again.exitCode == 0 && again.err.find("[AIA018]") == std::string::npos;
      },
      std::chrono::seconds(10)));
}

TEST(E2eApplyOrder, ABarePodAfterItsClaimTemplateInOneFileIsAdmittedEveryTime) {
  Namespace ns("order-claim");
  // Each round creates the template and, milliseconds later, the Pod: the
  // view may not have the template yet; the API does.
  for (int round = 0; round < 5; ++round) {
    const std::string name = "claim-" + std::to_string(round);
    const CommandResult applied =
        kubectl({"apply", "-n", ns.name(), "-f", "-"},
                toText(list({claimTemplate(name),
                             podClaiming("pod-" + std::to_string(round), name, "batch")})));
    ASSERT_EQ(applied.exitCode, 0) << "round " << round << ": " << applied.err;
    EXPECT_EQ(applied.err.find("[AIA019]"), std::string::npos) << applied.err;
  }
}

TEST(E2eApplyOrder, ABarePodWhoseClaimTemplateTheApiLacksIsRefused) {
  Namespace ns("order-missing");
  const CommandResult applied = kubectl({"apply", "-n", ns.name(), "-f", "-"},
                                        toText(podClaiming("lonely", "never-made", "batch")));
  EXPECT_NE(applied.exitCode, 0) << applied.out;
  EXPECT_NE(applied.err.find("[AIA019]"), std::string::npos) << applied.err;
  EXPECT_NE(applied.err.find("ResourceClaimTemplate \"never-made\" does not exist"),
            std::string::npos)
      << applied.err;
}

}  // namespace
}  // namespace aiadmit::e2e
