// The pod reader resolves a Pod's DRA claims against a cluster view: which
// claims hand out GPUs, how many devices they certainly need on one node, and
// which could not be resolved (never taken for GPUs).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/support/test_support.h"
#include "webhook/cluster/claim_resolution.h"
#include "webhook/cluster/cluster_view.h"
#include "webhook/codec/yaml_json.h"
#include "webhook/model/pod_reader.h"

namespace aiadmit {
namespace {

std::shared_ptr<JsonDocument> yaml(const std::string& text) {
  std::vector<ManifestDocument> documents;
  std::string error;
  EXPECT_TRUE(parseManifests(text, documents, &error)) << error;
  EXPECT_EQ(documents.size(), 1u) << text;
  if (documents.empty()) {
    auto empty = std::make_shared<JsonDocument>();
    empty->SetObject();
    return empty;
  }
  return documents[0].json;
}

void addTemplate(ClusterView::Builder& builder, const std::string& text) {
  const auto object = yaml(text);
  ClaimObject claim;
  std::string error;
  ASSERT_TRUE(readClaimObject(*object, claim, &error)) << error;
  ASSERT_TRUE(claim.spec.problems.empty()) << claim.spec.problems.front();
  builder.add(ClaimTemplateRecord{claim.namespaceName, claim.name, std::move(claim.spec)});
}

// Claim templates of each shape the reader must count, and a DeviceClass
// whose name says nothing but whose selector names NVIDIA's GPU driver.
std::shared_ptr<const ClusterView> view() {
  ClusterView::Builder builder;
  addTemplate(builder, R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: two-gpus, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly: {deviceClassName: gpu.nvidia.com, count: 2}
      - name: nic
        exactly: {deviceClassName: rdma.mellanox.com}
)");
  addTemplate(builder, R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: big-or-small, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        firstAvailable:
        - {name: full, deviceClassName: gpu.nvidia.com, count: 4}
        - {name: slices, deviceClassName: mig.nvidia.com, count: 2}
)");
  addTemplate(builder, R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: nic-only, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: nic
        exactly: {deviceClassName: rdma.mellanox.com}
)");
  addTemplate(builder, R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: monitor, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: all
        exactly: {deviceClassName: gpu.nvidia.com, allocationMode: All, adminAccess: true}
)");
  addTemplate(builder, R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: share, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: memory
        exactly:
          deviceClassName: gpu.nvidia.com
          capacity: {requests: {memory: 10Gi}}
)");
  addTemplate(builder, R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: by-selector, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: h100
        exactly: {deviceClassName: h100-nodes, count: 1}
)");
  DeviceClassRecord h100;
  h100.name = "h100-nodes";
  h100.drivers = {"gpu.nvidia.com"};
  builder.add(std::move(h100));
  builder.markListed(ClusterKind::DeviceClass);
  builder.markListed(ClusterKind::ResourceClaimTemplate);
  return std::move(builder).build();
}

// A Pod whose container "trainer" uses the claim `claim` made as `source`
// says ("resourceClaimTemplateName: two-gpus").
std::shared_ptr<JsonDocument> podWith(const std::string& source) {
  return yaml(R"(apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml}
spec:
  resourceClaims:
  - {name: gpus, )" +
              source +
              R"(}
  containers:
  - name: sidecar
    image: busybox
  - name: trainer
    image: pytorch
    resources:
      claims: [{name: gpus}]
)");
}

ClaimedDevices resolved(const std::string& source, const ClusterView* cluster) {
  const auto pod = podWith(source);
  PodReader reader = PodReader::of(aiadmit::testing::firstTemplateOf(*pod));
  resolveClaimsOf(reader, cluster, "ml");
  EXPECT_EQ(reader.claimsGpus(), !reader.claimedDevices().gpus.empty());
  return reader.claimedDevices();
}

TEST(DraWorkload, AClaimTemplateOfAGpuClassIsAGpuClaimOfItsContainer) {
  const auto cluster = view();
  const ClaimedDevices claimed = resolved("resourceClaimTemplateName: two-gpus", cluster.get());
  ASSERT_EQ(claimed.gpus.size(), 1u);
  EXPECT_TRUE(claimed.unresolved.empty());
  const GpuClaim& gpu = claimed.gpus.front();
  EXPECT_EQ(gpu.claim, "gpus");
  EXPECT_EQ(gpu.container, "trainer");
  EXPECT_EQ(gpu.deviceClassName, "gpu.nvidia.com");
  EXPECT_EQ(gpu.devices, 2);  // the NIC of the same claim is no GPU
  EXPECT_FALSE(gpu.shares);
  EXPECT_EQ(gpu.fieldPath, "resourceClaims[0]");
}

TEST(DraWorkload, CountsOnlyWhatIsCertain) {
  const auto cluster = view();
  // firstAvailable: at least its smallest alternative.
  const ClaimedDevices either = resolved("resourceClaimTemplateName: big-or-small", cluster.get());
  ASSERT_EQ(either.gpus.size(), 1u);
  EXPECT_EQ(either.gpus.front().devices, 2);
  // A consumable-capacity share still takes a device on the node, and says so.
  const ClaimedDevices share = resolved("resourceClaimTemplateName: share", cluster.get());
  ASSERT_EQ(share.gpus.size(), 1u);
  EXPECT_EQ(share.gpus.front().devices, 1);
  EXPECT_TRUE(share.gpus.front().shares);
}

TEST(DraWorkload, AClassIsAGpuClassByItsNameOrByTheDriverItSelects) {
  const auto cluster = view();
  const ClaimedDevices bySelector =
      resolved("resourceClaimTemplateName: by-selector", cluster.get());
  ASSERT_EQ(bySelector.gpus.size(), 1u);
  EXPECT_EQ(bySelector.gpus.front().deviceClassName, "h100-nodes");
  EXPECT_TRUE(isGpuDeviceClass("gpu.nvidia.com", nullptr));
  EXPECT_TRUE(isGpuDeviceClass("mig.nvidia.com", nullptr));
  EXPECT_TRUE(isGpuDeviceClass("gpu.amd.com", nullptr));
  EXPECT_FALSE(isGpuDeviceClass("h100-nodes", nullptr));
  EXPECT_FALSE(isGpuDeviceClass("rdma.mellanox.com", cluster.get()));
}

TEST(DraWorkload, NicsAndMonitoringAreNoGpuClaims) {
  const auto cluster = view();
  for (const char* name : {"nic-only", "monitor"}) {
    SCOPED_TRACE(name);
    const ClaimedDevices claimed =
        resolved(std::string("resourceClaimTemplateName: ") + name, cluster.get());
    EXPECT_TRUE(claimed.gpus.empty());
    EXPECT_TRUE(claimed.unresolved.empty());
  }
}

TEST(DraWorkload, WhatIsNotKnownIsUnresolvedNeverAGpu) {
  const auto cluster = view();
  const ClaimedDevices noView = resolved("resourceClaimTemplateName: two-gpus", nullptr);
  EXPECT_TRUE(noView.gpus.empty());
  EXPECT_EQ(noView.unresolved,
            std::vector<std::string>{"claim gpus: ResourceClaimTemplate two-gpus is not known"});
  const ClaimedDevices otherName = resolved("resourceClaimTemplateName: three", cluster.get());
  EXPECT_TRUE(otherName.gpus.empty());
  EXPECT_EQ(otherName.unresolved.size(), 1u);
  const ClaimedDevices byName = resolved("resourceClaimName: shared-gpu", cluster.get());
  EXPECT_TRUE(byName.gpus.empty());
  EXPECT_EQ(byName.unresolved,
            std::vector<std::string>{"claim gpus: ResourceClaim shared-gpu is not known"});
}

// A view that holds ResourceClaims made by someone else, which Pods name
// with resourceClaimName.
std::shared_ptr<const ClusterView> viewWithClaims() {
  ClusterView::Builder builder;
  for (const char* text : {R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared-gpu, namespace: ml}
spec:
  devices:
    requests:
    - name: gpus
      exactly: {deviceClassName: gpu.nvidia.com, count: 2}
)",
                           R"(apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: nic, namespace: ml}
spec:
  devices:
    requests:
    - name: nic
      deviceClassName: rdma.mellanox.com
)"}) {
    const auto object = yaml(text);
    ClaimObject claim;
    std::string error;
    EXPECT_TRUE(readClaimObject(*object, claim, &error)) << error;
    builder.add(ClaimRecord{claim.namespaceName, claim.name, std::move(claim.spec)});
  }
  builder.markListed(ClusterKind::ResourceClaim);
  return std::move(builder).build();
}

TEST(DraWorkload, AClaimByNameResolvesThroughTheViewLikeATemplate) {
  const auto cluster = viewWithClaims();
  const ClaimedDevices claimed = resolved("resourceClaimName: shared-gpu", cluster.get());
  ASSERT_EQ(claimed.gpus.size(), 1u);
  EXPECT_TRUE(claimed.unresolved.empty());
  EXPECT_EQ(claimed.gpus.front().claim, "gpus");
  EXPECT_EQ(claimed.gpus.front().container, "trainer");
  EXPECT_EQ(claimed.gpus.front().deviceClassName, "gpu.nvidia.com");
  EXPECT_EQ(claimed.gpus.front().devices, 2);

  const ClaimedDevices nic = resolved("resourceClaimName: nic", cluster.get());
  EXPECT_TRUE(nic.gpus.empty());
  EXPECT_TRUE(nic.unresolved.empty());
  // A claim of another name, or a template of the claim's name: not known.
  EXPECT_EQ(resolved("resourceClaimName: other", cluster.get()).unresolved,
            std::vector<std::string>{"claim gpus: ResourceClaim other is not known"});
  EXPECT_EQ(resolved("resourceClaimTemplateName: shared-gpu", cluster.get()).unresolved,
            std::vector<std::string>{"claim gpus: ResourceClaimTemplate shared-gpu is not known"});
}

TEST(DraWorkload, Kep5004NamesResolveWithoutAView) {
  const auto pod = yaml(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  initContainers:
  - name: warmup
    image: cuda
    resources: {limits: {deviceclass.resource.kubernetes.io/gpu.nvidia.com: "1"}}
  containers:
  - name: cuda
    image: cuda
    resources:
      limits:
        deviceclass.resource.kubernetes.io/gpu.nvidia.com: "3"
        deviceclass.resource.kubernetes.io/rdma.mellanox.com: "1"
)");
  PodReader reader = PodReader::of(aiadmit::testing::firstTemplateOf(*pod));
  const ClaimedDevices& claimed = resolveClaimsOf(reader, nullptr, "").claimedDevices();
  ASSERT_EQ(claimed.gpus.size(), 2u);
  EXPECT_EQ(claimed.gpus[1].resourceName, "deviceclass.resource.kubernetes.io/gpu.nvidia.com");
  EXPECT_EQ(claimed.gpus[1].container, "cuda");
  EXPECT_EQ(claimed.gpus[1].devices, 3);
  // The init container's GPU may be one of those the container gets next.
  EXPECT_TRUE(claimed.gpus[0].initContainer);
  EXPECT_EQ(claimed.gpus[0].devices, 0);
  EXPECT_EQ(reader.claimedGpuCount(), 3);
  EXPECT_TRUE(reader.asksForGpus());
}

}  // namespace
}  // namespace aiadmit
