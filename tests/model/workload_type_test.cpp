// The workload-type table and its resolver: every custom resource of the
// shared corpus and a sample of each built-in kind resolve to the templates,
// roles and Pod counts written out by hand below; every built-in pointer
// exists in the schema of each served version of the kind's real CRD
// (../shared/crds); wildcards over map keys and array items, RFC 6901
// escaping, and objects beyond the resolver's bounds.
#include "webhook/model/workload_type.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

#include "tests/support/test_support.h"
#include "webhook/codec/yaml_json.h"

namespace aiadmit {
namespace {

using aiadmit::testing::corpusDir;
using aiadmit::testing::readFile;
using aiadmit::testing::yamlObject;

const WorkloadTypeTable& table() {
  return *WorkloadTypeTable::builtIn();
}

// "Worker x2 spec.pytorchReplicaSpecs.Worker.template.spec", "x?" when unknown.
std::string describe(const ResolvedTemplate& resolved) {
  const std::string count = resolved.replicas ? std::to_string(*resolved.replicas) : "?";
  return resolved.role + " x" + count + " " + resolved.specFieldPath;
}

std::vector<std::string> describeAll(const JsonValue& object) {
  const WorkloadType* type = table().findForObject(object);
  if (type == nullptr) return {"no workload type"};
  const Resolution resolution = resolveTemplates(*type, object);
  EXPECT_TRUE(resolution.ok()) << resolution.error;
  std::vector<std::string> out;
  for (const ResolvedTemplate& resolved : resolution.templates) out.push_back(describe(resolved));
  return out;
}

using Lines = std::vector<std::string>;

TEST(WorkloadTypeTable, EveryBuiltInRowIsWellFormedAndUnique) {
  std::set<std::string> seen;
  std::set<std::string> kinds;
  for (const WorkloadType& type : table().types()) {
    EXPECT_EQ(checkWorkloadType(type), "") << type.qualifiedKind();
    kinds.insert(type.qualifiedKind());
    for (const std::string& version : type.versions) {
      EXPECT_TRUE(seen.insert(type.group + "/" + version + "/" + type.kind).second)
          << type.qualifiedKind() << " " << version << " has two rows";
    }
    EXPECT_TRUE(type.builtIn);
    EXPECT_FALSE(type.versions.empty()) << type.qualifiedKind();
    EXPECT_FALSE(type.resource.empty()) << type.qualifiedKind();
    EXPECT_FALSE(type.classReason.empty()) << type.qualifiedKind();
  }
  EXPECT_EQ(kinds.size(), 29u);
}

TEST(WorkloadTypeTable, FindsRowsByGroupVersionAndKind) {
  EXPECT_EQ(table().find("kubeflow.org", "v1", "PyTorchJob")->resource, "pytorchjobs");
  EXPECT_EQ(table().find("kubeflow.org", "v1", "MPIJob"), nullptr) << "MPIJob is v2beta1";
  EXPECT_NE(table().find("kubeflow.org", "v2beta1", "MPIJob"), nullptr);
  EXPECT_NE(table().find("ray.io", "v1alpha1", "RayCluster"), nullptr);
  EXPECT_EQ(table().find("ray.io", "v1alpha1", "RayCronJob"), nullptr);
  EXPECT_NE(table().find("", "v1", "Pod"), nullptr);
  EXPECT_NE(table().find("batch", "v1", "CronJob"), nullptr);
  // Volcano's CronJob shares batch/v1's kind name, not its group.
  EXPECT_EQ(table().find("batch.volcano.sh", "v1alpha1", "CronJob"), nullptr);
  EXPECT_EQ(table().find("batch.volcano.sh", "v1alpha1", "Job")->qualifiedKind(),
            "Job.batch.volcano.sh");
  const auto pod = yamlObject("apiVersion: v1\nkind: Pod\n");
  EXPECT_EQ(table().findForObject(*pod)->qualifiedKind(), "Pod");
}

// ---- The shared corpus ----

const std::map<std::string, Lines>& expectedCorpus() {
  static const std::map<std::string, Lines> expected = {
      {"GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__gke-ray__kueue__ephemeral-rayjob."
       "yaml#0",
       {"head x1 spec.rayClusterSpec.headGroupSpec.template.spec",
        "worker-group-reservation x1 spec.rayClusterSpec.workerGroupSpecs[0].template.spec",
        "worker-group-dws-flex x1 spec.rayClusterSpec.workerGroupSpecs[1].template.spec",
        "worker-group-spot x1 spec.rayClusterSpec.workerGroupSpecs[2].template.spec"}},
      {"GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__llm-multihost-gpus-tensorrt-llm__"
       "lws.yaml#0",
       {"leader x1 spec.leaderWorkerTemplate.leaderTemplate.spec",
        "worker x1 spec.leaderWorkerTemplate.workerTemplate.spec"}},
      {"kubernetes-sigs__lws__docs__examples__vllm__GPU__lws.yaml#0",
       {"leader x2 spec.leaderWorkerTemplate.leaderTemplate.spec",
        "worker x2 spec.leaderWorkerTemplate.workerTemplate.spec"}},
      {"kserve__kserve__docs__samples__llmisvc__agentic-tool-calling__llmisvc-single-gpu.yaml#0",
       {"main x1 spec.template"}},
      {"kubeflow__training-operator__examples__paddlepaddle__simple-gpu.yaml#0",
       {"Worker x2 spec.paddleReplicaSpecs.Worker.template.spec"}},
      {"kubeflow__training-operator__examples__pytorch__deepspeed-demo__pytorch_deepspeed_demo."
       "yaml#0",
       {"Master x1 spec.pytorchReplicaSpecs.Master.template.spec",
        "Worker x1 spec.pytorchReplicaSpecs.Worker.template.spec"}},
      {"kubeflow__training-operator__examples__pytorch__elastic__imagenet__imagenet.yaml#0",
       {"Worker x2 spec.pytorchReplicaSpecs.Worker.template.spec"}},
      {"ray-project__kuberay__ray-operator__config__samples__pytorch-mnist__ray-job.pytorch-mnist."
       "yaml#0",
       {"head x1 spec.rayClusterSpec.headGroupSpec.template.spec",
        "small-group x2 spec.rayClusterSpec.workerGroupSpecs[0].template.spec"}},
      {"ray-project__kuberay__ray-operator__config__samples__pytorch-text-classifier__ray-job."
       "pytorch-distributed-training.yaml#0",
       {"head x1 spec.rayClusterSpec.headGroupSpec.template.spec"}},
      {"volcano-sh__volcano__example__MindSpore-example__mindspore_gpu__mindspore-gpu.yaml#0",
       {"mpimaster x1 spec.tasks[0].template.spec", "mpiworker x2 spec.tasks[1].template.spec"}},
      // Not built in: Volcano's CronJob, and KServe's legacy KFService whose
      // serving.kubeflow.org API no longer exists.
      {"volcano-sh__volcano__example__cronjob__cronjob.yaml#0", {"no workload type"}},
      {"kserve__kserve__docs__samples__accelerators__tensorflow-gpu.yaml#0", {"no workload type"}},
  };
  return expected;
}

bool isCustomResource(const JsonValue& object) {
  const std::string_view apiVersion = stringMember(&object, "apiVersion");
  const size_t slash = apiVersion.find('/');
  const std::string_view group = slash == std::string_view::npos ? "" : apiVersion.substr(0, slash);
  return group.find('.') != std::string_view::npos;
}

TEST(WorkloadTypeCorpus, EveryCustomResourceResolvesToTheExpectedTemplates) {
  std::set<std::string> checked;
  for (const auto& corpusObject : aiadmit::testing::corpusObjects()) {
    const auto object = aiadmit::testing::parseJson(corpusObject.json);
    if (!isCustomResource(*object)) continue;
    const std::string key = corpusObject.file + "#" + std::to_string(corpusObject.index);
    SCOPED_TRACE(key);
    const auto expected = expectedCorpus().find(key);
    ASSERT_NE(expected, expectedCorpus().end()) << "a custom resource without an expected row";
    EXPECT_EQ(describeAll(*object), expected->second);
    checked.insert(key);
  }
  EXPECT_EQ(checked.size(), expectedCorpus().size()) << "every expected object is in the corpus";
}

TEST(WorkloadTypeCorpus, BuiltInKindsOfTheCorpusResolveTheirTemplate) {
  size_t builtIn = 0;
  for (const auto& corpusObject : aiadmit::testing::corpusObjects()) {
    const auto object = aiadmit::testing::parseJson(corpusObject.json);
    if (isCustomResource(*object)) continue;
    const WorkloadType* type = table().findForObject(*object);
    if (type == nullptr) continue;  // a Service
    SCOPED_TRACE(corpusObject.file);
    ++builtIn;
    const Resolution resolution = resolveTemplates(*type, *object);
    ASSERT_EQ(resolution.templates.size(), 1u);
    const ResolvedTemplate& resolved = resolution.templates[0];
    const bool pod = corpusObject.kind == "Pod";
    EXPECT_EQ(resolved.specPointer, pod ? "/spec" : "/spec/template/spec");
    EXPECT_EQ(resolved.metadataPointer, pod ? "/metadata" : "/spec/template/metadata");
    EXPECT_EQ(resolved.spec, valueAt(*object, resolved.specPointer));
    EXPECT_TRUE(resolved.replicas.has_value());
  }
  EXPECT_GE(builtIn, 10u);
}

// ---- A sample of each built-in kind ----

struct Sample {
  std::string yaml;
  Lines expected;
};

// Small objects in the shape of each kind's API, counts chosen so that a
// wrong default or a missing factor shows.
const std::map<std::string, Sample>& samples() {
  static const std::map<std::string, Sample> all = {
      {"Pod", {"apiVersion: v1\nkind: Pod\nspec: {containers: [{name: a}]}\n", {"pod x1 spec"}}},
      {"Deployment.apps",
       {"apiVersion: apps/v1\nkind: Deployment\nspec: {replicas: 3, template: {spec: {}}}\n",
        {"pod x3 spec.template.spec"}}},
      {"StatefulSet.apps",
       {"apiVersion: apps/v1\nkind: StatefulSet\nspec: {template: {spec: {}}}\n",
        {"pod x1 spec.template.spec"}}},
      {"ReplicaSet.apps",
       {"apiVersion: apps/v1\nkind: ReplicaSet\nspec: {replicas: 0, template: {spec: {}}}\n",
        {"pod x0 spec.template.spec"}}},
      {"Job.batch",
       {"apiVersion: batch/v1\nkind: Job\nspec: {parallelism: 4, template: {spec: {}}}\n",
        {"pod x4 spec.template.spec"}}},
      {"CronJob.batch",
       {"apiVersion: batch/v1\nkind: CronJob\nspec: {jobTemplate: {spec: {template: {spec: "
        "{}}}}}\n",
        {"pod x1 spec.jobTemplate.spec.template.spec"}}},
      {"PyTorchJob.kubeflow.org",
       {"apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nspec:\n  pytorchReplicaSpecs:\n"
        "    Master: {template: {spec: {}}}\n    Worker: {replicas: 8, template: {spec: {}}}\n",
        {"Master x1 spec.pytorchReplicaSpecs.Master.template.spec",
         "Worker x8 spec.pytorchReplicaSpecs.Worker.template.spec"}}},
      {"TFJob.kubeflow.org",
       {"apiVersion: kubeflow.org/v1\nkind: TFJob\nspec:\n  tfReplicaSpecs:\n"
        "    PS: {replicas: 2, template: {spec: {}}}\n    Chief: {template: {spec: {}}}\n",
        {"PS x2 spec.tfReplicaSpecs.PS.template.spec",
         "Chief x1 spec.tfReplicaSpecs.Chief.template.spec"}}},
      {"XGBoostJob.kubeflow.org",
       {"apiVersion: kubeflow.org/v1\nkind: XGBoostJob\nspec:\n  xgbReplicaSpecs:\n"
        "    Worker: {replicas: 3, template: {spec: {}}}\n",
        {"Worker x3 spec.xgbReplicaSpecs.Worker.template.spec"}}},
      {"PaddleJob.kubeflow.org",
       {"apiVersion: kubeflow.org/v1\nkind: PaddleJob\nspec:\n  paddleReplicaSpecs:\n"
        "    Worker: {replicas: 2, template: {spec: {}}}\n",
        {"Worker x2 spec.paddleReplicaSpecs.Worker.template.spec"}}},
      {"JAXJob.kubeflow.org",
       {"apiVersion: kubeflow.org/v1\nkind: JAXJob\nspec:\n  jaxReplicaSpecs:\n"
        "    Worker: {replicas: 4, template: {spec: {}}}\n",
        {"Worker x4 spec.jaxReplicaSpecs.Worker.template.spec"}}},
      {"MPIJob.kubeflow.org",
       {"apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nspec:\n  mpiReplicaSpecs:\n"
        "    Launcher: {template: {spec: {}}}\n    Worker: {template: {spec: {}}}\n",
        {"Launcher x1 spec.mpiReplicaSpecs.Launcher.template.spec",
         "Worker x0 spec.mpiReplicaSpecs.Worker.template.spec"}}},
      {"TrainJob.trainer.kubeflow.org",
       {"apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nspec:\n"
        "  runtimeRef: {name: torch-distributed}\n"
        "  trainer: {numNodes: 4, resourcesPerNode: {limits: {nvidia.com/gpu: 8}}}\n",
        {"node x4 spec.trainer.resourcesPerNode"}}},
      {"TrainingRuntime.trainer.kubeflow.org",
       {"apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainingRuntime\nspec:\n  template:\n"
        "    spec:\n      replicatedJobs:\n"
        "      - {name: dataset-initializer, template: {spec: {template: {spec: {}}}}}\n"
        "      - name: node\n        template: {spec: {parallelism: 2, template: {spec: {}}}}\n",
        {"dataset-initializer x1 "
         "spec.template.spec.replicatedJobs[0].template.spec.template.spec",
         "node x2 spec.template.spec.replicatedJobs[1].template.spec.template.spec"}}},
      {"ClusterTrainingRuntime.trainer.kubeflow.org",
       {"apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\nspec:\n"
        "  template:\n    spec:\n      replicatedJobs:\n"
        "      - {name: node, replicas: 2, template: {spec: {template: {spec: {}}}}}\n",
        {"node x2 spec.template.spec.replicatedJobs[0].template.spec.template.spec"}}},
      {"RayCluster.ray.io",
       {"apiVersion: ray.io/v1\nkind: RayCluster\nspec:\n"
        "  headGroupSpec: {template: {spec: {}}}\n  workerGroupSpecs:\n"
        "  - {groupName: gpu, replicas: 2, numOfHosts: 4, minReplicas: 0, maxReplicas: 4,\n"
        "     template: {spec: {}}}\n"
        "  - {groupName: cpu, minReplicas: 0, maxReplicas: 4, template: {spec: {}}}\n"
        // KubeRay keeps replicas within minReplicas and maxReplicas.
        "  - {groupName: capped, replicas: 9, minReplicas: 1, maxReplicas: 4,\n"
        "     template: {spec: {}}}\n"
        "  - {groupName: floor, minReplicas: 2, maxReplicas: 4, numOfHosts: 2,\n"
        "     template: {spec: {}}}\n",
        {"head x1 spec.headGroupSpec.template.spec",
         "gpu x8 spec.workerGroupSpecs[0].template.spec",
         "cpu x0 spec.workerGroupSpecs[1].template.spec",
         "capped x4 spec.workerGroupSpecs[2].template.spec",
         "floor x4 spec.workerGroupSpecs[3].template.spec"}}},
      {"RayJob.ray.io",
       {"apiVersion: ray.io/v1\nkind: RayJob\nspec:\n  rayClusterSpec:\n"
        "    headGroupSpec: {template: {spec: {}}}\n"
        "  submitterPodTemplate: {spec: {restartPolicy: Never}}\n",
        {"head x1 spec.rayClusterSpec.headGroupSpec.template.spec",
         "submitter x1 spec.submitterPodTemplate.spec"}}},
      {"RayService.ray.io",
       {"apiVersion: ray.io/v1\nkind: RayService\nspec:\n  rayClusterConfig:\n"
        "    headGroupSpec: {template: {spec: {}}}\n"
        "    workerGroupSpecs: [{groupName: gpu, replicas: 3, template: {spec: {}}}]\n",
        {"head x1 spec.rayClusterConfig.headGroupSpec.template.spec",
         "gpu x3 spec.rayClusterConfig.workerGroupSpecs[0].template.spec"}}},
      {"RayCronJob.ray.io",
       {"apiVersion: ray.io/v1\nkind: RayCronJob\nspec:\n  schedule: '0 * * * *'\n"
        "  jobTemplate:\n    rayClusterSpec:\n      headGroupSpec: {template: {spec: {}}}\n"
        "      workerGroupSpecs: [{groupName: w, replicas: 1, template: {spec: {}}}]\n",
        {"head x1 spec.jobTemplate.rayClusterSpec.headGroupSpec.template.spec",
         "w x1 spec.jobTemplate.rayClusterSpec.workerGroupSpecs[0].template.spec"}}},
      {"LeaderWorkerSet.leaderworkerset.x-k8s.io",
       {"apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nspec:\n  replicas: 3\n"
        "  leaderWorkerTemplate: {size: 4, workerTemplate: {spec: {}}}\n",
        // Without a leaderTemplate the leaders come from the worker template.
        {"worker x12 spec.leaderWorkerTemplate.workerTemplate.spec"}}},
      {"DisaggregatedSet.disaggregatedset.x-k8s.io",
       {"apiVersion: disaggregatedset.x-k8s.io/v1\nkind: DisaggregatedSet\nspec:\n  slices: 2\n"
        "  roles:\n  - name: prefill\n    spec:\n      replicas: 2\n"
        "      leaderWorkerTemplate: {size: 3, leaderTemplate: {spec: {}}, workerTemplate: {spec: "
        "{}}}\n"
        "  - name: decode\n    spec:\n      leaderWorkerTemplate: {workerTemplate: {spec: {}}}\n",
        {"prefill-leader x4 spec.roles[0].spec.leaderWorkerTemplate.leaderTemplate.spec",
         "prefill-worker x8 spec.roles[0].spec.leaderWorkerTemplate.workerTemplate.spec",
         "decode-worker x2 spec.roles[1].spec.leaderWorkerTemplate.workerTemplate.spec"}}},
      {"JobSet.jobset.x-k8s.io",
       {"apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nspec:\n  replicatedJobs:\n"
        "  - name: workers\n    replicas: 2\n"
        "    template: {spec: {parallelism: 4, completions: 4, template: {spec: {}}}}\n"
        "  - {name: driver, template: {spec: {template: {spec: {}}}}}\n",
        {"workers x8 spec.replicatedJobs[0].template.spec.template.spec",
         "driver x1 spec.replicatedJobs[1].template.spec.template.spec"}}},
      {"Job.batch.volcano.sh",
       {"apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nspec:\n  tasks:\n"
        "  - {name: ps, replicas: 1, template: {spec: {}}}\n  - {template: {spec: {}}}\n",
        {"ps x1 spec.tasks[0].template.spec", "1 x0 spec.tasks[1].template.spec"}}},
      {"InferenceService.serving.kserve.io",
       {"apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nspec:\n  predictor:\n"
        "    minReplicas: 2\n    model: {modelFormat: {name: huggingface}}\n"
        "    workerSpec: {pipelineParallelSize: 3}\n"
        "  transformer: {containers: [{name: t}]}\n  explainer: {art: {type: SquareAttack}}\n"
        "  canary: [{trafficPercent: 10, predictor: {minReplicas: 1, model: {}}}]\n",
        {"predictor x2 spec.predictor", "predictor-worker x4 spec.predictor.workerSpec",
         "transformer x1 spec.transformer", "explainer x1 spec.explainer",
         "canary-0 x1 spec.canary[0].predictor"}}},
      {"LLMInferenceService.serving.kserve.io",
       {"apiVersion: serving.kserve.io/v1alpha2\nkind: LLMInferenceService\nspec:\n  replicas: 2\n"
        "  template: {containers: [{name: main}]}\n  worker: {containers: [{name: main}]}\n"
        "  prefill: {replicas: 4, template: {containers: [{name: main}]}}\n"
        "  router: {scheduler: {template: {containers: [{name: s}]}}}\n",
        {"main x2 spec.template", "main-worker x? spec.worker", "prefill x4 spec.prefill.template",
         "scheduler x1 spec.router.scheduler.template"}}},
      {"Service.serving.knative.dev",
       {"apiVersion: serving.knative.dev/v1\nkind: Service\nspec:\n"
        "  template: {metadata: {annotations: {autoscaling.knative.dev/min-scale: '2'}},\n"
        "    spec: {containers: [{image: x}]}}\n",
        // Knative's autoscaler decides how many Pods; the object cannot tell.
        {"revision x? spec.template.spec"}}},
      {"NIMService.apps.nvidia.com",
       {"apiVersion: apps.nvidia.com/v1alpha1\nkind: NIMService\nspec:\n  replicas: 2\n"
        "  resources: {limits: {nvidia.com/gpu: 8}}\n"
        // A multi-node replica is a group of pipeline-parallelism Pods.
        "  multiNode: {parallelism: {pipeline: 2, tensor: 8}}\n",
        {"nim x4 spec.resources"}}},
      {"SparkApplication.sparkoperator.k8s.io",
       {"apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nspec:\n"
        "  driver: {cores: 1}\n"
        "  executor: {instances: 4, gpu: {name: nvidia.com/gpu, quantity: 1}}\n",
        {"driver x1 spec.driver", "executor x4 spec.executor"}}},
      {"ScheduledSparkApplication.sparkoperator.k8s.io",
       {"apiVersion: sparkoperator.k8s.io/v1beta2\nkind: ScheduledSparkApplication\nspec:\n"
        "  schedule: '@every 1h'\n  template:\n    driver: {cores: 1}\n"
        // Dynamic allocation sizes the executors at run time.
        "    executor: {instances: 2}\n    dynamicAllocation: {enabled: true}\n",
        {"driver x1 spec.template.driver", "executor x? spec.template.executor"}}},
  };
  return all;
}

TEST(WorkloadTypeSamples, EachBuiltInKindHasASample) {
  for (const WorkloadType& type : table().types()) {
    EXPECT_EQ(samples().count(type.qualifiedKind()), 1u) << type.qualifiedKind();
  }
  std::set<std::string> kinds;
  for (const WorkloadType& type : table().types()) kinds.insert(type.qualifiedKind());
  EXPECT_EQ(samples().size(), kinds.size());
}

TEST(WorkloadTypeSamples, ResolveToTheExpectedTemplates) {
  for (const auto& [kind, sample] : samples()) {
    SCOPED_TRACE(kind);
    const auto object = yamlObject(sample.yaml);
    ASSERT_NE(table().findForObject(*object), nullptr);
    EXPECT_EQ(table().findForObject(*object)->qualifiedKind(), kind);
    EXPECT_EQ(describeAll(*object), sample.expected);
  }
}

// ---- Pointers, settings, escaping ----

const ResolvedTemplate* withRole(const Resolution& resolution, std::string_view role) {
  for (const ResolvedTemplate& resolved : resolution.templates) {
    if (resolved.role == role) return &resolved;
  }
  ADD_FAILURE() << "no template with role " << role;
  return nullptr;
}

TEST(WorkloadTypeResolve, NamesMetadataAndJobSettingsOfEachTemplate) {
  const auto jobSet = yamlObject(samples().at("JobSet.jobset.x-k8s.io").yaml);
  const Resolution resolution = resolveTemplates(*table().findForObject(*jobSet), *jobSet);
  const ResolvedTemplate* driver = withRole(resolution, "driver");
  ASSERT_NE(driver, nullptr);
  EXPECT_EQ(driver->specPointer, "/spec/replicatedJobs/1/template/spec/template/spec");
  EXPECT_EQ(driver->metadataPointer, "/spec/replicatedJobs/1/template/spec/template/metadata");
  EXPECT_EQ(driver->metadataFieldPath, "spec.replicatedJobs[1].template.spec.template.metadata");
  EXPECT_EQ(driver->metadata, nullptr) << "absent from the object";
  EXPECT_EQ(driver->jobSettings.backoffLimit, "/spec/replicatedJobs/1/template/spec/backoffLimit");
  EXPECT_EQ(driver->jobSettings.activeDeadlineSeconds,
            "/spec/replicatedJobs/1/template/spec/activeDeadlineSeconds");
  EXPECT_EQ(driver->jobSettings.ttlSecondsAfterFinished, "/spec/ttlSecondsAfterFinished");

  const auto pytorch = yamlObject(samples().at("PyTorchJob.kubeflow.org").yaml);
  const Resolution training = resolveTemplates(*table().findForObject(*pytorch), *pytorch);
  for (const ResolvedTemplate& resolved : training.templates) {
    EXPECT_EQ(resolved.jobSettings.backoffLimit, "/spec/runPolicy/backoffLimit");
    EXPECT_EQ(resolved.jobSettings.ttlSecondsAfterFinished,
              "/spec/runPolicy/ttlSecondsAfterFinished");
  }
  const auto volcano = yamlObject(samples().at("Job.batch.volcano.sh").yaml);
  const Resolution tasks = resolveTemplates(*table().findForObject(*volcano), *volcano);
  ASSERT_FALSE(tasks.templates.empty());
  EXPECT_EQ(tasks.templates[0].jobSettings.backoffLimit, "/spec/maxRetry");
  EXPECT_EQ(tasks.templates[0].jobSettings.activeDeadlineSeconds, "") << "Volcano has none";

  const auto deployment = yamlObject(samples().at("Deployment.apps").yaml);
  const Resolution server = resolveTemplates(*table().findForObject(*deployment), *deployment);
  ASSERT_EQ(server.templates.size(), 1u);
  EXPECT_FALSE(server.templates[0].jobSettings.any());
}

TEST(WorkloadTypeResolve, KServeComponentsAreInlinePodSpecsWithTheirModelContainer) {
  const auto isvc = yamlObject(samples().at("InferenceService.serving.kserve.io").yaml);
  const Resolution resolution = resolveTemplates(*table().findForObject(*isvc), *isvc);
  const ResolvedTemplate* predictor = withRole(resolution, "predictor");
  ASSERT_NE(predictor, nullptr);
  EXPECT_EQ(predictor->specPointer, "/spec/predictor");
  EXPECT_EQ(predictor->metadataPointer, "/spec/predictor") << "labels and annotations members";
  EXPECT_EQ(predictor->containerObjects, (std::vector<std::string>{"/spec/predictor/model"}));
  const ResolvedTemplate* explainer = withRole(resolution, "explainer");
  ASSERT_NE(explainer, nullptr);
  EXPECT_EQ(explainer->containerObjects, (std::vector<std::string>{"/spec/explainer/art"}));
}

TEST(WorkloadTypeResolve, TrainJobHasResourcesAndOnlyGpuLimitsMayBeInjected) {
  const auto trainJob = yamlObject(samples().at("TrainJob.trainer.kubeflow.org").yaml);
  const Resolution resolution = resolveTemplates(*table().findForObject(*trainJob), *trainJob);
  ASSERT_EQ(resolution.templates.size(), 1u);
  const ResolvedTemplate& node = resolution.templates[0];
  EXPECT_EQ(node.slot->shape, TemplateShape::Resources);
  EXPECT_EQ(node.slot->injectable, static_cast<uint32_t>(kInjectGpuLimits));
  EXPECT_EQ(describeInjections(node.slot->injectable), "gpuLimits");
  EXPECT_TRUE(node.spec->HasMember("limits"));
  EXPECT_EQ(node.jobSettings.activeDeadlineSeconds, "/spec/activeDeadlineSeconds");
  // Without numNodes the count is the runtime's, which the TrainJob does not hold.
  const auto unsized = yamlObject(
      "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n"
      "spec: {trainer: {resourcesPerNode: {limits: {nvidia.com/gpu: 1}}}}\n");
  const Resolution unknown = resolveTemplates(*table().findForObject(*unsized), *unsized);
  ASSERT_EQ(unknown.templates.size(), 1u);
  EXPECT_FALSE(unknown.templates[0].replicas.has_value());
}

TEST(WorkloadTypeResolve, MapKeysAreEscapedInPointersAndBracketedInFieldPaths) {
  const auto object = yamlObject(
      "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nspec:\n  pytorchReplicaSpecs:\n"
      "    a/b~c: {replicas: 2, template: {spec: {}}}\n"
      "    gpu.worker: {template: {spec: {}}}\n");
  const Resolution resolution = resolveTemplates(*table().findForObject(*object), *object);
  ASSERT_EQ(resolution.templates.size(), 2u);
  EXPECT_EQ(resolution.templates[0].role, "a/b~c");
  EXPECT_EQ(resolution.templates[0].specPointer, "/spec/pytorchReplicaSpecs/a~1b~0c/template/spec");
  EXPECT_EQ(resolution.templates[0].specFieldPath, "spec.pytorchReplicaSpecs[a/b~c].template.spec");
  EXPECT_EQ(resolution.templates[0].replicas, 2);
  EXPECT_EQ(valueAt(*object, resolution.templates[0].specPointer), resolution.templates[0].spec);
  EXPECT_EQ(resolution.templates[1].specFieldPath,
            "spec.pytorchReplicaSpecs[gpu.worker].template.spec");
  EXPECT_EQ(fieldPathOf(*object, "/spec/pytorchReplicaSpecs/a~1b~0c/replicas"),
            "spec.pytorchReplicaSpecs[a/b~c].replicas");
}

TEST(WorkloadTypeResolve, UnusableCountsAreUnknownAndAbsentTemplatesYieldNothing) {
  const auto object = yamlObject(
      "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nspec:\n  pytorchReplicaSpecs:\n"
      "    Worker: {replicas: '2', template: {spec: {}}}\n    Master: {replicas: -1, template: "
      "{spec: {}}}\n    Empty: {replicas: 1}\n    Broken: {template: {spec: [1]}}\n"
      "    Nothing: null\n");
  EXPECT_EQ(describeAll(*object),
            (Lines{"Worker x? spec.pytorchReplicaSpecs.Worker.template.spec",
                   "Master x? spec.pytorchReplicaSpecs.Master.template.spec"}));
  const auto overflow = yamlObject(
      "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nspec:\n  replicatedJobs:\n"
      "  - {name: w, replicas: 4294967296, template: {spec: {parallelism: 4294967296, template: "
      "{spec: {}}}}}\n");
  EXPECT_EQ(describeAll(*overflow),
            (Lines{"w x? spec.replicatedJobs[0].template.spec.template.spec"}));
}

TEST(WorkloadTypeResolve, DefaultClassFollowsTheKindAndAPodsRestartPolicy) {
  const auto pod = yamlObject("apiVersion: v1\nkind: Pod\nspec: {restartPolicy: Never}\n");
  const WorkloadType& podType = *table().findForObject(*pod);
  EXPECT_EQ(defaultClassOf(podType, *pod).workloadClass, WorkloadClass::Batch);
  const auto server = yamlObject(
      "apiVersion: v1\nkind: Pod\nspec: {containers: [{name: s, ports: [{containerPort: "
      "8000}]}]}\n");
  EXPECT_EQ(defaultClassOf(podType, *server).workloadClass, WorkloadClass::Realtime);
  EXPECT_EQ(defaultClassOf(podType, *server).reason,
            "a Pod with restartPolicy Always that declares a port is a long-running server");
  const auto command = yamlObject(
      "apiVersion: v1\nkind: Pod\nspec: {containers: [{name: smi, command: [nvidia-smi]}]}\n");
  EXPECT_EQ(defaultClassOf(podType, *command).workloadClass, WorkloadClass::Batch);
  EXPECT_EQ(defaultClassOf(podType, *command).reason,
            "a Pod whose containers declare no port runs a command, not a server");
  const std::map<std::string, std::string> expected = {
      {"PyTorchJob.kubeflow.org", "training"},
      {"MPIJob.kubeflow.org", "training"},
      {"TrainJob.trainer.kubeflow.org", "training"},
      {"RayJob.ray.io", "batch"},
      {"RayService.ray.io", "realtime"},
      {"JobSet.jobset.x-k8s.io", "batch"},
      {"Job.batch.volcano.sh", "batch"},
      {"InferenceService.serving.kserve.io", "realtime"},
      {"LLMInferenceService.serving.kserve.io", "realtime"},
      {"LeaderWorkerSet.leaderworkerset.x-k8s.io", "realtime"},
      {"NIMService.apps.nvidia.com", "realtime"},
      {"SparkApplication.sparkoperator.k8s.io", "batch"},
      {"ScheduledSparkApplication.sparkoperator.k8s.io", "batch"},
  };
  for (const auto& [kind, workloadClass] : expected) {
    const auto object = yamlObject(samples().at(kind).yaml);
    EXPECT_EQ(className(defaultClassOf(*table().findForObject(*object), *object).workloadClass),
              workloadClass)
        << kind;
  }
  EXPECT_EQ(table().find("ray.io", "v1", "RayService")->lifecycle, Lifecycle::LongRunning);
  EXPECT_EQ(table().find("ray.io", "v1", "RayCluster")->lifecycle, Lifecycle::Either);
}

// ---- Bounds ----

TEST(WorkloadTypeResolve, AHugeMapStopsAtTheVisitLimit) {
  std::string yaml =
      "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nspec:\n  pytorchReplicaSpecs:\n";
  for (int i = 0; i < 5000; ++i) yaml += "    r" + std::to_string(i) + ": {}\n";
  const auto object = yamlObject(yaml);
  const Resolution resolution = resolveTemplates(*table().findForObject(*object), *object);
  EXPECT_FALSE(resolution.ok());
  EXPECT_EQ(resolution.error,
            "PyTorchJob.kubeflow.org: more than 4096 values under the wildcards of its pod "
            "template pointers");
}

TEST(WorkloadTypeResolve, TooManyTemplatesAreRefused) {
  std::string yaml = "apiVersion: ray.io/v1\nkind: RayCluster\nspec:\n  workerGroupSpecs:\n";
  for (int i = 0; i < 300; ++i)
    yaml += "  - {groupName: g" + std::to_string(i) + ", template: {spec: {}}}\n";
  const auto object = yamlObject(yaml);
  const Resolution resolution = resolveTemplates(*table().findForObject(*object), *object);
  EXPECT_FALSE(resolution.ok());
  EXPECT_EQ(resolution.error, "RayCluster.ray.io: more than 256 pod templates");
  EXPECT_EQ(resolution.templates.size(), 256u);
  ResolveLimits limits;
  limits.maxTemplates = 400;
  EXPECT_TRUE(resolveTemplates(*table().findForObject(*object), *object, limits).ok());
}

// ---- The rows against the real CRDs ----

std::string joinPointer(const std::string& base, const std::string& relative) {
  if (relative.empty() || relative[0] == '/') return relative;
  const size_t lastWildcard = base.rfind("/*");
  return base.substr(0, lastWildcard + 2) + "/" + relative;
}

// Every pointer a row reads or writes, as a pattern from the root.
std::vector<std::string> pointersOf(const TemplateSlot& slot) {
  std::vector<std::string> pointers = {slot.spec};
  if (!slot.metadata.empty()) pointers.push_back(slot.metadata);
  for (const std::string& object : slot.containerObjects)
    pointers.push_back(slot.spec + "/" + object);
  for (const ReplicaFactor& factor : slot.replicas.value_or(std::vector<ReplicaFactor>{})) {
    pointers.push_back(joinPointer(slot.spec, factor.pointer));
    for (const std::string* optional :
         {&factor.subtractWhenPresent, &factor.atLeast, &factor.atMost}) {
      if (!optional->empty()) pointers.push_back(joinPointer(slot.spec, *optional));
    }
    for (const std::string& flag : factor.unknownWhen)
      pointers.push_back(joinPointer(slot.spec, flag));
  }
  for (const std::string* setting :
       {&slot.jobSettings.backoffLimit, &slot.jobSettings.activeDeadlineSeconds,
        &slot.jobSettings.ttlSecondsAfterFinished}) {
    if (!setting->empty()) pointers.push_back(joinPointer(slot.spec, *setting));
  }
  return pointers;
}

// Every pointer of the rows of `first`'s kind in each version `crd` serves,
// and a row for each of them and no other.
void expectRowsMatchCrd(const WorkloadType& first, const std::string& path) {
  SCOPED_TRACE(path);
  const auto crd = yamlObject(readFile(path));
  const JsonValue* spec = member(crd.get(), "spec");
  EXPECT_EQ(stringMember(spec, "group"), first.group);
  EXPECT_EQ(stringMember(member(spec, "names"), "kind"), first.kind);
  EXPECT_EQ(stringMember(member(spec, "names"), "plural"), first.resource);
  std::set<std::string> served;
  for (const JsonValue& version : member(spec, "versions")->GetArray()) {
    if (!member(&version, "served")->GetBool()) continue;
    const std::string name(stringMember(&version, "name"));
    served.insert(name);
    const WorkloadType* type = table().find(first.group, name, first.kind);
    ASSERT_NE(type, nullptr) << "no row serves " << name;
    const JsonValue* schema = member(member(&version, "schema"), "openAPIV3Schema");
    for (const TemplateSlot& slot : type->templates) {
      SCOPED_TRACE(slot.role + " in " + name);
      for (const std::string& pointer : pointersOf(slot)) {
        EXPECT_NE(testing::crdSchemaAt(schema, pointer), nullptr) << pointer;
      }
      // A PodSpec slot names an object with containers, a resources slot
      // a ResourceRequirements, a sparkPod slot a SparkPodSpec.
      const char* expected = slot.shape == TemplateShape::PodSpec     ? "containers"
                             : slot.shape == TemplateShape::Resources ? "limits"
                                                                      : "gpu";
      EXPECT_NE(member(member(testing::crdSchemaAt(schema, slot.spec), "properties"), expected),
                nullptr)
          << slot.spec;
    }
  }
  std::set<std::string> inTable;
  for (const WorkloadType& type : table().types()) {
    if (type.qualifiedKind() != first.qualifiedKind()) continue;
    inTable.insert(type.versions.begin(), type.versions.end());
  }
  EXPECT_EQ(inTable, served);
}

TEST(WorkloadTypeCrds, EveryPointerOfACustomResourceRowIsInEachServedVersionsSchema) {
  std::set<std::string> kindsChecked;
  for (const WorkloadType& first : table().types()) {
    if (first.group.find('.') == std::string::npos) continue;
    if (!kindsChecked.insert(first.qualifiedKind()).second) continue;
    SCOPED_TRACE(first.qualifiedKind());
    const std::vector<std::string> files = testing::crdFiles(first.group, first.resource);
    EXPECT_FALSE(files.empty()) << "no CRD of " << first.qualifiedKind();
    for (const std::string& path : files) expectRowsMatchCrd(first, path);
  }
  EXPECT_EQ(kindsChecked.size(), 23u);
}

}  // namespace
}  // namespace aiadmit
