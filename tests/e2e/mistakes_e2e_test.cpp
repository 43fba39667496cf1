// AIA005 against the API server's own rule: every extended resource,
// whatever its vendor, needs equal requests and limits. Where aiadmit is not
// called the API server refuses the Pod; where it is, aiadmit refuses it
// first with the rule and the fix; the near miss (equal amounts) passes both.
#include <gtest/gtest.h>

#include "tests/e2e/support/e2e_cluster.h"

namespace aiadmit::e2e {
namespace {

// A GPU Pod beside which an RDMA device is asked for with `resources`.
std::string podWithRdma(const std::string& name, const std::string& rdmaResources) {
  return R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": ")" +
         name + R"(", "annotations": {"aiadmit.dev/workload": "training"}},
    "spec": {"restartPolicy": "Never", "containers": [{"name": "train", "image": "registry.example/train:1",
      "resources": )" +
         rdmaResources + "}]}}";
}

CommandResult dryRun(const Namespace& ns, const std::string& pod) {
  return kubectl({"create", "--dry-run=server", "-n", ns.name(), "-f", "-"}, pod);
}

TEST(E2eMistakes, AnExtendedResourceWhoseRequestIsNotItsLimitIsRefusedWithAndWithoutAiadmit) {
  Namespace optedIn("mistakes");
  Namespace plain("mistakes-plain", /*optedIn=*/false);
  const struct {
    const char* name;
    const char* resources;
  } refused[] = {
      {"above-limit",
       R"({"requests": {"rdma/hca_shared_devices_a": "2"},
           "limits": {"nvidia.com/gpu": "1", "rdma/hca_shared_devices_a": "1"}})"},
      {"without-limit",
       R"({"requests": {"rdma/hca_shared_devices_a": "1"}, "limits": {"nvidia.com/gpu": "1"}})"},
  };
  for (const auto& mistake : refused) {
    SCOPED_TRACE(mistake.name);
    const std::string pod = podWithRdma(mistake.name, mistake.resources);
    const CommandResult withoutAiadmit = dryRun(plain, pod);
    EXPECT_NE(withoutAiadmit.exitCode, 0) << "the API server stored it";
    EXPECT_NE(withoutAiadmit.err.find("rdma/hca_shared_devices_a"), std::string::npos)
        << withoutAiadmit.err;
    const CommandResult withAiadmit = dryRun(optedIn, pod);
    EXPECT_NE(withAiadmit.exitCode, 0);
    EXPECT_NE(withAiadmit.err.find("denied the request: [AIA005]"), std::string::npos)
        << withAiadmit.err;
    EXPECT_NE(withAiadmit.err.find("rdma/hca_shared_devices_a"), std::string::npos)
        << withAiadmit.err;
  }

  const std::string equal = podWithRdma("equal", R"({"requests": {"rdma/hca_shared_devices_a": "1"},
                   "limits": {"nvidia.com/gpu": "1", "rdma/hca_shared_devices_a": "1"}})");
  const CommandResult plainEqual = dryRun(plain, equal);
  EXPECT_EQ(plainEqual.exitCode, 0) << plainEqual.err;
  const CommandResult optedInEqual = dryRun(optedIn, equal);
  EXPECT_EQ(optedInEqual.exitCode, 0) << optedInEqual.err;
}

}  // namespace
}  // namespace aiadmit::e2e
