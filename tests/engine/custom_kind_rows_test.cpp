// A kind added as a WorkloadType document whose row says what a built-in
// row says gets what the built-in kind gets: a CronJob-like custom kind
// with the Jobs' metadata between the object and its Pods is stamped,
// placed and given its Job settings at the same places as a CronJob; a
// model server whose operator claims devices by annotation is classified
// and placed as an LLMInferenceService with KServe's managed DRA is; a kind
// of Spark pod specs is read, counted and mutated as a SparkApplication is.
#include <gtest/gtest.h>

#include "tests/support/golden_files.h"
#include "tests/support/test_support.h"
#include "webhook/codec/json_patch.h"
#include "webhook/engine/engine.h"
#include "webhook/policy/profile_loader.h"

namespace aiadmit {
namespace {

using namespace testing;

const std::string kNightlyRun = R"(apiVersion: aiadmit.dev/v1
kind: WorkloadType
metadata:
  name: nightly-runs
spec:
  group: example.com
  kind: NightlyRun
  versions: [v1]
  resource: nightlyruns
  class: batch
  lifecycle: RunsToCompletion
  jobSettings:
    backoffLimit: /spec/jobTemplate/spec/backoffLimit
    activeDeadlineSeconds: /spec/jobTemplate/spec/activeDeadlineSeconds
    ttlSecondsAfterFinished: /spec/jobTemplate/spec/ttlSecondsAfterFinished
  templates:
  - role: pod
    template: /spec/jobTemplate/spec/template
    intermediateMetadata: /spec/jobTemplate/metadata
    replicas:
    - path: /spec/jobTemplate/spec/parallelism
      default: 1
)";

std::string scheduled(const std::string& apiVersion, const std::string& kind) {
  return "apiVersion: " + apiVersion + "\nkind: " + kind + R"(
metadata: {name: nightly, namespace: ml}
spec:
  schedule: "@daily"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: main, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]
)";
}

// The shipped batch profile and the NightlyRun type.
ProfileLoadResult batchAndNightlyRun() {
  return loadProfileText(readFile(sourceDir() + "/profiles/batch.yaml") + "---\n" + kNightlyRun,
                         "profiles.yaml", mutationSwitches());
}

// The JSON Patch /mutate makes of `yaml` under batchAndNightlyRun().
std::string patchOf(const std::string& yaml) {
  const ProfileLoadResult loaded = batchAndNightlyRun();
  EXPECT_TRUE(loaded.ok()) << formatLoadErrors(loaded.errors);
  if (!loaded.ok()) return "";
  const Engine engine(loaded.set);
  const auto object = yamlObject(yaml);
  JsonDocument mutated;
  const Decided decided =
      engine.mutate(AdmissionSubject::ofObject(*object, "ml"), {.mutated = &mutated});
  EXPECT_EQ(decided.record.profile, "batch") << decided.record.profileError;
  return decided.outcome.patch();
}

// A kind shaped like an LLMInferenceService's main template, with KServe's
// managed DRA annotations.
const std::string kModelServer = R"(apiVersion: aiadmit.dev/v1
kind: WorkloadType
metadata:
  name: model-servers
spec:
  group: example.com
  kind: ModelServer
  versions: [v1alpha2]
  resource: modelservers
  class: realtime
  lifecycle: LongRunning
  templates:
  - role: main
    podSpec: /spec/template
    metadata: /spec
    annotatedClaim:
      deviceClass: serving.kserve.io/exp-dra-device-class
      count: serving.kserve.io/exp-dra-device-count
      container: serving.kserve.io/exp-dra-container-name
    replicas:
    - path: /spec/replicas
      default: 1
    inject: [gpuLimits, placement, priority, scheduler, stamps, sharedMemory]
)";

std::string managedDra(const std::string& apiVersion, const std::string& kind) {
  return "apiVersion: " + apiVersion + "\nkind: " + kind + R"(
metadata:
  name: qwen
  namespace: ml
  annotations:
    serving.kserve.io/exp-dra-device-class: gpu.nvidia.com
    serving.kserve.io/exp-dra-device-count: "2"
spec:
  replicas: 1
  template:
    containers: [{name: main, image: vllm}]
)";
}

TEST(CustomKindRows, AKindWhoseOperatorClaimsDevicesByAnnotationIsPlacedAsAnLlmService) {
  const ProfileLoadResult loaded =
      loadProfileText(readFile(sourceDir() + "/profiles/realtime.yaml") + "---\n" + kModelServer,
                      "profiles.yaml", mutationSwitches());
  ASSERT_TRUE(loaded.ok()) << formatLoadErrors(loaded.errors);
  const WorkloadType* type = loaded.workloadTypes->find("example.com", "v1alpha2", "ModelServer");
  ASSERT_NE(type, nullptr);
  EXPECT_EQ(type->templates.at(0).annotatedClaim.container,
            "serving.kserve.io/exp-dra-container-name");
  const Engine engine(loaded.set);
  auto patch = [&](const std::string& yaml) {
    const auto object = yamlObject(yaml);
    const Decided decided = engine.mutate(AdmissionSubject::ofObject(*object, "ml"), {});
    EXPECT_EQ(decided.record.profile, "realtime") << decided.record.profileError;
    return decided.outcome.patch();
  };
  const std::string llm = patch(managedDra("serving.kserve.io/v1alpha2", "LLMInferenceService"));
  ASSERT_NE(llm.find("/spec/template/tolerations"), std::string::npos)
      << "the claimed GPUs aim the Pods at the pool: " << llm;
  EXPECT_EQ(patch(managedDra("example.com/v1alpha2", "ModelServer")), llm);
}

// A kind shaped like a SparkApplication: a driver and executors as Spark
// operator SparkPodSpecs, the executors' count unknown under dynamic
// allocation.
const std::string kSparkJob = R"(apiVersion: aiadmit.dev/v1
kind: WorkloadType
metadata:
  name: spark-jobs
spec:
  group: example.com
  kind: SparkJob
  versions: [v1]
  resource: sparkjobs
  class: batch
  lifecycle: RunsToCompletion
  templates:
  - role: driver
    sparkPod: /spec/driver
  - role: executor
    sparkPod: /spec/executor
    replicas:
    - path: /spec/executor/instances
      unknownWhen: [/spec/dynamicAllocation/enabled, /spec/sparkConf/spark.dynamicAllocation.enabled]
)";

std::string sparkJob(const std::string& apiVersion, const std::string& kind,
                     const std::string& allocation) {
  return "apiVersion: " + apiVersion + "\nkind: " + kind + R"(
metadata: {name: rapids, namespace: ml}
spec:
  sparkConf: {spark.dynamicAllocation.enabled: ")" +
         allocation + R"("}
  driver: {cores: 1}
  executor: {instances: 2, gpu: {name: nvidia.com/gpu, quantity: 1}}
)";
}

TEST(CustomKindRows, AKindOfSparkPodSpecsIsReadAndMutatedAsASparkApplication) {
  const ProfileLoadResult loaded =
      loadProfileText(readFile(sourceDir() + "/profiles/batch.yaml") + "---\n" + kSparkJob,
                      "profiles.yaml", mutationSwitches());
  ASSERT_TRUE(loaded.ok()) << formatLoadErrors(loaded.errors);
  const WorkloadType* type = loaded.workloadTypes->find("example.com", "v1", "SparkJob");
  ASSERT_NE(type, nullptr);
  EXPECT_EQ(type->templates.at(1).shape, TemplateShape::SparkPod);
  EXPECT_EQ(type->templates.at(1).metadata, "/spec/executor");
  EXPECT_EQ(type->templates.at(1).injectable, kSparkPodInjectable);
  const Engine engine(loaded.set);
  auto decide = [&](const std::string& yaml) {
    const auto object = yamlObject(yaml);
    const Decided decided = engine.mutate(AdmissionSubject::ofObject(*object, "ml"), {});
    EXPECT_EQ(decided.record.profile, "batch") << decided.record.profileError;
    return std::pair{decided.outcome.patch(), decided.record.templates};
  };
  const auto spark = decide(sparkJob("sparkoperator.k8s.io/v1beta2", "SparkApplication", "false"));
  ASSERT_NE(spark.first.find("/spec/executor/priorityClassName"), std::string::npos)
      << "its GPUs make it batch work: " << spark.first;
  EXPECT_EQ(spark.first.find("nodeSelector"), std::string::npos) << spark.first;
  EXPECT_EQ(decide(sparkJob("example.com/v1", "SparkJob", "false")), spark);
  // Dynamic allocation leaves the executors' count to Spark, in both rows.
  const auto dynamic = decide(sparkJob("sparkoperator.k8s.io/v1beta2", "SparkApplication", "true"));
  EXPECT_NE(dynamic.second, spark.second);
  EXPECT_EQ(decide(sparkJob("example.com/v1", "SparkJob", "true")), dynamic);
}

TEST(CustomKindRows, ACronJobLikeKindIsMutatedWhereACronJobIs) {
  const std::string cronJob = patchOf(scheduled("batch/v1", "CronJob"));
  ASSERT_NE(cronJob.find("/spec/jobTemplate/metadata"), std::string::npos)
      << "a CronJob's Jobs are stamped: " << cronJob;
  EXPECT_NE(cronJob.find("/spec/jobTemplate/spec/backoffLimit"), std::string::npos) << cronJob;
  EXPECT_EQ(patchOf(scheduled("example.com/v1", "NightlyRun")), cronJob);
}

TEST(CustomKindRows, ADocumentsRowHoldsTheFieldsItStates) {
  const ProfileLoadResult loaded = batchAndNightlyRun();
  ASSERT_NE(loaded.workloadTypes, nullptr) << formatLoadErrors(loaded.errors);
  const WorkloadType* type = loaded.workloadTypes->find("example.com", "v1", "NightlyRun");
  ASSERT_NE(type, nullptr);
  EXPECT_TRUE(type->customResource);
  EXPECT_FALSE(type->objectIsPod);
  EXPECT_EQ(type->templates.at(0).intermediateMetadata, "/spec/jobTemplate/metadata");
}

}  // namespace
}  // namespace aiadmit
