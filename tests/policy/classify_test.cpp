// Classification (PRODUCT.md, Classification): every corpus object against a
// table written by hand, then each rule of the precedence on its own.
#include "webhook/policy/classify.h"

#include <gtest/gtest.h>

#include <map>
#include <utility>

#include "tests/support/test_support.h"

namespace aiadmit {
namespace {

using aiadmit::testing::CorpusObject;
using aiadmit::testing::corpusObjects;
using aiadmit::testing::parseJson;

struct Expected {
  std::string file;
  int index;
  WorkloadClass workloadClass;
  // What the reason must mention; "" for no AI workload that looks like none.
  std::string_view because;
};

constexpr std::string_view kGke = "GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__";

// The corpus carries no aiadmit annotations, so every class here comes from
// the kind and the accelerator request, or the object is not an AI workload.
const std::vector<Expected>& corpusTable() {
  static const std::vector<Expected> table = [] {
    auto gke = [](std::string_view rest) { return std::string(kGke) + std::string(rest); };
    using C = WorkloadClass;
    return std::vector<Expected>{
        // A fine-tuning Job with a GPU: without the annotation a Job is batch.
        {gke("axolotl-multimodal-finetuning-gemma__k8s__axolotl-training-job.yaml"), 0, C::Batch,
         "nvidia.com/gpu (container axolotl) and a Job runs to completion"},
        {gke("distributed-streaming-benchmark__vllm-runai-gcs.yaml"), 0, C::Realtime,
         "a Deployment is a long-running server"},
        {gke("distributed-streaming-benchmark__vllm-runai-gcs.yaml"), 1, C::None, ""},
        // A Deployment without any accelerator: not AI work for aiadmit.
        {gke("gcsfuse-shared-cache__pod-a.yaml"), 0, C::None, ""},
        {gke("gcsfuse-shared-cache__vllm-b-no-cache.yaml"), 0, C::Realtime,
         "nvidia.com/gpu (container inference-server)"},
        // Custom resources (RayJob, LeaderWorkerSet) are not admitted kinds.
        {gke("gke-ray__kueue__ephemeral-rayjob.yaml"), 0, C::None, ""},
        {gke("llm-multihost-gpus-tensorrt-llm__lws.yaml"), 0, C::None, ""},
        {gke("llm-multihost-gpus-tensorrt-llm__lws.yaml"), 1, C::None, ""},
        // A CPU-only download Job feeding GPU serving.
        {gke("llm-multihost-gpus__llama3-405b-job.yaml"), 0, C::None, ""},
        // 'nvidia.com/gpu : "8"' is still the resource nvidia.com/gpu.
        {gke("llm-serving-gemma__vllm__vllm-3-27b-it.yaml"), 0, C::Realtime,
         "requests nvidia.com/gpu"},
        {gke("llm-serving-gemma__vllm__vllm-3-27b-it.yaml"), 1, C::None, ""},
        {gke("mix-train-and-inference__workloads__tgi-2b-it-1.1.yaml"), 0, C::Realtime,
         "a Deployment is a long-running server"},
        // The GPU is asked for by an init container only; restartPolicy OnFailure.
        {"NVIDIA__gpu-operator__assets__state-device-plugin-validation__cuda-vector-add.yaml", 0,
         C::Batch,
         "init container device-plugin-validation-init) and a Pod with restartPolicy "
         "OnFailure runs to completion"},
        // An interactive notebook as a Deployment is served like a model server.
        {"NVIDIA__k8s-device-plugin__examples__tensorflow-notebook.yml", 0, C::Realtime,
         "nvidia.com/gpu (container tf-notebook)"},
        // A non-standard sharing resource still looks like an accelerator.
        {"NVIDIA__k8s-device-plugin__pods__pod1-shared-pytorch.yml", 0, C::Batch,
         "nvidia.com/sharedgpu (container main)"},
        {"kserve__kserve__docs__samples__accelerators__tensorflow-gpu.yaml", 0, C::None, ""},
        {"kserve__kserve__docs__samples__llmisvc__agentic-tool-calling__llmisvc-single-gpu.yaml", 0,
         C::None, ""},
        {"kubeflow__training-operator__examples__paddlepaddle__simple-gpu.yaml", 0, C::None, ""},
        {"kubeflow__training-operator__examples__pytorch__deepspeed-demo__pytorch_deepspeed_demo."
         "yaml",
         0, C::None, ""},
        {"kubeflow__training-operator__examples__pytorch__elastic__imagenet__imagenet.yaml", 0,
         C::None, ""},
        // GPUs through a DRA claim template, which without a cluster view is
        // not known: never assumed to be a GPU, and the reason says so.
        {"kubernetes-sigs__kueue__site__static__examples__dra__gpu-job-admitted.yaml", 0, C::None,
         "claim gpu: ResourceClaimTemplate gpu-claim is not known, so no GPU is assumed"},
        {"kubernetes-sigs__kueue__site__static__examples__provisioning__sample-job.yaml", 0,
         C::Batch, "nvidia.com/gpu (container dummy-job) and a Job runs to completion"},
        {"kubernetes-sigs__lws__docs__examples__vllm__GPU__lws.yaml", 0, C::None, ""},
        {"ray-project__kuberay__ray-operator__config__samples__pytorch-mnist__ray-job.pytorch-"
         "mnist.yaml",
         0, C::None, ""},
        {"ray-project__kuberay__ray-operator__config__samples__pytorch-text-classifier__ray-job."
         "pytorch-distributed-training.yaml",
         0, C::None, ""},
        // Volcano's batch.volcano.sh Job and CronJob share names with batch/v1 kinds only.
        {"volcano-sh__volcano__example__MindSpore-example__mindspore_gpu__mindspore-gpu.yaml", 0,
         C::None, ""},
        {"volcano-sh__volcano__example__cronjob__cronjob.yaml", 0, C::None, ""},
    };
  }();
  return table;
}

Classification classifyJson(const std::string& json) {
  const auto doc = parseJson(json);
  return classify(testing::firstTemplateOf(*doc));
}

TEST(Classify, EveryCorpusObjectHasTheClassOfTheTable) {
  const std::vector<CorpusObject> objects = corpusObjects();
  ASSERT_FALSE(objects.empty());
  std::map<std::pair<std::string, int>, const Expected*> byObject;
  for (const Expected& expected : corpusTable()) {
    byObject[{expected.file, expected.index}] = &expected;
  }
  EXPECT_EQ(byObject.size(), corpusTable().size()) << "the table lists an object twice";
  size_t seen = 0;
  for (const CorpusObject& object : objects) {
    SCOPED_TRACE(object.file + "#" + std::to_string(object.index) + " " + object.kind);
    const auto it = byObject.find({object.file, object.index});
    ASSERT_NE(it, byObject.end()) << "not in the table: add its expected class";
    ++seen;
    const Expected& expected = *it->second;
    const Classification result = classifyJson(object.json);
    EXPECT_EQ(className(result.workloadClass), className(expected.workloadClass));
    EXPECT_FALSE(result.unknownWorkloadValue.has_value());
    if (expected.workloadClass == WorkloadClass::None) {
      EXPECT_EQ(result.basis, ClassBasis::None);
      if (expected.because.empty()) {
        EXPECT_TRUE(result.reason.empty()) << result.reason;
      } else {
        EXPECT_NE(result.reason.find(expected.because), std::string::npos) << result.reason;
      }
    } else {
      EXPECT_EQ(result.basis, ClassBasis::Kind);
      EXPECT_NE(result.reason.find(expected.because), std::string::npos) << result.reason;
    }
  }
  EXPECT_EQ(seen, corpusTable().size()) << "the table lists objects the corpus does not have";
}

std::string deployment(const std::string& objectAnnotations, const std::string& templateAnnotations,
                       const std::string& resources = R"({"limits":{"nvidia.com/gpu":"1"}})") {
  return R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","annotations":)" +
         objectAnnotations + R"(},"spec":{"template":{"metadata":{"annotations":)" +
         templateAnnotations +
         R"(},"spec":{"containers":[{"name":"main","image":"x","resources":)" + resources +
         "}]}}}}";
}

std::string pod(const std::string& annotations, const std::string& restartPolicy,
                const std::string& resources, const std::string& ports = "") {
  std::string spec = R"({"containers":[{"name":"main","image":"x","resources":)" + resources +
                     (ports.empty() ? "" : R"(,"ports":)" + ports) + "}]";
  if (!restartPolicy.empty()) spec += R"(,"restartPolicy":")" + restartPolicy + "\"";
  spec += "}";
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":)" + annotations +
         R"(},"spec":)" + spec + "}";
}

constexpr const char* kNoResources = "{}";
constexpr const char* kOneGpu = R"({"limits":{"nvidia.com/gpu":"1"}})";

TEST(Classify, AnnotationWinsOverTheKind) {
  const Classification result =
      classifyJson(deployment(R"({"aiadmit.dev/workload":"training"})", "{}"));
  EXPECT_EQ(result.workloadClass, WorkloadClass::Training);
  EXPECT_EQ(result.basis, ClassBasis::WorkloadAnnotation);
  EXPECT_EQ(result.reason, "declared by annotation aiadmit.dev/workload=training on the object");
}

TEST(Classify, AnnotationMakesAnObjectWithoutGpusAnAiWorkload) {
  const Classification result =
      classifyJson(pod(R"({"aiadmit.dev/workload":"batch"})", "", kNoResources));
  EXPECT_EQ(result.workloadClass, WorkloadClass::Batch);
  EXPECT_EQ(result.reason, "declared by annotation aiadmit.dev/workload=batch");
}

TEST(Classify, PodTemplateAnnotationWinsOverTheObjectsSoPodsAgreeWithTheirController) {
  const Classification result = classifyJson(
      deployment(R"({"aiadmit.dev/workload":"realtime"})", R"({"aiadmit.dev/workload":"batch"})"));
  EXPECT_EQ(result.workloadClass, WorkloadClass::Batch);
  EXPECT_NE(result.reason.find("on the pod template"), std::string::npos) << result.reason;
  EXPECT_NE(result.reason.find("the object says realtime"), std::string::npos) << result.reason;
}

TEST(Classify, UnknownValueIsKeptForAia001AndTheKindDecides) {
  const Classification result =
      classifyJson(deployment(R"({"aiadmit.dev/workload":"inference"})", "{}"));
  EXPECT_EQ(result.workloadClass, WorkloadClass::Realtime);
  EXPECT_EQ(result.basis, ClassBasis::Kind);
  ASSERT_TRUE(result.unknownWorkloadValue.has_value());
  EXPECT_EQ(*result.unknownWorkloadValue, "inference");
  EXPECT_EQ(result.reason,
            "inferred from its kind, since annotation aiadmit.dev/workload=\"inference\" is not "
            "training, batch or realtime: a Deployment is a long-running server");
}

TEST(Classify, UnknownValueOnAnObjectWithoutGpusIsStillReported) {
  const Classification result =
      classifyJson(pod(R"({"aiadmit.dev/workload":"Training"})", "Never", kNoResources));
  EXPECT_EQ(result.workloadClass, WorkloadClass::Batch);
  ASSERT_TRUE(result.unknownWorkloadValue.has_value());
  EXPECT_EQ(*result.unknownWorkloadValue, "Training");
}

constexpr const char* kServingPort = R"([{"name":"http","containerPort":8000}])";

TEST(Classify, EmptyValueIsAnUnknownValue) {
  const Classification result =
      classifyJson(pod(R"({"aiadmit.dev/workload":""})", "", kOneGpu, kServingPort));
  ASSERT_TRUE(result.unknownWorkloadValue.has_value());
  EXPECT_EQ(*result.unknownWorkloadValue, "");
  EXPECT_EQ(result.workloadClass, WorkloadClass::Realtime);
}

TEST(Classify, UnknownValueBesideAValidOneIsReportedAndTheValidOneDecides) {
  const Classification result = classifyJson(deployment(R"({"aiadmit.dev/workload":"trainig"})",
                                                        R"({"aiadmit.dev/workload":"training"})"));
  EXPECT_EQ(result.workloadClass, WorkloadClass::Training);
  EXPECT_EQ(result.basis, ClassBasis::WorkloadAnnotation);
  ASSERT_TRUE(result.unknownWorkloadValue.has_value());
  EXPECT_EQ(*result.unknownWorkloadValue, "trainig");
}

TEST(Classify, PodOfAControllerCarriesTheStampedClass) {
  // A Job's Pod has restartPolicy Never and would be batch by kind; the stamp
  // from its training Job keeps it training.
  const Classification result = classifyJson(pod(
      R"({"aiadmit.dev/class":"training","aiadmit.dev/profile":"training"})", "Never", kOneGpu));
  EXPECT_EQ(result.workloadClass, WorkloadClass::Training);
  EXPECT_EQ(result.basis, ClassBasis::ClassStamp);
  EXPECT_NE(result.reason.find("stamped by aiadmit"), std::string::npos);
}

TEST(Classify, DeveloperAnnotationWinsOverAStaleStamp) {
  const Classification result = classifyJson(
      deployment("{}", R"({"aiadmit.dev/class":"realtime","aiadmit.dev/workload":"training"})"));
  EXPECT_EQ(result.workloadClass, WorkloadClass::Training);
  EXPECT_EQ(result.basis, ClassBasis::WorkloadAnnotation);
}

TEST(Classify, StampWithAnUnknownValueIsIgnored) {
  const Classification result =
      classifyJson(pod(R"({"aiadmit.dev/class":"gpu"})", "Never", kNoResources));
  EXPECT_EQ(result.workloadClass, WorkloadClass::None);
  EXPECT_FALSE(result.unknownWorkloadValue.has_value());
}

TEST(Classify, GpusAnnotationCountsAsAnAcceleratorRequest) {
  const Classification result =
      classifyJson(pod(R"({"aiadmit.dev/gpus":"2"})", "OnFailure", kNoResources));
  EXPECT_EQ(result.workloadClass, WorkloadClass::Batch);
  EXPECT_EQ(result.reason,
            "inferred from its kind: it requests GPUs by annotation aiadmit.dev/gpus=2 and a Pod "
            "with restartPolicy OnFailure runs to completion");
  const Classification none =
      classifyJson(pod(R"({"aiadmit.dev/gpus":"0"})", "OnFailure", kNoResources));
  EXPECT_EQ(none.workloadClass, WorkloadClass::None);
}

TEST(Classify, BarePodFollowsItsRestartPolicyAndWhetherItServes) {
  const auto of = [](const char* restartPolicy, const std::string& ports) {
    return classifyJson(pod("{}", restartPolicy, kOneGpu, ports)).workloadClass;
  };
  EXPECT_EQ(of("", kServingPort), WorkloadClass::Realtime);
  EXPECT_EQ(of("Always", kServingPort), WorkloadClass::Realtime);
  EXPECT_EQ(of("OnFailure", kServingPort), WorkloadClass::Batch);
  EXPECT_EQ(of("Never", kServingPort), WorkloadClass::Batch);
  // `kubectl run --image=cuda -- nvidia-smi`: restartPolicy Always, no port.
  EXPECT_EQ(of("", ""), WorkloadClass::Batch);
  EXPECT_EQ(of("Always", ""), WorkloadClass::Batch);
  EXPECT_EQ(of("Always", "[]"), WorkloadClass::Batch);
  EXPECT_EQ(classifyJson(pod("{}", "", kOneGpu)).reason,
            "inferred from its kind: it requests nvidia.com/gpu (container main) and a Pod whose "
            "containers declare no port runs a command, not a server");
}

TEST(Classify, OnlyTheAnnotationAndANamedProfileAreDeclared) {
  const Classification annotated =
      classifyJson(pod(R"({"aiadmit.dev/workload":"realtime"})", "", kOneGpu));
  EXPECT_TRUE(annotated.declared());
  const Classification byKind = classifyJson(pod("{}", "", kOneGpu, kServingPort));
  EXPECT_EQ(byKind.basis, ClassBasis::Kind);
  EXPECT_FALSE(byKind.declared());
  EXPECT_EQ(byKind.reason.rfind("inferred from its kind: ", 0), 0u) << byKind.reason;
  const Classification stamped =
      classifyJson(pod(R"({"aiadmit.dev/class":"realtime"})", "Never", kOneGpu));
  EXPECT_EQ(stamped.basis, ClassBasis::ClassStamp);
  EXPECT_FALSE(stamped.declared());
  EXPECT_EQ(stamped.reason.rfind("inferred from annotation aiadmit.dev/class=realtime", 0), 0u)
      << stamped.reason;
}

TEST(Classify, MisspeltAcceleratorResourcesStillClassifySoTheyCanBeReported) {
  for (const char* resource :
       {"nvidia.com/gpus", "nvidia/gpu", "gpu", "nvidia.com/mig-1g.10gb", "amd.com/gpu"}) {
    SCOPED_TRACE(resource);
    const std::string resources = std::string(R"({"requests":{")") + resource + R"(":"1"}})";
    const Classification result = classifyJson(pod("{}", "Never", resources));
    EXPECT_EQ(result.workloadClass, WorkloadClass::Batch);
    EXPECT_NE(result.reason.find(resource), std::string::npos) << result.reason;
  }
}

TEST(Classify, EachControllerKindHasItsDefault) {
  const std::string templ =
      R"("template":{"spec":{"containers":[{"name":"m","image":"x","resources":{"limits":{"nvidia.com/gpu":1}}}]}})";
  const std::vector<std::pair<std::string, WorkloadClass>> cases = {
      {R"({"apiVersion":"apps/v1","kind":"Deployment","spec":{)" + templ + "}}",
       WorkloadClass::Realtime},
      {R"({"apiVersion":"apps/v1","kind":"StatefulSet","spec":{)" + templ + "}}",
       WorkloadClass::Realtime},
      {R"({"apiVersion":"apps/v1","kind":"ReplicaSet","spec":{)" + templ + "}}",
       WorkloadClass::Realtime},
      {R"({"apiVersion":"batch/v1","kind":"Job","spec":{)" + templ + "}}", WorkloadClass::Batch},
      {R"({"apiVersion":"batch/v1","kind":"CronJob","spec":{"schedule":"@daily","jobTemplate":{"spec":{)" +
           templ + "}}}}",
       WorkloadClass::Batch},
      {R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","spec":{)" + templ + "}}",
       WorkloadClass::None},
  };
  for (const auto& [json, expected] : cases) {
    SCOPED_TRACE(json.substr(0, 60));
    EXPECT_EQ(classifyJson(json).workloadClass, expected);
  }
}

TEST(Classify, CronJobReadsAnnotationsOnItsJobsPodTemplate) {
  const std::string json =
      R"({"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"c"},"spec":{"schedule":"@daily","jobTemplate":{"spec":{"template":{"metadata":{"annotations":{"aiadmit.dev/workload":"training"}},"spec":{"containers":[{"name":"m","image":"x"}]}}}}}})";
  const Classification result = classifyJson(json);
  EXPECT_EQ(result.workloadClass, WorkloadClass::Training);
  EXPECT_EQ(result.reason,
            "declared by annotation aiadmit.dev/workload=training on the pod template");
}

TEST(Classify, DeclaredAnnotationPrefersThePodTemplate) {
  const auto doc =
      parseJson(deployment(R"({"aiadmit.dev/profile":"a"})", R"({"aiadmit.dev/profile":"b"})"));
  const PodTemplateView view = testing::firstTemplateOf(*doc);
  EXPECT_EQ(declaredAnnotation(view, kProfileAnnotation).value_or(""), "b");
  const auto onlyObject = parseJson(deployment(R"({"aiadmit.dev/profile":"a"})", "{}"));
  EXPECT_EQ(
      declaredAnnotation(testing::firstTemplateOf(*onlyObject), kProfileAnnotation).value_or(""),
      "a");
  EXPECT_FALSE(declaredAnnotation(view, kGpusAnnotation).has_value());
}

}  // namespace
}  // namespace aiadmit
