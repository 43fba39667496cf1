// DRA on resource.k8s.io/v1: a ResourceClaimTemplate of the profile's GPU
// device class and a Pod that uses it. aiadmit classifies the Pod from its
// claim and aims it at the pool without an extended-resource GPU; the
// controller manager makes the claim, the scheduler allocates one of the
// devices the node's ResourceSlice publishes and binds the Pod there.
#include <gtest/gtest.h>

#include "tests/e2e/support/e2e_cluster.h"

namespace aiadmit::e2e {
namespace {

TEST(E2eDra, APodOfAGpuClaimTemplateIsPlacedAndItsClaimAllocatedOnTheDraNode) {
  Namespace ns("dra");
  const CommandResult made =
      kubectl({"apply", "-n", ns.name(), "-f", "-"}, toText(claimTemplate("one-gpu", 1)));
  ASSERT_EQ(made.exitCode, 0) << made.err;

  // The template reaches aiadmit's view by watch; until then a claim of it
  // is unresolved and never taken for a GPU.
  const std::string pod = toText(podClaiming("dra-one-gpu", "one-gpu"));
  std::string answer;
  ASSERT_TRUE(waitUntil(
      [&] {
        answer = kubectl({"create", "--dry-run=server", "-n", ns.name(), "-f", "-"}, pod).err;
        return answer.find("claims a gpu.nvidia.com device") != std::string::npos;
      },
      std::chrono::seconds(20)))
      << answer;

  const CommandResult applied = kubectl({"apply", "-n", ns.name(), "-f", "-"}, pod);
  ASSERT_EQ(applied.exitCode, 0) << applied.err;
  EXPECT_NE(applied.err.find(
                "Warning: aiadmit: class batch: inferred from its kind: it claims a gpu.nvidia.com "
                "device"),
            std::string::npos)
      << applied.err;

  json stored;
  ASSERT_TRUE(waitUntil(
      [&] {
        stored = kubectlJson({"get", "pod", "dra-one-gpu", "-n", ns.name()});
        return stored.is_object() && !stored["spec"].value("nodeName", "").empty();
      },
      std::chrono::seconds(60)))
      << kubectl({"get", "events", "-n", ns.name()}).out;
  EXPECT_EQ(stored["spec"]["nodeName"], kDraGpuNode);
  EXPECT_EQ(stored["spec"]["nodeSelector"].value("accelerator", ""), "nvidia");
  EXPECT_FALSE(stored["spec"]["containers"][0]["resources"].contains("limits"))
      << "a Pod that claims its GPU gets no nvidia.com/gpu beside it";

  const json claims = kubectlJson({"get", "resourceclaims", "-n", ns.name()});
  ASSERT_TRUE(claims.is_object());
  ASSERT_EQ(claims["items"].size(), 1u);
  const json& results = claims["items"][0]["status"]["allocation"]["devices"]["results"];
  ASSERT_EQ(results.size(), 1u) << claims["items"][0]["status"];
  EXPECT_EQ(results[0]["driver"], "gpu.nvidia.com");
  EXPECT_EQ(results[0]["pool"], kDraGpuNode);
}

TEST(E2eDra, AClaimTemplateForMoreGpusThanAnyNodeHasIsRefused) {
  Namespace ns("dra-nine");
  const CommandResult refused =
      kubectl({"apply", "-n", ns.name(), "-f", "-"}, toText(claimTemplate("nine-gpus", 9)));
  EXPECT_NE(refused.exitCode, 0);
  EXPECT_NE(refused.err.find("admission webhook \"applied.validate.aiadmit.dev\" denied the "
                             "request: [AIA020]"),
            std::string::npos)
      << refused.err;
  const CommandResult eight =
      kubectl({"apply", "-n", ns.name(), "-f", "-"}, toText(claimTemplate("eight-gpus", 8)));
  EXPECT_EQ(eight.exitCode, 0) << eight.err;
}

}  // namespace
}  // namespace aiadmit::e2e
