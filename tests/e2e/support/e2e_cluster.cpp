#include "tests/e2e/support/e2e_cluster.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "webhook/cluster/cluster_snapshot.h"

namespace aiadmit::e2e {

namespace {

std::map<std::string, std::string> readEnvFile(const std::string& path) {
  std::map<std::string, std::string> values;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const size_t equals = line.find('=');
    if (equals == std::string::npos || line.empty() || line[0] == '#') continue;
    values[line.substr(0, equals)] = line.substr(equals + 1);
  }
  return values;
}

Cluster loadCluster() {
  Cluster loaded;
  const char* dir = std::getenv("AIADMIT_E2E_DIR");
  if (dir == nullptr || *dir == '\0') return loaded;
  auto env = readEnvFile(std::string(dir) + "/cluster.env");
  if (env.empty()) return loaded;
  loaded.dir = dir;
  loaded.kubeconfig = env["AIADMIT_E2E_KUBECONFIG"];
  loaded.kubectl = env["AIADMIT_E2E_KUBECTL"];
  loaded.apiserver = env["AIADMIT_E2E_APISERVER"];
  loaded.auditLog = env["AIADMIT_E2E_AUDIT_LOG"];
  loaded.aiadmitCa = env["AIADMIT_E2E_AIADMIT_CA"];
  loaded.aiadmitPort = std::atoi(env["AIADMIT_E2E_AIADMIT_PORT"].c_str());
  loaded.aiadmitClientCert = env["AIADMIT_E2E_AIADMIT_CLIENT_CERT"];
  loaded.aiadmitClientKey = env["AIADMIT_E2E_AIADMIT_CLIENT_KEY"];
  loaded.etcd = env["AIADMIT_E2E_ETCD"];
  std::istringstream operators(env["AIADMIT_E2E_OPERATORS"]);
  for (std::string name; std::getline(operators, name, ',');) {
    if (!name.empty()) loaded.operators.push_back(name);
  }
  return loaded;
}

json nodeObject(const NodeShape& shape) {
  json node = {{"apiVersion", "v1"}, {"kind", "Node"}};
  node["metadata"]["name"] = shape.name;
  node["metadata"]["labels"] = shape.labels;
  return node;
}

json nodeStatus(const NodeShape& shape) {
  json status;
  status["capacity"] = shape.allocatable;
  status["allocatable"] = shape.allocatable;
  status["conditions"] = json::array({{{"type", "Ready"},
                                       {"status", "True"},
                                       {"reason", "KubeletReady"},
                                       {"message", "a node of the end-to-end suite"}}});
  if (!shape.internalIP.empty()) {
    status["addresses"] = json::array({{{"type", "InternalIP"}, {"address", shape.internalIP}}});
  }
  status["nodeInfo"] = {{"architecture", "amd64"},
                        {"operatingSystem", "linux"},
                        {"kubeletVersion", "v1.37.2"},
                        {"containerRuntimeVersion", "none://0"},
                        {"kernelVersion", ""},
                        {"osImage", ""},
                        {"bootID", ""},
                        {"machineID", ""},
                        {"systemUUID", ""},
                        {"kubeProxyVersion", ""}};
  return json{{"status", status}};
}

std::map<std::string, std::string> baseLabels(const std::string& name) {
  return {{"kubernetes.io/hostname", name},
          {"kubernetes.io/os", "linux"},
          {"kubernetes.io/arch", "amd64"},
          {"topology.kubernetes.io/zone", "e2e-a"}};
}

}  // namespace

const Cluster& cluster() {
  static const Cluster loaded = loadCluster();
  if (loaded.dir.empty()) {
    ADD_FAILURE() << "no end-to-end cluster: AIADMIT_E2E_DIR must name the DIR of a running "
                     "`scripts/e2e-cluster up DIR` (ctest sets it; run `ctest -L e2e`)";
  }
  return loaded;
}

CommandResult kubectl(const std::vector<std::string>& args, const std::string& input) {
  const Cluster& c = cluster();
  std::vector<std::string> argv = {c.kubectl.empty() ? "kubectl" : c.kubectl, "--kubeconfig",
                                   c.kubeconfig};
  argv.insert(argv.end(), args.begin(), args.end());
  return testing::runCommand(argv, input);
}

json kubectlJson(const std::vector<std::string>& args, const std::string& input) {
  std::vector<std::string> withOutput = args;
  withOutput.insert(withOutput.end(), {"-o", "json"});
  const CommandResult result = kubectl(withOutput, input);
  if (result.exitCode != 0) {
    ADD_FAILURE() << "kubectl failed (" << result.exitCode << "): " << result.err;
    return nullptr;
  }
  json parsed = json::parse(result.out, nullptr, false);
  if (parsed.is_discarded()) ADD_FAILURE() << "kubectl printed no JSON: " << result.out;
  return parsed.is_discarded() ? json(nullptr) : parsed;
}

CommandResult e2eCluster(const std::string& command, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {testing::sourceDir() + "/scripts/e2e-cluster", command,
                                   cluster().dir};
  argv.insert(argv.end(), args.begin(), args.end());
  return testing::runCommand(argv);
}

bool waitUntil(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
               std::chrono::milliseconds interval) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (condition()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(interval);
  }
}

namespace {

// Unique across the processes of one run and the tests of one process; a
// name can come back only once its namespace is gone.
std::string uniqueName(const std::string& prefix) {
  static int made = 0;
  return prefix + "-" + std::to_string(getpid()) + "-" + std::to_string(++made);
}

}  // namespace

Namespace::Namespace(const std::string& prefix, bool optedIn) : name_(uniqueName(prefix)) {
  const CommandResult created = kubectl({"create", "namespace", name_});
  EXPECT_EQ(created.exitCode, 0) << created.err;
  if (optedIn) {
    const CommandResult labelled =
        kubectl({"label", "namespace", name_, "aiadmit.dev/enabled=true"});
    EXPECT_EQ(labelled.exitCode, 0) << labelled.err;
  }
  // The ServiceAccount admission plugin refuses Pods until the controller
  // manager has made the namespace's default ServiceAccount.
  EXPECT_TRUE(waitUntil(
      [&] {
        return kubectl({"get", "serviceaccount", "default", "-n", name_}).exitCode == 0;
      },
      std::chrono::seconds(30)))
      << "no default ServiceAccount in " << name_;
}

Namespace::~Namespace() {
  // Terminating, the namespace takes no new objects; its controller deletes
  // what it holds. Pods are deleted gracefully, and no kubelet confirms it:
  // deleting them with no grace period frees their nodes' GPUs now.
  kubectl({"delete", "namespace", name_, "--wait=false"});
  waitUntil(
      [&] {
        kubectl({"delete", "pods", "--all", "-n", name_, "--grace-period=0", "--force"});
        const CommandResult left = kubectl({"get", "pods", "-n", name_, "-o", "name"});
        return left.exitCode == 0 && left.out.empty();
      },
      std::chrono::seconds(60), std::chrono::milliseconds(500));
}

NodeShape gpuNode(const std::string& name, int gpus) {
  NodeShape shape;
  shape.name = name;
  shape.labels = baseLabels(name);
  shape.labels["accelerator"] = "nvidia";
  shape.labels["node.kubernetes.io/instance-type"] = "e2e-gpu-" + std::to_string(gpus);
  shape.taints =
      json::array({{{"key", "accelerator"}, {"value", "gpu"}, {"effect", "NoSchedule"}}});
  shape.allocatable = {{"cpu", "96"},
                       {"memory", "1000Gi"},
                       {"ephemeral-storage", "1000Gi"},
                       {"pods", "110"},
                       {"nvidia.com/gpu", std::to_string(gpus)}};
  return shape;
}

NodeShape cpuNode(const std::string& name) {
  NodeShape shape;
  shape.name = name;
  shape.labels = baseLabels(name);
  shape.labels["node.kubernetes.io/instance-type"] = "e2e-cpu";
  shape.allocatable = {
      {"cpu", "32"}, {"memory", "128Gi"}, {"ephemeral-storage", "500Gi"}, {"pods", "110"}};
  return shape;
}

bool applyNode(const NodeShape& shape) {
  // Created, then reshaped: the API server's TaintNodesByCondition admission
  // taints every new Node not-ready, and only a kubelet (or this) lifts it.
  const CommandResult applied = kubectl({"apply", "-f", "-"}, toText(nodeObject(shape)));
  if (applied.exitCode != 0) {
    ADD_FAILURE() << "node " << shape.name << ": " << applied.err;
    return false;
  }
  const json spec = {{"spec", {{"taints", shape.taints.empty() ? json(nullptr) : shape.taints}}}};
  const CommandResult tainted =
      kubectl({"patch", "node", shape.name, "--type=merge", "-p", toText(spec)});
  const CommandResult status = kubectl({"patch", "node", shape.name, "--subresource=status",
                                        "--type=merge", "-p", toText(nodeStatus(shape))});
  if (tainted.exitCode != 0 || status.exitCode != 0) {
    ADD_FAILURE() << "node " << shape.name << ": " << tainted.err << status.err;
    return false;
  }
  return true;
}

std::vector<NodeShape> smallGpuCluster() {
  std::vector<NodeShape> nodes;
  for (int i = 1; i <= kGpuNodes; ++i) nodes.push_back(gpuNode("gpu-node-" + std::to_string(i), 8));
  for (int i = 1; i <= kCpuNodes; ++i) nodes.push_back(cpuNode("cpu-node-" + std::to_string(i)));
  return nodes;
}

bool isGpuNode(const std::string& nodeName) {
  return nodeName.rfind("gpu-node-", 0) == 0;
}

std::string toText(const json& object) {
  return object.dump();
}

std::vector<json> jsonObjects(const std::string& text) {
  std::vector<json> objects;
  std::istringstream stream(text);
  while (stream >> std::ws && stream.peek() != EOF) {
    json object;
    try {
      stream >> object;  // one value; the stream keeps the rest
    } catch (const json::exception& error) {
      ADD_FAILURE() << "not JSON (" << error.what() << "): " << text.substr(0, 200);
      break;
    }
    if (object.value("kind", "") != "List") {
      objects.push_back(std::move(object));
      continue;
    }
    for (json& item : object["items"]) objects.push_back(std::move(item));
  }
  return objects;
}

AiadmitRestoredAtExit::~AiadmitRestoredAtExit() {
  const CommandResult started = e2eCluster("aiadmit", {"start"});
  EXPECT_EQ(started.exitCode, 0) << started.out << started.err;
}

std::vector<json> auditEvents(const std::string& resource, const std::string& namespaceName,
                              const std::string& name, const std::string& verb) {
  std::vector<json> events;
  std::ifstream in(cluster().auditLog);
  std::string line;
  while (std::getline(in, line)) {
    // Cheap filter first: the log holds every request of the cluster.
    if (line.find(namespaceName) == std::string::npos) continue;
    json event = json::parse(line, nullptr, false);
    if (event.is_discarded() || event.value("verb", "") != verb) continue;
    const json& ref = event["objectRef"];
    if (!ref.is_object() || ref.value("resource", "") != resource ||
        ref.value("namespace", "") != namespaceName ||
        (!name.empty() && ref.value("name", "") != name) || ref.contains("subresource")) {
      continue;
    }
    events.push_back(std::move(event));
  }
  return events;
}

std::map<std::string, std::string> auditAnnotations(const std::vector<json>& events) {
  std::map<std::string, std::string> merged;
  for (const json& event : events) {
    if (!event.contains("annotations")) continue;
    for (const auto& [key, value] : event["annotations"].items()) {
      merged[key] = value.is_string() ? value.get<std::string>() : value.dump();
    }
  }
  return merged;
}

std::string aiadmitMetrics() {
  const Cluster& c = cluster();
  // As the API server calls it: aiadmit runs with --client-ca.
  httplib::SSLClient client("127.0.0.1", c.aiadmitPort, c.aiadmitClientCert, c.aiadmitClientKey);
  client.set_ca_cert_path(c.aiadmitCa.c_str());
  client.enable_server_certificate_verification(true);
  client.set_connection_timeout(2);
  client.set_read_timeout(5);
  const auto response = client.Get("/metrics");
  return response && response->status == 200 ? response->body : std::string();
}

std::vector<std::string> aiadmitWarnings(const std::string& kubectlStderr) {
  std::vector<std::string> warnings;
  std::istringstream lines(kubectlStderr);
  std::string line;
  const std::string prefix = "Warning: aiadmit: ";
  while (std::getline(lines, line)) {
    if (line.rfind(prefix, 0) == 0)
      warnings.push_back(line.substr(std::string("Warning: ").size()));
  }
  return warnings;
}

bool writeClusterSnapshot(const std::string& path) {
  const CommandResult snapshot =
      kubectl({"get", "nodes,resourceslices,deviceclasses,priorityclasses,localqueues", "-A", "-o",
               "yaml"});
  if (snapshot.exitCode != 0) {
    ADD_FAILURE() << "cluster snapshot: " << snapshot.err;
    return false;
  }
  testing::writeFile(path, snapshot.out);
  return true;
}

namespace {

void eraseLabel(json& labels, const char* key) {
  if (labels.is_object()) labels.erase(key);
}

void dropJobControllerLabels(json& spec) {
  for (const char* key : {"batch.kubernetes.io/controller-uid", "controller-uid"}) {
    if (spec.contains("selector")) eraseLabel(spec["selector"]["matchLabels"], key);
    if (spec.contains("template")) eraseLabel(spec["template"]["metadata"]["labels"], key);
  }
}

// kube-api-access-XXXXX: the ServiceAccount admission plugin's projected
// token volume, named at random per Pod.
void renameTokenVolume(json& podSpec) {
  auto rename = [](json& entry) {
    if (entry.value("name", "").rfind("kube-api-access-", 0) == 0)
      entry["name"] = "kube-api-access";
  };
  for (json& volume : podSpec["volumes"]) rename(volume);
  for (const char* list : {"containers", "initContainers"}) {
    if (!podSpec.contains(list)) continue;
    for (json& container : podSpec[list]) {
      if (!container.contains("volumeMounts")) continue;
      for (json& mount : container["volumeMounts"]) rename(mount);
    }
  }
}

}  // namespace

json claimTemplate(const std::string& name, int count) {
  json exactly = {{"deviceClassName", "gpu.nvidia.com"}};
  if (count != 1) exactly["count"] = count;
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceClaimTemplate"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"spec", {{"devices", {{"requests", {{{"name", "gpu"}, {"exactly", exactly}}}}}}}}}}};
}

json podClaiming(const std::string& name, const std::string& templateName,
                 const std::string& workload) {
  json metadata = {{"name", name}};
  if (!workload.empty()) metadata["annotations"] = {{"aiadmit.dev/workload", workload}};
  const json container = {{"name", "main"},
                          {"image", "registry.example/embed:1"},
                          {"resources", {{"claims", json::array({{{"name", "gpu"}}})}}}};
  const json claim = {{"name", "gpu"}, {"resourceClaimTemplateName", templateName}};
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", metadata},
          {"spec",
           {{"restartPolicy", "Never"},
            {"resourceClaims", json::array({claim})},
            {"containers", json::array({container})}}}};
}

json withoutServerFields(json object) {
  object.erase("status");
  json& metadata = object["metadata"];
  // Finalizers are the controllers' (KubeRay's on a RayJob), added once
  // they have seen the object.
  for (const char* field : {"uid", "resourceVersion", "creationTimestamp", "generation",
                            "managedFields", "namespace", "selfLink", "finalizers"}) {
    metadata.erase(field);
  }
  if (metadata.contains("annotations")) {
    metadata["annotations"].erase("kubectl.kubernetes.io/last-applied-configuration");
    metadata["annotations"].erase("deployment.kubernetes.io/revision");
    if (metadata["annotations"].empty()) metadata.erase("annotations");
  }
  const std::string kind = object.value("kind", "");
  json& spec = object["spec"];
  if (kind == "Service") {
    spec.erase("clusterIP");
    spec.erase("clusterIPs");
  }
  if (kind == "Job") {
    dropJobControllerLabels(spec);
    if (metadata.contains("labels")) {
      eraseLabel(metadata["labels"], "batch.kubernetes.io/controller-uid");
      eraseLabel(metadata["labels"], "controller-uid");
    }
  }
  if (kind == "Pod") {
    spec.erase("nodeName");
    if (spec.contains("volumes")) renameTokenVolume(spec);
  }
  if (spec.is_null()) object.erase("spec");
  return object;
}

std::string kubectlName(const json& object) {
  std::string kind = object.value("kind", "");
  for (char& c : kind) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::string apiVersion = object.value("apiVersion", "");
  const size_t slash = apiVersion.find('/');
  // kind.group, as in "deployment.apps/x"; the core group has no name.
  const std::string group = slash == std::string::npos ? "" : apiVersion.substr(0, slash);
  return (group.empty() ? kind : kind + "." + group) + "/" +
         object["metadata"].value("name", std::string());
}

}  // namespace aiadmit::e2e
