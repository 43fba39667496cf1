// The view's Pods and Workloads: a GPU Pod kept as the few fields explain
// reads, a Pod without accelerators not kept, a claim's allocation read.
#include <gtest/gtest.h>

#include "webhook/cluster/cluster_view.h"
#include "webhook/codec/json.h"

namespace aiadmit {
namespace {

JsonDocument parsed(const char* text) {
  JsonDocument document;
  document.Parse(text);
  EXPECT_FALSE(document.HasParseError());
  return document;
}

TEST(ClusterWorkloads, AGpuPodIsKeptAsTheFieldsExplainReadsAlone) {
  const JsonDocument pod = parsed(R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ml", "labels": {"app": "x"},
                 "annotations": {"secret-ish": "no", "batch.kubernetes.io/job-completion-index": "0"},
                 "managedFields": [{"manager": "kubectl"}]},
    "spec": {"nodeSelector": {"pool": "a100"}, "volumes": [{"name": "v"}],
             "containers": [{"name": "main", "image": "i", "env": [{"name": "TOKEN", "value": "t"}],
                             "resources": {"limits": {"nvidia.com/gpu": "1"}}}]},
    "status": {"phase": "Pending", "podIP": "10.0.0.1",
               "conditions": [{"type": "Ready", "status": "False"},
                              {"type": "PodScheduled", "status": "False", "message": "m"}]}})");
  ClusterObject record;
  std::string error;
  ASSERT_TRUE(readClusterObject(ClusterKind::Pod, "v1", pod, record, &error)) << error;
  const PodRecord& kept = std::get<PodRecord>(record);
  EXPECT_EQ(keyOf(record), "ml/p");
  const std::string json = toJson(*kept.object);
  for (const char* gone :
       {"TOKEN", "managedFields", "volumes", "\"image\"", "podIP", "secret-ish", "Ready"}) {
    EXPECT_EQ(json.find(gone), std::string::npos) << gone << " in " << json;
  }
  for (const char* there : {"nvidia.com/gpu", "\"pool\":\"a100\"", "PodScheduled",
                            "job-completion-index", "\"app\":\"x\""}) {
    EXPECT_NE(json.find(there), std::string::npos) << there << " not in " << json;
  }
}

TEST(ClusterWorkloads, APodWithoutAcceleratorsOrClaimsIsNotKept) {
  const JsonDocument pod = parsed(R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "web", "namespace": "ml"},
    "spec": {"containers": [{"name": "nginx", "resources": {"limits": {"cpu": "1"}}}]}})");
  ClusterObject record;
  std::string error = "unset";
  EXPECT_FALSE(readClusterObject(ClusterKind::Pod, "v1", pod, record, &error));
  EXPECT_EQ(error, "") << "skipped, not refused";
}

TEST(ClusterWorkloads, AClaimsAllocationIsRead) {
  const JsonDocument claim = parsed(R"({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
    "metadata": {"name": "c", "namespace": "ml"},
    "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}},
    "status": {"allocation": {"devices": {"results": [
      {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "node-0", "device": "gpu-3"}]}}}})");
  ClusterObject record;
  std::string error;
  ASSERT_TRUE(
      readClusterObject(ClusterKind::ResourceClaim, "resource.k8s.io/v1", claim, record, &error))
      << error;
  const ClaimRecord& read = std::get<ClaimRecord>(record);
  EXPECT_TRUE(read.allocated);
  ASSERT_EQ(read.devices.size(), 1u);
  EXPECT_EQ(read.devices[0], (AllocatedDevice{"gpu.nvidia.com", "node-0", "gpu-3"}));
}

}  // namespace
}  // namespace aiadmit
