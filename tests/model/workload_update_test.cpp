// What an UPDATE changes, through each row's UpdateRules: a scale, a suspend
// and a queue controller's placement of a suspended workload are not a
// rollout; the parts a kind fixes at creation are named; every pointer the
// rows name for updates exists in each served version of the kind's CRD.
#include "webhook/model/workload_update.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "tests/support/test_support.h"
#include "webhook/codec/json_pointer.h"
#include "webhook/codec/yaml_json.h"

namespace aiadmit {
namespace {

using aiadmit::testing::readFile;
using aiadmit::testing::yamlObject;

const WorkloadType& rowOf(const JsonValue& object) {
  const WorkloadType* type = WorkloadTypeTable::builtIn()->findForObject(object);
  EXPECT_NE(type, nullptr);
  static const WorkloadType none;
  return type != nullptr ? *type : none;
}

// `after` is `before` with the value at `pointer` replaced by `yamlValue`.
std::shared_ptr<JsonDocument> with(const JsonValue& before, const std::string& pointer,
                                   const std::string& yamlValue) {
  auto after = std::make_shared<JsonDocument>();
  after->CopyFrom(before, after->GetAllocator());
  const size_t slash = pointer.rfind('/');
  JsonValue* parent = ensureObjectAt(*after, pointer.substr(0, slash), after->GetAllocator());
  EXPECT_NE(parent, nullptr) << pointer;
  const auto value = yamlObject("v: " + yamlValue);
  JsonValue copy(*member(value.get(), "v"), after->GetAllocator());
  const std::string key = pointerTokens(pointer).back();
  if (JsonValue* existing = const_cast<JsonValue*>(member(parent, key))) {
    *existing = copy;
  } else {
    parent->AddMember(makeString(key, after->GetAllocator()), copy, after->GetAllocator());
  }
  return after;
}

const std::string kJobSet = R"(
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: train, labels: {kueue.x-k8s.io/queue-name: team}}
spec:
  suspend: true
  replicatedJobs:
    - name: workers
      replicas: 2
      template:
        spec:
          template:
            metadata: {labels: {app: train}}
            spec:
              restartPolicy: Never
              containers: [{name: t, image: trainer:1, resources: {limits: {nvidia.com/gpu: 8}}}]
)";

TEST(WorkloadUpdate, KueueStartingASuspendedJobSetWithItsFlavorsPlacementIsTheControllers) {
  const auto before = yamlObject(kJobSet);
  auto after = with(*before, "/spec/suspend", "false");
  after = with(*after, "/spec/replicatedJobs/0/template/spec/template/spec/nodeSelector",
               "{cloud.google.com/gke-accelerator: nvidia-h100-80gb}");
  after = with(*after, "/spec/replicatedJobs/0/template/spec/template/metadata/annotations",
               "{kueue.x-k8s.io/podset: workers}");
  EXPECT_TRUE(changesOnlyControllerFields(rowOf(*before), *before, *after));
  // The same placement written into a JobSet that is not suspended is a
  // change of its template, which JobSet's webhook refuses anyway.
  const auto running = with(*before, "/spec/suspend", "false");
  const auto placed =
      with(*running, "/spec/replicatedJobs/0/template/spec/template/spec/nodeSelector", "{a: b}");
  EXPECT_FALSE(changesOnlyControllerFields(rowOf(*before), *running, *placed));
}

TEST(WorkloadUpdate, ATemplateChangeOrALabelOnTheObjectIsNoControllersUpdate) {
  const auto before = yamlObject(kJobSet);
  const auto image =
      with(*before, "/spec/replicatedJobs/0/template/spec/template/spec/containers/0/image",
           "trainer:2");
  EXPECT_FALSE(changesOnlyControllerFields(rowOf(*before), *before, *image));
  const auto labelled = with(*before, "/metadata/labels/team", "ml");
  EXPECT_FALSE(changesOnlyControllerFields(rowOf(*before), *before, *labelled));
  const auto stamped = with(*before, "/metadata/annotations", "{aiadmit.dev/gpus: '2'}");
  EXPECT_FALSE(changesOnlyControllerFields(rowOf(*before), *before, *stamped));
  // Annotations aiadmit does not read are not its business.
  const auto noted = with(*before, "/metadata/annotations", "{note: hello}");
  EXPECT_TRUE(changesOnlyControllerFields(rowOf(*before), *before, *noted));
}

struct ScaleCase {
  const char* name;
  const char* object;
  const char* pointer;
  const char* value;
};

const ScaleCase kScales[] = {
    {"DeploymentReplicas",
     "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  replicas: 1\n"
     "  template: {spec: {containers: [{name: c, image: i}]}}",
     "/spec/replicas", "4"},
    {"RayAutoscalerWorkers",
     "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {name: r}\nspec:\n"
     "  headGroupSpec: {template: {spec: {containers: [{name: h, image: ray}]}}}\n"
     "  workerGroupSpecs:\n  - groupName: gpu\n    replicas: 1\n    minReplicas: 0\n"
     "    maxReplicas: 8\n    template: {spec: {containers: [{name: w, image: ray}]}}",
     "/spec/workerGroupSpecs/0/replicas", "5"},
    {"RayAutoscalerWorkersToDelete",
     "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {name: r}\nspec:\n"
     "  headGroupSpec: {template: {spec: {containers: [{name: h, image: ray}]}}}\n"
     "  workerGroupSpecs:\n  - groupName: gpu\n    replicas: 2\n"
     "    template: {spec: {containers: [{name: w, image: ray}]}}",
     "/spec/workerGroupSpecs/0/scaleStrategy", "{workersToDelete: [r-gpu-x1]}"},
    {"InferenceServiceMinReplicas",
     "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: s}\n"
     "spec:\n  predictor:\n    minReplicas: 1\n    model: {modelFormat: {name: pytorch}}",
     "/spec/predictor/minReplicas", "3"},
    {"LLMInferenceServiceReplicas",
     "apiVersion: serving.kserve.io/v1alpha1\nkind: LLMInferenceService\nmetadata: {name: l}\n"
     "spec:\n  replicas: 1\n  template: {containers: [{name: main, image: vllm}]}",
     "/spec/replicas", "2"},
    {"LeaderWorkerSetReplicas",
     "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {name: l}\n"
     "spec:\n  replicas: 1\n  leaderWorkerTemplate:\n    size: 2\n"
     "    workerTemplate: {spec: {containers: [{name: w, image: vllm}]}}",
     "/spec/replicas", "3"},
    {"PyTorchJobWorkers",
     "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: p}\nspec:\n"
     "  pytorchReplicaSpecs:\n    Worker:\n      replicas: 2\n"
     "      template: {spec: {containers: [{name: pytorch, image: t}]}}",
     "/spec/pytorchReplicaSpecs/Worker/replicas", "4"},
    {"VolcanoTaskReplicas",
     "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: v}\nspec:\n"
     "  minAvailable: 2\n  tasks:\n  - name: worker\n    replicas: 2\n"
     "    template: {spec: {containers: [{name: w, image: t}]}}",
     "/spec/tasks/0/replicas", "4"},
    {"JobSuspend",
     "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  suspend: true\n"
     "  template: {spec: {restartPolicy: Never, containers: [{name: c, image: i}]}}",
     "/spec/suspend", "false"},
    {"RayJobSuspend",
     "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: r}\nspec:\n  suspend: false\n"
     "  entrypoint: python x.py\n  rayClusterSpec:\n"
     "    headGroupSpec: {template: {spec: {containers: [{name: h, image: ray}]}}}",
     "/spec/suspend", "true"},
};

class WorkloadScale : public ::testing::TestWithParam<ScaleCase> {};

TEST_P(WorkloadScale, IsTheControllersAndAnImageChangeBesideItIsNot) {
  const ScaleCase& scale = GetParam();
  const auto before = yamlObject(scale.object);
  const auto after = with(*before, scale.pointer, scale.value);
  EXPECT_TRUE(changesOnlyControllerFields(rowOf(*before), *before, *after));
  // The first container's image of the first template, changed as well.
  const Resolution resolution = resolveTemplates(rowOf(*before), *after);
  ASSERT_FALSE(resolution.templates.empty());
  const auto rolled =
      with(*after, resolution.templates.back().specPointer + "/containers/0/image", "other:2");
  EXPECT_FALSE(changesOnlyControllerFields(rowOf(*before), *before, *rolled));
}

INSTANTIATE_TEST_SUITE_P(EveryKind, WorkloadScale, ::testing::ValuesIn(kScales),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(WorkloadUpdate, PointersAreWithinTheirPatternsToken_byToken) {
  EXPECT_TRUE(
      pointerWithin("/spec/replicatedJobs/0/template/spec/template/spec", "/spec/replicatedJobs"));
  EXPECT_TRUE(pointerWithin("/spec/tasks/3/template/spec", "/spec/tasks/*/template"));
  EXPECT_TRUE(pointerWithin("/spec", "/spec"));
  EXPECT_FALSE(pointerWithin("/spec/templates", "/spec/template"));
  EXPECT_FALSE(pointerWithin("/spec", "/spec/template"));
}

const std::string kVolcanoJob = R"(
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: mindspore}
spec:
  minAvailable: 3
  tasks:
    - name: worker
      replicas: 2
      template:
        spec:
          containers: [{name: w, image: ms:1, resources: {limits: {nvidia.com/gpu: 1}}}]
)";

const std::string kToleration = "[{key: accelerator, operator: Equal, value: gpu}]";

TEST(WorkloadUpdate, AReapplyThatDroppedWhatAiadmitWroteInAFixedPartGetsItBack) {
  // Stored with aiadmit's toleration; `kubectl apply` of the same file sends
  // the tasks list without it (a custom resource's lists are replaced whole).
  const auto sent = yamlObject(kVolcanoJob);
  const auto stored = with(*sent, "/spec/tasks/0/template/spec/tolerations", kToleration);
  auto mutated = with(*sent, "/spec/tasks/0/template/spec/tolerations", kToleration);
  const Restoration kept =
      keepFixedParts(rowOf(*sent), *stored, *sent, *mutated, mutated->GetAllocator());
  EXPECT_TRUE(kept.leftOut.empty());
  EXPECT_EQ(kept.restored, std::vector<std::string>{"/spec/tasks/0/template/spec/tolerations"});
  EXPECT_EQ(*valueAt(*mutated, "/spec/tasks"), *valueAt(*stored, "/spec/tasks"));
}

TEST(WorkloadUpdate, NothingNewIsWrittenIntoAFixedPart) {
  // Stored before aiadmit was installed: the toleration would be a change of
  // the tasks, which Volcano's webhook refuses.
  const auto stored = yamlObject(kVolcanoJob);
  const auto sent = with(*stored, "/metadata/labels", "{team: ml}");
  auto mutated = with(*sent, "/spec/tasks/0/template/spec/tolerations", kToleration);
  mutated = with(*mutated, "/spec/maxRetry", "6");
  const Restoration kept =
      keepFixedParts(rowOf(*sent), *stored, *sent, *mutated, mutated->GetAllocator());
  EXPECT_EQ(kept.leftOut, std::vector<std::string>{"/spec/tasks/0/template/spec/tolerations"});
  EXPECT_TRUE(kept.restored.empty());
  EXPECT_EQ(*valueAt(*mutated, "/spec/tasks"), *valueAt(*sent, "/spec/tasks"));
  // Outside the fixed parts the mutation stays.
  EXPECT_NE(valueAt(*mutated, "/spec/maxRetry"), nullptr);
}

TEST(WorkloadUpdate, APartTheRequestChangedItselfIsTheRequests) {
  const auto stored = yamlObject(kVolcanoJob);
  const auto sent = with(*stored, "/spec/tasks/0/template/spec/containers/0/image", "ms:2");
  auto mutated = with(*sent, "/spec/minAvailable", "2");
  const Restoration kept =
      keepFixedParts(rowOf(*sent), *stored, *sent, *mutated, mutated->GetAllocator());
  EXPECT_TRUE(kept.leftOut.empty());
  EXPECT_TRUE(kept.restored.empty());
  EXPECT_EQ(stringOf(valueAt(*mutated, "/spec/tasks/0/template/spec/containers/0/image")), "ms:2");
  // A kind without fixed parts keeps whatever was mutated.
  const auto deployment = yamlObject(
      "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n"
      "spec: {template: {spec: {containers: [{name: c, image: i}]}}}");
  auto placed = with(*deployment, "/spec/template/spec/tolerations", kToleration);
  EXPECT_TRUE(
      keepFixedParts(rowOf(*deployment), *deployment, *deployment, *placed, placed->GetAllocator())
          .leftOut.empty());
  EXPECT_NE(valueAt(*placed, "/spec/template/spec/tolerations"), nullptr);
}

// The shipped profiles' toleration of the GPU pool's taint.
const std::string kPoolToleration =
    "{key: accelerator, operator: Equal, value: gpu, effect: NoSchedule}";

// A JobSet as JobSet's own webhook stores it (it runs on CREATE only and
// writes the replicated job's Go types back: an empty template metadata,
// the quantity's canonical "1", the completion mode), with what aiadmit
// wrote.
const std::string kStoredJobSet = R"(
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: train, annotations: {aiadmit.dev/class: training, aiadmit.dev/profile: training}}
spec:
  replicatedJobs:
    - name: workers
      groupName: default
      replicas: 1
      template:
        metadata: {}
        spec:
          completionMode: Indexed
          parallelism: 1
          template:
            metadata: {annotations: {aiadmit.dev/class: training, aiadmit.dev/profile: training}}
            spec:
              restartPolicy: Never
              tolerations:
                - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
                - {key: accelerator, operator: Equal, value: gpu, effect: NoSchedule}
              nodeSelector: {accelerator: nvidia}
              containers:
                - name: main
                  image: trainer:1
                  resources: {limits: {nvidia.com/gpu: "1", memory: 8Gi}}
                  volumeMounts: [{name: aiadmit-shm, mountPath: /dev/shm}]
              volumes: [{name: aiadmit-shm, emptyDir: {medium: Memory, sizeLimit: 8Gi}}]
)";

// The file's replicated jobs, as the merge patch of a client-side reapply
// sends them and the API server hands them to aiadmit (the CRD's default
// groupName added; JobSet's webhook does not run on UPDATE).
const std::string kFilesReplicatedJobs = R"(
- name: workers
  groupName: default
  replicas: 1
  template:
    spec:
      completionMode: Indexed
      parallelism: 1
      template:
        spec:
          restartPolicy: Never
          tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
          containers:
            - {name: main, image: trainer:1, resources: {limits: {nvidia.com/gpu: 1, memory: 8Gi}}}
)";

// `sent` as aiadmit's mutators leave it: what they wrote at creation, on the
// file's template (the quantity as the file has it).
std::shared_ptr<JsonDocument> withAiadmitsWrites(const JsonValue& sent, const std::string& at) {
  auto mutated =
      with(sent, at + "/template/metadata",
           "{annotations: {aiadmit.dev/class: training, aiadmit.dev/profile: training}}");
  mutated = with(
      *mutated, at + "/template/spec/tolerations",
      "[{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}, " + kPoolToleration + "]");
  mutated = with(*mutated, at + "/template/spec/nodeSelector", "{accelerator: nvidia}");
  mutated = with(*mutated, at + "/template/spec/containers/0/volumeMounts",
                 "[{name: aiadmit-shm, mountPath: /dev/shm}]");
  return with(*mutated, at + "/template/spec/volumes",
              "[{name: aiadmit-shm, emptyDir: {medium: Memory, sizeLimit: 8Gi}}]");
}

TEST(WorkloadUpdate, AJobSetReappliedClientSideKeepsWhatAiadmitWroteThoughItsWebhookWroteMore) {
  const auto stored = yamlObject(kStoredJobSet);
  const auto sent = with(*stored, "/spec/replicatedJobs", kFilesReplicatedJobs);
  auto mutated = withAiadmitsWrites(*sent, "/spec/replicatedJobs/0/template/spec");
  const Restoration kept =
      keepFixedParts(rowOf(*sent), *stored, *sent, *mutated, mutated->GetAllocator());
  EXPECT_TRUE(kept.leftOut.empty());
  // Restored as aiadmit wrote it; the empty metadata JobSet wrote and the
  // file's spelling of the quantity are no difference to JobSet's check.
  const std::string pod = "/spec/replicatedJobs/0/template/spec/template";
  EXPECT_EQ(*valueAt(*mutated, pod + "/spec/tolerations"),
            *valueAt(*stored, pod + "/spec/tolerations"));
  EXPECT_EQ(*valueAt(*mutated, pod + "/spec/volumes"), *valueAt(*stored, pod + "/spec/volumes"));
  EXPECT_EQ(*valueAt(*mutated, pod + "/metadata"), *valueAt(*stored, pod + "/metadata"));
  EXPECT_EQ(valueAt(*mutated, "/spec/replicatedJobs/0/template/metadata"), nullptr);
  EXPECT_EQ(toJson(*valueAt(*mutated, pod + "/spec/containers/0/resources")),
            R"({"limits":{"nvidia.com/gpu":1,"memory":"8Gi"}})");
}

TEST(WorkloadUpdate, WhatAFixedPartLostThatAiadmitNeverWroteStaysLost) {
  // JobSet's examples leave the completion mode out; JobSet's webhook wrote
  // it at creation, the reapply drops it, and JobSet refuses that itself.
  const auto stored = yamlObject(kStoredJobSet);
  auto sent = with(*stored, "/spec/replicatedJobs", kFilesReplicatedJobs);
  const_cast<JsonValue*>(valueAt(*sent, "/spec/replicatedJobs/0/template/spec"))
      ->RemoveMember("completionMode");
  auto mutated = withAiadmitsWrites(*sent, "/spec/replicatedJobs/0/template/spec");
  const Restoration kept =
      keepFixedParts(rowOf(*sent), *stored, *sent, *mutated, mutated->GetAllocator());
  EXPECT_TRUE(kept.leftOut.empty());
  EXPECT_EQ(valueAt(*mutated, "/spec/replicatedJobs/0/template/spec/completionMode"), nullptr);
  EXPECT_EQ(*valueAt(*mutated, "/spec/replicatedJobs/0/template/spec/template/spec/tolerations"),
            *valueAt(*stored, "/spec/replicatedJobs/0/template/spec/template/spec/tolerations"));
}

TEST(WorkloadUpdate, AWriteOfAChangedProfileIsLeftOutAndTheRestRestored) {
  // Created under a profile whose pool was tainted pool=a100; the profile
  // now tolerates accelerator=gpu. The reapply dropped both tolerations.
  const auto stored = with(*yamlObject(kStoredJobSet),
                           "/spec/replicatedJobs/0/template/spec/template/spec/tolerations",
                           "[{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}, "
                           "{key: pool, operator: Equal, value: a100, effect: NoSchedule}]");
  const auto sent = with(*stored, "/spec/replicatedJobs", kFilesReplicatedJobs);
  auto mutated = withAiadmitsWrites(*sent, "/spec/replicatedJobs/0/template/spec");
  const Restoration kept =
      keepFixedParts(rowOf(*sent), *stored, *sent, *mutated, mutated->GetAllocator());
  const std::string pod = "/spec/replicatedJobs/0/template/spec/template/spec";
  EXPECT_EQ(kept.leftOut, std::vector<std::string>{pod + "/tolerations"});
  EXPECT_EQ(*valueAt(*mutated, pod + "/tolerations"), *valueAt(*sent, pod + "/tolerations"));
  EXPECT_EQ(*valueAt(*mutated, pod + "/nodeSelector"), *valueAt(*stored, pod + "/nodeSelector"));
}

TEST(WorkloadUpdate, AQuantityIsItsValueAndAnyOtherStringIsItsText) {
  const auto stored = yamlObject(kStoredJobSet);
  const std::string container = "/spec/replicatedJobs/0/template/spec/template/spec/containers/0";
  for (const char* spelling : {"1", "'1000m'", "'1e0'"}) {
    SCOPED_TRACE(spelling);
    const auto sent = with(*stored, container + "/resources/limits/nvidia.com~1gpu", spelling);
    auto mutated = with(*sent, container + "/resources/limits/nvidia.com~1gpu", "'1'");
    EXPECT_TRUE(keepFixedParts(rowOf(*sent), *stored, *sent, *mutated, mutated->GetAllocator())
                    .leftOut.empty());
  }
  // An environment variable's "1" and "1.0" are different text: an edit
  // of one into the other is a change, and left out.
  const auto withEnv = with(*stored, container + "/env", "[{name: N, value: '1'}]");
  auto mutated = with(*withEnv, container + "/env/0/value", "'1.0'");
  EXPECT_EQ(keepFixedParts(rowOf(*withEnv), *withEnv, *withEnv, *mutated, mutated->GetAllocator())
                .leftOut,
            std::vector<std::string>{container + "/env/0/value"});
  EXPECT_EQ(stringOf(valueAt(*mutated, container + "/env/0/value")), "1");
}

// A Job held by Kueue (suspended) with the file's own toleration and
// aiadmit's; what Kueue's updates and a reapply send.
const std::string kHeldJob = R"(
apiVersion: batch/v1
kind: Job
metadata: {name: batch, labels: {kueue.x-k8s.io/queue-name: gpu-queue}}
spec:
  suspend: true
  template:
    metadata: {annotations: {aiadmit.dev/class: batch, aiadmit.dev/profile: batch}}
    spec:
      restartPolicy: Never
      nodeSelector: {accelerator: nvidia}
      tolerations:
        - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
        - {key: accelerator, operator: Equal, value: gpu, effect: NoSchedule}
      containers: [{name: main, image: i, resources: {limits: {nvidia.com/gpu: "1"}}}]
)";

const std::string kTolerations = "/spec/template/spec/tolerations";

TEST(WorkloadUpdate, AReapplyToASuspendedJobLooksLikeAQueueControllersButGetsItsTolerationBack) {
  const auto stored = yamlObject(kHeldJob);
  // The strategic merge patch of a client-side reapply (and a server-side
  // apply, the list being atomic) sets the file's tolerations.
  const auto sent =
      with(*stored, kTolerations, "[{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]");
  EXPECT_TRUE(changesOnlyControllerFields(rowOf(*stored), *stored, *sent));
  auto mutated = with(
      *sent, kTolerations,
      "[{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}, " + kPoolToleration + "]");
  const Restoration kept = keepOnlyRestores(*stored, *sent, *mutated, mutated->GetAllocator());
  EXPECT_EQ(kept.restored, std::vector<std::string>{kTolerations});
  EXPECT_EQ(*mutated, *stored);
}

TEST(WorkloadUpdate, KueuesAdmissionAndItsRestoreOfTheTemplateGetNothingOfAiadmits) {
  const auto stored = yamlObject(kHeldJob);
  // Kueue starts it with its flavor's node labels; aiadmit's are there already.
  auto started = with(*stored, "/spec/suspend", "false");
  started = with(*started, "/spec/template/spec/nodeSelector",
                 "{accelerator: nvidia, cloud.google.com/gke-nodepool: a100}");
  // What aiadmit would write that the Job never had is left out.
  auto mutated = with(*started, "/spec/template/spec/priorityClassName", "ai-batch");
  Restoration kept = keepOnlyRestores(*stored, *started, *mutated, mutated->GetAllocator());
  EXPECT_TRUE(kept.restored.empty());
  EXPECT_EQ(*mutated, *started);
  // Stopping it, Kueue suspends it and then restores the template its
  // Workload recorded, which holds what aiadmit wrote.
  const auto stopped = with(*started, "/spec/suspend", "true");
  auto restoring = with(*stopped, "/spec/template/spec/nodeSelector", "{accelerator: nvidia}");
  auto again = with(*restoring, "/spec/template/spec/priorityClassName", "ai-batch");
  kept = keepOnlyRestores(*stopped, *restoring, *again, again->GetAllocator());
  EXPECT_TRUE(kept.restored.empty());
  EXPECT_EQ(*again, *restoring);
}

TEST(WorkloadUpdateCrds, EveryUpdatePointerOfACustomResourceRowIsInEachServedVersionsSchema) {
  size_t checked = 0;
  for (const WorkloadType& type : WorkloadTypeTable::builtIn()->types()) {
    if (type.group.find('.') == std::string::npos) continue;
    SCOPED_TRACE(type.qualifiedKind());
    std::vector<std::string> pointers = type.updates.scale;
    pointers.insert(pointers.end(), type.updates.immutable.begin(), type.updates.immutable.end());
    if (!type.updates.suspend.empty()) pointers.push_back(type.updates.suspend);
    const std::vector<std::string> files = testing::crdFiles(type.group, type.resource);
    EXPECT_FALSE(files.empty()) << "no CRD";
    for (const std::string& file : files) {
      const auto crd = yamlObject(readFile(file));
      for (const JsonValue& version : member(member(crd.get(), "spec"), "versions")->GetArray()) {
        const std::string name(stringMember(&version, "name"));
        if (!type.servesVersion(name)) continue;
        const JsonValue* schema = member(member(&version, "schema"), "openAPIV3Schema");
        for (const std::string& pointer : pointers) {
          EXPECT_NE(testing::crdSchemaAt(schema, pointer), nullptr) << pointer << " in " << file;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 60u);
}

}  // namespace
}  // namespace aiadmit
