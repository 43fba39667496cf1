// An install on clusters shaped like GKE and like EKS, as docs/install.md
// says to do it: `aiadmit profiles init --preset` on a snapshot of the GPU
// node groups, `profiles lint --cluster` on the same snapshot, aiadmit
// serving those profiles; then GPU work applied without any placement of its
// own is placed on those node groups by the real scheduler, and so is every
// GPU Pod of the corpus that aiadmit admits, with the operators running. With
// the shipped profiles the same work would get the seed cluster's pool, which
// no GKE or EKS node carries.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <tuple>

#include "tests/e2e/support/e2e_cluster.h"
#include "tests/e2e/support/workloads.h"

namespace aiadmit::e2e {
namespace {

struct CloudShape {
  std::string preset;
  std::string groupLabel;  // the node-group label the test's nodes are found by
  std::vector<NodeShape> nodes;
};

NodeShape cloudNode(const std::string& name, int gpus, std::map<std::string, std::string> labels,
                    json taint) {
  NodeShape node = gpuNode(name, gpus);
  node.labels.erase("accelerator");
  for (auto& [key, value] : labels) node.labels[key] = value;
  node.taints = json::array({std::move(taint)});
  return node;
}

// GKE's accelerator node pools, as many as the corpus's GKE samples name
// (A100, H100, L4, T4), two nodes each.
CloudShape gke() {
  const json taint = {{"key", "nvidia.com/gpu"}, {"value", "present"}, {"effect", "NoSchedule"}};
  CloudShape shape{"gke", "cloud.google.com/gke-nodepool", {}};
  for (const auto& [pool, accelerator, gpus] :
       {std::tuple{"a100", "nvidia-tesla-a100", 8}, std::tuple{"h100", "nvidia-h100-80gb", 8},
        std::tuple{"l4", "nvidia-l4", 8}, std::tuple{"t4", "nvidia-tesla-t4", 4}}) {
    for (int i = 0; i < 2; ++i) {
      shape.nodes.push_back(
          cloudNode("gke-" + std::string(pool) + "-" + std::to_string(i), gpus,
                    {{"cloud.google.com/gke-nodepool", std::string(pool) + "-pool"},
                     {"cloud.google.com/gke-accelerator", accelerator}},
                    taint));
    }
  }
  return shape;
}

// EKS managed node groups of p4d (8 A100) and g5 (4 A10G) instances.
CloudShape eks() {
  const json taint = {{"key", "nvidia.com/gpu"}, {"value", "true"}, {"effect", "NoSchedule"}};
  CloudShape shape{"eks", "eks.amazonaws.com/nodegroup", {}};
  for (const auto& [group, instance, count, gpus] :
       {std::tuple{"gpu-p4d", "p4d.24xlarge", 3, 8}, std::tuple{"gpu-g5", "g5.12xlarge", 2, 4}}) {
    for (int i = 0; i < count; ++i) {
      shape.nodes.push_back(cloudNode(
          "eks-" + std::string(group) + "-" + std::to_string(i), gpus,
          {{"eks.amazonaws.com/nodegroup", group}, {"node.kubernetes.io/instance-type", instance}},
          taint));
    }
  }
  return shape;
}

// GPU work with no placement of its own: a Deployment, a Job of two Pods and
// a bare training Pod, 12 GPUs in all, which fit the cloud's nodes however
// the scheduler spreads them (at most 7 on one 8-GPU node).
std::vector<json> gpuWork() {
  const auto container = [](int gpus) {
    return json::array({{{"name", "main"},
                         {"image", "registry.example/cuda:12"},
                         {"ports", json::array({{{"containerPort", 8000}}})},
                         {"resources", {{"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}}});
  };
  return {
      {{"apiVersion", "apps/v1"},
       {"kind", "Deployment"},
       {"metadata", {{"name", "serve"}}},
       {"spec",
        {{"replicas", 2},
         {"selector", {{"matchLabels", {{"app", "serve"}}}}},
         {"template",
          {{"metadata", {{"labels", {{"app", "serve"}}}}},
           {"spec", {{"containers", container(1)}}}}}}}},
      {{"apiVersion", "batch/v1"},
       {"kind", "Job"},
       {"metadata", {{"name", "train"}, {"annotations", {{"aiadmit.dev/workload", "training"}}}}},
       {"spec",
        {{"parallelism", 2},
         {"completions", 2},
         {"template", {{"spec", {{"restartPolicy", "Never"}, {"containers", container(4)}}}}}}}},
      {{"apiVersion", "v1"},
       {"kind", "Pod"},
       {"metadata",
        {{"name", "finetune"}, {"annotations", {{"aiadmit.dev/workload", "training"}}}}},
       {"spec", {{"restartPolicy", "Never"}, {"containers", container(2)}}}},
  };
}

bool asksForGpus(const json& pod) {
  for (const json& container : pod["spec"].value("containers", json::array())) {
    const json resources = container.value("resources", json::object());
    for (const char* section : {"limits", "requests"}) {
      const json quantities = resources.value(section, json::object());
      for (const auto& [name, quantity] : quantities.items()) {
        if (name.rfind("nvidia.com/", 0) == 0) return true;
      }
    }
  }
  return false;
}

// The ServiceAccounts an object's pod templates name.
void serviceAccountsOf(const json& value, std::set<std::string>& out) {
  if (value.is_object()) {
    if (value.contains("serviceAccountName") && value["serviceAccountName"].is_string()) {
      out.insert(value["serviceAccountName"].get<std::string>());
    }
    for (const auto& [key, member] : value.items()) serviceAccountsOf(member, out);
  } else if (value.is_array()) {
    for (const json& item : value) serviceAccountsOf(item, out);
  }
}

// The corpus's GPU manifests (SOURCES.tsv: uses_gpu), as their guides apply
// them: kubectl apply, or create for a generateName, with the
// ServiceAccounts they name and the PersistentVolumeClaim a training Job
// mounts made first. Returns the names of the workloads stored with an
// AIA016 warning: aiadmit said their Pods may land on no node there is.
std::vector<std::string> applyCorpus(const Namespace& ns) {
  std::vector<std::string> files;
  std::istringstream sources(testing::readFile(testing::corpusDir() + "/SOURCES.tsv"));
  for (std::string line; std::getline(sources, line);) {
    std::vector<std::string> fields;
    std::istringstream row(line);
    for (std::string field; std::getline(row, field, '\t');) fields.push_back(field);
    if (fields.size() > 6 && fields[0].rfind("manifests/", 0) == 0 && fields[6] == "yes") {
      files.push_back(fields[0]);
    }
  }
  EXPECT_GE(files.size(), 10u);
  std::vector<json> objects;
  std::set<std::string> accounts;
  for (const std::string& file : files) {
    const CommandResult read = kubectl(
        {"create", "--dry-run=client", "-o", "json", "-f", testing::corpusDir() + "/" + file});
    if (read.exitCode != 0) continue;  // a kind no CRD here serves (KServe's KFService)
    for (json& object : jsonObjects(read.out)) {
      object["metadata"].erase("namespace");
      serviceAccountsOf(object, accounts);
      objects.push_back(std::move(object));
    }
  }
  for (const std::string& account : accounts) {
    kubectl({"create", "serviceaccount", account, "-n", ns.name()});
  }
  const json volume = {{"apiVersion", "v1"},
                       {"kind", "PersistentVolume"},
                       {"metadata", {{"name", ns.name() + "-model-storage"}}},
                       {"spec",
                        {{"capacity", {{"storage", "1Ti"}}},
                         {"accessModes", json::array({"ReadWriteOnce", "ReadWriteMany"})},
                         {"storageClassName", ""},
                         {"hostPath", {{"path", "/mnt/model-storage"}}},
                         {"claimRef", {{"namespace", ns.name()}, {"name", "model-storage"}}}}}};
  EXPECT_EQ(kubectl({"apply", "-f", "-"}, toText(volume)).exitCode, 0);
  const json claim = {{"apiVersion", "v1"},
                      {"kind", "PersistentVolumeClaim"},
                      {"metadata", {{"name", "model-storage"}}},
                      {"spec",
                       {{"accessModes", json::array({"ReadWriteOnce"})},
                        {"storageClassName", ""},
                        {"volumeName", ns.name() + "-model-storage"},
                        {"resources", {{"requests", {{"storage", "100Gi"}}}}}}}};
  EXPECT_EQ(kubectl({"apply", "-n", ns.name(), "-f", "-"}, toText(claim)).exitCode, 0);
  std::vector<std::string> waiting;
  for (const json& object : objects) {
    const std::string kind = object.value("kind", "");
    if (kind == "Service" || kind == "ConfigMap" || kind == "Secret" ||
        kind == "PersistentVolumeClaim") {
      continue;
    }
    const bool named = object["metadata"].contains("name");
    const CommandResult applied =
        kubectl({named ? "apply" : "create", "-n", ns.name(), "-f", "-"}, toText(object));
    // Warned that no node it may land on holds its accelerators (AIA016),
    // or that no node of the cluster offers them at all (AIA003).
    if (applied.exitCode == 0 && (applied.err.find("[AIA016]") != std::string::npos ||
                                  applied.err.find("[AIA003]") != std::string::npos)) {
      waiting.push_back(object["metadata"].value("name", ""));
    }
  }
  return waiting;
}

// Whether an unbound `pod` waits only for GPUs that other Pods of the corpus
// hold in its own pool: the scheduler found nodes of its placement short of
// a resource, and every node its nodeSelector matches is one of the cloud's.
// Which of two workloads of one class gets a pool first is the scheduler's
// order, not aiadmit's placement.
bool waitsInItsCloudPool(const json& pod, const std::set<std::string>& cloudNodes) {
  const json selector = pod["spec"].value("nodeSelector", json::object());
  if (selector.empty()) return false;
  std::string message;
  for (const json& condition : pod["status"].value("conditions", json::array())) {
    if (condition.value("type", "") == "PodScheduled") message = condition.value("message", "");
  }
  if (message.find(" Insufficient ") == std::string::npos) return false;
  std::string labels;
  for (const auto& [key, value] : selector.items()) {
    labels += (labels.empty() ? "" : ",") + key + "=" + value.get<std::string>();
  }
  const CommandResult nodes = kubectl({"get", "nodes", "-l", labels, "-o", "name"});
  std::istringstream names(nodes.out);
  size_t matched = 0;
  for (std::string name; std::getline(names, name);) {
    if (name.rfind("node/", 0) == 0) name = name.substr(5);
    if (!cloudNodes.contains(name)) return false;
    ++matched;
  }
  return nodes.exitCode == 0 && matched > 0;
}

// Once the controllers and operators have made their Pods and the scheduler
// has placed them (the same Pods on the same nodes for three polls in a row,
// within a bound), every GPU Pod is bound to a node of the cloud's groups
// but those of a workload aiadmit warned with AIA016 or AIA003 (no node holds
// or offers its accelerators) and those waiting for GPUs other Pods hold in
// their own cloud pool. Returns how many are bound or wait in their pool.
size_t expectCorpusGpuPodsPlaced(const Namespace& ns, const CloudShape& shape,
                                 const std::vector<std::string>& waiting) {
  std::string last;
  int steady = 0;
  std::vector<json> pods;
  waitUntil(
      [&] {
        pods = podsOf(ns.name());
        std::string state;
        for (const json& pod : pods) {
          state +=
              pod["metadata"].value("name", "") + "@" + pod["spec"].value("nodeName", "") + " ";
        }
        steady = state == last ? steady + 1 : 0;
        last = state;
        return steady >= 3;
      },
      std::chrono::seconds(180), std::chrono::seconds(2));
  std::set<std::string> cloudNodes;
  for (const NodeShape& node : shape.nodes) cloudNodes.insert(node.name);
  size_t bound = 0;
  for (const json& pod : pods) {
    if (!asksForGpus(pod)) continue;
    const std::string name = pod["metadata"].value("name", "");
    const bool warned = std::any_of(waiting.begin(), waiting.end(), [&](const std::string& w) {
      return !w.empty() && (name == w || name.rfind(w + "-", 0) == 0);
    });
    const std::string node = pod["spec"].value("nodeName", "");
    if (warned && node.empty()) continue;
    if (node.empty() && waitsInItsCloudPool(pod, cloudNodes)) {
      ++bound;
      continue;
    }
    EXPECT_TRUE(cloudNodes.contains(node))
        << name << " on \"" << node << "\": "
        << kubectl({"get", "pod", name, "-n", ns.name(), "-o", "jsonpath={.status.conditions}"})
               .out;
    bound += !node.empty();
  }
  return bound;
}

// The test's own GPU work, in a namespace deleted (its GPUs freed) before
// the corpus comes.
void placeOwnWork(const CloudShape& shape) {
  Namespace ns(shape.preset);
  for (const json& object : gpuWork()) {
    const CommandResult applied = kubectl({"apply", "-n", ns.name(), "-f", "-"}, toText(object));
    EXPECT_EQ(applied.exitCode, 0) << applied.err;
  }
  // 2 replicas, 2 Job Pods, 1 bare Pod: every admitted GPU Pod is bound, to
  // a node of the cloud's GPU node groups.
  ASSERT_TRUE(podsBound(ns.name(), 5))
      << kubectl({"get", "pods,events", "-n", ns.name(), "-o", "wide"}).out;
  std::set<std::string> cloudNodes;
  for (const NodeShape& node : shape.nodes) cloudNodes.insert(node.name);
  for (const json& pod : podsOf(ns.name())) {
    EXPECT_TRUE(cloudNodes.contains(pod["spec"].value("nodeName", "")))
        << pod["metadata"]["name"] << " on " << pod["spec"].value("nodeName", "");
  }
}

void installAndPlace(const CloudShape& shape) {
  SCOPED_TRACE(shape.preset);
  for (const NodeShape& node : shape.nodes) ASSERT_TRUE(applyNode(node));
  const struct NodesDeletedAtExit {
    const CloudShape& shape;
    ~NodesDeletedAtExit() {
      for (const NodeShape& node : shape.nodes)
        kubectl({"delete", "node", node.name, "--wait=false"});
    }
  } cleanup{shape};

  testing::TempDir dir;
  const CommandResult snapshot = kubectl({"get", "nodes", "-l", shape.groupLabel, "-o", "yaml"});
  ASSERT_EQ(snapshot.exitCode, 0) << snapshot.err;
  testing::writeFile(dir.file("cluster.yaml"), snapshot.out);
  const CommandResult init = testing::runCommand({testing::binaryPath(), "profiles", "init",
                                                  "--cluster", dir.file("cluster.yaml"), "--preset",
                                                  shape.preset, "-o", dir.file("profiles")});
  ASSERT_EQ(init.exitCode, 0) << init.out << init.err;
  const CommandResult linted =
      testing::runCommand({testing::binaryPath(), "profiles", "lint", "--cluster",
                           dir.file("cluster.yaml"), dir.file("profiles")});
  EXPECT_EQ(linted.exitCode, 0) << linted.out;
  const CommandResult shipped =
      testing::runCommand({testing::binaryPath(), "profiles", "lint", "--cluster",
                           dir.file("cluster.yaml"), testing::sourceDir() + "/profiles"});
  EXPECT_EQ(shipped.exitCode, 1) << "the seed cluster's pool is no node of this cluster's";

  ASSERT_EQ(e2eCluster("aiadmit", {"stop"}).exitCode, 0);
  const CommandResult started =
      e2eCluster("aiadmit", {"start", "--profiles=" + dir.file("profiles")});
  ASSERT_EQ(started.exitCode, 0) << started.out << started.err;

  placeOwnWork(shape);
  // The corpus: every GPU Pod of what aiadmit admitted is placed, but for
  // those it warned may land on no node (a selector of another cloud's
  // labels: a node that matches may yet be added, so it is not refused).
  Namespace corpus(shape.preset + "-corpus");
  const std::vector<std::string> waiting = applyCorpus(corpus);
  // The notebook, the TensorRT LeaderWorkerSet's leader and worker, the
  // RayJob's GPU head, and on GKE the A100 training Job.
  EXPECT_GE(expectCorpusGpuPodsPlaced(corpus, shape, waiting), shape.preset == "gke" ? 5u : 4u);
  kubectl({"delete", "pv", corpus.name() + "-model-storage", "--wait=false"});
}

TEST(E2eCloudShapesSerial, InstalledWithThePresetsEveryAdmittedGpuPodIsPlacedOnGkeAndEks) {
  AiadmitRestoredAtExit restored;
  installAndPlace(gke());
  installAndPlace(eks());
}

}  // namespace
}  // namespace aiadmit::e2e
