// The operators themselves (scripts/e2e-cluster up --operators: JobSet,
// LeaderWorkerSet, KubeRay and Kueue, each run with the CRDs, RBAC and
// webhooks it ships) making the children of workloads applied in an
// opted-in namespace, the GPU examples each operator publishes among them:
// what the API server stored, what kubectl printed, who created what, and
// where the scheduler put it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "tests/e2e/support/e2e_cluster.h"
#include "tests/e2e/support/workloads.h"

namespace aiadmit::e2e {
namespace {

// The corpus holds no JobSet; this one is the shape of JobSet's own
// examples: replicated jobs of one-Pod Jobs, each with a GPU.
json trainingJobSet(const std::string& name, int replicas) {
  return json::parse(R"({
    "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
    "metadata": {"name": ")" +
                     name + R"(", "annotations": {"aiadmit.dev/workload": "training"}},
    "spec": {"replicatedJobs": [{"name": "workers", "replicas": )" +
                     std::to_string(replicas) +
                     R"(,
      "template": {"spec": {"parallelism": 1, "completions": 1, "backoffLimit": 0,
        "template": {"spec": {"restartPolicy": "Never",
          "containers": [{"name": "trainer", "image": "registry.example/trainer:1",
            "resources": {"limits": {"nvidia.com/gpu": "1", "memory": "16Gi"}}}]}}}}}]}})");
}

CommandResult create(const Namespace& ns, const json& object) {
  return kubectl({"create", "-n", ns.name(), "-f", "-"}, toText(object));
}

std::vector<json> itemsOf(const std::string& resource, const Namespace& ns) {
  const json list = kubectlJson({"get", resource, "-n", ns.name()});
  return list.is_object() ? list["items"].get<std::vector<json>>() : std::vector<json>();
}

std::string controllerKindOf(const json& object) {
  for (const json& owner : object["metadata"].value("ownerReferences", json::array())) {
    if (owner.value("controller", false)) return owner.value("kind", "");
  }
  return "";
}

bool asksForGpus(const json& podSpec) {
  for (const json& container : podSpec.value("containers", json::array())) {
    if (container.contains(json::json_pointer("/resources/limits/nvidia.com~1gpu"))) return true;
  }
  return false;
}

// The scheduling-relevant parts of a Pod template that only its workload
// may set: a child that differs here carries a setting its parent did not.
json placementOf(const json& podSpec) {
  json parts;
  for (const char* field : {"tolerations", "nodeSelector", "affinity", "priorityClassName",
                            "schedulerName", "volumes", "runtimeClassName"}) {
    if (podSpec.contains(field)) parts[field] = podSpec[field];
  }
  json containers = json::array();
  for (const json& container : podSpec.value("containers", json::array())) {
    json part = {{"name", container["name"]}};
    for (const char* field :
         {"resources", "readinessProbe", "livenessProbe", "startupProbe", "volumeMounts"}) {
      if (container.contains(field)) part[field] = container[field];
    }
    containers.push_back(part);
  }
  parts["containers"] = containers;
  // The API server defaults a Job's Pod template, not a custom resource's.
  if (parts.value("schedulerName", "") == "default-scheduler") parts.erase("schedulerName");
  return parts;
}

bool isTokenVolume(const json& volumeOrMount) {
  return volumeOrMount.value("name", "").rfind("kube-api-access-", 0) == 0;
}

json withoutTokenVolumes(const json& list) {
  json kept = json::array();
  for (const json& item : list) {
    if (!isTokenVolume(item)) kept.push_back(item);
  }
  return kept;
}

// placementOf a Pod, without what the API server's admission plugins add to
// every Pod: the ServiceAccount token's volume and mounts, the not-ready and
// unreachable tolerations, requests defaulted from limits.
json podPlacementOf(const json& podSpec) {
  json parts = placementOf(podSpec);
  json tolerations = json::array();
  for (const json& toleration : parts.value("tolerations", json::array())) {
    if (toleration.value("key", "").rfind("node.kubernetes.io/", 0) != 0) {
      tolerations.push_back(toleration);
    }
  }
  parts.erase("tolerations");
  if (!tolerations.empty()) parts["tolerations"] = tolerations;
  const json volumes = withoutTokenVolumes(parts.value("volumes", json::array()));
  parts.erase("volumes");
  if (!volumes.empty()) parts["volumes"] = volumes;
  for (json& container : parts["containers"]) {
    const json mounts = withoutTokenVolumes(container.value("volumeMounts", json::array()));
    container.erase("volumeMounts");
    if (!mounts.empty()) container["volumeMounts"] = mounts;
    if (container.contains("resources")) container["resources"].erase("requests");
  }
  return parts;
}

std::set<std::string> podUids(const std::vector<json>& pods) {
  std::set<std::string> uids;
  for (const json& pod : pods) uids.insert(pod["metadata"].value("uid", ""));
  return uids;
}

// ---------------------------------------------------------- the install

// Each operator's webhook configurations, by the names its install gives
// them, and the ServiceAccount it acts as.
struct ShippedOperator {
  std::string name;
  std::vector<std::string> webhookConfigurations;
  std::string user;
  std::string makes;  // a resource it creates
};

const std::vector<ShippedOperator>& shippedOperators() {
  static const std::vector<ShippedOperator> operators = {
      {"jobset",
       {"mutatingwebhookconfiguration/jobset-mutating-webhook-configuration",
        "validatingwebhookconfiguration/jobset-validating-webhook-configuration"},
       kJobSetUser,
       "jobs.batch"},
      {"lws",
       {"mutatingwebhookconfiguration/lws-mutating-webhook-configuration",
        "validatingwebhookconfiguration/lws-validating-webhook-configuration"},
       kLwsUser,
       "statefulsets.apps"},
      {"kuberay", {}, kKubeRayUser, "pods"},
      {"kueue",
       {"mutatingwebhookconfiguration/kueue-mutating-webhook-configuration",
        "validatingwebhookconfiguration/kueue-validating-webhook-configuration"},
       kKueueUser,
       "workloads.kueue.x-k8s.io"},
  };
  return operators;
}

TEST(E2eOperators, EachRunsWithTheWebhooksAndTheRbacItShips) {
  std::vector<std::string> expected;
  for (const ShippedOperator& shipped : shippedOperators()) expected.push_back(shipped.name);
  ASSERT_EQ(cluster().operators, expected) << "scripts/e2e-cluster up --operators";
  for (const ShippedOperator& shipped : shippedOperators()) {
    SCOPED_TRACE(shipped.name);
    for (const std::string& configuration : shipped.webhookConfigurations) {
      const json stored = kubectlJson({"get", configuration});
      ASSERT_TRUE(stored.is_object());
      ASSERT_FALSE(stored["webhooks"].empty());
      for (const json& webhook : stored["webhooks"]) {
        EXPECT_EQ(webhook["clientConfig"].value("url", "").rfind("https://127.0.0.1:", 0), 0u)
            << webhook["name"];
        EXPECT_FALSE(webhook["clientConfig"].value("caBundle", "").empty()) << webhook["name"];
      }
    }
    // Its own ServiceAccount, bound to the ClusterRole it ships: it may
    // make what it makes, and not what it has no business with.
    const CommandResult mayMake =
        kubectl({"auth", "can-i", "create", shipped.makes, "-n", "default", "--as", shipped.user});
    EXPECT_EQ(mayMake.out, "yes\n") << shipped.user << " create " << shipped.makes;
    const CommandResult mayDeleteNodes =
        kubectl({"auth", "can-i", "delete", "nodes", "--as", shipped.user});
    EXPECT_EQ(mayDeleteNodes.out, "no\n") << shipped.user;
  }
}

// --------------------------------------------------------------- JobSet

TEST(E2eJobSet, ChildJobsAndTheirPodsPassUnpatchedAndLandOnGpuNodes) {
  Namespace ns("jobset");
  const CommandResult applied =
      kubectl({"apply", "-n", ns.name(), "-f", "-"}, toText(trainingJobSet("pretrain", 2)));
  ASSERT_EQ(applied.exitCode, 0) << applied.err;
  EXPECT_NE(applied.out.find("jobset.jobset.x-k8s.io/pretrain created"), std::string::npos)
      << applied.out;
  EXPECT_NE(applied.err.find("Warning: aiadmit: added toleration accelerator=gpu:NoSchedule"),
            std::string::npos)
      << applied.err;

  ASSERT_TRUE(podsBound(ns.name(), 2)) << kubectl({"get", "jobs,pods,events", "-n", ns.name()}).out;
  EXPECT_EQ(expectUnpatchedCreates("jobs", ns.name(), kJobSetUser), 2u);
  EXPECT_EQ(expectUnpatchedCreates("pods", ns.name(), controllerUser("job-controller")), 2u);

  const json jobSet = stored("jobset", ns.name(), "pretrain");
  ASSERT_TRUE(jobSet.is_object());
  const json& jobTemplate = jobSet["spec"]["replicatedJobs"][0]["template"]["spec"];
  const json parentPlacement = placementOf(jobTemplate["template"]["spec"]);
  EXPECT_EQ(parentPlacement["nodeSelector"].value("accelerator", ""), "nvidia")
      << "aiadmit placed the JobSet's template on the pool";
  const std::vector<json> jobs = itemsOf("jobs", ns);
  ASSERT_EQ(jobs.size(), 2u);
  for (const json& job : jobs) {
    const std::string name = job["metadata"]["name"];
    EXPECT_EQ(controllerKindOf(job), "JobSet") << name;
    EXPECT_EQ(placementOf(job["spec"]["template"]["spec"]), parentPlacement) << name;
    EXPECT_EQ(job["spec"].value("backoffLimit", -1), jobTemplate.value("backoffLimit", -1)) << name;
    EXPECT_EQ(job["spec"].contains("ttlSecondsAfterFinished"),
              jobTemplate.contains("ttlSecondsAfterFinished"))
        << name << ": a TTL the JobSet did not give would run a finished Job again";
    EXPECT_EQ(job["spec"].contains("activeDeadlineSeconds"),
              jobTemplate.contains("activeDeadlineSeconds"))
        << name;
  }
  for (const json& pod : podsOf(ns.name())) {
    const std::string name = pod["metadata"]["name"];
    EXPECT_TRUE(isGpuNode(pod["spec"]["nodeName"])) << name << " on " << pod["spec"]["nodeName"];
    EXPECT_EQ(podPlacementOf(pod["spec"]), parentPlacement) << name;
    EXPECT_EQ(pod["metadata"]["annotations"].value("aiadmit.dev/class", ""), "training") << name;
  }
}

// ------------------------------------------------------- LeaderWorkerSet

constexpr const char* kLwsFile = "kubernetes-sigs__lws__docs__examples__vllm__GPU__lws.yaml";

TEST(E2eLeaderWorkerSet, GroupsAreAdmittedProbesOnlyWhereTheTableSaysAndAScaleRollsNothingOut) {
  Namespace ns("lws");
  std::vector<json> objects = corpusObjects(kLwsFile);
  ASSERT_EQ(objects.size(), 1u);
  // The file's leaderServicePort is of a newer LeaderWorkerSet (v0.10) than
  // the newest the module proxy hands out whole (v0.9.0), whose CRD refuses
  // it.
  objects[0]["spec"].erase("networkConfig");
  const CommandResult applied = create(ns, objects[0]);
  ASSERT_EQ(applied.exitCode, 0) << applied.err;
  EXPECT_NE(applied.out.find("leaderworkerset.leaderworkerset.x-k8s.io/vllm created"),
            std::string::npos)
      << applied.out;

  // replicas 2 × size 2: two leaders, and one worker in each group.
  ASSERT_TRUE(waitUntil([&] { return podsOf(ns.name()).size() == 4; }, std::chrono::seconds(90)))
      << kubectl({"get", "statefulsets,pods,events", "-n", ns.name()}).out;
  const std::vector<json> sets = itemsOf("statefulsets", ns);
  ASSERT_EQ(sets.size(), 3u) << "the leaders' StatefulSet and one of workers per group";
  EXPECT_EQ(expectUnpatchedCreates("statefulsets", ns.name(), kLwsUser), 3u);
  EXPECT_EQ(expectUnpatchedCreates("pods", ns.name(), controllerUser("statefulset-controller")),
            4u);

  for (const json& pod : podsOf(ns.name())) {
    const std::string name = pod["metadata"]["name"];
    const json& container = pod["spec"]["containers"][0];
    const bool leader = pod["metadata"]["labels"].value("role", "") == "leader";
    EXPECT_EQ(container.contains("readinessProbe"), leader)
        << name << ": the leader serves and has the file's probe; a worker serves no traffic";
    EXPECT_FALSE(container.contains("livenessProbe")) << name;
    EXPECT_EQ(pod["spec"]["nodeSelector"].value("accelerator", ""), "nvidia") << name;
  }

  const std::set<std::string> before = podUids(podsOf(ns.name()));
  const CommandResult scaled = kubectl({"patch", "leaderworkerset", "vllm", "-n", ns.name(),
                                        "--type=merge", "-p", R"({"spec":{"replicas":3}})"});
  ASSERT_EQ(scaled.exitCode, 0) << scaled.err;
  EXPECT_TRUE(aiadmitWarnings(scaled.err).empty()) << scaled.err;
  ASSERT_TRUE(waitUntil([&] { return podsOf(ns.name()).size() == 6; }, std::chrono::seconds(90)))
      << kubectl({"get", "statefulsets,pods", "-n", ns.name()}).out;
  const std::set<std::string> after = podUids(podsOf(ns.name()));
  for (const std::string& uid : before) {
    EXPECT_TRUE(after.count(uid)) << "a Pod of the first two groups was replaced by the scale";
  }
  for (const json& set : itemsOf("statefulsets", ns)) {
    const json& status = set["status"];
    EXPECT_EQ(status.value("currentRevision", ""), status.value("updateRevision", ""))
        << set["metadata"]["name"] << ": the scale started a rollout";
  }
}

// ---------------------------------------------------------------- KubeRay

constexpr const char* kRayJobFile =
    "GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__gke-ray__kueue__ephemeral-rayjob.yaml";

// The GKE node pools the corpus's RayJob selects, shaped as the shipped
// profiles' pool (label accelerator=nvidia, taint accelerator=gpu).
std::vector<NodeShape> gkeRayPools() {
  std::vector<NodeShape> nodes;
  for (const char* pool : {"gpu-pool-reservation", "gpu-pool-dws-flex", "gpu-pool-spot"}) {
    NodeShape node = gpuNode(std::string("gke-") + pool, 2);
    node.labels["cloud.google.com/gke-nodepool"] = pool;
    node.labels["cloud.google.com/gke-accelerator"] = "nvidia-tesla-t4";
    nodes.push_back(node);
  }
  return nodes;
}

// Deletes the Nodes when it goes out of scope.
class NodesRemovedAtExit {
 public:
  explicit NodesRemovedAtExit(std::vector<NodeShape> nodes) : nodes_(std::move(nodes)) {}
  ~NodesRemovedAtExit() {
    for (const NodeShape& node : nodes_) kubectl({"delete", "node", node.name, "--wait=false"});
  }
  NodesRemovedAtExit(const NodesRemovedAtExit&) = delete;
  NodesRemovedAtExit& operator=(const NodesRemovedAtExit&) = delete;

 private:
  std::vector<NodeShape> nodes_;
};

std::string rayNodeType(const json& pod) {
  return pod["metadata"]["labels"].value("ray.io/node-type", "");
}

TEST(E2eKubeRaySerial, ARayJobsClusterHasAHeadWithoutGpusWorkersOnGpuNodesAndScalesInPlace) {
  Namespace ns("kuberay");
  const std::vector<NodeShape> pools = gkeRayPools();
  NodesRemovedAtExit removeNodes(pools);
  for (const NodeShape& node : pools) ASSERT_TRUE(applyNode(node));

  std::vector<json> objects = corpusObjects(kRayJobFile);
  ASSERT_EQ(objects.size(), 1u);
  // Kueue's routing of a RayJob is the Kueue cases' subject; here KubeRay
  // makes the cluster at once.
  objects[0]["metadata"]["labels"].erase("kueue.x-k8s.io/queue-name");
  const CommandResult applied = create(ns, objects[0]);
  ASSERT_EQ(applied.exitCode, 0) << applied.err;

  ASSERT_TRUE(podsBound(ns.name(), 4, "ray.io/node-type"))
      << kubectl({"get", "rayclusters,pods,events", "-n", ns.name()}).out;
  const std::vector<json> clusters = itemsOf("rayclusters", ns);
  ASSERT_EQ(clusters.size(), 1u);
  EXPECT_EQ(controllerKindOf(clusters[0]), "RayJob");
  // A custom resource an operator makes is the operator's: it reaches no
  // webhook of aiadmit's (its templates were judged on the RayJob).
  const AllowedRequests clusterCreates =
      expectAllowed("rayclusters", ns.name(), kKubeRayUser, {"create"});
  EXPECT_EQ(clusterCreates.count, 1u);
  EXPECT_EQ(clusterCreates.reachedAiadmit, 0u);
  EXPECT_EQ(expectUnpatchedCreates("pods", ns.name(), kKubeRayUser), 4u);

  for (const json& pod : podsOf(ns.name(), "ray.io/node-type")) {
    const std::string name = pod["metadata"]["name"];
    const std::string node = pod["spec"]["nodeName"];
    if (rayNodeType(pod) == "head") {
      EXPECT_FALSE(asksForGpus(pod["spec"])) << name;
      EXPECT_FALSE(pod["spec"].contains("tolerations") &&
                   pod["spec"]["tolerations"].dump().find("accelerator") != std::string::npos)
          << name << ": a head without GPUs is not sent to the GPU pool";
      EXPECT_FALSE(isGpuNode(node) || node.rfind("gke-", 0) == 0) << name << " on " << node;
    } else {
      EXPECT_TRUE(asksForGpus(pod["spec"])) << name;
      EXPECT_EQ(node.rfind("gke-gpu-pool-", 0), 0u) << name << " on " << node;
    }
  }

  const std::string cluster = clusters[0]["metadata"]["name"];
  const std::set<std::string> before = podUids(podsOf(ns.name(), "ray.io/node-type"));
  const CommandResult scaled =
      kubectl({"patch", "raycluster", cluster, "-n", ns.name(), "--type=json", "-p",
               R"([{"op":"replace","path":"/spec/workerGroupSpecs/0/maxReplicas","value":2},
                   {"op":"replace","path":"/spec/workerGroupSpecs/0/replicas","value":2}])"});
  ASSERT_EQ(scaled.exitCode, 0) << scaled.err;
  EXPECT_TRUE(aiadmitWarnings(scaled.err).empty()) << scaled.err;
  ASSERT_TRUE(podsBound(ns.name(), 5, "ray.io/node-type"))
      << kubectl({"get", "pods", "-n", ns.name(), "-o", "wide"}).out;
  const std::set<std::string> after = podUids(podsOf(ns.name(), "ray.io/node-type"));
  for (const std::string& uid : before) {
    EXPECT_TRUE(after.count(uid)) << "the scale replaced a Ray Pod";
  }
}

// ------------------------------------------- the operators' own examples

// A GPU example an operator publishes in its module (operator.conf's
// `example=` lines; scripts/build-operators copies them, the path inside the
// module as the file name), with the children the operator makes of it and
// their Pods: LeaderWorkerSet a leaders' StatefulSet and one of workers per
// group, replicas × size Pods; KubeRay the RayCluster of a RayJob or a
// RayService, its head and each worker group's replicas (a RayJob's
// submitter comes once its cluster is ready, which no Pod here ever is).
struct PublishedExample {
  std::string file;
  size_t children;
  size_t pods;
};

// An operator whose examples are applied: what it makes of them, who makes
// their Pods, and whether its children reach aiadmit (a StatefulSet does; a
// custom resource an operator makes does not, its templates were judged on
// its parent).
struct ExampleOperator {
  std::string name;
  std::string childResource;
  std::string childCreator;
  bool childrenReachAiadmit;
  std::string podCreator;
  std::vector<PublishedExample> examples;
};

std::string examplesDir(const std::string& name) {
  return testing::sourceDir() + "/build/operators/" + name + "/examples";
}

std::set<std::string> filesIn(const std::string& dir) {
  std::set<std::string> files;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    files.insert(entry.path().filename().string());
  }
  return files;
}

// GPU nodes shaped as the machines the examples are written for, labelled
// and tainted as the shipped profiles' pool (accelerator=nvidia,
// accelerator=gpu:NoSchedule), beside the suite's: four GKE a3-highgpu-8g
// (8 H100, 208 vCPUs, 1872 GiB: vLLM's groups ask for 125 CPUs and 1124 GiB
// a Pod) and one n1 node of 4 T4s, which KubeRay's batch-inference sample
// selects.
std::vector<NodeShape> examplesPool() {
  std::vector<NodeShape> nodes;
  for (int i = 1; i <= 4; ++i) {
    NodeShape node = gpuNode("gpu-node-examples-a3-" + std::to_string(i), 8);
    node.labels["cloud.google.com/gke-accelerator"] = "nvidia-h100-80gb";
    node.labels["node.kubernetes.io/instance-type"] = "a3-highgpu-8g";
    node.allocatable["cpu"] = "208";
    node.allocatable["memory"] = "1872Gi";
    node.allocatable["ephemeral-storage"] = "6000Gi";
    nodes.push_back(node);
  }
  NodeShape t4 = gpuNode("gpu-node-examples-t4", 4);
  t4.labels["cloud.google.com/gke-accelerator"] = "nvidia-tesla-t4";
  t4.labels["node.kubernetes.io/instance-type"] = "n1-standard-96";
  t4.allocatable["memory"] = "360Gi";
  nodes.push_back(t4);
  return nodes;
}

// The ServiceAccounts that `value`'s Pod templates run as.
void collectServiceAccounts(const json& value, std::set<std::string>& out) {
  if (value.is_array()) {
    for (const json& item : value) collectServiceAccounts(item, out);
    return;
  }
  if (!value.is_object()) return;
  for (const auto& [key, item] : value.items()) {
    if (key == "serviceAccountName" && item.is_string()) {
      out.insert(item.get<std::string>());
    } else {
      collectServiceAccounts(item, out);
    }
  }
}

// Creates each example of `op` (two of KubeRay's have a generateName, which
// `kubectl apply` refuses) in an opted-in namespace of its own, after the
// ServiceAccounts it names: it is admitted with aiadmit's placement, the
// operator makes its children from that mutated parent and they reach
// aiadmit unpatched, and the scheduler binds every Pod: those asking for
// GPUs on GPU nodes with the pool's node selector, the others elsewhere.
void applyEachExample(const ExampleOperator& op) {
  std::set<std::string> listed;
  for (const PublishedExample& example : op.examples) listed.insert(example.file);
  ASSERT_EQ(filesIn(examplesDir(op.name)), listed)
      << "the examples scripts/build-operators copied from " << op.name << "'s module";
  const std::vector<NodeShape> pool = examplesPool();
  NodesRemovedAtExit removeNodes(pool);
  for (const NodeShape& node : pool) ASSERT_TRUE(applyNode(node));

  for (const PublishedExample& example : op.examples) {
    SCOPED_TRACE(example.file);
    Namespace ns(op.name + "-example");
    const std::string file = examplesDir(op.name) + "/" + example.file;
    // The ServiceAccounts its Pods run as, which its guide has made first.
    const CommandResult read = kubectl({"create", "--dry-run=client", "-o", "json", "-f", file});
    ASSERT_EQ(read.exitCode, 0) << read.err;
    std::set<std::string> accounts;
    for (const json& object : jsonObjects(read.out)) collectServiceAccounts(object, accounts);
    for (const std::string& account : accounts) {
      const CommandResult made = kubectl({"create", "serviceaccount", account, "-n", ns.name()});
      ASSERT_EQ(made.exitCode, 0) << made.err;
    }
    const CommandResult applied = kubectl({"create", "-n", ns.name(), "-f", file});
    ASSERT_EQ(applied.exitCode, 0) << applied.err;
    const std::vector<std::string> warnings = aiadmitWarnings(applied.err);
    EXPECT_TRUE(std::any_of(warnings.begin(), warnings.end(), [](const std::string& warning) {
      return warning.find("added toleration accelerator=gpu:NoSchedule") != std::string::npos;
    })) << applied.err;
    ASSERT_TRUE(podsBound(ns.name(), example.pods, "", std::chrono::seconds(120)))
        << kubectl({"get", "statefulsets,rayclusters,pods,events", "-n", ns.name(), "-o", "wide"})
               .out;

    size_t gpuPods = 0;
    for (const json& pod : podsOf(ns.name())) {
      const std::string name = pod["metadata"]["name"];
      const std::string node = pod["spec"]["nodeName"];
      if (!asksForGpus(pod["spec"])) {
        EXPECT_FALSE(isGpuNode(node)) << name << " asks for no GPU and is on " << node;
        continue;
      }
      ++gpuPods;
      EXPECT_TRUE(isGpuNode(node)) << name << " on " << node;
      EXPECT_EQ(pod["spec"].value("nodeSelector", json::object()).value("accelerator", ""),
                "nvidia")
          << name << ": the pool's selector, from its parent's template";
    }
    EXPECT_GT(gpuPods, 0u);
    if (op.childrenReachAiadmit) {
      EXPECT_EQ(expectUnpatchedCreates(op.childResource, ns.name(), op.childCreator),
                example.children);
    } else {
      const AllowedRequests children =
          expectAllowed(op.childResource, ns.name(), op.childCreator, {"create"});
      EXPECT_EQ(children.count, example.children);
      EXPECT_EQ(children.reachedAiadmit, 0u);
    }
    EXPECT_EQ(expectUnpatchedCreates("pods", ns.name(), op.podCreator), example.pods);
  }
}

TEST(E2eOperatorExamplesSerial, LeaderWorkerSetsGpuExamplesAreAdmittedAndTheirPodsPlaced) {
  applyEachExample({"lws",
                    "statefulsets",
                    kLwsUser,
                    true,
                    controllerUser("statefulset-controller"),
                    {{"docs__examples__vllm__GPU__lws.yaml", 3, 4},
                     {"docs__examples__sglang__lws.yaml", 3, 4},
                     {"docs__examples__tensorrt-llm__lws.yaml", 2, 2}}});
}

TEST(E2eOperatorExamplesSerial, KubeRaysGpuSamplesAreAdmittedAndTheirPodsPlaced) {
  applyEachExample(
      {"kuberay",
       "rayclusters",
       kKubeRayUser,
       false,
       kKubeRayUser,
       {{"config__samples__ray-cluster.verl.yaml", 0, 1},
        {"config__samples__ray-job.batch-inference.yaml", 1, 1},
        {"config__samples__pytorch-resnet-image-classifier__ray-job.pytorch-image-classifier.yaml",
         1, 5},
        {"config__samples__pytorch-text-classifier__ray-job.pytorch-distributed-training.yaml", 1,
         1},
        {"config__samples__ray-service.deepseek.yaml", 1, 3},
        {"config__samples__ray-service.llm-serve.yaml", 1, 2},
        {"config__samples__ray-service.stable-diffusion.yaml", 1, 2},
        {"config__samples__ray-service.text-summarizer.yaml", 1, 2}}});
}

}  // namespace
}  // namespace aiadmit::e2e
