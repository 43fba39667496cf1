// Every custom resource of the corpus that a row of the workload-type table
// describes, through the real server: /mutate, the patch applied by kubectl,
// the result validated against its real CRD (../shared/crds, unknown fields
// refused as the API server's strict field validation does), /mutate again
// for no patch, and /validate. Each GPU template is aimed at the pool, and
// the Pods an operator makes from the mutated templates need no patch.
#include <gtest/gtest.h>

#include "tests/support/test_support.h"
#include "webhook/model/pod_reader.h"
#include "webhook/model/scheduling.h"
#include "webhook/model/workload_type.h"

namespace aiadmit {
namespace {

using namespace testing;

std::string keyOf(const JsonValue& object) {
  const JsonValue* metadata = member(&object, "metadata");
  std::string name(stringMember(metadata, "name"));
  if (name.empty()) name = std::string(stringMember(metadata, "generateName"));
  return std::string(stringMember(&object, "kind")) + "/" + name;
}

Toleration poolToleration() {
  Toleration toleration;
  toleration.key = "accelerator";
  toleration.value = "gpu";
  toleration.effect = "NoSchedule";
  return toleration;
}

// A Pod as the operator makes it from one template: the template's metadata
// and spec, owned by the custom resource, with what the API server defaults.
std::string podOf(const JsonValue& owner, const ResolvedTemplate& place) {
  JsonDocument pod;
  auto& alloc = pod.GetAllocator();
  pod.SetObject();
  setString(pod, "apiVersion", "v1", alloc);
  setString(pod, "kind", "Pod", alloc);
  JsonValue metadata(rapidjson::kObjectType);
  if (const JsonValue* labels = member(place.metadata, "labels"); isObject(labels)) {
    metadata.AddMember("labels", JsonValue(*labels, alloc), alloc);
  }
  if (const JsonValue* annotations = member(place.metadata, "annotations"); isObject(annotations)) {
    metadata.AddMember("annotations", JsonValue(*annotations, alloc), alloc);
  }
  setString(metadata, "name",
            std::string(stringMember(member(&owner, "metadata"), "name")) + "-" + place.role + "-0",
            alloc);
  JsonValue ownerRef(rapidjson::kObjectType);
  setString(ownerRef, "apiVersion", stringMember(&owner, "apiVersion"), alloc);
  setString(ownerRef, "kind", stringMember(&owner, "kind"), alloc);
  setString(ownerRef, "name", stringMember(member(&owner, "metadata"), "name"), alloc);
  setString(ownerRef, "uid", "5f0c7a1e-2b3d-4c8e-9a6f-1d2e3f4a5b6c", alloc);
  ownerRef.AddMember("controller", true, alloc);
  JsonValue owners(rapidjson::kArrayType);
  owners.PushBack(ownerRef, alloc);
  setMember(metadata, "ownerReferences", std::move(owners), alloc);
  pod.AddMember("metadata", metadata, alloc);
  JsonValue spec(*place.spec, alloc);
  if (member(&spec, "schedulerName") == nullptr)
    setString(spec, "schedulerName", "default-scheduler", alloc);
  pod.AddMember("spec", spec, alloc);
  return toJson(pod);
}

TEST(CustomResourceCorpus, MutatedValidAgainstTheirCrdsIdempotentAndPlaced) {
  WebhookServer server;
  const auto table = WorkloadTypeTable::builtIn();
  std::vector<std::string> originals;
  std::vector<std::string> mutatedObjects;
  std::vector<std::string> children;
  int gpuCustomResources = 0;
  int uid = 0;
  for (const CorpusObject& object : corpusObjects()) {
    const auto original = parseJson(object.json);
    const WorkloadType* type = table->findForObject(*original);
    if (type == nullptr || type->group.find('.') == std::string::npos) continue;
    SCOPED_TRACE(object.file + "#" + std::to_string(object.index) + " " + object.kind);

    const ReviewResponse response = parseReviewResponse(
        server.post("/mutate", makeReview(object.json, "CREATE", "m-" + std::to_string(uid++)))
            .body);
    ASSERT_TRUE(response.allowed) << response.message;
    std::string mutated = object.json;
    if (!response.patch.empty()) {
      mutated = applyPatch(object.json, response.patch);
      ASSERT_FALSE(mutated.empty());
      const ReviewResponse again = parseReviewResponse(
          server.post("/mutate", makeReview(mutated, "CREATE", "a-" + std::to_string(uid++))).body);
      EXPECT_EQ(again.patch, "") << "not idempotent";
    }
    originals.push_back(object.json);
    mutatedObjects.push_back(mutated);

    const ReviewResponse validation = parseReviewResponse(
        server.post("/validate", makeReview(mutated, "CREATE", "v-" + std::to_string(uid++))).body);
    if (!validation.allowed) {
      EXPECT_EQ(validation.message.rfind("[AIA0", 0), 0u) << validation.message;
    }

    // Each template that asks for the pool's GPUs tolerates the pool and
    // selects its nodes; the Pods made from it need nothing more.
    const auto result = parseJson(mutated);
    const Resolution resolution = resolveTemplates(*type, *result);
    ASSERT_TRUE(resolution.ok()) << resolution.error;
    bool asksForGpus = false;
    for (const ResolvedTemplate& place : resolution.templates) {
      SCOPED_TRACE(place.role);
      bool gpus = false;
      PodReader(nullptr, nullptr, place.spec).forEachResource([&](const ResourceEntry& entry) {
        gpus = gpus || entry.name == "nvidia.com/gpu";
      });
      if (!gpus) continue;
      asksForGpus = true;
      EXPECT_TRUE(anyTolerationCovers(member(place.spec, "tolerations"), poolToleration()))
          << mutated;
      EXPECT_EQ(stringMember(member(place.spec, "nodeSelector"), "accelerator"), "nvidia");
      if (!place.metadataPointer.empty()) children.push_back(podOf(*result, place));
    }
    if (asksForGpus) {
      ++gpuCustomResources;
      EXPECT_NE(response.patch, "") << "a GPU custom resource went untouched";
    }
  }
  // Two RayJobs, both LeaderWorkerSets, the LLMInferenceService, the
  // PaddleJob, the DeepSpeed PyTorchJob and the Volcano Job ask for GPUs
  // (the MNIST RayJob and the elastic ImageNet PyTorchJob run on CPUs).
  EXPECT_EQ(gpuCustomResources, 8);

  // The patch keeps every object as valid against its CRD as it was: the
  // LWS example that its CRD already refuses fails the same way, no more.
  const auto before = validateCustomResources(originals);
  const auto after = validateCustomResources(mutatedObjects);
  ASSERT_EQ(before.size(), mutatedObjects.size());
  for (const std::string& text : mutatedObjects) {
    const std::string key = keyOf(*parseJson(text));
    ASSERT_EQ(after.count(key), 1u) << key;
    EXPECT_EQ(after.at(key), before.at(key)) << key;
  }
  EXPECT_GE(
      std::count_if(after.begin(), after.end(), [](const auto& e) { return e.second == "ok"; }), 8);

  ASSERT_FALSE(children.empty());
  for (const std::string& child : children) {
    const auto pod = parseJson(child);
    SCOPED_TRACE(std::string(stringMember(member(pod.get(), "metadata"), "name")));
    const ReviewResponse response = parseReviewResponse(
        server.post("/mutate", makeReview(child, "CREATE", "c-" + std::to_string(uid++))).body);
    EXPECT_TRUE(response.allowed);
    EXPECT_EQ(response.patch, "") << "made from a mutated template, yet patched";
  }
}

}  // namespace
}  // namespace aiadmit
