// What a controller makes and what a controller changes, through the real
// server: an operator's child gets only what its role needs to run where its
// GPUs are (never a GPU, a Job setting, a probe, a stamp or a refusal its
// parent did not call for); a scale or a queue controller's suspend and
// placement is never mutated nor refused; a part the kind fixes at creation
// is never patched on UPDATE.
#include <gtest/gtest.h>

#include "tests/support/test_support.h"
#include "webhook/codec/yaml_json.h"

namespace aiadmit {
namespace {

using namespace testing;

std::string jsonOf(const std::string& yaml) {
  std::vector<ManifestDocument> documents;
  std::string error;
  EXPECT_TRUE(parseManifests(yaml, documents, &error)) << error;
  return documents.empty() ? "{}" : toJson(*documents[0].json);
}

ReviewResponse review(WebhookServer& server, const std::string& endpoint, const std::string& object,
                      const std::string& old = "") {
  return parseReviewResponse(
      server.post(endpoint, makeReview(object, old.empty() ? "CREATE" : "UPDATE", "u", old, "ml"))
          .body);
}

// The paths a JSON Patch writes ("/spec/tolerations", ...).
std::vector<std::string> patchedPaths(const std::string& patch) {
  std::vector<std::string> paths;
  if (patch.empty()) return paths;
  const auto operations = parseJson(patch);
  for (const JsonValue& operation : operations->GetArray()) {
    paths.emplace_back(stringMember(&operation, "path"));
  }
  return paths;
}

const std::string kOwnedByRayCluster = R"(
  ownerReferences:
    - {apiVersion: ray.io/v1, kind: RayCluster, name: tune, uid: 1b2c3d4e-0000-4000-8000-000000000001,
       controller: true, blockOwnerDeletion: true})";

TEST(ControllersObjects, ARayHeadPodStampedByItsClusterButAskingForNoGpuGetsNothing) {
  WebhookServer server;
  // KubeRay copies the head template's metadata, with aiadmit's stamp, and
  // keeps restartPolicy Always on Ray Pods.
  const std::string head = jsonOf(R"(
apiVersion: v1
kind: Pod
metadata:
  name: tune-head-x7k2p
  namespace: ml
  labels: {ray.io/node-type: head, ray.io/cluster: tune, ray.io/group: headgroup}
  annotations: {aiadmit.dev/class: batch, aiadmit.dev/profile: batch})" +
                                  kOwnedByRayCluster + R"(
spec:
  restartPolicy: Always
  containers: [{name: ray-head, image: rayproject/ray:2.9.0, ports: [{containerPort: 6379}]}]
)");
  const ReviewResponse mutated = review(server, "/mutate", head);
  EXPECT_TRUE(mutated.allowed);
  EXPECT_TRUE(mutated.patch.empty()) << mutated.patch;
  const ReviewResponse validated = review(server, "/validate", head);
  EXPECT_TRUE(validated.allowed) << validated.message;
}

// A worker of a RayCluster aiadmit judged: KubeRay copied its group's
// template metadata, with the stamp, and dropped the pool placement.
TEST(ControllersObjects, AStampedGpuWorkerGetsThePlacementItsRoleLacksOnly) {
  WebhookServer server;
  const std::string worker = jsonOf(R"(
apiVersion: v1
kind: Pod
metadata:
  name: tune-gpu-worker-q8m4z
  namespace: ml
  labels: {ray.io/node-type: worker, ray.io/cluster: tune, ray.io/group: gpu}
  annotations: {aiadmit.dev/class: batch, aiadmit.dev/profile: batch})" +
                                    kOwnedByRayCluster + R"(
spec:
  restartPolicy: Always
  containers:
    - {name: ray-worker, image: rayproject/ray:2.9.0-gpu, resources: {limits: {nvidia.com/gpu: 1}}}
)");
  const ReviewResponse mutated = review(server, "/mutate", worker);
  ASSERT_TRUE(mutated.allowed);
  const std::vector<std::string> paths = patchedPaths(mutated.patch);
  ASSERT_FALSE(paths.empty());
  for (const std::string& path : paths) {
    EXPECT_TRUE(path.rfind("/spec/tolerations", 0) == 0 ||
                path.rfind("/spec/nodeSelector", 0) == 0 || path.rfind("/spec/affinity", 0) == 0)
        << path << " in " << mutated.patch;
  }
  // restartPolicy Always on a batch Pod is the operator's choice (AIA014 is
  // the workload's rule, judged on the RayCluster).
  const ReviewResponse validated = review(server, "/validate", applyPatch(worker, mutated.patch));
  EXPECT_TRUE(validated.allowed) << validated.message;
}

// A worker of a RayCluster made before the namespace opted in: no stamp, no
// aiadmit annotation. Opting in changes nothing that runs: it is admitted as
// it comes, even with a misspelt GPU name AIA003 refuses on what aiadmit
// judged, and with a selector off the pool (AIA008); both are warned.
TEST(ControllersObjects, AGpuWorkerOfAClusterMadeBeforeAiadmitIsAdmittedUnchanged) {
  WebhookServer server;
  const std::string worker = jsonOf(R"(
apiVersion: v1
kind: Pod
metadata:
  name: tune-gpu-worker-q8m4z
  namespace: ml
  labels: {ray.io/node-type: worker, ray.io/cluster: tune, ray.io/group: gpu})" +
                                    kOwnedByRayCluster + R"(
spec:
  restartPolicy: Always
  nodeSelector: {accelerator: amd}
  containers:
    - {name: ray-worker, image: rayproject/ray:2.9.0-gpu,
       resources: {limits: {nvidia.com/gpu: 1, nvidia.com/gpus: 1}}}
)");
  const ReviewResponse mutated = review(server, "/mutate", worker);
  EXPECT_TRUE(mutated.allowed);
  EXPECT_TRUE(mutated.patch.empty()) << mutated.patch;
  const ReviewResponse validated = review(server, "/validate", worker);
  EXPECT_TRUE(validated.allowed) << validated.message;
  const std::string warnings = ::testing::PrintToString(validated.warnings);
  EXPECT_NE(warnings.find("AIA003"), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("AIA008"), std::string::npos) << warnings;

  // The same Pod made by no controller is refused: the rules are unchanged.
  std::string bare = worker;
  const std::string owners = "\"ownerReferences\"";
  bare.replace(bare.find(owners), owners.size(), "\"formerOwners\"");
  const ReviewResponse refused = review(server, "/validate", bare);
  EXPECT_FALSE(refused.allowed);
}

TEST(ControllersObjects, AJobOfAJobSetGetsNoJobSettingsNorStamps) {
  WebhookServer server;
  const std::string job = jsonOf(R"(
apiVersion: batch/v1
kind: Job
metadata:
  name: train-workers-0
  namespace: ml
  labels: {jobset.sigs.k8s.io/jobset-name: train, jobset.sigs.k8s.io/replicatedjob-name: workers}
  ownerReferences:
    - {apiVersion: jobset.x-k8s.io/v1alpha2, kind: JobSet, name: train,
       uid: 6a1f2e3d-4c5b-4a69-8f7e-0d1c2b3a4f5e, controller: true}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: t, image: i, resources: {limits: {nvidia.com/gpu: 1}}}]
)");
  const ReviewResponse mutated = review(server, "/mutate", job);
  ASSERT_TRUE(mutated.allowed);
  // JobSet recreates a missing Job while the JobSet runs: a TTL would run a
  // finished Job again.
  for (const std::string& path : patchedPaths(mutated.patch)) {
    EXPECT_EQ(path.rfind("/spec/template/spec/", 0), 0u) << path;
    EXPECT_EQ(path.find("annotations"), std::string::npos) << path;
  }
  EXPECT_EQ(mutated.patch.find("ttlSecondsAfterFinished"), std::string::npos) << mutated.patch;
}

TEST(ControllersObjects, ALeaderWorkerSetsWorkerStatefulSetIsNotAskedForAProbe) {
  WebhookServer server;
  // Owned by the leader Pod; its workers serve no traffic (the leader does).
  const std::string workers = jsonOf(R"(
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: vllm-0
  namespace: ml
  labels: {leaderworkerset.sigs.k8s.io/name: vllm, leaderworkerset.sigs.k8s.io/group-index: "0"}
  ownerReferences:
    - {apiVersion: v1, kind: Pod, name: vllm-0, uid: 0c1d2e3f-0000-4000-8000-000000000002,
       controller: true, blockOwnerDeletion: true}
spec:
  replicas: 1
  selector: {matchLabels: {leaderworkerset.sigs.k8s.io/name: vllm}}
  template:
    metadata:
      labels: {leaderworkerset.sigs.k8s.io/name: vllm}
      annotations: {aiadmit.dev/class: realtime, aiadmit.dev/profile: realtime}
    spec:
      containers:
        - {name: vllm-worker, image: vllm/vllm-openai, resources: {limits: {nvidia.com/gpu: 8}}}
)");
  const ReviewResponse mutated = review(server, "/mutate", workers);
  ASSERT_TRUE(mutated.allowed);
  EXPECT_EQ(mutated.patch.find("Probe"), std::string::npos) << mutated.patch;
  const ReviewResponse validated = review(server, "/validate", applyPatch(workers, mutated.patch));
  EXPECT_TRUE(validated.allowed) << validated.message;
}

const std::string kSuspendedJobSet = jsonOf(R"(
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: train, namespace: ml, labels: {kueue.x-k8s.io/queue-name: team}}
spec:
  suspend: true
  replicatedJobs:
    - name: workers
      replicas: 2
      template:
        spec:
          template:
            spec:
              restartPolicy: Never
              containers: [{name: t, image: i, resources: {limits: {nvidia.com/gpu: 8}}}]
)");

TEST(ControllersObjects, KueueStartingASuspendedJobSetIsNeitherPatchedNorRefused) {
  WebhookServer server;
  // Kueue admits the workload: unsuspends it and writes its flavor's node
  // selection, which JobSet's webhook allows only because it was suspended.
  std::string started = kSuspendedJobSet;
  const std::string from = "\"suspend\":true";
  started.replace(started.find(from), from.size(), "\"suspend\":false");
  const std::string spec = "\"spec\":{\"restartPolicy\"";
  started.replace(started.find(spec), spec.size(),
                  "\"spec\":{\"nodeSelector\":{\"cloud.google.com/gke-accelerator\":"
                  "\"nvidia-h100-80gb\"},\"restartPolicy\"");
  const ReviewResponse mutated = review(server, "/mutate", started, kSuspendedJobSet);
  EXPECT_TRUE(mutated.allowed);
  EXPECT_TRUE(mutated.patch.empty()) << mutated.patch;
  const ReviewResponse validated = review(server, "/validate", started, kSuspendedJobSet);
  EXPECT_TRUE(validated.allowed) << validated.message;
}

TEST(ControllersObjects, AJobSetsReplicatedJobsAreNeverPatchedOnUpdate) {
  WebhookServer server;
  // A JobSet made before aiadmit, relabelled: its replicated jobs are fixed.
  std::string relabelled = kSuspendedJobSet;
  const std::string labels = "\"labels\":{";
  relabelled.replace(relabelled.find(labels), labels.size(), "\"labels\":{\"team\":\"ml\",");
  const ReviewResponse mutated = review(server, "/mutate", relabelled, kSuspendedJobSet);
  EXPECT_TRUE(mutated.allowed);
  for (const std::string& path : patchedPaths(mutated.patch)) {
    EXPECT_EQ(path.find("/spec/replicatedJobs"), std::string::npos) << path;
  }
}

TEST(ControllersObjects, ReapplyingAVolcanoJobKeepsWhatAiadmitWroteInItsTasks) {
  WebhookServer server;
  const std::string applied = jsonOf(R"(
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: mindspore, namespace: ml}
spec:
  minAvailable: 3
  tasks:
    - name: worker
      replicas: 2
      template:
        spec:
          restartPolicy: OnFailure
          containers: [{name: w, image: ms:1, resources: {limits: {nvidia.com/gpu: 1}}}]
)");
  const ReviewResponse created = review(server, "/mutate", applied);
  ASSERT_FALSE(created.patch.empty());
  const std::string stored = applyPatch(applied, created.patch);
  // `kubectl apply` of the same file: the tasks list comes back as written,
  // without the pool's toleration. Volcano's webhook refuses a change of the
  // tasks, so aiadmit writes back what it wrote, and only that.
  const ReviewResponse reapplied = review(server, "/mutate", applied, stored);
  ASSERT_TRUE(reapplied.allowed);
  const auto result = parseJson(applyPatch(applied, reapplied.patch));
  EXPECT_EQ(*member(result.get(), "spec"), *member(parseJson(stored).get(), "spec"));
  const ReviewResponse validated = review(server, "/validate", toJson(*result), stored);
  EXPECT_TRUE(validated.allowed) << validated.message;
}

TEST(ControllersObjects, ScalingAnInferenceServiceMadeBeforeAiadmitRollsNothing) {
  WebhookServer server;
  const std::string service = jsonOf(R"(
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: llm, namespace: ml}
spec:
  predictor:
    minReplicas: 1
    containers:
      - {name: kserve-container, image: vllm/vllm-openai, resources: {limits: {nvidia.com/gpu: 1}}}
)");
  std::string scaled = service;
  const std::string from = "\"minReplicas\":1";
  scaled.replace(scaled.find(from), from.size(), "\"minReplicas\":3");
  EXPECT_FALSE(review(server, "/mutate", service).patch.empty()) << "created, it is placed";
  const ReviewResponse mutated = review(server, "/mutate", scaled, service);
  EXPECT_TRUE(mutated.allowed);
  EXPECT_TRUE(mutated.patch.empty()) << mutated.patch;
}

}  // namespace
}  // namespace aiadmit
