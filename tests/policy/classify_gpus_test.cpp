// Classification of GPUs asked for outside a PodSpec's resources (KServe's
// model-format containers, a TrainJob's resourcesPerNode, KAI's GPU share)
// and of what a controller made with a class stamp copied onto it.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/support/classify_harness.h"
#include "tests/support/test_support.h"
#include "webhook/codec/yaml_json.h"
#include "webhook/policy/classify.h"

namespace aiadmit {
namespace {

using testing::Classified;
using testing::classifyYaml;

TEST(ClassifyGpus, KServesGpuBertSampleIsARealtimeServer) {
  // docs/samples/v1beta1/torchserve/v2/bert/bert_gpu.yaml
  const Classified bert = classifyYaml(R"(
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: "torchserve-bert-v2"
spec:
  predictor:
    pytorch:
      protocolVersion: v2
      storageUri: gs://kfserving-examples/models/torchserve/bert/v2
      resources:
        limits:
          memory: 4Gi
          nvidia.com/gpu: "1"
)");
  EXPECT_EQ(bert.classification().workloadClass, WorkloadClass::Realtime);
  EXPECT_EQ(bert.classification().basis, ClassBasis::Kind);
  EXPECT_NE(
      bert.classification().reason.find("nvidia.com/gpu (container kserve-container of predictor)"),
      std::string::npos)
      << bert.classification().reason;
}

TEST(ClassifyGpus, AModelObjectWithoutGpusIsNoAiWorkload) {
  const Classified sklearn = classifyYaml(R"(
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: iris}
spec:
  predictor:
    model:
      modelFormat: {name: sklearn}
      storageUri: gs://kfserving-examples/models/sklearn/1.0/model
)");
  EXPECT_EQ(sklearn.classification().workloadClass, WorkloadClass::None);
}

TEST(ClassifyGpus, TheGrpoTrainJobIsTrainingFromResourcesPerNode) {
  // Kubeflow Trainer examples/grpo/grpo-trainjob.yaml, trimmed.
  const Classified grpo = classifyYaml(R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: grpo-example
spec:
  runtimeRef:
    apiGroup: trainer.kubeflow.org
    kind: ClusterTrainingRuntime
    name: grpo-distributed
  trainer:
    numNodes: 1
    resourcesPerNode:
      requests:
        nvidia.com/gpu: 2
)");
  EXPECT_EQ(grpo.classification().workloadClass, WorkloadClass::Training);
  EXPECT_EQ(grpo.classification().reason,
            "inferred from its kind: it requests nvidia.com/gpu (spec.trainer.resourcesPerNode) "
            "and a TrainJob is a training run");
  EXPECT_EQ(grpo.workload.acceleratorTemplate, std::optional<size_t>(0));
}

TEST(ClassifyGpus, AKaiGpuFractionMakesAPodAGpuWorkload) {
  // KAI Scheduler's GPU sharing quickstart Pod.
  const Classified shared = classifyYaml(R"(
apiVersion: v1
kind: Pod
metadata:
  name: gpu-sharing
  labels: {runai/queue: test}
  annotations: {gpu-fraction: "0.5"}
spec:
  schedulerName: kai-scheduler
  containers:
  - name: sleep
    image: busybox
)");
  // A Pod that sleeps serves nothing: batch, whatever its restart policy.
  EXPECT_EQ(shared.classification().workloadClass, WorkloadClass::Batch);
  EXPECT_EQ(shared.classification().reason,
            "inferred from its kind: it asks for a GPU share by annotation gpu-fraction=0.5 and a "
            "Pod whose containers declare no port runs a command, not a server");
}

const std::string kRayHeadPod = R"(
apiVersion: v1
kind: Pod
metadata:
  name: raycluster-head
  annotations: {aiadmit.dev/class: batch, aiadmit.dev/profile: batch}
  ownerReferences:
  - {apiVersion: ray.io/v1, kind: RayCluster, name: raycluster, uid: u1, controller: true}
spec:
  containers:
  - {name: ray-head, image: rayproject/ray, resources: {limits: {cpu: "2"}}}
)";

TEST(ClassifyGpus, AStampCopiedOntoAControllersPodThatAsksForNoGpuDoesNotClassifyIt) {
  const Classified head = classifyYaml(kRayHeadPod, /*madeByController=*/true);
  EXPECT_EQ(head.classification().workloadClass, WorkloadClass::None);
  EXPECT_EQ(head.classification().basis, ClassBasis::None);
  EXPECT_NE(head.classification().reason.find("asks for no GPU"), std::string::npos)
      << head.classification().reason;
}

// The stamp is aiadmit's record of a decision, no statement: on an object
// that asks for no GPU (its GPU requests taken out since, or copied from a
// live object), it classifies nothing, whoever made the object.
TEST(ClassifyGpus, AStampAloneClassifiesNothingThatAsksForNoGpu) {
  const Classified pod = classifyYaml(kRayHeadPod, /*madeByController=*/false);
  EXPECT_EQ(pod.classification().workloadClass, WorkloadClass::None);
  EXPECT_EQ(pod.classification().basis, ClassBasis::None);
  EXPECT_NE(pod.classification().reason.find("is aiadmit's record of an earlier decision, but it "
                                             "asks for no GPU"),
            std::string::npos)
      << pod.classification().reason;
}

TEST(ClassifyGpus, AControllersPodThatAsksForGpusKeepsItsStampedClass) {
  const Classified worker = classifyYaml(R"(
apiVersion: v1
kind: Pod
metadata:
  name: raycluster-worker
  annotations: {aiadmit.dev/class: training}
  ownerReferences:
  - {apiVersion: ray.io/v1, kind: RayCluster, name: raycluster, uid: u1, controller: true}
spec:
  restartPolicy: Always
  containers:
  - {name: ray-worker, image: rayproject/ray, resources: {limits: {nvidia.com/gpu: 1}}}
)",
                                         /*madeByController=*/true);
  EXPECT_EQ(worker.classification().workloadClass, WorkloadClass::Training);
  EXPECT_EQ(worker.classification().basis, ClassBasis::ClassStamp);
}

TEST(ClassifyGpus, AControllersPodThatDeclaresItsWorkloadKeepsIt) {
  const Classified declared = classifyYaml(R"(
apiVersion: v1
kind: Pod
metadata:
  name: launcher
  annotations: {aiadmit.dev/class: training, aiadmit.dev/workload: training}
  ownerReferences:
  - {apiVersion: batch/v1, kind: Job, name: j, uid: u1, controller: true}
spec:
  restartPolicy: Never
  containers:
  - {name: launcher, image: mpi}
)",
                                           /*madeByController=*/true);
  EXPECT_EQ(declared.classification().workloadClass, WorkloadClass::Training);
  EXPECT_EQ(declared.classification().basis, ClassBasis::WorkloadAnnotation);
}

TEST(ClassifyGpus, AControllersPodWithAGpusAnnotationKeepsItsStamp) {
  const Classified annotated = classifyYaml(R"(
apiVersion: v1
kind: Pod
metadata:
  name: p
  annotations: {aiadmit.dev/class: batch, aiadmit.dev/gpus: "1"}
  ownerReferences:
  - {apiVersion: batch/v1, kind: Job, name: j, uid: u1, controller: true}
spec:
  restartPolicy: Never
  containers:
  - {name: c, image: x}
)",
                                            /*madeByController=*/true);
  EXPECT_EQ(annotated.classification().basis, ClassBasis::ClassStamp);
  EXPECT_EQ(annotated.classification().workloadClass, WorkloadClass::Batch);
}

}  // namespace
}  // namespace aiadmit
