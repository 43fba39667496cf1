// The end-to-end suite's view of the control plane that `scripts/e2e-cluster
// up` started: kubectl against it, namespaces that clean up after
// themselves, the Nodes of a small GPU cluster, the API server's audit log
// and aiadmit's metrics. ctest sets AIADMIT_E2E_DIR (tests/e2e/CMakeLists.txt).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/test_support.h"
#include "webhook/cluster/cluster_snapshot.h"

namespace aiadmit::e2e {

using nlohmann::json;
using testing::CommandResult;

// What DIR/cluster.env says.
struct Cluster {
  std::string dir;
  std::string kubeconfig;
  std::string kubectl;
  std::string apiserver;
  std::string auditLog;
  std::string aiadmitCa;
  int aiadmitPort = 0;
  // The certificate the API server presents to aiadmit (serve --client-ca).
  std::string aiadmitClientCert;
  std::string aiadmitClientKey;
  // etcd's client URL (its v3 HTTP gateway).
  std::string etcd;
  // The operators `up --operators` started, in order (jobset, lws, ...).
  std::vector<std::string> operators;
};
// The cluster of AIADMIT_E2E_DIR; fails the test (and returns an empty one)
// when none is up.
const Cluster& cluster();

// kubectl ARGS... with the cluster-admin kubeconfig.
CommandResult kubectl(const std::vector<std::string>& args, const std::string& input = "");
// kubectl ARGS... -o json, parsed; fails the test and returns null on error.
json kubectlJson(const std::vector<std::string>& args, const std::string& input = "");
// scripts/e2e-cluster COMMAND DIR ARGS... (for `aiadmit stop|start`).
CommandResult e2eCluster(const std::string& command, const std::vector<std::string>& args);

// Polls `condition` every `interval` until it holds; false after `timeout`.
bool waitUntil(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
               std::chrono::milliseconds interval = std::chrono::milliseconds(200));

// A namespace of the test's own, labelled aiadmit.dev/enabled=true when
// `optedIn`. The destructor deletes it and its Pods: without a kubelet a
// bound Pod is only gone when deleted with no grace period, and until then
// it holds its node's GPUs.
class Namespace {
 public:
  explicit Namespace(const std::string& prefix, bool optedIn = true);
  ~Namespace();
  Namespace(const Namespace&) = delete;
  Namespace& operator=(const Namespace&) = delete;
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

// One Node as a cloud's node group makes it: labels, taints, allocatable,
// Ready, without a kubelet behind it.
struct NodeShape {
  std::string name;
  std::map<std::string, std::string> labels;
  json taints = json::array();
  std::map<std::string, std::string> allocatable;
  // Its status.addresses' InternalIP, when it has one.
  std::string internalIP;
};
// A GPU node as the shipped profiles expect: accelerator=nvidia, tainted
// accelerator=gpu:NoSchedule, `gpus` nvidia.com/gpu.
NodeShape gpuNode(const std::string& name, int gpus);
NodeShape cpuNode(const std::string& name);
// Creates or reshapes the Node (spec.taints, labels, status through the
// status subresource); returns false with the failure recorded.
bool applyNode(const NodeShape& shape);
// The suite's small GPU cluster: kGpuNodes GPU nodes of 8 GPUs, kCpuNodes
// CPU nodes.
constexpr int kGpuNodes = 4;
constexpr int kCpuNodes = 2;
std::vector<NodeShape> smallGpuCluster();
// Beside them, a GPU node of the pool whose 8 GPUs a DRA driver publishes
// (ResourceSlices of driver gpu.nvidia.com) instead of nvidia.com/gpu.
inline constexpr const char* kDraGpuNode = "gpu-node-dra";
// True when `nodeName` is one of the GPU nodes.
bool isGpuNode(const std::string& nodeName);

// Objects that tests apply: JSON texts of one object each.
std::string toText(const json& object);
// The objects of what kubectl prints with -o json: one object or several
// one after another, a List standing for its items.
std::vector<json> jsonObjects(const std::string& text);

// The API server's audit events (DIR/audit.log) for requests on `resource`
// (as in the URL: "pods", "deployments"; not its subresources) in
// `namespaceName` with `verb` ("create"), named `name` ("" for any: a create
// by generateName has no name in the log), in log order.
std::vector<json> auditEvents(const std::string& resource, const std::string& namespaceName,
                              const std::string& name, const std::string& verb);
// The annotations of those events, merged (the ResponseComplete stage
// carries the admission ones).
std::map<std::string, std::string> auditAnnotations(const std::vector<json>& events);

// Restarts aiadmit with no extra flags when it goes out of scope, so that a
// test that stops it or changes its flags leaves it as `up` started it.
class AiadmitRestoredAtExit {
 public:
  AiadmitRestoredAtExit() = default;
  ~AiadmitRestoredAtExit();
  AiadmitRestoredAtExit(const AiadmitRestoredAtExit&) = delete;
  AiadmitRestoredAtExit& operator=(const AiadmitRestoredAtExit&) = delete;
};

// GET /metrics of aiadmit (plain text), "" when it does not answer.
std::string aiadmitMetrics();

// Lines kubectl printed as admission warnings ("Warning: aiadmit: ..."),
// without the "Warning: " prefix.
std::vector<std::string> aiadmitWarnings(const std::string& kubectlStderr);

// A snapshot file of the cluster, as `aiadmit check --cluster` reads one:
// `kubectl get nodes,resourceslices,deviceclasses,priorityclasses,localqueues
// -A -o yaml`, written to `path`.
bool writeClusterSnapshot(const std::string& path);

// `object` without what the API server or a controller sets on its own
// and what differs from one namespace or one create to the next (uid,
// resourceVersion, timestamps, managedFields, finalizers, status, the namespace, the
// last-applied annotation, a Service's cluster IPs, a Job's controller-uid
// labels, a Pod's node and the random suffix of its token volume): two
// stored objects made from the same manifest compare equal.
// A resource.k8s.io/v1 ResourceClaimTemplate of `count` devices of the
// profiles' GPU class, gpu.nvidia.com.
json claimTemplate(const std::string& name, int count = 1);
// A bare Pod whose one container uses a claim of the template
// `templateName`, declared `workload` (aiadmit.dev/workload) when given.
json podClaiming(const std::string& name, const std::string& templateName,
                 const std::string& workload = "");

json withoutServerFields(json object);

// The "KIND/NAME" kubectl names an object by in its messages.
std::string kubectlName(const json& object);

}  // namespace aiadmit::e2e
