// Kueue (scripts/e2e-cluster up --operators) holding GPU work for quota and
// starting it: a JobSet and the corpus's Kueue Job submitted to a LocalQueue
// are suspended at creation by Kueue's webhooks, admitted by Kueue (its
// unsuspend passes aiadmit and JobSet's own webhook), and their Pods
// scheduled on GPU nodes; one more Job over the ClusterQueue's GPU quota
// stays suspended, and aiadmit says nothing of it that is not so.
#include <gtest/gtest.h>

#include "tests/e2e/support/e2e_cluster.h"
#include "tests/e2e/support/workloads.h"

namespace aiadmit::e2e {
namespace {

constexpr const char* kKueueJobFile =
    "kubernetes-sigs__kueue__site__static__examples__provisioning__sample-job.yaml";
constexpr int kGpuQuota = 5;

// A ClusterQueue of the test's own with `gpus` nvidia.com/gpu of quota, a
// LocalQueue `user-queue` (the corpus's name) in the namespace pointing at
// it, and the flavor both use; the ClusterQueue is deleted at exit.
class GpuQueue {
 public:
  GpuQueue(const Namespace& ns, int gpus) : name_("gpu-" + ns.name()) {
    const std::string objects =
        R"({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
      "metadata": {"name": "e2e-gpu-flavor"}}
    {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": ")" +
        name_ + R"("},
     "spec": {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ")" +
        ns.name() + R"("}},
              "resourceGroups": [{"coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                "flavors": [{"name": "e2e-gpu-flavor", "resources": [
                  {"name": "cpu", "nominalQuota": "100"},
                  {"name": "memory", "nominalQuota": "1000Gi"},
                  {"name": "nvidia.com/gpu", "nominalQuota": )" +
        std::to_string(gpus) + R"(}]}]}]}}
    {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
     "metadata": {"name": "user-queue", "namespace": ")" +
        ns.name() + R"("}, "spec": {"clusterQueue": ")" + name_ + R"("}})";
    const CommandResult applied = kubectl({"apply", "-f", "-"}, objects);
    EXPECT_EQ(applied.exitCode, 0) << applied.err;
    EXPECT_TRUE(waitUntil([&] { return active(); }, std::chrono::seconds(60)))
        << kubectl({"get", "clusterqueue", name_, "-o", "yaml"}).out;
  }
  ~GpuQueue() { kubectl({"delete", "clusterqueue", name_, "--wait=false"}); }
  GpuQueue(const GpuQueue&) = delete;
  GpuQueue& operator=(const GpuQueue&) = delete;

 private:
  bool active() const {
    const json queue = kubectlJson({"get", "clusterqueue", name_});
    const json status = queue.is_object() ? queue.value("status", json::object()) : json::object();
    for (const json& condition : status.value("conditions", json::array())) {
      if (condition.value("type", "") == "Active") return condition.value("status", "") == "True";
    }
    return false;
  }
  std::string name_;
};

json queuedJobSet() {
  return json::parse(R"({
    "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
    "metadata": {"name": "finetune", "labels": {"kueue.x-k8s.io/queue-name": "user-queue"},
                 "annotations": {"aiadmit.dev/workload": "training"}},
    "spec": {"replicatedJobs": [{"name": "workers", "replicas": 2,
      "template": {"spec": {"parallelism": 1, "completions": 1, "backoffLimit": 0,
        "template": {"spec": {"restartPolicy": "Never",
          "containers": [{"name": "trainer", "image": "registry.example/trainer:1",
            "resources": {"requests": {"cpu": "1", "memory": "4Gi"},
                          "limits": {"nvidia.com/gpu": "1", "memory": "4Gi"}}}]}}}}}]}})");
}

json corpusJob() {
  std::vector<json> objects = corpusObjects(kKueueJobFile);
  EXPECT_EQ(objects.size(), 1u);
  return objects.empty() ? json() : objects[0];
}

// The name of the Job kubectl created from a generateName ("job.batch/NAME
// created").
std::string createdName(const std::string& out) {
  const size_t slash = out.find('/');
  const size_t space = out.find(' ', slash);
  return slash == std::string::npos ? "" : out.substr(slash + 1, space - slash - 1);
}

// The condition `type` of the Kueue Workload made for `owner`, or null.
json workloadCondition(const Namespace& ns, const std::string& ownerKind, const std::string& owner,
                       const std::string& type) {
  const json workloads = kubectlJson({"get", "workloads.kueue.x-k8s.io", "-n", ns.name()});
  if (!workloads.is_object()) return nullptr;
  for (const json& workload : workloads["items"]) {
    bool ours = false;
    for (const json& ref : workload["metadata"].value("ownerReferences", json::array())) {
      ours = ours || (ref.value("kind", "") == ownerKind && ref.value("name", "") == owner);
    }
    if (!ours) continue;
    const json status = workload.value("status", json::object());
    for (const json& condition : status.value("conditions", json::array())) {
      if (condition.value("type", "") == type) return condition;
    }
  }
  return nullptr;
}

bool admitted(const Namespace& ns, const std::string& ownerKind, const std::string& owner) {
  const json condition = workloadCondition(ns, ownerKind, owner, "Admitted");
  return condition.is_object() && condition.value("status", "") == "True";
}

// Whether aiadmit's view of the cluster holds the namespace's LocalQueue: a
// Job sent with --dry-run=server draws no AIA018 warning. (A queue just
// created may reach the view after the next create: aiadmit then warns, as
// it should, and the first Job's warnings would differ from the second's.)
bool viewHoldsTheQueue(const Namespace& ns) {
  const CommandResult dryRun =
      kubectl({"create", "-n", ns.name(), "--dry-run=server", "-f", "-"}, toText(corpusJob()));
  if (dryRun.exitCode != 0) return false;
  for (const std::string& warning : aiadmitWarnings(dryRun.err)) {
    if (warning.find("[AIA018]") != std::string::npos) return false;
  }
  return true;
}

TEST(E2eKueue, QueuedGpuWorkIsAdmittedWithinQuotaAndWhatIsOverItStaysSuspended) {
  Namespace ns("kueue");
  GpuQueue queue(ns, kGpuQuota);
  ASSERT_TRUE(waitUntil([&] { return viewHoldsTheQueue(ns); }, std::chrono::seconds(30)));

  const CommandResult jobSet =
      kubectl({"create", "-n", ns.name(), "-f", "-"}, toText(queuedJobSet()));
  ASSERT_EQ(jobSet.exitCode, 0) << jobSet.err;
  const CommandResult first = kubectl({"create", "-n", ns.name(), "-f", "-"}, toText(corpusJob()));
  ASSERT_EQ(first.exitCode, 0) << first.err;
  const std::string firstJob = createdName(first.out);

  ASSERT_TRUE(
      waitUntil([&] { return admitted(ns, "JobSet", "finetune"); }, std::chrono::seconds(90)))
      << kubectl({"get", "workloads.kueue.x-k8s.io,jobsets,jobs,events", "-n", ns.name()}).out;
  ASSERT_TRUE(waitUntil([&] { return admitted(ns, "Job", firstJob); }, std::chrono::seconds(90)))
      << kubectl({"get", "workloads.kueue.x-k8s.io,jobs,events", "-n", ns.name()}).out;
  // 2 Pods of the JobSet, 3 of the Job (parallelism 3), one GPU each.
  ASSERT_TRUE(podsBound(ns.name(), 5)) << kubectl({"get", "pods,events", "-n", ns.name()}).out;
  for (const json& pod : podsOf(ns.name())) {
    EXPECT_TRUE(isGpuNode(pod["spec"]["nodeName"])) << pod["metadata"]["name"];
  }

  // Kueue's start of each (unsuspend, with its flavor's placement) and
  // JobSet's of its Jobs passed every webhook on the way.
  const std::vector<std::string> updates = {"update", "patch"};
  EXPECT_GE(expectAllowed("jobsets", ns.name(), kKueueUser, updates).count, 1u);
  EXPECT_GE(expectAllowed("jobs", ns.name(), kKueueUser, updates).count, 1u);
  expectAllowed("jobs", ns.name(), kJobSetUser, updates);
  expectUnpatchedUpdates("jobsets", ns.name(), kKueueUser);
  expectUnpatchedUpdates("jobs", ns.name(), kKueueUser);
  EXPECT_EQ(stored("jobset", ns.name(), "finetune")["spec"].value("suspend", true), false);
  EXPECT_EQ(stored("job", ns.name(), firstJob)["spec"].value("suspend", true), false);

  const CommandResult second = kubectl({"create", "-n", ns.name(), "-f", "-"}, toText(corpusJob()));
  ASSERT_EQ(second.exitCode, 0) << second.err;
  EXPECT_EQ(aiadmitWarnings(second.err), aiadmitWarnings(first.err))
      << "aiadmit says the same of the same Job whether or not the queue has room";
  const std::string secondJob = createdName(second.out);
  ASSERT_TRUE(waitUntil(
      [&] {
        const json reserved = workloadCondition(ns, "Job", secondJob, "QuotaReserved");
        return reserved.is_object() && reserved.value("status", "") == "False" &&
               reserved.value("message", "").find("nvidia.com/gpu") != std::string::npos;
      },
      std::chrono::seconds(60)))
      << kubectl({"get", "workloads.kueue.x-k8s.io", "-n", ns.name(), "-o", "yaml"}).out;
  const json waiting = stored("job", ns.name(), secondJob);
  EXPECT_TRUE(waiting["spec"].value("suspend", false)) << "over quota, Kueue keeps it suspended";
  EXPECT_EQ(podsOf(ns.name(), "batch.kubernetes.io/job-name=" + secondJob).size(), 0u);
}

}  // namespace
}  // namespace aiadmit::e2e
