// The Nodes every end-to-end test runs on (fixture e2e_gpu_cluster): a small
// GPU cluster shaped as the shipped profiles expect, and aiadmit's cluster
// view holding it before the first test starts.
#include <gtest/gtest.h>

#include "tests/e2e/support/e2e_cluster.h"

namespace aiadmit::e2e {
namespace {

// One GPU more than the 8-GPU nodes have: AIA006 refuses it from the
// profile alone, and AIA016 too once the view holds the GPU nodes (while it
// holds none there is nothing to judge). A resource no node offers would not
// do: AIA016 takes a pool with none of it for one that may yet grow.
constexpr const char* kViewProbe = R"({
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": "view-probe", "namespace": "e2e-ready",
               "annotations": {"aiadmit.dev/workload": "batch"}},
  "spec": {"restartPolicy": "Never",
           "containers": [{"name": "main", "image": "busybox",
                           "resources": {"limits": {"nvidia.com/gpu": "9"}}}]}})";

// A platform team's Kueue objects: GPU quota for the cluster and a queue in
// one namespace. Besides what tests do with it, a snapshot of the cluster
// then lists LocalQueues, so that `check --cluster` knows the kind is
// served and judges a missing queue as the webhook's live view does.
constexpr const char* kKueueQuota = R"({"apiVersion": "v1", "kind": "List", "items": [
  {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor",
   "metadata": {"name": "gpu-nodes"},
   "spec": {"nodeLabels": {"accelerator": "nvidia"}}},
  {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue",
   "metadata": {"name": "gpus"},
   "spec": {"namespaceSelector": {},
            "resourceGroups": [{"coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
              "flavors": [{"name": "gpu-nodes", "resources": [
                {"name": "cpu", "nominalQuota": "384"},
                {"name": "memory", "nominalQuota": "4000Gi"},
                {"name": "nvidia.com/gpu", "nominalQuota": "32"}]}]}]}},
  {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
   "metadata": {"name": "gpu-queue", "namespace": "e2e-ready"},
   "spec": {"clusterQueue": "gpus"}}]})";

// A GPU node whose GPUs a DRA driver publishes (ResourceSlices of driver
// gpu.nvidia.com, DeviceClass gpu.nvidia.com as NVIDIA's driver names it)
// instead of a device plugin's extended resource. No driver runs: the
// scheduler allocates claims from the slices, which is all it needs.
json draDevices(const std::string& node, int gpus) {
  json devices = json::array();
  for (int i = 0; i < gpus; ++i) {
    devices.push_back(
        {{"name", "gpu-" + std::to_string(i)}, {"attributes", {{"type", {{"string", "gpu"}}}}}});
  }
  return {
      {"apiVersion", "v1"},
      {"kind", "List"},
      {"items",
       {{{"apiVersion", "resource.k8s.io/v1"},
         {"kind", "DeviceClass"},
         {"metadata", {{"name", "gpu.nvidia.com"}}},
         {"spec",
          {{"selectors", {{{"cel", {{"expression", "device.driver == \"gpu.nvidia.com\""}}}}}}}}},
        {{"apiVersion", "resource.k8s.io/v1"},
         {"kind", "ResourceSlice"},
         {"metadata", {{"name", node + "-gpu.nvidia.com"}}},
         {"spec",
          {{"driver", "gpu.nvidia.com"},
           {"nodeName", node},
           {"pool", {{"name", node}, {"generation", 1}, {"resourceSliceCount", 1}}},
           {"devices", devices}}}}}}};
}

TEST(E2eSetup, SmallGpuClusterInTheApiAndInAiadmitsView) {
  NodeShape draNode = gpuNode(kDraGpuNode, 0);
  draNode.allocatable.erase("nvidia.com/gpu");
  ASSERT_TRUE(applyNode(draNode));
  const CommandResult dra = kubectl({"apply", "-f", "-"}, toText(draDevices(kDraGpuNode, 8)));
  ASSERT_EQ(dra.exitCode, 0) << dra.err;

  const CommandResult kueue = kubectl({"apply", "-f", "-"}, kKueueQuota);
  ASSERT_EQ(kueue.exitCode, 0) << kueue.err;

  for (const NodeShape& node : smallGpuCluster()) ASSERT_TRUE(applyNode(node)) << node.name;

  const json nodes = kubectlJson({"get", "nodes"});
  ASSERT_TRUE(nodes.is_object());
  int gpuNodes = 0;
  for (const json& node : nodes["items"]) {
    const std::string name = node["metadata"]["name"];
    if (!isGpuNode(name) || name == kDraGpuNode) continue;
    ++gpuNodes;
    EXPECT_EQ(node["status"]["allocatable"]["nvidia.com/gpu"], "8") << name;
    ASSERT_EQ(node["spec"]["taints"].size(), 1u) << name << ": " << node["spec"]["taints"];
    EXPECT_EQ(node["spec"]["taints"][0]["key"], "accelerator") << name;
  }
  EXPECT_EQ(gpuNodes, kGpuNodes);

  std::string last;
  EXPECT_TRUE(waitUntil(
      [&] {
        const CommandResult probe = kubectl({"create", "--dry-run=server", "-f", "-"}, kViewProbe);
        last = probe.err;
        return probe.exitCode != 0 && probe.err.find("[AIA016]") != std::string::npos;
      },
      std::chrono::seconds(30)))
      << "aiadmit's cluster view never held the GPU nodes; last answer: " << last;
}

}  // namespace
}  // namespace aiadmit::e2e
