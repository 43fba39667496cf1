// GPUs the pipeline used to miss, through both webhooks: a TrainJob's
// trainer.resourcesPerNode, KServe's model-format containers, KAI's GPU
// share, and the stamp an operator copies onto a Pod that asks for no GPU.
#include <gtest/gtest.h>

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

std::shared_ptr<const ProfileSet> shipped() {
  ProfileLoadResult loaded = loadProfileDirectory(sourceDir() + "/profiles", mutationSwitches());
  for (const ProfileError& error : loaded.errors) ADD_FAILURE() << error.format();
  return loaded.set;
}

struct Answer {
  AdmissionOutcome outcome = AdmissionOutcome::allowed();
  Evaluation evaluation;
  std::shared_ptr<JsonDocument> mutated = std::make_shared<JsonDocument>();
};

Answer mutate(const Engine& engine, const JsonValue& object) {
  Answer answer;
  Decided decided =
      engine.mutate(AdmissionSubject::ofObject(object, "ml"), {.mutated = answer.mutated.get()});
  answer.outcome = std::move(decided.outcome);
  answer.evaluation = std::move(decided.record);
  return answer;
}

Answer validate(const Engine& engine, const JsonValue& object) {
  Answer answer;
  Decided decided = engine.validate(AdmissionSubject::ofObject(object, "ml"));
  answer.outcome = std::move(decided.outcome);
  answer.evaluation = std::move(decided.record);
  return answer;
}

// Kubeflow Trainer examples/grpo/grpo-trainjob.yaml, without its env.
std::string grpo(const std::string& gpus = "2") {
  return R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: grpo-example
  namespace: ml
spec:
  runtimeRef:
    apiGroup: trainer.kubeflow.org
    kind: ClusterTrainingRuntime
    name: grpo-distributed
  initializer:
    dataset:
      storageUri: hf://trl-lib/tldr
    model:
      storageUri: hf://Qwen/Qwen2.5-0.5B-Instruct
  trainer:
    numNodes: 1
    resourcesPerNode:
      requests:
        nvidia.com/gpu: )" +
         gpus + "\n";
}

TEST(MissedGpus, TheGrpoTrainJobIsTrainingAndPlacedThroughRuntimePatches) {
  Engine engine(shipped());
  const Answer answer = mutate(engine, *objectOf(grpo()));
  ASSERT_EQ(answer.outcome.decision(), Decision::Patched) << answer.outcome.message();
  EXPECT_EQ(answer.evaluation.workloadClass, WorkloadClass::Training);
  EXPECT_EQ(answer.evaluation.profile, "training");
  const JsonValue& mutated = *answer.mutated;
  EXPECT_EQ(toJson(*valueAt(mutated, "/spec/trainer/resourcesPerNode/limits")),
            R"({"nvidia.com/gpu":2})");
  EXPECT_EQ(stringMember(valueAt(mutated, "/spec/runtimePatches/0"), "manager"),
            "aiadmit.dev/webhook");
  EXPECT_EQ(stringMember(valueAt(mutated,
                                 "/spec/runtimePatches/0/trainingRuntimeSpec/template/spec/"
                                 "replicatedJobs/0/template/spec/template/spec/nodeSelector"),
                         "accelerator"),
            "nvidia");
  EXPECT_EQ(validateCustomResources({toJson(mutated)}),
            (std::map<std::string, std::string>{{"TrainJob/grpo-example", "ok"}}));
  // The mutated TrainJob sent again gets no patch, and is admitted.
  EXPECT_EQ(mutate(engine, mutated).outcome.decision(), Decision::Allowed);
  const Answer validated = validate(engine, mutated);
  EXPECT_TRUE(validated.outcome.isAllowed()) << validated.outcome.message();
}

TEST(MissedGpus, MoreGpusPerNodeThanANodeHasIsRefusedAtResourcesPerNode) {
  Engine engine(shipped());
  const Answer answer = validate(engine, *objectOf(grpo("16")));
  ASSERT_EQ(answer.outcome.decision(), Decision::Denied);
  bool aia006 = false;
  for (const Violation& denial : answer.evaluation.denials) {
    if (denial.rule.name() != "AIA006") continue;
    aia006 = true;
    EXPECT_EQ(denial.field, "spec.trainer.resourcesPerNode.limits");
    EXPECT_NE(denial.problem.find("asks for 16"), std::string::npos) << denial.problem;
  }
  EXPECT_TRUE(aia006) << answer.outcome.message();
}

TEST(MissedGpus, AFractionOfAGpuInResourcesPerNodeIsRefusedThere) {
  Engine engine(shipped());
  const Answer answer = validate(engine, *objectOf(grpo("\"0.5\"")));
  ASSERT_EQ(answer.outcome.decision(), Decision::Denied);
  bool aia004 = false;
  for (const Violation& denial : answer.evaluation.denials) {
    if (denial.rule.name() != "AIA004") continue;
    aia004 = true;
    EXPECT_EQ(denial.field, "spec.trainer.resourcesPerNode.requests");
  }
  EXPECT_TRUE(aia004) << answer.outcome.message();
}

// docs/samples/v1beta1/torchserve/v2/bert/bert_gpu.yaml
const std::string kBertGpu = R"(
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: "torchserve-bert-v2"
  namespace: ml
spec:
  predictor:
    pytorch:
      protocolVersion: v2
      storageUri: gs://kfserving-examples/models/torchserve/bert/v2
      resources:
        limits:
          memory: 4Gi
          nvidia.com/gpu: "1"
)";

TEST(MissedGpus, KServesGpuBertSampleIsPlacedOnThePredictor) {
  Engine engine(shipped());
  const Answer answer = mutate(engine, *objectOf(kBertGpu));
  ASSERT_EQ(answer.outcome.decision(), Decision::Patched) << answer.outcome.message();
  EXPECT_EQ(answer.evaluation.workloadClass, WorkloadClass::Realtime);
  const JsonValue& mutated = *answer.mutated;
  EXPECT_NE(valueAt(mutated, "/spec/predictor/tolerations"), nullptr);
  EXPECT_EQ(stringMember(valueAt(mutated, "/spec/predictor/nodeSelector"), "accelerator"),
            "nvidia");
  EXPECT_EQ(validateCustomResources({toJson(mutated)}),
            (std::map<std::string, std::string>{{"InferenceService/torchserve-bert-v2", "ok"}}));
  EXPECT_EQ(mutate(engine, mutated).outcome.decision(), Decision::Allowed);
}

TEST(MissedGpus, AModelContainersGpuQuantityIsJudgedWithItsFieldPath) {
  Engine engine(shipped());
  const Answer answer = validate(engine, *objectOf(R"(
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: bert, namespace: ml}
spec:
  predictor:
    model:
      modelFormat: {name: pytorch}
      resources: {limits: {nvidia.com/gpus: 1, memory: 4Gi}}
)"));
  ASSERT_EQ(answer.outcome.decision(), Decision::Denied);
  ASSERT_FALSE(answer.evaluation.denials.empty());
  EXPECT_EQ(answer.evaluation.denials.front().rule.name(), "AIA003");
  EXPECT_EQ(answer.evaluation.denials.front().field, "spec.predictor.model.resources.limits");
}

// KAI Scheduler's GPU sharing quickstart Pod, with a Job around it.
const std::string kSharedGpuJob = R"(
apiVersion: batch/v1
kind: Job
metadata: {name: shared, namespace: ml}
spec:
  template:
    metadata:
      annotations: {gpu-fraction: "0.5"}
    spec:
      schedulerName: kai-scheduler
      restartPolicy: Never
      containers:
      - {name: sleep, image: busybox}
)";

TEST(MissedGpus, AKaiShareIsAimedAtThePoolWithoutAWholeGpuOnTop) {
  Engine engine(shipped());
  const Answer answer = mutate(engine, *objectOf(kSharedGpuJob));
  ASSERT_EQ(answer.outcome.decision(), Decision::Patched) << answer.outcome.message();
  EXPECT_EQ(answer.evaluation.workloadClass, WorkloadClass::Batch);
  const JsonValue& mutated = *answer.mutated;
  EXPECT_NE(valueAt(mutated, "/spec/template/spec/tolerations"), nullptr);
  EXPECT_EQ(valueAt(mutated, "/spec/template/spec/containers/0/resources"), nullptr);
  const Answer validated = validate(engine, mutated);
  // Aimed at the pool, it asks for a GPU: AIA007 has nothing to say, and the
  // batch profile allows sharing (AIA013): the share is admitted.
  for (const Violation& violation : validated.evaluation.denials) {
    EXPECT_NE(violation.rule.name(), "AIA007") << violation.problem;
  }
  EXPECT_EQ(validated.outcome.decision(), Decision::Allowed) << validated.outcome.message();
}

TEST(MissedGpus, AKaiShareWhereSharingIsForbiddenIsRefusedAtItsAnnotation) {
  Engine engine(shipped());
  std::string training = kSharedGpuJob;
  training.replace(training.find("{gpu-fraction: \"0.5\"}"), 21,
                   "{gpu-fraction: \"0.5\", aiadmit.dev/workload: training}");
  const Answer answer = validate(engine, *objectOf(training));
  bool aia013 = false;
  for (const Violation& denial : answer.evaluation.denials) {
    if (denial.rule.name() != "AIA013") continue;
    aia013 = true;
    EXPECT_EQ(denial.field, "spec.template.metadata.annotations[gpu-fraction]");
  }
  EXPECT_TRUE(aia013) << answer.outcome.message();
}

TEST(MissedGpus, AStampedRayHeadPodThatAsksForNoGpuIsLeftAlone) {
  Engine engine(shipped());
  const auto head = objectOf(R"(
apiVersion: v1
kind: Pod
metadata:
  name: raycluster-head
  namespace: ml
  annotations: {aiadmit.dev/class: batch, aiadmit.dev/profile: batch}
  ownerReferences:
  - {apiVersion: ray.io/v1, kind: RayCluster, name: raycluster, uid: u1, controller: true}
spec:
  containers:
  - {name: ray-head, image: rayproject/ray, resources: {limits: {cpu: "2"}}}
)");
  const Answer mutated = mutate(engine, *head);
  EXPECT_EQ(mutated.outcome.decision(), Decision::Allowed);
  EXPECT_EQ(mutated.evaluation.workloadClass, WorkloadClass::None);
  const Answer validated = validate(engine, *head);
  EXPECT_TRUE(validated.outcome.isAllowed()) << validated.outcome.message();
  EXPECT_TRUE(validated.evaluation.denials.empty());
}

}  // namespace
}  // namespace aiadmit
