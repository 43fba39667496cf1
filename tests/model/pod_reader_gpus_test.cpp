// GPUs the pod reader finds outside a PodSpec's container lists: KServe's
// model-format objects (the predictor's kserve-container), a TrainJob's
// trainer.resourcesPerNode, a SparkApplication's `gpu: {name, quantity}`,
// and KAI Scheduler's GPU share annotations.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "tests/support/test_support.h"
#include "webhook/codec/yaml_json.h"
#include "webhook/model/pod_reader.h"

namespace aiadmit {
namespace {

struct Resolved {
  std::shared_ptr<JsonDocument> object;
  Resolution resolution;
  std::vector<PodTemplateView> views;
};

// Every template the built-in table finds in `yaml`.
Resolved resolve(const std::string& yaml) {
  std::vector<ManifestDocument> documents;
  std::string error;
  EXPECT_TRUE(parseManifests(yaml, documents, &error)) << error;
  Resolved out;
  out.object = documents.empty() ? std::make_shared<JsonDocument>() : documents[0].json;
  const WorkloadType* type = WorkloadTypeTable::builtIn()->findForObject(*out.object);
  EXPECT_NE(type, nullptr);
  if (type == nullptr) return out;
  out.resolution = resolveTemplates(*type, *out.object);
  for (const ResolvedTemplate& place : out.resolution.templates) {
    out.views.push_back(PodTemplateView::at(*out.object, *type, place));
  }
  return out;
}

// KServe's GPU BERT sample (docs/samples/v1beta1/torchserve/v2/bert/bert_gpu.yaml).
const std::string kBertGpu = R"(
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
)";

TEST(PodReaderContainerObjects, TheFrameworkObjectIsTheMainContainerOfThePredictor) {
  const Resolved read = resolve(kBertGpu);
  ASSERT_EQ(read.views.size(), 1u);
  const PodReader pod = PodReader::of(read.views[0]);
  ASSERT_EQ(pod.containers().size(), 1u);
  EXPECT_TRUE(pod.asksForAccelerator());
  EXPECT_EQ(pod.podRequest("nvidia.com/gpu"), 1);
  const MainContainer main = pod.mainContainer();
  ASSERT_NE(main.container, nullptr);
  EXPECT_EQ(main.container->name, "kserve-container");
  EXPECT_EQ(main.basis, MainContainerBasis::Accelerator);
  EXPECT_EQ(containerFieldPath(read.views[0], *main.container), "spec.predictor.pytorch");
  EXPECT_EQ(resourcesFieldPath(read.views[0], *main.container), "spec.predictor.pytorch.resources");
}

TEST(PodReaderContainerObjects, TheModelComesBeforeTheSidecarsAndKeepsItsOwnName) {
  const Resolved read = resolve(R"(
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: bert}
spec:
  predictor:
    model:
      name: server
      modelFormat: {name: pytorch}
      resources: {requests: {nvidia.com/gpu: 2}}
    containers:
    - {name: logger, image: fluentbit}
)");
  ASSERT_EQ(read.views.size(), 1u);
  const PodReader pod = PodReader::of(read.views[0]);
  ASSERT_EQ(pod.containers().size(), 2u);
  EXPECT_EQ(pod.containers()[0].name, "server");
  EXPECT_EQ(pod.containers()[1].name, "logger");
  // The two are told apart by their index as well as their list.
  EXPECT_NE(pod.containers()[0].index, pod.containers()[1].index);
  EXPECT_EQ(containerFieldPath(read.views[0], pod.containers()[0]), "spec.predictor.model");
  EXPECT_EQ(containerFieldPath(read.views[0], pod.containers()[1]), "spec.predictor.containers[0]");
  EXPECT_EQ(pod.podRequest("nvidia.com/gpu"), 2);
  EXPECT_EQ(pod.mainContainer().container->name, "server");
}

TEST(PodReaderContainerObjects, AReaderWithoutTheRowSeesOnlyTheContainerLists) {
  const Resolved read = resolve(kBertGpu);
  ASSERT_EQ(read.views.size(), 1u);
  const PodReader bare(nullptr, nullptr, read.views[0].spec);
  EXPECT_TRUE(bare.containers().empty());
  EXPECT_FALSE(bare.asksForAccelerator());
}

// Kubeflow Trainer's GRPO example (examples/grpo/grpo-trainjob.yaml), trimmed.
const std::string kGrpo = R"(
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
)";

TEST(PodReaderResourcesPerNode, TheTrainersResourcesAreTheContainerOfEachNode) {
  const Resolved read = resolve(kGrpo);
  ASSERT_EQ(read.views.size(), 1u);
  const PodReader pod = PodReader::of(read.views[0]);
  ASSERT_EQ(pod.containers().size(), 1u);
  const PodContainer& node = pod.containers()[0];
  EXPECT_TRUE(node.resourcesOnly);
  EXPECT_EQ(node.name, "node");
  EXPECT_EQ(node.resources(), read.views[0].spec);
  EXPECT_TRUE(pod.asksForGpus());
  EXPECT_EQ(pod.podRequest("nvidia.com/gpu"), 2);
  EXPECT_EQ(PodReader::containerRequest(node, "nvidia.com/gpu"), 2);
  EXPECT_EQ(containerFieldPath(read.views[0], node), "spec.trainer.resourcesPerNode");
  EXPECT_EQ(resourcesFieldPath(read.views[0], node), "spec.trainer.resourcesPerNode");
  EXPECT_EQ(pod.mainContainer().container, &node);
}

// A SparkApplication whose executors ask for GPUs as the Spark operator
// reads them, beside a driver whose gpu the operator's Pod webhook skips.
std::string sparkApplication(const std::string& driverGpu) {
  return R"(
apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: rapids}
spec:
  driver: {cores: 1, gpu: )" +
         driverGpu + R"(}
  executor: {instances: 2, gpu: {name: nvidia.com/gpu, quantity: 2}}
)";
}

TEST(PodReaderSparkPod, TheGpuIsTheLimitOfTheSparkContainer) {
  const Resolved read = resolve(sparkApplication("{name: nvidia.com/gpu, quantity: 1}"));
  ASSERT_EQ(read.views.size(), 2u);
  const PodReader executor = PodReader::of(read.views[1]);
  ASSERT_EQ(executor.containers().size(), 1u);
  const PodContainer& spark = executor.containers()[0];
  EXPECT_TRUE(spark.sparkGpu);
  EXPECT_EQ(spark.name, "executor");
  EXPECT_TRUE(executor.asksForGpus());
  EXPECT_EQ(executor.podRequest("nvidia.com/gpu"), 2);
  EXPECT_EQ(executor.mainContainer().container, &spark);
  EXPECT_EQ(resourcesFieldPath(read.views[1], spark), "spec.executor.gpu");
  EXPECT_EQ(resourceSectionFieldPath(read.views[1], spark, "limits"), "spec.executor.gpu");
  // The reader's copies read the same limits.
  const PodReader copy = executor;
  EXPECT_EQ(copy.podRequest("nvidia.com/gpu"), 2);
  EXPECT_EQ(PodReader::of(read.views[0]).podRequest("nvidia.com/gpu"), 1);
}

TEST(PodReaderSparkPod, AGpuTheOperatorSkipsIsNoRequest) {
  // addGPU gives no limit for an empty name or a quantity that is not positive.
  for (const char* gpu :
       {"{name: nvidia.com/gpu, quantity: 0}", "{name: nvidia.com/gpu, quantity: -1}",
        "{name: '', quantity: 1}", "{quantity: 1}"}) {
    SCOPED_TRACE(gpu);
    const Resolved read = resolve(sparkApplication(gpu));
    ASSERT_EQ(read.views.size(), 2u);
    const PodReader driver = PodReader::of(read.views[0]);
    EXPECT_FALSE(driver.asksForAccelerator());
    EXPECT_FALSE(driver.namesAccelerator());
  }
}

TEST(PodReaderResourcesPerNode, EnsureResourcesEditsTheRequirementsThemselves) {
  Resolved read = resolve(kGrpo);
  ASSERT_EQ(read.views.size(), 1u);
  const PodReader pod = PodReader::of(read.views[0]);
  JsonValue& resources = ensureResources(pod.containers()[0], read.object->GetAllocator());
  EXPECT_EQ(&resources, read.views[0].spec);
}

// A Pod as KAI Scheduler's examples write one.
std::string kaiPod(const std::string& annotations) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":)" + annotations +
         R"(},"spec":{"schedulerName":"kai-scheduler","containers":[{"name":"c","image":"x"}]}})";
}

// The share and the document its text points into.
struct Share {
  std::shared_ptr<JsonDocument> document;
  std::optional<GpuShare> share;
  const GpuShare* operator->() const { return &*share; }
  bool has_value() const { return share.has_value(); }
};

Share shareOf(const std::string& json) {
  Share out{testing::parseJson(json), std::nullopt};
  out.share = PodReader::of(testing::firstTemplateOf(*out.document)).gpuShare();
  return out;
}

TEST(PodReaderGpuShare, AFractionIsAShareOfOneGpu) {
  const auto share = shareOf(kaiPod(R"({"gpu-fraction":"0.5"})"));
  ASSERT_TRUE(share.has_value());
  EXPECT_EQ(share->key, "gpu-fraction");
  EXPECT_EQ(share->value, "0.5");
  EXPECT_EQ(share->devices, 1);
}

TEST(PodReaderGpuShare, MemoryAndSeveralDevicesAreSharesToo) {
  const auto memory = shareOf(kaiPod(R"({"gpu-memory":"2000"})"));
  ASSERT_TRUE(memory.has_value());
  EXPECT_EQ(memory->key, "gpu-memory");
  const auto several = shareOf(kaiPod(R"({"gpu-fraction":"0.25","gpu-fraction-num-devices":"3"})"));
  ASSERT_TRUE(several.has_value());
  EXPECT_EQ(several->devices, 3);
}

TEST(PodReaderGpuShare, ValuesKaiIgnoresAreNoShare) {
  for (const char* annotations : {R"({"gpu-fraction":"0"})", R"({"gpu-fraction":"1.5"})",
                                  R"({"gpu-fraction":"half"})", R"({"gpu-memory":"-1"})", "{}"}) {
    EXPECT_FALSE(shareOf(kaiPod(annotations)).has_value()) << annotations;
  }
}

TEST(PodReaderGpuShare, OnlyThePodsOwnAnnotationsCount) {
  // A Deployment's own annotations do not reach its Pods; its template's do.
  const std::string onObject =
      R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d",)"
      R"("annotations":{"gpu-fraction":"0.5"}},"spec":{"template":{"spec":)"
      R"({"containers":[{"name":"c"}]}}}})";
  EXPECT_FALSE(shareOf(onObject).has_value());
  const std::string onTemplate =
      R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":)"
      R"({"template":{"metadata":{"annotations":{"gpu-fraction":"0.5"}},"spec":)"
      R"({"containers":[{"name":"c"}]}}}})";
  const auto share = shareOf(onTemplate);
  ASSERT_TRUE(share.has_value());
  auto doc = testing::parseJson(onTemplate);
  const PodReader pod = PodReader::of(testing::firstTemplateOf(*doc));
  EXPECT_TRUE(pod.asksForGpus());
  EXPECT_FALSE(pod.asksForAccelerator());
}

}  // namespace
}  // namespace aiadmit
