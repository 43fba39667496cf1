// What the AI operators create from their custom resources, through both
// webhooks as the API server sends it: one case per parent (every operator
// example of the corpus and the hold-outs of tests/golden/children) and child.
//   - Children of the parent as aiadmit mutated it need nothing: an empty
//     patch, and allowed.
//   - Children of a parent created before aiadmit was installed get at most
//     the placement a GPU role lacks (tolerations, node selector, node
//     affinity, GPU limits), a child without GPUs nothing; none is refused.
//   - The updates operators and Kueue make (unsuspending with a node
//     selector, scaling) get an empty patch and are allowed.
#include <gtest/gtest.h>
#include <rapidjson/pointer.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <mutex>

#include "mutators/mutator.h"
#include "tests/support/operator_children.h"
#include "tests/support/test_support.h"
#include "webhook/codec/yaml_json.h"
#include "webhook/engine/engine.h"
#include "webhook/model/pod_reader.h"
#include "webhook/policy/profile_loader.h"

namespace aiadmit {
namespace {

using namespace testing;

// The name the API server gives an object created with generateName.
constexpr std::string_view kGeneratedSuffix = "h7c2k";

struct Parent {
  std::string label;  // readable and unique: Kind_name
  std::string json;
  std::string runtimeJson;  // a TrainJob's runtime, else empty
};

std::string sanitize(std::string_view text) {
  std::string out;
  for (char c : text) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

std::vector<std::shared_ptr<JsonDocument>> readManifests(const std::string& path) {
  std::vector<ManifestDocument> documents;
  std::string error;
  std::vector<std::shared_ptr<JsonDocument>> out;
  if (!parseManifests(readFile(path), documents, &error)) return out;
  for (ManifestDocument& document : documents) {
    if (isObject(document.json.get())) out.push_back(document.json);
  }
  return out;
}

void nameGenerated(JsonDocument& object) {
  JsonValue& metadata = ensureObject(object, "metadata", object.GetAllocator());
  if (!stringMember(&metadata, "name").empty()) return;
  setString(metadata, "name",
            std::string(stringMember(&metadata, "generateName")) + std::string(kGeneratedSuffix),
            object.GetAllocator());
}

void addParents(const std::string& path, const std::string& prefix, std::vector<Parent>& parents) {
  std::string runtime;
  auto documents = readManifests(path);
  for (const auto& doc : documents) {
    const std::string_view kind = stringMember(doc.get(), "kind");
    if (kind == "ClusterTrainingRuntime" || kind == "TrainingRuntime") runtime = toJson(*doc);
  }
  for (const auto& doc : documents) {
    if (!hasOperatorChildren(*doc)) continue;
    nameGenerated(*doc);
    const std::string kind(stringMember(doc.get(), "kind"));
    const std::string name(stringMember(member(doc.get(), "metadata"), "name"));
    parents.push_back(
        {sanitize(prefix + kind + "_" + name), toJson(*doc), kind == "TrainJob" ? runtime : ""});
  }
}

// Every operator example of the corpus (SOURCES.tsv) and the hold-outs.
const std::vector<Parent>& parents() {
  static const std::vector<Parent> all = [] {
    std::vector<Parent> list;
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::directory_iterator(corpusDir() + "/manifests"))
      files.push_back(entry.path().string());
    std::sort(files.begin(), files.end());
    for (const std::string& file : files) addParents(file, "", list);
    files.clear();
    for (const auto& entry :
         std::filesystem::directory_iterator(sourceDir() + "/tests/golden/children"))
      files.push_back(entry.path().string());
    std::sort(files.begin(), files.end());
    for (const std::string& file : files) addParents(file, "holdout_", list);
    return list;
  }();
  return all;
}

const Parent& parentNamed(const std::string& label) {
  for (const Parent& parent : parents()) {
    if (parent.label == label) return parent;
  }
  static const Parent none;
  ADD_FAILURE() << "no parent " << label;
  return none;
}

std::vector<OperatorChild> childrenOf(const std::string& parentJson, const std::string& runtime) {
  JsonDocument parent;
  parent.Parse(parentJson.c_str());
  JsonDocument runtimeDoc;
  if (!runtime.empty()) runtimeDoc.Parse(runtime.c_str());
  return operatorChildren(parent, runtime.empty() ? nullptr : &runtimeDoc);
}

const Engine& engine() {
  static const ProfileLoadResult loaded =
      loadProfileDirectory(sourceDir() + "/profiles", mutationSwitches());
  static const Engine shipped(loaded.set);
  return shipped;
}

ReviewResponse review(Endpoint endpoint, const std::string& object, std::string_view operation,
                      const std::string& oldObject = "") {
  static int uid = 0;
  const std::string body =
      makeReview(object, operation, "children-" + std::to_string(++uid), oldObject);
  return parseReviewResponse(answerReview(engine(), endpoint, body).body);
}

// The parent as stored after /mutate: the patch applied by kubectl, once.
std::string mutatedParent(const Parent& parent) {
  static std::mutex mutex;
  static std::map<std::string, std::string> cache;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto found = cache.find(parent.label); found != cache.end()) return found->second;
  const ReviewResponse response = review(Endpoint::Mutate, parent.json, "CREATE");
  EXPECT_TRUE(response.allowed) << parent.label << ": " << response.message;
  std::string mutated = parent.json;
  if (!response.patch.empty()) mutated = applyPatch(parent.json, response.patch);
  return cache[parent.label] = mutated.empty() ? parent.json : mutated;
}

struct ChildCase {
  std::string parent;
  size_t index = 0;
  std::string role;
};

void PrintTo(const ChildCase& param, std::ostream* out) {
  *out << param.parent << " / " << param.role;
}

std::vector<ChildCase> childCases() {
  std::vector<ChildCase> cases;
  for (const Parent& parent : parents()) {
    const auto children = childrenOf(parent.json, parent.runtimeJson);
    for (size_t i = 0; i < children.size(); ++i)
      cases.push_back({parent.label, i, children[i].role});
  }
  return cases;
}

std::string childCaseName(const ::testing::TestParamInfo<ChildCase>& info) {
  return sanitize(info.param.parent + "__" + info.param.role);
}

bool asksForGpus(const JsonValue* podSpec) {
  bool asks = false;
  PodReader(nullptr, nullptr, podSpec).forEachResource([&](const ResourceEntry& entry) {
    asks = asks || entry.name == "nvidia.com/gpu";
  });
  return asks;
}

bool isPodSpec(const JsonValue* value) {
  return isArray(member(value, "containers"));
}

// Every PodSpec of the object: a Pod's spec, a controller's template, a
// RayCluster's head and worker templates.
void collectPodSpecs(const JsonValue* value, std::vector<const JsonValue*>& specs) {
  if (isPodSpec(value)) specs.push_back(value);
  if (value == nullptr) return;
  if (value->IsObject()) {
    for (const auto& entry : value->GetObject()) {
      if (!isPodSpec(value) || std::string_view(entry.name.GetString()) != "containers")
        collectPodSpecs(&entry.value, specs);
    }
  } else if (value->IsArray()) {
    for (const JsonValue& item : value->GetArray()) collectPodSpecs(&item, specs);
  }
}

bool childAsksForGpus(const JsonValue& child) {
  std::vector<const JsonValue*> specs;
  collectPodSpecs(member(&child, "spec"), specs);
  for (const JsonValue* spec : specs) {
    if (asksForGpus(spec)) return true;
  }
  return false;
}

std::vector<std::string> pointerTokens(std::string_view path) {
  std::vector<std::string> tokens;
  size_t start = 1;
  while (start <= path.size()) {
    const size_t end = std::min(path.find('/', start), path.size());
    std::string token(path.substr(start, end - start));
    for (size_t at; (at = token.find("~1")) != std::string::npos;) token.replace(at, 2, "/");
    for (size_t at; (at = token.find("~0")) != std::string::npos;) token.replace(at, 2, "~");
    tokens.push_back(token);
    start = end + 1;
  }
  return tokens;
}

bool onlyGpuKeys(const JsonValue& value) {
  if (!value.IsObject() || value.ObjectEmpty()) return false;
  for (const auto& entry : value.GetObject()) {
    if (std::string_view(entry.name.GetString()) != "nvidia.com/gpu") return false;
  }
  return true;
}

// "" when the operation only places a GPU PodSpec on the pool; else why not.
std::string placementProblem(const JsonValue& child, const JsonValue& op) {
  const std::vector<std::string> tokens = pointerTokens(stringMember(&op, "path"));
  const JsonValue* at = &child;
  const JsonValue* podSpec = nullptr;
  size_t rest = 0;
  for (size_t i = 0; i < tokens.size() && at != nullptr; ++i) {
    if (isPodSpec(at)) podSpec = at, rest = i;
    at = at->IsArray() ? (std::all_of(tokens[i].begin(), tokens[i].end(), ::isdigit) &&
                                  std::stoul(tokens[i]) < at->Size()
                              ? &(*at)[static_cast<rapidjson::SizeType>(std::stoul(tokens[i]))]
                              : nullptr)
                       : member(at, tokens[i]);
  }
  if (podSpec == nullptr) return "outside every pod template";
  if (!asksForGpus(podSpec)) return "in a pod template that asks for no GPU";
  const std::vector<std::string> field(tokens.begin() + static_cast<long>(rest), tokens.end());
  const JsonValue* value = member(&op, "value");
  if (field[0] == "tolerations" || field[0] == "nodeSelector") return "";
  if (field[0] == "affinity") {
    if (field.size() > 1) return field[1] == "nodeAffinity" ? "" : "not node affinity";
    return value != nullptr && value->IsObject() && value->MemberCount() == 1 &&
                   member(value, "nodeAffinity") != nullptr
               ? ""
               : "affinity beyond node affinity";
  }
  const bool limits = field.size() >= 4 && field[0] == "containers" && field[2] == "resources" &&
                      field[3] == "limits";
  if (limits && field.size() == 5 && field[4] == "nvidia.com/gpu") return "";
  if (limits && field.size() == 4 && value != nullptr && onlyGpuKeys(*value)) return "";
  return "not GPU placement";
}

std::string describe(const OperatorChild& child, const JsonValue& object) {
  const JsonValue* metadata = member(&object, "metadata");
  std::string name(stringMember(metadata, "name"));
  if (name.empty()) name = std::string(stringMember(metadata, "generateName")) + "*";
  return std::string(stringMember(&object, "kind")) + " " + name + " (role " + child.role + ")";
}

class OperatorChildrenOfMutatedParent : public ::testing::TestWithParam<ChildCase> {};
class OperatorChildrenOfUnmutatedParent : public ::testing::TestWithParam<ChildCase> {};

TEST_P(OperatorChildrenOfMutatedParent, NeedNoPatchAndAreAllowed) {
  const ChildCase& param = GetParam();
  const Parent& parent = parentNamed(param.parent);
  const auto children = childrenOf(mutatedParent(parent), parent.runtimeJson);
  ASSERT_LT(param.index, children.size());
  const OperatorChild& child = children[param.index];
  ASSERT_EQ(child.role, param.role) << "the mutation changed the operator's children";
  const auto object = parseJson(child.json);
  const std::string who = describe(child, *object) + " of the mutated " + param.parent;

  const ReviewResponse mutated = review(Endpoint::Mutate, child.json, "CREATE");
  EXPECT_TRUE(mutated.allowed) << who << ": /mutate refused it: " << mutated.message;
  EXPECT_EQ(mutated.patch, "") << who << " got a patch:\n" << mutated.patch;
  const ReviewResponse validated = review(Endpoint::Validate, child.json, "CREATE");
  EXPECT_TRUE(validated.allowed) << who << ": /validate refused it: " << validated.message;
}

TEST_P(OperatorChildrenOfUnmutatedParent, GetOnlyTheGpuPlacementTheirRoleLacks) {
  const ChildCase& param = GetParam();
  const Parent& parent = parentNamed(param.parent);
  const auto children = childrenOf(parent.json, parent.runtimeJson);
  ASSERT_LT(param.index, children.size());
  const OperatorChild& child = children[param.index];
  const auto object = parseJson(child.json);
  const std::string who = describe(child, *object) + " of " + param.parent + " made before aiadmit";

  const ReviewResponse mutated = review(Endpoint::Mutate, child.json, "CREATE");
  ASSERT_TRUE(mutated.allowed) << who << ": /mutate refused it: " << mutated.message;
  std::string admitted = child.json;
  if (!childAsksForGpus(*object)) {
    EXPECT_EQ(mutated.patch, "") << who << " asks for no GPU, yet got a patch:\n" << mutated.patch;
  } else if (!mutated.patch.empty()) {
    const auto patch = parseJson(mutated.patch);
    ASSERT_TRUE(patch->IsArray()) << mutated.patch;
    for (const JsonValue& op : patch->GetArray()) {
      const std::string problem = placementProblem(*object, op);
      EXPECT_EQ(problem, "") << who << ": " << toJson(op) << " is " << problem << "; whole patch:\n"
                             << mutated.patch;
    }
    admitted = applyPatch(child.json, mutated.patch);
    ASSERT_FALSE(admitted.empty());
  }
  const ReviewResponse validated = review(Endpoint::Validate, admitted, "CREATE");
  EXPECT_TRUE(validated.allowed) << who << ": /validate refused it: " << validated.message;
}

INSTANTIATE_TEST_SUITE_P(OperatorChildren, OperatorChildrenOfMutatedParent,
                         ::testing::ValuesIn(childCases()), childCaseName);
INSTANTIATE_TEST_SUITE_P(OperatorChildren, OperatorChildrenOfUnmutatedParent,
                         ::testing::ValuesIn(childCases()), childCaseName);

TEST(OperatorChildrenCorpus, EveryOperatorOfTheTableHasAParentWithChildren) {
  std::map<std::string, size_t> children;
  for (const Parent& parent : parents()) {
    const auto doc = parseJson(parent.json);
    children[std::string(stringMember(doc.get(), "kind"))] +=
        childrenOf(parent.json, parent.runtimeJson).size();
  }
  for (const char* kind :
       {"PyTorchJob", "PaddleJob", "MPIJob", "TrainJob", "RayJob", "RayService", "LeaderWorkerSet",
        "JobSet", "Job", "InferenceService", "LLMInferenceService"}) {
    EXPECT_GT(children[kind], 0u) << kind;
  }
}

// An update an operator or Kueue makes to an object aiadmit admitted: `from`
// names the object (the parent, or the role of one of its children), the
// edits are JSON Pointers set to new values.
struct UpdateCase {
  std::string name;
  std::string parent;
  std::string from;                                        // "" for the parent itself
  std::vector<std::pair<std::string, std::string>> edits;  // pointer -> JSON value
};

void PrintTo(const UpdateCase& param, std::ostream* out) {
  *out << param.name;
}

std::vector<UpdateCase> updateCases() {
  const std::string gpuJobSet = "holdout_JobSet_queued";
  return {
      {"KueueUnsuspendsAJobSet",
       gpuJobSet,
       "",
       {{"/spec/suspend", "false"},
        {"/spec/replicatedJobs/0/template/spec/template/spec/nodeSelector/instance-type",
         "\"on-demand\""},
        {"/spec/replicatedJobs/1/template/spec/template/spec/nodeSelector/instance-type",
         "\"on-demand\""}}},
      {"DeploymentReplicas",
       "holdout_InferenceService_torchserve_bert",
       "predictor-deployment",
       {{"/spec/replicas", "3"}}},
      {"StatefulSetReplicas",
       "LeaderWorkerSet_vllm",
       "leader-statefulset",
       {{"/spec/replicas", "3"}}},
      {"RayClusterWorkerReplicas",
       "RayJob_rayjob_pytorch_mnist",
       "raycluster",
       {{"/spec/workerGroupSpecs/0/replicas", "3"}}},
      {"RayServiceClusterWorkerReplicas",
       "holdout_RayService_text_summarizer",
       "raycluster",
       {{"/spec/workerGroupSpecs/0/replicas", "3"}}},
      {"LeaderWorkerSetReplicas", "LeaderWorkerSet_vllm", "", {{"/spec/replicas", "3"}}},
      {"InferenceServiceMinMaxReplicas",
       "holdout_InferenceService_torchserve_bert",
       "",
       {{"/spec/predictor/minReplicas", "2"}, {"/spec/predictor/maxReplicas", "5"}}},
      {"LLMInferenceServiceReplicas",
       "LLMInferenceService_qwen3_coder_tool_calling",
       "",
       {{"/spec/replicas", "2"}}},
      {"PyTorchJobWorkerReplicas",
       "PyTorchJob_pytorch_deepspeed_demo",
       "",
       {{"/spec/pytorchReplicaSpecs/Worker/replicas", "2"}}},
      {"VolcanoTaskReplicas", "Job_mindspore_gpu", "", {{"/spec/tasks/1/replicas", "3"}}},
  };
}

class OperatorChildrenUpdates : public ::testing::TestWithParam<UpdateCase> {};

TEST_P(OperatorChildrenUpdates, GetNoPatchAndAreAllowed) {
  const UpdateCase& param = GetParam();
  const Parent& parent = parentNamed(param.parent);
  ASSERT_FALSE(parent.json.empty());
  std::string before = mutatedParent(parent);
  if (!param.from.empty()) {
    before.clear();
    for (const OperatorChild& child : childrenOf(mutatedParent(parent), parent.runtimeJson)) {
      if (child.role == param.from) before = child.json;
    }
    ASSERT_FALSE(before.empty()) << param.parent << " has no child " << param.from;
  }
  JsonDocument after;
  after.Parse(before.c_str());
  for (const auto& [pointer, value] : param.edits) {
    JsonDocument parsed;
    parsed.Parse(value.c_str());
    ASSERT_FALSE(parsed.HasParseError()) << value;
    const rapidjson::Pointer where(pointer.c_str());
    ASSERT_TRUE(where.IsValid()) << pointer;
    const JsonValue* current = where.Get(after);
    ASSERT_TRUE(current == nullptr || *current != parsed) << pointer << " already holds " << value;
    where.Set(after, JsonValue(parsed, after.GetAllocator()));
  }
  const std::string updated = toJson(after);
  const std::string who =
      param.name + " (" + param.parent + (param.from.empty() ? "" : ", child " + param.from) + ")";

  const ReviewResponse mutated = review(Endpoint::Mutate, updated, "UPDATE", before);
  EXPECT_TRUE(mutated.allowed) << who << ": /mutate refused it: " << mutated.message;
  EXPECT_EQ(mutated.patch, "") << who << " got a patch:\n" << mutated.patch;
  const ReviewResponse validated = review(Endpoint::Validate, updated, "UPDATE", before);
  EXPECT_TRUE(validated.allowed) << who << ": /validate refused it: " << validated.message;
}

INSTANTIATE_TEST_SUITE_P(OperatorChildren, OperatorChildrenUpdates,
                         ::testing::ValuesIn(updateCases()),
                         [](const ::testing::TestParamInfo<UpdateCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace aiadmit
