// AIA005 against the API server's own rule: every extended resource,
// whatever its vendor, needs equal requests and limits. The API server
// judges a Pod's and a built-in template's itself, before any validating
// webhook, but not a custom resource's: a JobSet with the mistake is stored,
// and fails only when JobSet makes its Jobs. aiadmit refuses it at apply
// with the rule and the fix; the near miss (equal amounts) passes both.
#include <gtest/gtest.h>

#include "tests/e2e/support/e2e_cluster.h"

namespace aiadmit::e2e {
namespace {

// A training Pod, or a JobSet of such Pods, whose container asks for an
// RDMA device beside its GPU with `resources`.
std::string podWithRdma(const std::string& name, const std::string& resources) {
  return R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": ")" +
         name + R"(", "annotations": {"aiadmit.dev/workload": "training"}},
    "spec": {"restartPolicy": "Never", "containers": [{"name": "train", "image": "registry.example/train:1",
      "resources": )" +
         resources + "}]}}";
}

std::string jobSetWithRdma(const std::string& name, const std::string& resources) {
  return R"({"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
    "metadata": {"name": ")" +
         name + R"(", "annotations": {"aiadmit.dev/workload": "training"}},
    "spec": {"replicatedJobs": [{"name": "workers", "replicas": 1,
      "template": {"spec": {"template": {"spec": {"restartPolicy": "Never",
        "containers": [{"name": "train", "image": "registry.example/train:1", "resources": )" +
         resources + "}]}}}}}]}}";
}

CommandResult dryRun(const Namespace& ns, const std::string& object) {
  return kubectl({"create", "--dry-run=server", "-n", ns.name(), "-f", "-"}, object);
}

constexpr const char* kAboveLimit = R"({"requests": {"rdma/hca_shared_devices_a": "2"},
    "limits": {"nvidia.com/gpu": "1", "rdma/hca_shared_devices_a": "1"}})";
constexpr const char* kWithoutLimit =
    R"({"requests": {"rdma/hca_shared_devices_a": "1"}, "limits": {"nvidia.com/gpu": "1"}})";
constexpr const char* kEqual = R"({"requests": {"rdma/hca_shared_devices_a": "1"},
    "limits": {"nvidia.com/gpu": "1", "rdma/hca_shared_devices_a": "1"}})";

TEST(E2eMistakes,
     AnExtendedResourceWhoseRequestIsNotItsLimitIsRefusedAtApplyEvenInACustomResource) {
  Namespace optedIn("mistakes");
  Namespace plain("mistakes-plain", /*optedIn=*/false);
  for (const char* resources : {kAboveLimit, kWithoutLimit}) {
    SCOPED_TRACE(resources);
    // The API server's own rule, on a Pod, with aiadmit or without.
    EXPECT_NE(dryRun(plain, podWithRdma("train", resources)).exitCode, 0);
    EXPECT_NE(dryRun(optedIn, podWithRdma("train", resources)).exitCode, 0);
    // A custom resource is stored without aiadmit, and refused with it.
    const CommandResult stored = dryRun(plain, jobSetWithRdma("train", resources));
    EXPECT_EQ(stored.exitCode, 0) << stored.err;
    const CommandResult refused = dryRun(optedIn, jobSetWithRdma("train", resources));
    EXPECT_NE(refused.exitCode, 0);
    EXPECT_NE(refused.err.find("denied the request: [AIA005]"), std::string::npos) << refused.err;
    EXPECT_NE(refused.err.find("rdma/hca_shared_devices_a"), std::string::npos) << refused.err;
  }
  for (const Namespace* ns : {&plain, &optedIn}) {
    const CommandResult pod = dryRun(*ns, podWithRdma("train", kEqual));
    EXPECT_EQ(pod.exitCode, 0) << pod.err;
    const CommandResult jobSet = dryRun(*ns, jobSetWithRdma("train", kEqual));
    EXPECT_EQ(jobSet.exitCode, 0) << jobSet.err;
  }
}

}  // namespace
}  // namespace aiadmit::e2e
