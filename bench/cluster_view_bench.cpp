// The cluster view at scale: a generated 5,000-node, 50,000-slice view, the
// p99 of one /validate of the reference GPU review with AIA016 judging
// capacity on it, the time to build the next view after one Node changed,
// and what the view costs per node. Run: build/bench/cluster_view_bench
// [NODES [SLICES_PER_NODE [ITERATIONS]]]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "bench/bench_inputs.h"
#include "webhook/cluster/cluster_view.h"
#include "webhook/engine/engine.h"

namespace aiadmit::bench {
namespace {

using Clock = std::chrono::steady_clock;

double residentMiB() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0;
  long resident = 0;
  statm >> pages >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) /
         (1024.0 * 1024.0);
}

// A GPU node as a managed cluster labels and taints it, or a CPU node.
ClusterNode makeNode(int i, bool gpu) {
  ClusterNode node;
  node.name = (gpu ? "gpu-node-" : "cpu-node-") + std::to_string(i);
  node.labels = {{"kubernetes.io/hostname", node.name},
                 {"kubernetes.io/os", "linux"},
                 {"kubernetes.io/arch", "amd64"},
                 {"node.kubernetes.io/instance-type", gpu ? "a3-highgpu-8g" : "n2-standard-32"},
                 {"topology.kubernetes.io/region", "us-central1"},
                 {"topology.kubernetes.io/zone", "us-central1-" + std::string(1, 'a' + i % 3)},
                 {"cloud.google.com/gke-nodepool",
                  gpu ? "gpu-pool-" + std::to_string(i % 8) : "default-pool"}};
  if (gpu) {
    node.labels["cloud.google.com/gke-accelerator"] = "nvidia-h100-80gb";
    node.labels["nvidia.com/gpu.present"] = "true";
    node.taints.push_back({"nvidia.com/gpu", "present", "NoSchedule"});
    node.allocatable["nvidia.com/gpu"] = 8;
  }
  return node;
}

// `perNode` slices for each node: one of the GPU driver with 8 devices on a
// GPU node, the others of a NIC driver; and a few network-attached slices
// that reach nodes by selector.
std::vector<ResourceSliceRecord> makeSlices(const std::vector<ClusterNode>& nodes, int perNode) {
  std::vector<ResourceSliceRecord> slices;
  slices.reserve(nodes.size() * static_cast<size_t>(perNode) + 20);
  for (const ClusterNode& node : nodes) {
    const bool gpu = node.allocatable.count("nvidia.com/gpu") != 0;
    for (int s = 0; s < perNode; ++s) {
      ResourceSliceRecord slice;
      const bool gpuSlice = gpu && s == 0;
      slice.driver = gpuSlice ? "gpu.nvidia.com" : "dra.net";
      slice.pool = node.name;
      slice.name = node.name + "-" + slice.driver + "-" + std::to_string(s);
      slice.nodeName = node.name;
      slice.resourceSliceCount = gpuSlice ? 1 : perNode - (gpu ? 1 : 0);
      for (int d = 0; d < (gpuSlice ? 8 : 2); ++d) {
        SliceDevice device;
        device.name = (gpuSlice ? "gpu-" : "nic-") + std::to_string(s * 8 + d);
        slice.devices.push_back(std::move(device));
      }
      slices.push_back(std::move(slice));
    }
  }
  for (int s = 0; s < 20; ++s) {
    ResourceSliceRecord slice;
    slice.driver = "fabric.example.com";
    slice.pool = "fabric-" + std::to_string(s);
    slice.name = slice.pool;
    slice.nodeSelector = NodeSelectorTerms{{{"cloud.google.com/gke-nodepool",
                                             LabelOperator::In,
                                             {"gpu-pool-" + std::to_string(s % 8)},
                                             false}}};
    slice.devices.push_back(SliceDevice{"link-0", "", false, std::nullopt});
    slices.push_back(std::move(slice));
  }
  return slices;
}

template <typename T>
ClusterObjectsPtr shared(std::vector<T> records) {
  auto objects = std::make_shared<ClusterObjects>();
  objects->reserve(records.size());
  for (T& record : records) {
    objects->push_back(std::make_shared<const ClusterObject>(std::move(record)));
  }
  return objects;
}

struct Sources {
  ClusterObjectsPtr nodes;
  ClusterObjectsPtr slices;
  ClusterObjectsPtr classes;
};

std::shared_ptr<const ClusterView> build(const Sources& sources, const ClusterView* previous) {
  ClusterView::Builder builder;
  builder.addAll(ClusterKind::Node, sources.nodes);
  builder.addAll(ClusterKind::ResourceSlice, sources.slices);
  builder.addAll(ClusterKind::DeviceClass, sources.classes);
  for (ClusterKind kind : kAllClusterKinds) builder.markListed(kind);
  builder.markSynced(true);
  if (previous != nullptr) builder.reuse(*previous);
  return std::move(builder).build();
}

double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  const size_t at = std::min(values.size() - 1, static_cast<size_t>(p * values.size()));
  return values[at];
}

// The time `step` takes, in milliseconds: the median of `rounds`.
template <typename Step>
double medianMs(int rounds, Step step) {
  std::vector<double> times;
  for (int r = 0; r < rounds; ++r) {
    const auto start = Clock::now();
    step(r);
    times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  return percentile(times, 0.5);
}

Sources generate(int nodeCount, int slicesPerNode) {
  std::vector<ClusterNode> nodes;
  for (int i = 0; i < nodeCount; ++i) nodes.push_back(makeNode(i, i % 5 != 0));
  Sources sources;
  sources.slices = shared(makeSlices(nodes, slicesPerNode));
  sources.nodes = shared(std::move(nodes));
  DeviceClassRecord gpu;
  gpu.name = "gpu.nvidia.com";
  gpu.drivers = {"gpu.nvidia.com"};
  gpu.extendedResourceName = "nvidia.com/gpu";
  DeviceClassRecord nic;
  nic.name = "dra.net";
  nic.drivers = {"dra.net"};
  sources.classes = shared(std::vector<DeviceClassRecord>{gpu, nic});
  return sources;
}

// Microseconds each of `iterations` calls of `step` takes.
template <typename Step>
std::vector<double> timesUs(int iterations, Step step) {
  std::vector<double> times;
  times.reserve(static_cast<size_t>(iterations));
  for (int i = 0; i < iterations; ++i) {
    const auto at = Clock::now();
    step();
    times.push_back(std::chrono::duration<double, std::micro>(Clock::now() - at).count());
  }
  return times;
}

void report(const char* what, const std::vector<double>& times) {
  std::printf("%s: p50 %.1f us, p99 %.1f us, max %.1f us\n", what, percentile(times, 0.5),
              percentile(times, 0.99), percentile(times, 1.0));
}

// One /validate of the reference review, with the view and without one.
void measureRequests(const std::shared_ptr<const ClusterView>& view, int iterations) {
  const std::string body = loadReview("gpu-pod");
  Engine engine(profilesWithExtra(0));
  engine.replaceClusterView(view);
  for (int i = 0; i < 200; ++i) answerReview(engine, Endpoint::Validate, body);
  report("/validate gpu-pod with the view",
         timesUs(iterations, [&] { answerReview(engine, Endpoint::Validate, body); }));
  Engine alone(profilesWithExtra(0));
  report("/validate gpu-pod without a view",
         timesUs(iterations, [&] { answerReview(alone, Endpoint::Validate, body); }));
  // AIA016's question for the reference Pod: every node, the GPU nodes'
  // taint tolerated as the API server's ExtendedResourceToleration adds it.
  Placement everyNode;
  everyNode.tolerations.push_back({"nvidia.com/gpu", "Exists", "", "NoSchedule", {}});
  const auto largest = view->largestNodeForResource("nvidia.com/gpu", everyNode);
  std::printf("largest node for nvidia.com/gpu: %lld of %d nodes (%s)\n",
              static_cast<long long>(largest ? largest->devices : -1),
              largest ? largest->matchingNodes : 0, largest ? largest->node.c_str() : "-");
  report("largestNodeForResource, every node",
         timesUs(iterations, [&] { view->largestNodeForResource("nvidia.com/gpu", everyNode); }));
  // A pool named by label: the label index picks its nodes, each looked at.
  Placement onePool = everyNode;
  onePool.nodeSelector["cloud.google.com/gke-nodepool"] = "gpu-pool-0";
  const auto pool = view->largestNodeForDeviceClass("gpu.nvidia.com", onePool);
  std::printf("one labelled pool: %d nodes\n", pool ? pool->matchingNodes : -1);
  report("largestNodeForDeviceClass, one labelled pool",
         timesUs(iterations, [&] { view->largestNodeForDeviceClass("gpu.nvidia.com", onePool); }));
}

// The next view after one Node changed: its reflector's snapshot is the
// same pointers but one, and the Node part alone is built again.
void measureRepublish(Sources sources, std::shared_ptr<const ClusterView> current) {
  const double nodeMs = medianMs(21, [&](int round) {
    auto changed = std::make_shared<ClusterObjects>(*sources.nodes);
    ClusterNode node = std::get<ClusterNode>(*(*changed)[static_cast<size_t>(round)]);
    node.labels["example.com/round"] = std::to_string(round);
    (*changed)[static_cast<size_t>(round)] = std::make_shared<const ClusterObject>(std::move(node));
    sources.nodes = std::move(changed);
    current = build(sources, current.get());
  });
  const double sliceMs = medianMs(5, [&](int) {
    sources.slices = std::make_shared<ClusterObjects>(*sources.slices);
    current = build(sources, current.get());
  });
  std::printf("next view after one Node changed: %.2f ms (median of 21)\n", nodeMs);
  std::printf("next view after the ResourceSlices changed: %.1f ms (median of 5)\n", sliceMs);
}

int run(int nodeCount, int slicesPerNode, int iterations) {
  const double before = residentMiB();
  const Sources sources = generate(nodeCount, slicesPerNode);
  const auto start = Clock::now();
  const std::shared_ptr<const ClusterView> view = build(sources, nullptr);
  const double buildMs = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  const double after = residentMiB();
  std::printf("view: %d nodes, %zu slices; built from scratch in %.1f ms\n", nodeCount,
              view->resourceSlices().size(), buildMs);
  std::printf("resident memory of objects and view: %.1f MiB, %.1f KiB per node\n", after - before,
              (after - before) * 1024.0 / nodeCount);
  measureRequests(view, iterations);
  measureRepublish(sources, view);
  return 0;
}

}  // namespace
}  // namespace aiadmit::bench

int main(int argc, char** argv) {
  const int nodes = argc > 1 ? std::atoi(argv[1]) : 5000;
  const int slicesPerNode = argc > 2 ? std::atoi(argv[2]) : 10;
  const int iterations = argc > 3 ? std::atoi(argv[3]) : 2000;
  return aiadmit::bench::run(nodes, slicesPerNode, iterations);
}
