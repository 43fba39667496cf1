// `aiadmit check` on the operators' GPU examples it used to call class none:
// Kubeflow Trainer's GRPO TrainJob, KServe's GPU BERT InferenceService and a
// Pod that asks KAI Scheduler for half a GPU.
#include <gtest/gtest.h>

#include <string>

#include "tests/support/check_harness.h"
#include "tests/support/test_support.h"
#include "webhook/codec/json_pointer.h"

namespace aiadmit {
namespace {

using namespace testing;

// Kubeflow Trainer examples/grpo/grpo-trainjob.yaml.
constexpr char kGrpo[] = R"(apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: grpo-example
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
        nvidia.com/gpu: 2
    env:
      - name: NUM_GENERATIONS
        value: "4"
      - name: MAX_PROMPT_LENGTH
        value: "512"
      - name: MAX_COMPLETION_LENGTH
        value: "256"
      - name: PER_DEVICE_TRAIN_BATCH_SIZE
        value: "2"
      - name: GRADIENT_ACCUMULATION_STEPS
        value: "4"
      - name: NUM_TRAIN_EPOCHS
        value: "1"
      - name: LEARNING_RATE
        value: "5e-7"
)";

// KServe docs/samples/v1beta1/torchserve/v2/bert/bert_gpu.yaml.
constexpr char kBertGpu[] = R"(apiVersion: serving.kserve.io/v1beta1
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

// KAI Scheduler's GPU sharing quickstart.
constexpr char kKaiPod[] = R"(apiVersion: v1
kind: Pod
metadata:
  name: gpu-sharing
  labels:
    runai/queue: test
  annotations:
    gpu-fraction: "0.5"
spec:
  schedulerName: kai-scheduler
  containers:
    - name: sleep
      image: busybox
      args: ["sh", "-c", "sleep infinity"]
)";

// The -o json record of the one object in `yaml`.
std::shared_ptr<JsonDocument> checkJson(const std::string& yaml, int* exitCode) {
  TempDir dir;
  writeFile(dir.file("object.yaml"), yaml);
  const CommandResult result = check({"-o", "json", dir.file("object.yaml")});
  *exitCode = result.exitCode;
  EXPECT_TRUE(result.err.empty()) << result.err;
  return parseJson(result.out);
}

const JsonValue* onlyObject(const JsonDocument& output) {
  const JsonValue* objects = member(&output, "objects");
  if (!isArray(objects) || objects->Size() != 1) {
    ADD_FAILURE() << toJson(output);
    return nullptr;
  }
  return &(*objects)[0];
}

TEST(CheckMissedGpus, TheGrpoTrainJobIsTrainingAndPlacedThroughRuntimePatches) {
  int exitCode = -1;
  const auto output = checkJson(kGrpo, &exitCode);
  EXPECT_EQ(exitCode, 0) << toJson(*output);
  const JsonValue* object = onlyObject(*output);
  ASSERT_NE(object, nullptr);
  EXPECT_EQ(str(member(object, "class")), "training") << toJson(*object);
  const std::string text = toJson(*object);
  EXPECT_NE(text.find("spec.trainer.resourcesPerNode"), std::string::npos) << text;
  EXPECT_NE(text.find("through runtimePatches"), std::string::npos) << text;
}

TEST(CheckMissedGpus, KServesGpuBertSampleIsARealtimeServerOnThePool) {
  int exitCode = -1;
  const auto output = checkJson(kBertGpu, &exitCode);
  EXPECT_EQ(exitCode, 0) << toJson(*output);
  const JsonValue* object = onlyObject(*output);
  ASSERT_NE(object, nullptr);
  EXPECT_EQ(str(member(object, "class")), "realtime") << toJson(*object);
  const std::string text = toJson(*object);
  EXPECT_NE(text.find("kserve-container of predictor"), std::string::npos) << text;
  EXPECT_NE(text.find("added toleration accelerator=gpu:NoSchedule"), std::string::npos) << text;
}

TEST(CheckMissedGpus, AKaiSharePodIsAGpuWorkloadWithoutAWholeGpu) {
  int exitCode = -1;
  const auto output = checkJson(kKaiPod, &exitCode);
  const JsonValue* object = onlyObject(*output);
  ASSERT_NE(object, nullptr);
  // KAI's quickstart Pod sleeps: no port, no server.
  EXPECT_EQ(str(member(object, "class")), "batch") << toJson(*object);
  const std::string text = toJson(*object);
  EXPECT_NE(text.find("gpu-fraction=0.5"), std::string::npos) << text;
  EXPECT_EQ(text.find("added limit nvidia.com/gpu"), std::string::npos) << text;
  EXPECT_NE(text.find("added toleration accelerator=gpu:NoSchedule"), std::string::npos) << text;
}

}  // namespace
}  // namespace aiadmit
