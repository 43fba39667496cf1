// Real manifests as a cluster would see them: every object of
// ../shared/corpus/manifests sent to /mutate, the patch applied with kubectl,
// and the result sent to /validate of the real server with the shipped
// profiles. The table records what happens to each, and why: some real
// manifests are wrong, and saying so at apply time is the point.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "tests/support/test_support.h"

namespace aiadmit {
namespace {

using namespace testing;

struct Expected {
  const char* denied;  // rule IDs of the denial, comma-separated; "" when admitted
  const char* warned;  // rule IDs of warnings
  const char* why;     // what a reader of the table should know
};

// Keyed by "<file>#<document index>". Objects of kinds aiadmit does not
// validate (Services, custom resources) are admitted untouched.
const std::map<std::string, Expected>& expectations() {
  static const std::map<std::string, Expected> table = {
      {"GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__axolotl-multimodal-finetuning-gemma_"
       "_k8s__axolotl-training-job.yaml#0",
       {"", "",
        "batch Job (1 GPU, requests == limits); GKE accelerator selector is outside the pool's "
        "labels"}},
      {"GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__distributed-streaming-benchmark__"
       "vllm-runai-gcs.yaml#0",
       {"", "AIA009,AIA015",
        "vLLM on 8 GPUs declares no port, so no readiness probe can be injected; realtime is "
        "inferred from the kind, so AIA009 warns; no memory limit"}},
      {"GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__distributed-streaming-benchmark__"
       "vllm-runai-gcs.yaml#1",
       {"", "", "Service"}},
      {"GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__gcsfuse-shared-cache__pod-a.yaml#0",
       {"", "", "not an AI workload, not aimed at the GPU pool"}},
      {"GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__gcsfuse-shared-cache__vllm-b-no-"
       "cache.yaml#0",
       {"", "AIA009",
        "vLLM declares no port (the server listens on vLLM's default 8000); an inferred server"}},
      {"GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__gke-ray__kueue__ephemeral-rayjob."
       "yaml#0",
       {"", "", "RayJob: the head and worker groups; KubeRay owns their probes"}},
      {"GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__llm-multihost-gpus-tensorrt-llm__"
       "lws.yaml#0",
       {"", "AIA015",
        "LeaderWorkerSet: leader and worker templates aimed at the pool, the leader probed on its "
        "port; its GPU servers have no memory limit"}},
      {"GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__llm-multihost-gpus-tensorrt-llm__"
       "lws.yaml#1",
       {"", "", "Service"}},
      {"GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__llm-multihost-gpus__llama3-405b-job."
       "yaml#0",
       {"", "", "CPU-only download Job; its affinity terms (c3, ZONE) do not aim at the GPU pool"}},
      {"GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__llm-serving-gemma__vllm__vllm-3-27b-"
       "it.yaml#0",
       {"", "AIA009",
        "vLLM takes --port=8000 in args but declares no containerPort, so no probe can be "
        "injected; an inferred server, warned"}},
      {"GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__llm-serving-gemma__vllm__vllm-3-27b-"
       "it.yaml#1",
       {"", "", "Service"}},
      {"GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__mix-train-and-inference__workloads__"
       "tgi-2b-it-1.1.yaml#0",
       {"AIA011", "",
        "priorityClassName default-priority-nonpreempting is not the realtime class; its port lets "
        "a probe be injected"}},
      {"NVIDIA__gpu-operator__assets__state-device-plugin-validation__cuda-vector-add.yaml#0",
       {"", "",
        "batch Pod (OnFailure) whose GPU is on the init container only, counted as the scheduler "
        "does"}},
      {"NVIDIA__k8s-device-plugin__examples__tensorflow-notebook.yml#0",
       {"", "AIA015",
        "notebook Deployment classed realtime; port 8888 lets a probe be injected; no memory "
        "limit"}},
      {"NVIDIA__k8s-device-plugin__pods__pod1-shared-pytorch.yml#0",
       {"", "",
        "nvidia.com/sharedgpu, a name NVIDIA's device plugin may be configured to give shared "
        "GPUs: no misspelling, so it goes to the NVIDIA pool"}},
      {"kserve__kserve__docs__samples__accelerators__tensorflow-gpu.yaml#0",
       {"", "", "KFService (serving.kubeflow.org/v1alpha1): a kind no table row serves"}},
      {"kserve__kserve__docs__samples__llmisvc__agentic-tool-calling__llmisvc-single-gpu.yaml#0",
       {"", "AIA015",
        "LLMInferenceService: its main template's GPU server has no memory limit; KServe owns "
        "its probes"}},
      {"kubeflow__training-operator__examples__paddlepaddle__simple-gpu.yaml#0",
       {"", "", "PaddleJob: the Worker template's GPUs, aimed at the pool"}},
      {"kubeflow__training-operator__examples__pytorch__deepspeed-demo__pytorch_deepspeed_demo."
       "yaml#0",
       {"", "", "PyTorchJob: Master and Worker templates, aimed at the pool"}},
      {"kubeflow__training-operator__examples__pytorch__elastic__imagenet__imagenet.yaml#0",
       {"", "", "PyTorchJob: Master and Worker templates, aimed at the pool"}},
      {"kubernetes-sigs__kueue__site__static__examples__dra__gpu-job-admitted.yaml#0",
       {"", "", "GPU by DRA claim, no extended resource: not classified, not aimed at the pool"}},
      {"kubernetes-sigs__kueue__site__static__examples__provisioning__sample-job.yaml#0",
       {"", "",
        "batch Job, parallelism 3: gang scheduling is only required of training, and only where a "
        "profile says so"}},
      {"kubernetes-sigs__lws__docs__examples__vllm__GPU__lws.yaml#0",
       {"", "",
        "LeaderWorkerSet: leader and worker templates aimed at the pool; the leader gets probes, "
        "the workers serve no traffic"}},
      {"ray-project__kuberay__ray-operator__config__samples__pytorch-mnist__ray-job.pytorch-mnist."
       "yaml#0",
       {"", "", "RayJob: the head and worker groups; KubeRay owns their probes"}},
      {"ray-project__kuberay__ray-operator__config__samples__pytorch-text-classifier__ray-job."
       "pytorch-distributed-training.yaml#0",
       {"", "", "RayJob: the head and worker groups; KubeRay owns their probes"}},
      {"volcano-sh__volcano__example__MindSpore-example__mindspore_gpu__mindspore-gpu.yaml#0",
       {"", "", "Volcano Job: each task's template read by the table's row"}},
      {"volcano-sh__volcano__example__cronjob__cronjob.yaml#0",
       {"", "", "Volcano CronJob (batch.volcano.sh): a kind no table row serves"}},
  };
  return table;
}

// "AIA009, AIA011" from the [AIAnnn] tags at the start of each line or warning.
std::string rulesIn(const std::vector<std::string>& lines) {
  std::set<std::string> rules;
  for (const std::string& line : lines) {
    const size_t at = line.find("[AIA");
    if (at != std::string::npos) rules.insert(line.substr(at + 1, 6));
  }
  std::string out;
  for (const std::string& rule : rules) out += (out.empty() ? "" : ",") + rule;
  return out;
}

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

TEST(ValidateCorpus, EveryObjectThroughMutateThenValidate) {
  WebhookServer server;
  const std::vector<CorpusObject> objects = corpusObjects();
  ASSERT_FALSE(objects.empty());
  std::set<std::string> seen;
  int denied = 0;
  for (const CorpusObject& object : objects) {
    const std::string key = object.file + "#" + std::to_string(object.index);
    SCOPED_TRACE(key + " " + object.kind + " " + object.name);
    seen.insert(key);

    const std::string uid = "corpus-" + std::to_string(seen.size());
    const HttpResponse mutated = server.post("/mutate", makeReview(object.json, "CREATE", uid));
    ASSERT_EQ(mutated.status, 200) << mutated.body;
    const ReviewResponse mutation = parseReviewResponse(mutated.body);
    ASSERT_TRUE(mutation.allowed);
    std::string final = object.json;
    if (!mutation.patch.empty()) {
      final = applyPatch(object.json, mutation.patch);
      ASSERT_FALSE(final.empty());
    }

    const HttpResponse validated = server.post("/validate", makeReview(final, "CREATE", uid));
    ASSERT_EQ(validated.status, 200) << validated.body;
    const ReviewResponse validation = parseReviewResponse(validated.body);
    EXPECT_EQ(validation.uid, uid);
    const std::string deniedRules = validation.allowed ? "" : rulesIn(linesOf(validation.message));
    const std::string warnedRules = rulesIn(validation.warnings);
    if (!validation.allowed) {
      ++denied;
      EXPECT_EQ(validation.statusCode, 403);
      for (const std::string& line : linesOf(validation.message)) {
        EXPECT_EQ(line.rfind("[AIA", 0), 0u) << line;
      }
    }
    for (const std::string& warning : validation.warnings) {
      EXPECT_LE(warning.size(), 120u) << warning;
    }

    const auto expected = expectations().find(key);
    if (expected == expectations().end()) {
      ADD_FAILURE() << "not in the table: {\"" << key << "\", {\"" << deniedRules << "\", \""
                    << warnedRules << "\", \"\"}},\n"
                    << validation.message << "\n"
                    << (validation.warnings.empty() ? "" : validation.warnings.front());
      continue;
    }
    EXPECT_EQ(deniedRules, expected->second.denied) << validation.message;
    EXPECT_EQ(warnedRules, expected->second.warned);
  }
  for (const auto& [key, expected] : expectations()) {
    EXPECT_TRUE(seen.count(key)) << "the table names an object the corpus lacks: " << key;
  }
  EXPECT_GE(denied, 1) << "real manifests are not all right";
}

}  // namespace
}  // namespace aiadmit
