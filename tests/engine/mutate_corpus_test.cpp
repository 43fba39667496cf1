// Every object of the corpus through /mutate on the real server: each patch
// applied by kubectl, the result validated against the Kubernetes schema and
// sent again for no patch; GPU workloads aimed at the pool; the Pods and
// ReplicaSets that controllers would create from mutated templates need no
// patch; and a golden file of the patches of a few objects, for review.
//
// AIADMIT_UPDATE_GOLDEN=1 rewrites the golden files instead of comparing.
#include <gtest/gtest.h>
#include <rapidjson/pointer.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "tests/support/test_support.h"
#include "webhook/model/pod_reader.h"
#include "webhook/model/scheduling.h"
#include "webhook/model/workload.h"
#include "webhook/policy/profile.h"

namespace aiadmit {
namespace {

using namespace testing;

constexpr size_t kMaxWarningLine = 120;
constexpr size_t kMaxWarningsTotal = 4096;

// Corpus objects whose patches are kept in tests/golden/patches: a training
// Job, model servers with and without a port to probe, a Pod whose only GPU
// is in an init container, and a Kueue Job that already tolerates GPUs.
const std::set<std::string> kGoldenObjects = {
    "GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__axolotl-multimodal-finetuning-gemma__"
    "k8s__axolotl-training-job.yaml#0",
    "GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__llm-serving-gemma__vllm__vllm-3-27b-it."
    "yaml#0",
    "GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__mix-train-and-inference__workloads__"
    "tgi-2b-it-1.1.yaml#0",
    "NVIDIA__gpu-operator__assets__state-device-plugin-validation__cuda-vector-add.yaml#0",
    "kubernetes-sigs__kueue__site__static__examples__provisioning__sample-job.yaml#0",
};

bool isBuiltInWorkload(const JsonValue& object) {
  return firstTemplateOf(object).type != nullptr;
}

bool asksForPoolGpus(const JsonValue* podSpec) {
  bool asks = false;
  PodReader(nullptr, nullptr, podSpec).forEachResource([&](const ResourceEntry& entry) {
    asks = asks || entry.name == "nvidia.com/gpu";
  });
  return asks;
}

std::string pretty(const JsonValue& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> writer(buffer);
  writer.SetIndent(' ', 2);
  value.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

void expectWarningsFit(const ReviewResponse& response) {
  size_t total = 0;
  for (const std::string& warning : response.warnings) {
    EXPECT_LE(warning.size(), kMaxWarningLine) << warning;
    EXPECT_EQ(warning.rfind("aiadmit: ", 0), 0u) << warning;
    total += warning.size();
  }
  EXPECT_LE(total, kMaxWarningsTotal);
}

void compareWithGolden(const CorpusObject& object, const std::string& key,
                       const std::string& patch) {
  const std::string stem = std::filesystem::path(object.file).stem().string();
  const std::string file =
      sourceDir() + "/tests/golden/patches/" + stem + "." + std::to_string(object.index) + ".json";
  const auto actual = parseJson(patch.empty() ? "[]" : patch);
  if (std::getenv("AIADMIT_UPDATE_GOLDEN") != nullptr) {
    writeFile(file, pretty(*actual));
    return;
  }
  ASSERT_TRUE(std::filesystem::exists(file))
      << file << " is missing; run with AIADMIT_UPDATE_GOLDEN=1 to write it";
  EXPECT_EQ(*parseJson(readFile(file)), *actual)
      << "the patch of " << key << " changed; review it, then run with AIADMIT_UPDATE_GOLDEN=1.\n"
      << pretty(*actual);
}

// What a controller would create from a mutated template, after the API
// server's defaulting and Priority admission: the object that then comes
// back through /mutate.
std::string podFromTemplate(const JsonValue& templ, std::string_view owner) {
  JsonDocument pod;
  auto& alloc = pod.GetAllocator();
  pod.SetObject();
  setString(pod, "apiVersion", "v1", alloc);
  setString(pod, "kind", "Pod", alloc);
  JsonValue metadata(rapidjson::kObjectType);
  if (const JsonValue* source = member(&templ, "metadata"); isObject(source)) {
    metadata.CopyFrom(*source, alloc);
  }
  setString(metadata, "name", std::string(owner) + "-7d9f8", alloc);
  JsonValue ownerRef(rapidjson::kObjectType);
  setString(ownerRef, "apiVersion", "apps/v1", alloc);
  setString(ownerRef, "kind", "ReplicaSet", alloc);
  setString(ownerRef, "name", owner, alloc);
  setString(ownerRef, "uid", "0b9a3f52-6c1d-4e8a-9f57-2d4c8e1b7a60", alloc);
  ownerRef.AddMember("controller", true, alloc);
  JsonValue owners(rapidjson::kArrayType);
  owners.PushBack(ownerRef, alloc);
  setMember(metadata, "ownerReferences", std::move(owners), alloc);
  pod.AddMember("metadata", metadata, alloc);
  JsonValue spec(rapidjson::kObjectType);
  spec.CopyFrom(*member(&templ, "spec"), alloc);
  if (member(&spec, "schedulerName") == nullptr)
    setString(spec, "schedulerName", "default-scheduler", alloc);
  if (member(&spec, "restartPolicy") == nullptr) setString(spec, "restartPolicy", "Always", alloc);
  setMember(spec, "priority", JsonValue(member(&spec, "priorityClassName") ? 1000 : 0), alloc);
  JsonValue& tolerations = ensureArray(spec, "tolerations", alloc);
  for (const char* key : {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"}) {
    JsonValue toleration(rapidjson::kObjectType);
    setString(toleration, "key", key, alloc);
    setString(toleration, "operator", "Exists", alloc);
    setString(toleration, "effect", "NoExecute", alloc);
    toleration.AddMember("tolerationSeconds", 300, alloc);
    tolerations.PushBack(toleration, alloc);
  }
  pod.AddMember("spec", spec, alloc);
  return toJson(pod);
}

std::string replicaSetFromDeployment(const JsonValue& deployment) {
  JsonDocument rs;
  auto& alloc = rs.GetAllocator();
  rs.CopyFrom(deployment, alloc);
  setString(rs, "kind", "ReplicaSet", alloc);
  JsonValue& metadata = ensureObject(rs, "metadata", alloc);
  setString(metadata, "name", std::string(stringMember(&metadata, "name")) + "-7d9f8", alloc);
  // The Deployment controller labels a ReplicaSet with its template's labels
  // and copies the Deployment's annotations.
  JsonValue labels(rapidjson::kObjectType);
  if (const JsonValue* source = rapidjson::Pointer("/spec/template/metadata/labels").Get(rs)) {
    labels.CopyFrom(*source, alloc);
  }
  setString(labels, "pod-template-hash", "7d9f8", alloc);
  setMember(metadata, "labels", std::move(labels), alloc);
  JsonValue& spec = ensureObject(rs, "spec", alloc);
  spec.RemoveMember("strategy");
  spec.RemoveMember("revisionHistoryLimit");
  spec.RemoveMember("progressDeadlineSeconds");
  return toJson(rs);
}

TEST(MutateCorpus, EveryObjectIsPatchedValidlyIdempotentlyAndGpuWorkloadsReachThePool) {
  WebhookServer server;
  Toleration poolToleration;
  poolToleration.key = "accelerator";
  poolToleration.value = "gpu";
  poolToleration.effect = "NoSchedule";

  std::vector<std::string> schemaChecked;
  std::vector<std::string> createdFromTemplates;
  int gpuWorkloads = 0;
  int golden = 0;
  int uid = 0;
  for (const CorpusObject& object : corpusObjects()) {
    const std::string key = object.file + "#" + std::to_string(object.index);
    SCOPED_TRACE(key + " " + object.kind);
    const HttpResponse http =
        server.post("/mutate", makeReview(object.json, "CREATE", "c-" + std::to_string(uid++)));
    ASSERT_EQ(http.status, 200) << http.body;
    const ReviewResponse response = parseReviewResponse(http.body);
    ASSERT_TRUE(response.allowed) << response.message;
    expectWarningsFit(response);
    if (kGoldenObjects.count(key) > 0) {
      compareWithGolden(object, key, response.patch);
      ++golden;
    }

    const auto original = parseJson(object.json);
    // Custom resources: tests/engine/custom_resource_corpus_test.cpp, with their CRDs.
    if (!isBuiltInWorkload(*original)) continue;
    std::string mutated = object.json;
    if (!response.patch.empty()) {
      EXPECT_EQ(response.patchType, "JSONPatch");
      mutated = applyPatch(object.json, response.patch);
      ASSERT_FALSE(mutated.empty());
      const ReviewResponse again = parseReviewResponse(
          server.post("/mutate", makeReview(mutated, "CREATE", "again-" + std::to_string(uid)))
              .body);
      EXPECT_EQ(again.patch, "") << "not idempotent";
    }
    schemaChecked.push_back(mutated);

    const auto result = parseJson(mutated);
    const PodTemplateView view = firstTemplateOf(*result);
    if (asksForPoolGpus(view.spec)) {
      ++gpuWorkloads;
      EXPECT_TRUE(anyTolerationCovers(member(view.spec, "tolerations"), poolToleration)) << mutated;
      EXPECT_EQ(stringMember(member(view.spec, "nodeSelector"), "accelerator"), "nvidia")
          << mutated;
    }
    if (view.type != nullptr && view.type->kind == "Deployment") {
      createdFromTemplates.push_back(replicaSetFromDeployment(*result));
    }
    if (view.type != nullptr && !view.objectIsPod() && view.spec != nullptr) {
      JsonDocument templ;
      templ.SetObject();
      if (view.metadata != nullptr) {
        templ.AddMember("metadata", JsonValue(*view.metadata, templ.GetAllocator()),
                        templ.GetAllocator());
      }
      templ.AddMember("spec", JsonValue(*view.spec, templ.GetAllocator()), templ.GetAllocator());
      const JsonValue* metadata = member(result.get(), "metadata");
      std::string owner(stringMember(metadata, "name"));
      if (owner.empty()) owner = std::string(stringMember(metadata, "generateName")) + "x";
      createdFromTemplates.push_back(podFromTemplate(templ, owner));
    }
  }
  EXPECT_EQ(golden, static_cast<int>(kGoldenObjects.size()));
  EXPECT_GE(gpuWorkloads, 7);

  for (const std::string& created : createdFromTemplates) {
    const auto object = parseJson(created);
    SCOPED_TRACE(std::string(stringMember(object.get(), "kind")) + " " +
                 std::string(stringMember(member(object.get(), "metadata"), "name")));
    const ReviewResponse response = parseReviewResponse(
        server.post("/mutate", makeReview(created, "CREATE", "t-" + std::to_string(uid++))).body);
    EXPECT_TRUE(response.allowed);
    EXPECT_EQ(response.patch, "") << "created from a mutated template, yet patched";
    schemaChecked.push_back(created);
  }

  const CommandResult schema = validateSchemas(schemaChecked);
  EXPECT_EQ(schema.exitCode, 0) << schema.out << schema.err;
}

}  // namespace
}  // namespace aiadmit
