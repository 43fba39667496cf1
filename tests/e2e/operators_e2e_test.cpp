// The operators themselves (scripts/e2e-cluster up --operators: JobSet,
// LeaderWorkerSet, KubeRay and Kueue, each run with the CRDs, RBAC and
// webhooks it ships) making the children of workloads applied in an
// opted-in namespace: what the API server stored, what kubectl printed, who
// created what, and where the scheduler put it.
#include <gtest/gtest.h>

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
  // The file's leaderServicePort is of a newer LeaderWorkerSet than the
  // newest the module proxy serves (v0.9.0), whose CRD refuses it.
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

}  // namespace
}  // namespace aiadmit::e2e
