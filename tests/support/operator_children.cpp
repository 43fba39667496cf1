#include "tests/support/operator_children.h"

#include <openssl/evp.h>

#include <cstdio>
#include <functional>

#include "tests/support/operator_children_parts.h"

namespace aiadmit::testing {
namespace children {

std::string nameOf(const JsonValue& object) {
  return std::string(stringMember(member(&object, "metadata"), "name"));
}

std::string namespaceOf(const JsonValue& object) {
  const std::string_view ns = stringMember(member(&object, "metadata"), "namespace");
  return ns.empty() ? "default" : std::string(ns);
}

std::string uidOf(const JsonValue& object) {
  const std::string_view uid = stringMember(member(&object, "metadata"), "uid");
  if (!uid.empty()) return std::string(uid);
  const std::string key = std::string(stringMember(&object, "kind")) + "/" + nameOf(object);
  const std::string hex = sha1Hex(key);
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" +
         hex.substr(16, 4) + "-" + hex.substr(20, 12);
}

std::string sha1Hex(std::string_view text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(text.data(), text.size(), digest, &size, EVP_sha1(), nullptr);
  std::string hex;
  char byte[3];
  for (unsigned int i = 0; i < size; ++i) {
    std::snprintf(byte, sizeof byte, "%02x", digest[i]);
    hex += byte;
  }
  return hex;
}

JsonValue copyObject(const JsonValue* value, JsonAllocator& alloc) {
  if (!isObject(value)) return JsonValue(rapidjson::kObjectType);
  return JsonValue(*value, alloc);
}

void startObject(JsonDocument& doc, std::string_view apiVersion, std::string_view kind,
                 std::string_view name, std::string_view ns, bool generated) {
  auto& alloc = doc.GetAllocator();
  doc.SetObject();
  setString(doc, "apiVersion", apiVersion, alloc);
  setString(doc, "kind", kind, alloc);
  JsonValue metadata(rapidjson::kObjectType);
  setString(metadata, generated ? "generateName" : "name", name, alloc);
  setString(metadata, "namespace", ns, alloc);
  doc.AddMember("metadata", metadata, alloc);
}

void setControllerOf(JsonValue& object, const JsonValue& owner, JsonAllocator& alloc) {
  JsonValue ref(rapidjson::kObjectType);
  setString(ref, "apiVersion", stringMember(&owner, "apiVersion"), alloc);
  setString(ref, "kind", stringMember(&owner, "kind"), alloc);
  setString(ref, "name", nameOf(owner), alloc);
  setString(ref, "uid", uidOf(owner), alloc);
  ref.AddMember("controller", true, alloc);
  ref.AddMember("blockOwnerDeletion", true, alloc);
  JsonValue owners(rapidjson::kArrayType);
  owners.PushBack(ref, alloc);
  setMember(ensureObject(object, "metadata", alloc), "ownerReferences", std::move(owners), alloc);
}

namespace {

void putEntries(JsonValue& metaHolder, std::string_view key, const Labels& entries,
                JsonAllocator& alloc) {
  JsonValue& map = ensureObject(ensureObject(metaHolder, "metadata", alloc), key, alloc);
  for (const auto& [name, value] : entries) setString(map, name, value, alloc);
}

}  // namespace

void putLabels(JsonValue& metaHolder, const Labels& labels, JsonAllocator& alloc) {
  putEntries(metaHolder, "labels", labels, alloc);
}

void putAnnotations(JsonValue& metaHolder, const Labels& annotations, JsonAllocator& alloc) {
  putEntries(metaHolder, "annotations", annotations, alloc);
}

void mergeMap(JsonValue& metaHolder, std::string_view key, const JsonValue* from,
              JsonAllocator& alloc) {
  if (!isObject(from)) return;
  Labels entries;
  for (const auto& entry : from->GetObject()) {
    if (entry.value.IsString())
      entries.emplace_back(entry.name.GetString(), entry.value.GetString());
  }
  putEntries(metaHolder, key, entries, alloc);
}

JsonValue* containerNamed(JsonValue& podSpec, std::string_view name) {
  JsonValue* containers = member(&podSpec, "containers");
  if (!isArray(containers) || containers->Empty()) return nullptr;
  for (JsonValue& container : containers->GetArray()) {
    if (stringMember(&container, "name") == name) return &container;
  }
  return &(*containers)[0];
}

void appendEnv(JsonValue& container, std::string_view name, std::string_view value,
               JsonAllocator& alloc) {
  JsonValue& env = ensureArray(container, "env", alloc);
  for (const JsonValue& entry : env.GetArray()) {
    if (stringMember(&entry, "name") == name) return;
  }
  JsonValue variable(rapidjson::kObjectType);
  setString(variable, "name", name, alloc);
  setString(variable, "value", value, alloc);
  env.PushBack(variable, alloc);
}

namespace {

void setIfAbsent(JsonValue& object, std::string_view key, JsonValue&& value, JsonAllocator& alloc) {
  if (member(&object, key) == nullptr) setMember(object, key, std::move(value), alloc);
}

void setStringIfAbsent(JsonValue& object, std::string_view key, std::string_view value,
                       JsonAllocator& alloc) {
  if (member(&object, key) == nullptr) setString(object, key, value, alloc);
}

// Images without a tag or tagged :latest are pulled Always, others IfNotPresent.
std::string_view pullPolicyFor(std::string_view image) {
  const size_t slash = image.rfind('/');
  const std::string_view last = slash == std::string_view::npos ? image : image.substr(slash);
  if (last.find('@') != std::string_view::npos) return "IfNotPresent";
  const size_t colon = last.find(':');
  if (colon == std::string_view::npos || last.substr(colon + 1) == "latest") return "Always";
  return "IfNotPresent";
}

void defaultContainers(JsonValue& podSpec, std::string_view key, JsonAllocator& alloc) {
  JsonValue* containers = member(&podSpec, key);
  if (!isArray(containers)) return;
  for (JsonValue& container : containers->GetArray()) {
    setStringIfAbsent(container, "terminationMessagePath", "/dev/termination-log", alloc);
    setStringIfAbsent(container, "terminationMessagePolicy", "File", alloc);
    setStringIfAbsent(container, "imagePullPolicy",
                      pullPolicyFor(stringMember(&container, "image")), alloc);
    if (JsonValue* ports = member(&container, "ports"); isArray(ports)) {
      for (JsonValue& port : ports->GetArray()) setStringIfAbsent(port, "protocol", "TCP", alloc);
    }
  }
}

}  // namespace

void defaultPodSpec(JsonValue& podSpec, JsonAllocator& alloc) {
  setStringIfAbsent(podSpec, "restartPolicy", "Always", alloc);
  setStringIfAbsent(podSpec, "dnsPolicy", "ClusterFirst", alloc);
  setStringIfAbsent(podSpec, "schedulerName", "default-scheduler", alloc);
  setIfAbsent(podSpec, "terminationGracePeriodSeconds", JsonValue(30), alloc);
  setIfAbsent(podSpec, "securityContext", JsonValue(rapidjson::kObjectType), alloc);
  defaultContainers(podSpec, "initContainers", alloc);
  defaultContainers(podSpec, "containers", alloc);
}

void defaultPod(JsonDocument& pod) {
  auto& alloc = pod.GetAllocator();
  JsonValue& spec = ensureObject(pod, "spec", alloc);
  defaultPodSpec(spec, alloc);
  setStringIfAbsent(spec, "serviceAccountName", "default", alloc);
  // The Priority admission plugin resolves the class before the webhooks;
  // the value matters to no rule here, only its presence.
  setIfAbsent(spec, "priority", JsonValue(member(&spec, "priorityClassName") ? 1000 : 0), alloc);
  JsonValue& tolerations = ensureArray(spec, "tolerations", alloc);
  for (const char* key : {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"}) {
    JsonValue toleration(rapidjson::kObjectType);
    setString(toleration, "key", key, alloc);
    setString(toleration, "operator", "Exists", alloc);
    setString(toleration, "effect", "NoExecute", alloc);
    toleration.AddMember("tolerationSeconds", 300, alloc);
    tolerations.PushBack(toleration, alloc);
  }
}

void defaultJob(JsonDocument& job) {
  auto& alloc = job.GetAllocator();
  JsonValue& spec = ensureObject(job, "spec", alloc);
  setIfAbsent(spec, "parallelism", JsonValue(1), alloc);
  const JsonValue* parallelism = member(&spec, "parallelism");
  setIfAbsent(spec, "completions", JsonValue(parallelism->GetInt()), alloc);
  setIfAbsent(spec, "backoffLimit", JsonValue(6), alloc);
  setStringIfAbsent(spec, "completionMode", "NonIndexed", alloc);
  setIfAbsent(spec, "suspend", JsonValue(false), alloc);
  setStringIfAbsent(spec, "podReplacementPolicy", "TerminatingOrFailed", alloc);
  defaultPodSpec(ensureObject(ensureObject(spec, "template", alloc), "spec", alloc), alloc);
}

void defaultDeployment(JsonDocument& deployment) {
  auto& alloc = deployment.GetAllocator();
  JsonValue& spec = ensureObject(deployment, "spec", alloc);
  setIfAbsent(spec, "replicas", JsonValue(1), alloc);
  setIfAbsent(spec, "revisionHistoryLimit", JsonValue(10), alloc);
  setIfAbsent(spec, "progressDeadlineSeconds", JsonValue(600), alloc);
  if (member(&spec, "strategy") == nullptr) {
    JsonValue rolling(rapidjson::kObjectType);
    setString(rolling, "maxUnavailable", "25%", alloc);
    setString(rolling, "maxSurge", "25%", alloc);
    JsonValue strategy(rapidjson::kObjectType);
    setString(strategy, "type", "RollingUpdate", alloc);
    strategy.AddMember("rollingUpdate", rolling, alloc);
    spec.AddMember("strategy", strategy, alloc);
  }
  defaultPodSpec(ensureObject(ensureObject(spec, "template", alloc), "spec", alloc), alloc);
}

void defaultStatefulSet(JsonDocument& statefulSet) {
  auto& alloc = statefulSet.GetAllocator();
  JsonValue& spec = ensureObject(statefulSet, "spec", alloc);
  setIfAbsent(spec, "replicas", JsonValue(1), alloc);
  setIfAbsent(spec, "revisionHistoryLimit", JsonValue(10), alloc);
  setStringIfAbsent(spec, "podManagementPolicy", "OrderedReady", alloc);
  if (member(&spec, "updateStrategy") == nullptr) {
    JsonValue rolling(rapidjson::kObjectType);
    rolling.AddMember("partition", 0, alloc);
    JsonValue strategy(rapidjson::kObjectType);
    setString(strategy, "type", "RollingUpdate", alloc);
    strategy.AddMember("rollingUpdate", rolling, alloc);
    spec.AddMember("updateStrategy", strategy, alloc);
  }
  defaultPodSpec(ensureObject(ensureObject(spec, "template", alloc), "spec", alloc), alloc);
}

JsonDocument podFromTemplate(const JsonValue& templ, const JsonValue& owner, std::string_view name,
                             bool generated) {
  JsonDocument pod;
  startObject(pod, "v1", "Pod", name, namespaceOf(owner), generated);
  auto& alloc = pod.GetAllocator();
  const JsonValue* metadata = member(&templ, "metadata");
  mergeMap(pod, "labels", member(metadata, "labels"), alloc);
  mergeMap(pod, "annotations", member(metadata, "annotations"), alloc);
  setControllerOf(pod, owner, alloc);
  pod.AddMember("spec", copyObject(member(&templ, "spec"), alloc), alloc);
  defaultPod(pod);
  return pod;
}

OperatorChild childOf(std::string role, const JsonValue& object) {
  return OperatorChild{std::move(role), toJson(object)};
}

void append(std::vector<OperatorChild>& into, std::vector<OperatorChild> more) {
  for (OperatorChild& child : more) into.push_back(std::move(child));
}

}  // namespace children

using namespace children;

// The Job controller's Pods: the template's labels (with the selector labels
// the API server put on the stored template), its annotations, owned by the
// Job; an Indexed Job's Pods carry their completion index and, with a
// subdomain, the hostname JobSet's DNS relies on.
std::vector<OperatorChild> jobPods(const JsonValue& job) {
  std::vector<OperatorChild> pods;
  const JsonValue* spec = member(&job, "spec");
  const JsonValue* templ = member(spec, "template");
  if (!isObject(templ)) return pods;
  const JsonValue* parallelism = member(spec, "parallelism");
  const int count = parallelism != nullptr && parallelism->IsInt() ? parallelism->GetInt() : 1;
  const bool indexed = stringMember(spec, "completionMode") == "Indexed";
  const std::string uid = uidOf(job);
  for (int index = 0; index < count; ++index) {
    JsonDocument pod = podFromTemplate(*templ, job, nameOf(job) + "-", true);
    auto& alloc = pod.GetAllocator();
    putLabels(pod,
              {{"batch.kubernetes.io/controller-uid", uid},
               {"batch.kubernetes.io/job-name", nameOf(job)},
               {"controller-uid", uid},
               {"job-name", nameOf(job)}},
              alloc);
    if (indexed) {
      putLabels(pod, {{"batch.kubernetes.io/job-completion-index", std::to_string(index)}}, alloc);
      putAnnotations(pod, {{"batch.kubernetes.io/job-completion-index", std::to_string(index)}},
                     alloc);
      JsonValue& podSpec = pod["spec"];
      if (member(&podSpec, "subdomain") != nullptr) {
        setString(podSpec, "hostname", nameOf(job) + "-" + std::to_string(index), alloc);
      }
    }
    pods.push_back(childOf("pod-" + std::to_string(index), pod));
  }
  return pods;
}

namespace {

struct Builder {
  std::string_view group;
  std::string_view kind;
  std::function<std::vector<OperatorChild>(const JsonValue&, const JsonValue*)> build;
};

const std::vector<Builder>& builders() {
  static const std::vector<Builder> table = {
      {"kubeflow.org", "PyTorchJob", [](auto& p, auto*) { return trainingOperatorChildren(p); }},
      {"kubeflow.org", "TFJob", [](auto& p, auto*) { return trainingOperatorChildren(p); }},
      {"kubeflow.org", "PaddleJob", [](auto& p, auto*) { return trainingOperatorChildren(p); }},
      {"kubeflow.org", "MPIJob", [](auto& p, auto*) { return mpiJobChildren(p); }},
      {"trainer.kubeflow.org", "TrainJob",
       [](auto& p, auto* runtime) {
         return runtime ? trainJobChildren(p, *runtime) : std::vector<OperatorChild>{};
       }},
      {"ray.io", "RayCluster", [](auto& p, auto*) { return rayClusterChildren(p); }},
      {"ray.io", "RayJob", [](auto& p, auto*) { return rayJobChildren(p); }},
      {"ray.io", "RayService", [](auto& p, auto*) { return rayServiceChildren(p); }},
      {"leaderworkerset.x-k8s.io", "LeaderWorkerSet",
       [](auto& p, auto*) { return leaderWorkerSetChildren(p); }},
      {"jobset.x-k8s.io", "JobSet", [](auto& p, auto*) { return jobSetChildren(p); }},
      {"batch.volcano.sh", "Job", [](auto& p, auto*) { return volcanoJobChildren(p); }},
      {"serving.kserve.io", "InferenceService",
       [](auto& p, auto*) { return inferenceServiceChildren(p); }},
      {"serving.kserve.io", "LLMInferenceService",
       [](auto& p, auto*) { return llmInferenceServiceChildren(p); }},
  };
  return table;
}

const Builder* builderFor(const JsonValue& parent) {
  const std::string_view apiVersion = stringMember(&parent, "apiVersion");
  const std::string_view group = apiVersion.substr(0, apiVersion.find('/'));
  for (const Builder& builder : builders()) {
    if (builder.group == group && builder.kind == stringMember(&parent, "kind")) return &builder;
  }
  return nullptr;
}

}  // namespace

bool hasOperatorChildren(const JsonValue& parent) {
  return builderFor(parent) != nullptr;
}

std::vector<OperatorChild> operatorChildren(const JsonValue& parent, const JsonValue* runtime) {
  const Builder* builder = builderFor(parent);
  return builder == nullptr ? std::vector<OperatorChild>{} : builder->build(parent, runtime);
}

}  // namespace aiadmit::testing
