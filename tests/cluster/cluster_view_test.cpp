// The cluster view on recorded objects (tests/golden/cluster): what one node
// of a pool can hold from allocatable and from ResourceSlices, which classes
// are GPU classes, what exists, and snapshots read as kubectl prints them.
#include "webhook/cluster/cluster_view.h"

#include <gtest/gtest.h>

#include "tests/support/test_support.h"
#include "webhook/cluster/cluster_snapshot.h"
#include "webhook/codec/yaml_json.h"

namespace aiadmit {
namespace {

using namespace testing;

std::string golden(const std::string& name) {
  return readFile(sourceDir() + "/tests/golden/cluster/" + name);
}

// The README of dra-example-driver prints the slices of its kind cluster's
// worker but not the Node; this is that Node as the slice's owner names it.
constexpr const char* kExampleWorker = R"(---
apiVersion: v1
kind: Node
metadata:
  name: dra-example-driver-cluster-worker
  labels:
    kubernetes.io/hostname: dra-example-driver-cluster-worker
)";

std::string recordedCluster(const std::string& extra = "") {
  return golden("node-k8s-device-plugin-issue-112.yaml") + "---\n" +
         golden("node-k8s-device-plugin-issue-58.yaml") + "---\n" +
         golden("resourceslices-dra-example-driver.yaml") + "---\n" +
         golden("deviceclass-dra-example-driver.yaml") + "---\n" +
         golden("deviceclass-nvidia-gpu.yaml") + kExampleWorker + extra;
}

std::shared_ptr<const ClusterView> viewOf(const std::string& text) {
  ClusterSnapshot snapshot = readClusterSnapshot(text, "cluster.yaml");
  EXPECT_TRUE(snapshot.error.empty()) << snapshot.error;
  return snapshot.view ? snapshot.view : std::move(ClusterView::Builder{}).build();
}

Placement tolerating(std::string key, std::string value) {
  Placement pool;
  pool.tolerations.push_back({std::move(key), "Equal", std::move(value), "NoSchedule", {}});
  return pool;
}

TEST(ClusterView, AllocatableNotCapacityCountsOnRecordedNodes) {
  const auto view = viewOf(recordedCluster());
  EXPECT_TRUE(view->synced());
  EXPECT_TRUE(view->knows(ClusterKind::Node));
  ASSERT_EQ(view->nodes().size(), 3u);
  // ocio-gpu01 has 16 GPUs of capacity and none allocatable (issue #58).
  const auto largest = view->largestNodeForResource("amd.com/gpu", Placement{});
  ASSERT_TRUE(largest);
  EXPECT_EQ(largest->devices, 0);
  const auto gpus = view->largestNodeForResource("nvidia.com/gpu", Placement{});
  ASSERT_TRUE(gpus);
  EXPECT_EQ(gpus->matchingNodes, 3);
  // nvidia.com/gpu is also gpu.nvidia.com's extended resource name, whose
  // driver publishes no slices here: only the device plugin's one GPU.
  EXPECT_EQ(gpus->devices, 1);
  EXPECT_EQ(gpus->node, "192.168.13.64");
}

TEST(ClusterView, ResourceSlicesGiveTheDevicesOfAClassPerNode) {
  const auto view = viewOf(recordedCluster());
  const auto largest = view->largestNodeForDeviceClass("gpu.example.com", Placement{});
  ASSERT_TRUE(largest);
  EXPECT_EQ(largest->devices, 8);
  EXPECT_EQ(largest->node, "dra-example-driver-cluster-worker");
  EXPECT_EQ(largest->matchingNodes, 3);
  // KEP-5004: the implicit name asks for the same devices, counted the same.
  const auto implicit = view->largestNodeForResource(
      "deviceclass.resource.kubernetes.io/gpu.example.com", Placement{});
  ASSERT_TRUE(implicit);
  EXPECT_EQ(implicit->devices, 8);
  // The slice is node-local: another node reaches none of its devices.
  for (const ClusterNode& node : view->nodes()) {
    if (node.name == "192.168.13.64") {
      EXPECT_EQ(view->devicesOnNode(*view->deviceClass("gpu.example.com"), node), 0);
    }
  }
  EXPECT_FALSE(view->largestNodeForDeviceClass("mig.nvidia.com", Placement{}))
      << "a class the view does not have is unknown, not zero";
}

TEST(ClusterView, APoolIsItsLabelsAndTheTaintsItTolerates) {
  // The worker tainted and labelled the way the seed cluster's GPU nodes are.
  std::string tainted = recordedCluster();
  tainted.replace(tainted.find(kExampleWorker), std::string(kExampleWorker).size(), R"(---
apiVersion: v1
kind: Node
metadata:
  name: dra-example-driver-cluster-worker
  labels:
    accelerator: nvidia
spec:
  taints:
  - key: accelerator
    value: gpu
    effect: NoSchedule
  - key: node.kubernetes.io/unschedulable
    effect: NoSchedule
)");
  const auto view = viewOf(tainted);
  const auto untolerated = view->largestNodeForDeviceClass("gpu.example.com", Placement{});
  ASSERT_TRUE(untolerated);
  EXPECT_EQ(untolerated->devices, 0);
  EXPECT_EQ(untolerated->matchingNodes, 2);

  Placement pool = tolerating("accelerator", "gpu");
  pool.nodeSelector["accelerator"] = "nvidia";
  const auto tolerated = view->largestNodeForDeviceClass("gpu.example.com", pool);
  ASSERT_TRUE(tolerated);
  EXPECT_EQ(tolerated->devices, 8) << "a cordon comes and goes; the node still counts";
  EXPECT_EQ(tolerated->matchingNodes, 1);

  EXPECT_EQ(
      view->largestNodeForDeviceClass("gpu.example.com", tolerating("accelerator", "tpu"))->devices,
      0);
  Placement other = tolerating("accelerator", "gpu");
  other.requiredNodeAffinity.push_back({"accelerator", "NotIn", {"nvidia"}});
  const auto excluded = view->largestNodeForDeviceClass("gpu.example.com", other);
  EXPECT_EQ(excluded->matchingNodes, 2) << "the two recorded nodes have no accelerator label";
  EXPECT_EQ(excluded->devices, 0);
  Placement wildcard;
  wildcard.tolerations.push_back({"", "Exists", "", "", {}});
  EXPECT_EQ(view->largestNodeForDeviceClass("gpu.example.com", wildcard)->devices, 8);
}

TEST(ClusterView, GpuClassesAndExtendedResourceNames) {
  const auto view = viewOf(recordedCluster());
  const DeviceClassRecord* nvidia = view->deviceClass("gpu.nvidia.com");
  ASSERT_NE(nvidia, nullptr);
  EXPECT_EQ(nvidia->drivers, std::vector<std::string>{"gpu.nvidia.com"});
  EXPECT_EQ(nvidia->notUnderstood,
            std::vector<std::string>{"device.attributes['gpu.nvidia.com'].type == 'gpu'"});
  EXPECT_EQ(nvidia->extendedResourceName, "nvidia.com/gpu");
  EXPECT_EQ(view->deviceClassForResource("nvidia.com/gpu"), nvidia);
  EXPECT_EQ(view->deviceClassForResource("deviceclass.resource.kubernetes.io/gpu.example.com"),
            view->deviceClass("gpu.example.com"));
  EXPECT_EQ(view->deviceClassForResource("example.com/gpu"), nullptr);

  EXPECT_EQ(view->isGpuDeviceClass("gpu.nvidia.com"), Presence::Yes);
  EXPECT_EQ(view->isGpuDeviceClass("gpu.example.com"), Presence::Yes);
  EXPECT_EQ(view->isGpuDeviceClass("gpu.nvidia.co"), Presence::No) << "DeviceClasses are listed";
  EXPECT_EQ(view->hasDeviceClass("gpu.example.com"), Presence::Yes);

  const auto nics = viewOf(R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: dranet
spec:
  selectors:
  - cel:
      expression: device.driver == "dra.net" && device.attributes["dra.net"].rdma == true
)");
  EXPECT_EQ(nics->isGpuDeviceClass("dranet"), Presence::No);
  EXPECT_EQ(nics->deviceClass("dranet")->drivers, std::vector<std::string>{"dra.net"});
}

TEST(ClusterView, DeviceClassSelectorsAreReadOnlyAsFarAsTheyAreUnderstood) {
  auto read = [](std::string_view expression) {
    std::pair<std::vector<std::string>, std::vector<std::string>> out;
    readDeviceClassSelector(expression, out.first, out.second);
    return out;
  };
  EXPECT_EQ(read(R"("gpu.amd.com" == device.driver)").first,
            std::vector<std::string>{"gpu.amd.com"});
  EXPECT_EQ(read("(device.driver == 'a.example.com') || device.driver == 'b.example.com'").first,
            (std::vector<std::string>{"a.example.com", "b.example.com"}));
  const auto strings = read("device.attributes['x'].name == 'a && b' && device.driver == 'c.io'");
  EXPECT_EQ(strings.first, std::vector<std::string>{"c.io"});
  EXPECT_EQ(strings.second, std::vector<std::string>{"device.attributes['x'].name == 'a && b'"});
  const auto open = read("device.driver == 'a.io' || device.attributes['b.io'].type == 'gpu'");
  EXPECT_TRUE(open.first.empty()) << "one alternative may select any driver";
  EXPECT_EQ(open.second.size(), 1u);
  EXPECT_TRUE(read("device.driver.startsWith('gpu.')").first.empty());
  EXPECT_TRUE(read("device.driver == 'a' + 'b'").first.empty());
}

TEST(ClusterView, OnlyEachPoolsNewestGenerationCounts) {
  std::string slices;
  for (const auto& [generation, count] : {std::pair{1, 4}, std::pair{2, 2}}) {
    slices += "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata:\n  name: gen" +
              std::to_string(generation) +
              "\nspec:\n  driver: gpu.example.com\n  nodeName: dra-example-driver-cluster-worker\n"
              "  pool:\n    name: worker\n    generation: " +
              std::to_string(generation) + "\n    resourceSliceCount: 1\n  devices:\n";
    for (int i = 0; i < count; ++i) slices += "  - name: gpu-" + std::to_string(i) + "\n";
  }
  const auto view = viewOf(golden("deviceclass-dra-example-driver.yaml") + kExampleWorker + slices);
  ASSERT_EQ(view->resourceSlices().size(), 1u);
  EXPECT_EQ(view->largestNodeForDeviceClass("gpu.example.com", Placement{})->devices, 2);
}

TEST(ClusterView, APoolStillBeingPublishedGivesNoCount) {
  auto slice = [](int index) {
    return "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata:\n  name: part" +
           std::to_string(index) +
           "\nspec:\n  driver: gpu.example.com\n  nodeName: dra-example-driver-cluster-worker\n"
           "  pool: {name: worker, generation: 3, resourceSliceCount: 2}\n"
           "  devices: [{name: gpu-" +
           std::to_string(index) + "a}, {name: gpu-" + std::to_string(index) + "b}]\n";
  };
  const std::string base = golden("deviceclass-dra-example-driver.yaml") + kExampleWorker;
  EXPECT_FALSE(viewOf(base + slice(0))->largestNodeForDeviceClass("gpu.example.com", Placement{}))
      << "one slice of two: the pool may be larger than it looks";
  const auto whole = viewOf(base + slice(0) + slice(1));
  EXPECT_EQ(whole->largestNodeForDeviceClass("gpu.example.com", Placement{})->devices, 4);
}

TEST(ClusterView, NetworkAttachedSlicesReachNodesBySelector) {
  const auto view = viewOf(golden("deviceclass-dra-example-driver.yaml") + kExampleWorker + R"(---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: fabric
spec:
  driver: gpu.example.com
  pool: {name: fabric, generation: 1, resourceSliceCount: 1}
  nodeSelector:
    nodeSelectorTerms:
    - matchFields:
      - {key: metadata.name, operator: In, values: [dra-example-driver-cluster-worker]}
  devices: [{name: a}, {name: b}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: everywhere
spec:
  driver: gpu.example.com
  pool: {name: shared, generation: 1, resourceSliceCount: 1}
  allNodes: true
  devices: [{name: c}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: per-device
spec:
  driver: gpu.example.com
  pool: {name: mixed, generation: 1, resourceSliceCount: 1}
  perDeviceNodeSelection: true
  devices:
  - {name: d, nodeName: dra-example-driver-cluster-worker}
  - {name: e, nodeName: elsewhere}
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata:
  name: old-shape
spec:
  driver: gpu.example.com
  nodeName: dra-example-driver-cluster-worker
  pool: {name: beta, generation: 1, resourceSliceCount: 1}
  devices:
  - name: f
    basic:
      capacity:
        memory: {value: 40Gi}
)");
  EXPECT_EQ(view->largestNodeForDeviceClass("gpu.example.com", Placement{})->devices, 5);
  const ResourceSliceRecord& old = view->resourceSlices().back();
  ASSERT_EQ(old.devices.size(), 1u);
  EXPECT_EQ(old.devices.at(0).name, "f");
}

TEST(ClusterView, WhatExistsAndWhatIsNotKnown) {
  const auto view = viewOf(golden("nvidia-gpu-test-count.yaml") + R"(---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: ai-training
value: 1000
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  namespace: gpu-test1
  name: user-queue
spec:
  clusterQueue: cluster-queue
)");
  EXPECT_EQ(view->hasClaimTemplate("gpu-test1", "double-gpu"), Presence::Yes);
  EXPECT_EQ(view->hasClaimTemplate("gpu-test1", "single-gpu"), Presence::No);
  EXPECT_EQ(view->hasClaimTemplate("default", "double-gpu"), Presence::No);
  const ClaimTemplateRecord* record = view->claimTemplate("gpu-test1", "double-gpu");
  ASSERT_NE(record, nullptr);
  EXPECT_EQ(record->spec.requests.at(0).alternatives.at(0).count, 2);
  EXPECT_EQ(view->hasPriorityClass("ai-training"), Presence::Yes);
  EXPECT_EQ(view->priorityClass("ai-training")->value, 1000);
  EXPECT_EQ(view->hasPriorityClass("ai-realtime"), Presence::No);
  EXPECT_EQ(view->hasLocalQueue("gpu-test1", "user-queue"), Presence::Yes);
  EXPECT_EQ(view->localQueue("gpu-test1", "user-queue")->clusterQueue, "cluster-queue");
  EXPECT_EQ(view->hasLocalQueue("gpu-test1", "other"), Presence::No);
  ASSERT_NE(view->namespaceNamed("gpu-test1"), nullptr);
  // Kinds the snapshot does not hold are unknown: nothing is refused for them.
  EXPECT_EQ(view->hasDeviceClass("gpu.nvidia.com"), Presence::Unknown);
  EXPECT_FALSE(view->largestNodeForResource("nvidia.com/gpu", Placement{}));
  EXPECT_FALSE(view->knows(ClusterKind::Node));

  const auto empty = std::move(ClusterView::Builder{}).build();
  EXPECT_FALSE(empty->synced());
  EXPECT_EQ(empty->hasPriorityClass("ai-training"), Presence::Unknown);
  // The API server keeps the system classes in every cluster, listed or not.
  EXPECT_EQ(empty->hasPriorityClass("system-node-critical"), Presence::Yes);
  EXPECT_EQ(view->hasPriorityClass("system-cluster-critical"), Presence::Yes);
  EXPECT_EQ(empty->isGpuDeviceClass("gpu.nvidia.com"), Presence::Unknown);
}

TEST(ClusterView, ASnapshotTakesTheTemplatesOfTheInputBesideIt) {
  const auto snapshot = viewOf(recordedCluster());
  EXPECT_EQ(snapshot->hasClaimTemplate("gpu-test1", "double-gpu"), Presence::Unknown);
  ClusterView::Builder builder = snapshot->extended();
  std::vector<ManifestDocument> documents;
  std::string error;
  ASSERT_TRUE(parseManifests(golden("nvidia-gpu-test-count.yaml"), documents, &error)) << error;
  for (const ManifestDocument& document : documents) {
    if (stringMember(document.json.get(), "kind") != "ResourceClaimTemplate") continue;
    ClusterObject object;
    ASSERT_TRUE(readClusterObject(ClusterKind::ResourceClaimTemplate,
                                  stringMember(document.json.get(), "apiVersion"), *document.json,
                                  object, &error))
        << error;
    builder.add(std::move(object));
  }
  const auto both = std::move(builder).build();
  EXPECT_TRUE(both->synced());
  EXPECT_EQ(both->claimTemplate("gpu-test1", "double-gpu")->spec.requests.size(), 1u);
  EXPECT_EQ(both->hasClaimTemplate("gpu-test1", "other"), Presence::Unknown)
      << "templates of the input are not all templates of the cluster";
  EXPECT_EQ(both->largestNodeForDeviceClass("gpu.example.com", Placement{})->devices, 8);
  EXPECT_EQ(both->nodes().size(), snapshot->nodes().size());
}

TEST(ClusterSnapshot, ErrorsNameFileAndLine) {
  const ClusterSnapshot broken =
      readClusterSnapshot("apiVersion: v1\nkind: List\nitems: [\n", "s.yaml");
  EXPECT_FALSE(broken.view);
  EXPECT_EQ(broken.error.rfind("s.yaml:", 0), 0u) << broken.error;

  const ClusterSnapshot nameless = readClusterSnapshot(R"(apiVersion: v1
kind: ConfigMap
metadata: {name: unrelated}
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: a}
- apiVersion: v1
  kind: Node
  metadata: {labels: {a: b}}
)",
                                                       "s.yaml");
  EXPECT_EQ(nameless.error, "s.yaml:5: items[1] Node: metadata.name is required");

  const ClusterSnapshot skipped = readClusterSnapshot(
      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: unrelated}\n", "s.yaml");
  ASSERT_TRUE(skipped.view) << skipped.error;
  EXPECT_EQ(skipped.skippedKinds, std::vector<std::string>{"v1 ConfigMap"});

  const ClusterSnapshot missing = loadClusterSnapshot("/nonexistent/cluster.yaml");
  EXPECT_EQ(missing.error, "/nonexistent/cluster.yaml: cannot be read");
}

TEST(ClusterSnapshot, ReadsAFileAsKubectlWritesItInJsonToo) {
  TempDir dir;
  const auto yamlView = viewOf(golden("resourceslices-dra-example-driver.yaml"));
  // kubectl -o json prints the same List as JSON.
  std::vector<ManifestDocument> documents;
  std::string error;
  ASSERT_TRUE(parseManifests(golden("resourceslices-dra-example-driver.yaml"), documents, &error));
  writeFile(dir.file("cluster.json"), toJson(*documents.at(0).json));
  const ClusterSnapshot json = loadClusterSnapshot(dir.file("cluster.json"));
  ASSERT_TRUE(json.view) << json.error;
  ASSERT_EQ(json.view->resourceSlices().size(), 1u);
  EXPECT_EQ(json.view->resourceSlices()[0].devices.size(), 8u);
  EXPECT_EQ(json.view->resourceSlices()[0].devices[0].name,
            yamlView->resourceSlices()[0].devices[0].name);
  EXPECT_EQ(yamlView->resourceSlices()[0].pool, "dra-example-driver-cluster-worker");
}

}  // namespace
}  // namespace aiadmit
