// Uninstalling as docs/install.md says: the webhook configurations first,
// then aiadmit goes (its Deployment, here its process), then the rest of the
// manifests. No apply in an opted-in namespace fails on the way, and what
// aiadmit wrote into workloads stays. The cluster is installed again at the
// end, for the tests that follow.
#include <gtest/gtest.h>

#include "tests/e2e/support/e2e_cluster.h"
#include "tests/e2e/support/workloads.h"

namespace aiadmit::e2e {
namespace {

constexpr const char* kJob = R"({
  "apiVersion": "batch/v1", "kind": "Job",
  "metadata": {"name": "embed", "annotations": {"aiadmit.dev/workload": "batch"}},
  "spec": {"suspend": true,
           "template": {"spec": {"restartPolicy": "Never",
                                 "containers": [{"name": "embed", "image": "registry.example/embed:1",
                                                 "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}})";

// A GPU Pod created (dry run) in the namespace: "" when the API server
// refused it, else the class aiadmit stamped ("-" for none).
std::string createdClass(const Namespace& ns) {
  const std::string pod = R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "probe"},
    "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "cuda",
             "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}})";
  const CommandResult created =
      kubectl({"create", "--dry-run=server", "-n", ns.name(), "-o",
               "jsonpath={.metadata.annotations.aiadmit\\.dev/class}", "-f", "-"},
              pod);
  if (created.exitCode != 0) return "";
  return created.out.empty() ? "-" : created.out;
}

struct ReinstalledAtExit {
  ~ReinstalledAtExit() {
    const CommandResult installed = e2eCluster("aiadmit", {"install"});
    EXPECT_EQ(installed.exitCode, 0) << installed.out << installed.err;
  }
};

TEST(E2eUninstallSerial, TheDocumentedOrderFailsNoApplyAndLeavesWorkloadsAsAiadmitLeftThem) {
  Namespace ns("uninstall");
  ASSERT_EQ(kubectl({"apply", "-n", ns.name(), "-f", "-"}, kJob).exitCode, 0);
  ASSERT_EQ(createdClass(ns), "batch");
  const ReinstalledAtExit reinstalled;

  ASSERT_EQ(kubectl({"delete", "validatingwebhookconfiguration", "validate.aiadmit.dev"}).exitCode,
            0);
  EXPECT_EQ(createdClass(ns), "batch") << "mutated still, and admitted";
  ASSERT_EQ(kubectl({"delete", "mutatingwebhookconfiguration", "mutate.aiadmit.dev"}).exitCode, 0);
  EXPECT_EQ(createdClass(ns), "-") << "aiadmit no longer called";
  // Its Deployment goes with the manifests; here the process stops.
  ASSERT_EQ(e2eCluster("aiadmit", {"stop"}).exitCode, 0);
  EXPECT_EQ(createdClass(ns), "-");
  const CommandResult deleted =
      e2eCluster("aiadmit", {"manifests", "delete", "--ignore-not-found"});
  EXPECT_EQ(deleted.exitCode, 0) << deleted.out << deleted.err;
  EXPECT_EQ(createdClass(ns), "-");
  EXPECT_NE(kubectl({"get", "clusterrole", "aiadmit-cluster-view"}).exitCode, 0);
  EXPECT_NE(kubectl({"get", "priorityclass", "ai-batch"}).exitCode, 0);

  // What aiadmit wrote into the Job is the Job's now.
  const json job = stored("jobs", ns.name(), "embed");
  ASSERT_TRUE(job.is_object());
  EXPECT_EQ(job["metadata"]["annotations"].value("aiadmit.dev/class", ""), "batch");
  EXPECT_EQ(job["spec"]["template"]["spec"]
                .value("nodeSelector", json::object())
                .value("accelerator", ""),
            "nvidia");
}

}  // namespace
}  // namespace aiadmit::e2e
