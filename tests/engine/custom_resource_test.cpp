// The pipeline on custom resources: templates by role, GPUs counted across
// roles, the class against the kind, children left as their controller made
// them, and a kind a platform team adds with the WorkloadType document that
// docs/workload-types.md shows.
#include <gtest/gtest.h>

#include <filesystem>

#include "mutators/mutator.h"
#include "tests/support/test_support.h"
#include "webhook/codec/json_pointer.h"
#include "webhook/codec/yaml_json.h"
#include "webhook/engine/engine.h"
#include "webhook/policy/profile_loader.h"

namespace aiadmit {
namespace {

using namespace testing;

std::shared_ptr<JsonDocument> objectOf(const std::string& yaml) {
  std::vector<ManifestDocument> documents;
  std::string error;
  EXPECT_TRUE(parseManifests(yaml, documents, &error)) << error;
  return documents.empty() ? std::make_shared<JsonDocument>() : documents[0].json;
}

// The first ```yaml block under `heading` in a document of docs/.
std::string docsExample(const std::string& file, const std::string& heading) {
  const std::string text = readFile(sourceDir() + "/docs/" + file);
  const size_t section = text.find("\n" + heading + "\n");
  EXPECT_NE(section, std::string::npos) << heading;
  const size_t open = text.find("```yaml\n", section);
  const size_t close = text.find("\n```", open + 8);
  return text.substr(open + 8, close - open - 8);
}

// The shipped profiles, plus `extra` files.
class ProfilesDir {
 public:
  explicit ProfilesDir(const std::vector<std::pair<std::string, std::string>>& extra) {
    for (const auto& entry : std::filesystem::directory_iterator(sourceDir() + "/profiles")) {
      if (entry.path().extension() == ".yaml") {
        writeFile(dir_.file(entry.path().filename().string()), readFile(entry.path().string()));
      }
    }
    for (const auto& [name, text] : extra) writeFile(dir_.file(name), text);
    ProfileLoadResult loaded = loadProfileDirectory(dir_.path(), mutationSwitches());
    for (const ProfileError& error : loaded.errors) ADD_FAILURE() << error.format();
    set = loaded.set;
  }
  std::shared_ptr<const ProfileSet> set;

 private:
  TempDir dir_;
};

struct Decision {
  AdmissionOutcome outcome = AdmissionOutcome::allowed();
  Evaluation evaluation;
  std::shared_ptr<JsonDocument> mutated = std::make_shared<JsonDocument>();
};

Decision mutate(const Engine& engine, const JsonValue& object, std::string_view ns = "ml") {
  Decision decision;
  Decided decided =
      engine.mutate(AdmissionSubject::ofObject(object, ns), {.mutated = decision.mutated.get()});
  decision.outcome = std::move(decided.outcome);
  decision.evaluation = std::move(decided.record);
  return decision;
}

Decision validate(const Engine& engine, const JsonValue& object, std::string_view ns = "ml") {
  Decision decision;
  Decided decided = engine.validate(AdmissionSubject::ofObject(object, ns));
  decision.outcome = std::move(decided.outcome);
  decision.evaluation = std::move(decided.record);
  return decision;
}

const std::string kRayJob = R"(
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: tune, namespace: ml}
spec:
  entrypoint: python tune.py
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers: [{name: head, image: rayproject/ray:2.9.0}]
    workerGroupSpecs:
      - groupName: gpu
        replicas: 2
        rayStartParams: {}
        template:
          spec:
            containers:
              - name: worker
                image: rayproject/ray:2.9.0-gpu
                resources: {limits: {nvidia.com/gpu: 1}}
)";

TEST(CustomResources, OnlyTheRolesThatAskForGpusGoToThePool) {
  Engine engine(ProfilesDir({}).set);
  const auto rayJob = objectOf(kRayJob);
  const Decision decision = mutate(engine, *rayJob);
  ASSERT_EQ(decision.outcome.decision(), aiadmit::Decision::Patched) << decision.outcome.message();
  EXPECT_EQ(decision.evaluation.workloadType, "RayJob.ray.io");
  // No submitterPodTemplate: KubeRay makes its default submitter, not ours to read.
  EXPECT_EQ(decision.evaluation.templates,
            (std::vector<std::string>{"head \u00d71", "gpu \u00d72"}));
  const JsonValue& mutated = *decision.mutated;
  const std::string head = "/spec/rayClusterSpec/headGroupSpec/template/spec";
  const std::string worker = "/spec/rayClusterSpec/workerGroupSpecs/0/template/spec";
  // The batch profile's defaultCount is for a workload that names no GPU at
  // all: the head of one whose workers ask for GPUs gets none, nor the pool.
  EXPECT_EQ(valueAt(mutated, head + "/containers/0/resources"), nullptr);
  EXPECT_EQ(valueAt(mutated, head + "/tolerations"), nullptr);
  EXPECT_NE(valueAt(mutated, worker + "/tolerations"), nullptr);
  EXPECT_EQ(stringMember(valueAt(mutated, worker + "/nodeSelector"), "accelerator"), "nvidia");
  // Changes say which template they were made on.
  bool namedRole = false;
  for (const std::string& change : decision.evaluation.changes) {
    namedRole = namedRole || change.rfind("gpu: added toleration", 0) == 0;
  }
  EXPECT_TRUE(namedRole);
  EXPECT_EQ(mutate(engine, mutated).outcome.decision(), aiadmit::Decision::Allowed);
}

TEST(CustomResources, AServingKindDeclaredTrainingIsRefusedUnderAia002) {
  Engine engine(ProfilesDir({}).set);
  const auto service = objectOf(R"(
apiVersion: ray.io/v1
kind: RayService
metadata: {name: serve, namespace: ml, annotations: {aiadmit.dev/workload: training}}
spec:
  rayClusterConfig:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers: [{name: head, image: i, resources: {limits: {nvidia.com/gpu: 1}}}]
)");
  const Decision decision = validate(engine, *service);
  EXPECT_EQ(decision.outcome.decision(), aiadmit::Decision::Denied);
  EXPECT_NE(decision.outcome.message().find("[AIA002] metadata.annotations[aiadmit.dev/workload]: "
                                            "training runs to completion, but a RayService "
                                            "restarts its Pods forever"),
            std::string::npos)
      << decision.outcome.message();
}

TEST(CustomResources, GangSchedulingCountsEveryGpuRoleTimesItsPods) {
  const std::string gang = R"(
apiVersion: aiadmit.dev/v1
kind: Profile
metadata: {name: gang-training}
spec:
  class: training
  scope: {namespaces: [gang]}
  gpu: {resourceName: nvidia.com/gpu, gpusPerNode: 8}
  scheduling:
    gangScheduling: {required: true, queueLabel: kueue.x-k8s.io/queue-name}
)";
  Engine engine(ProfilesDir({{"gang.yaml", gang}}).set);
  const std::string job = R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: ddp, namespace: gang LABELS}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers: [{name: pytorch, image: i, resources: {limits: {nvidia.com/gpu: 1}}}]
    Worker:
      replicas: 3
      template:
        spec:
          containers: [{name: pytorch, image: i, resources: {limits: {nvidia.com/gpu: 1}}}]
)";
  auto withLabels = [&](const std::string& labels) {
    std::string text = job;
    text.replace(text.find(" LABELS"), 7, labels);
    return objectOf(text);
  };
  const Decision ungrouped = validate(engine, *withLabels(""), "gang");
  EXPECT_EQ(ungrouped.evaluation.profile, "gang-training");
  ASSERT_EQ(ungrouped.evaluation.denials.size(), 1u) << ungrouped.outcome.message();
  const Violation& violation = ungrouped.evaluation.denials[0];
  EXPECT_EQ(violation.rule, AIA010);
  EXPECT_EQ(violation.field, "spec.pytorchReplicaSpecs.Worker.template.spec");
  EXPECT_NE(violation.problem.find("4 GPU workers (Master \u00d71, Worker \u00d73)"),
            std::string::npos)
      << violation.problem;
  // Kueue admits the PyTorchJob as one workload when it names a queue.
  const Decision queued =
      validate(engine, *withLabels(", labels: {kueue.x-k8s.io/queue-name: team}"), "gang");
  EXPECT_TRUE(queued.evaluation.denials.empty()) << queued.outcome.message();
}

TEST(CustomResources, JobSettingsGoWhereTheKindKeepsThem) {
  Engine engine(ProfilesDir({}).set);
  const auto volcano = objectOf(R"(
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: mindspore, namespace: ml}
spec:
  minAvailable: 2
  schedulerName: volcano
  tasks:
    - name: worker
      replicas: 2
      template:
        spec:
          restartPolicy: Never
          containers: [{name: ms, image: i, resources: {limits: {nvidia.com/gpu: 1}}}]
)");
  const Decision decision = mutate(engine, *volcano);
  ASSERT_EQ(decision.outcome.decision(), aiadmit::Decision::Patched);
  // A Volcano Job retries as a whole (maxRetry, the batch profile's
  // backoffLimit) and has no deadline field.
  EXPECT_EQ(valueAt(*decision.mutated, "/spec/maxRetry")->GetInt64(), 6);
  EXPECT_NE(valueAt(*decision.mutated, "/spec/ttlSecondsAfterFinished"), nullptr);
  EXPECT_EQ(valueAt(*decision.mutated, "/spec/activeDeadlineSeconds"), nullptr);
  EXPECT_EQ(valueAt(*decision.mutated, "/spec/backoffLimit"), nullptr);
}

TEST(CustomResources, AJobMadeByAJobSetKeepsTheMetadataItsControllerSet) {
  Engine engine(ProfilesDir({}).set);
  const auto job = objectOf(R"(
apiVersion: batch/v1
kind: Job
metadata:
  name: train-workers-0
  namespace: ml
  labels: {jobset.sigs.k8s.io/jobset-name: train}
  ownerReferences:
    - {apiVersion: jobset.x-k8s.io/v1alpha2, kind: JobSet, name: train,
       uid: 6a1f2e3d-4c5b-4a69-8f7e-0d1c2b3a4f5e, controller: true}
spec:
  template:
    metadata:
      annotations: {aiadmit.dev/class: training, aiadmit.dev/profile: training}
    spec:
      restartPolicy: Never
      containers: [{name: t, image: i, resources: {limits: {nvidia.com/gpu: 1}}}]
)");
  const Decision decision = mutate(engine, *job);
  ASSERT_EQ(decision.outcome.decision(), aiadmit::Decision::Patched);
  // What it needs to run on the pool is injected, so it is never denied for
  // it; its labels and annotations stay the JobSet's, and it gets no Job
  // setting its JobSet did not carry.
  EXPECT_NE(valueAt(*decision.mutated, "/spec/template/spec/tolerations"), nullptr);
  EXPECT_EQ(valueAt(*decision.mutated, "/metadata/annotations"), nullptr);
  EXPECT_EQ(valueAt(*decision.mutated, "/spec/template/metadata/annotations")->MemberCount(), 2u);
  EXPECT_EQ(valueAt(*decision.mutated, "/spec/template/metadata/labels"), nullptr);
  EXPECT_EQ(valueAt(*decision.mutated, "/spec/ttlSecondsAfterFinished"), nullptr);
}

TEST(CustomResources, MoreTemplatesThanTheLimitIsBadInput) {
  Engine engine(ProfilesDir({}).set);
  std::string specs;
  for (int i = 0; i < 300; ++i) {
    specs += "    R" + std::to_string(i) + ": {replicas: 1, template: {spec: {containers: []}}}\n";
  }
  const auto job = objectOf(
      "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: wide, namespace: ml}\n"
      "spec:\n  pytorchReplicaSpecs:\n" +
      specs);
  const Decision mutation = mutate(engine, *job);
  EXPECT_EQ(mutation.outcome.decision(), aiadmit::Decision::Errored);
  EXPECT_EQ(mutation.outcome.httpStatus(), 400);
  EXPECT_EQ(validate(engine, *job).outcome.httpStatus(), 400);
}

TEST(CustomResources, AKindAddedByTheDocumentedWorkloadTypeIsAWorkload) {
  const std::string documents = docsExample("workload-types.md", "## Adding a kind");
  ASSERT_NE(documents.find("kind: Notebook"), std::string::npos);
  Engine engine(ProfilesDir({{"workload-types.yaml", documents}}).set);
  const auto notebook = objectOf(R"(
apiVersion: kubeflow.org/v1
kind: Notebook
metadata: {name: lab, namespace: ml}
spec:
  template:
    spec:
      containers:
        - name: jupyter
          image: kubeflownotebookswg/jupyter-pytorch-cuda
          ports: [{containerPort: 8888}]
          resources: {limits: {nvidia.com/gpu: 1, memory: 16Gi}}
)");
  const Decision decision = mutate(engine, *notebook);
  ASSERT_EQ(decision.outcome.decision(), aiadmit::Decision::Patched) << decision.outcome.message();
  EXPECT_EQ(decision.evaluation.profile, "realtime");
  EXPECT_NE(decision.evaluation.classReason.find("a Notebook is an interactive Jupyter server"),
            std::string::npos)
      << decision.evaluation.classReason;
  EXPECT_NE(valueAt(*decision.mutated, "/spec/template/spec/tolerations"), nullptr);
  EXPECT_NE(valueAt(*decision.mutated, "/spec/template/spec/containers/0/readinessProbe"), nullptr);

  const auto mxjob = objectOf(R"(
apiVersion: kubeflow.org/v1
kind: MXJob
metadata: {name: mx, namespace: ml}
spec:
  mxReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers: [{name: mxnet, image: i, resources: {limits: {nvidia.com/gpu: 1}}}]
)");
  const Decision training = mutate(engine, *mxjob);
  ASSERT_EQ(training.outcome.decision(), aiadmit::Decision::Patched);
  EXPECT_EQ(training.evaluation.workloadClass, WorkloadClass::Training);
  EXPECT_EQ(valueAt(*training.mutated, "/spec/runPolicy/backoffLimit")->GetInt64(), 3);
}

}  // namespace
}  // namespace aiadmit
