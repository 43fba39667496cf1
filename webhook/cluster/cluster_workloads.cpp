// The Pods and Kueue Workloads of the view, as `explain` reads them: a copy
// of the fields it reads and nothing else (no env, commands, volumes,
// managedFields or images), and only for Pods that ask for accelerators or
// belong to a PodGroup of Kubernetes' own, so that a watch of all Pods keeps
// the GPU Pods' few fields alone.
#include "webhook/cluster/cluster_workloads.h"

#include "webhook/model/pod_reader.h"
#include "webhook/model/scheduling.h"

namespace aiadmit {

namespace {

void copyMember(const JsonValue& from, JsonValue& to, std::string_view key, JsonAllocator& alloc) {
  const JsonValue* value = member(&from, key);
  if (value == nullptr) return;
  setMember(to, key, JsonValue(*value, alloc), alloc);
}

void copyMembers(const JsonValue& from, JsonValue& to, std::initializer_list<std::string_view> keys,
                 JsonAllocator& alloc) {
  for (const std::string_view key : keys) copyMember(from, to, key, alloc);
}

// Each container's name, resources and restartPolicy (a sidecar's), which
// decide what the Pod asks of a node.
void copyContainers(const JsonValue& spec, JsonValue& to, std::string_view list,
                    JsonAllocator& alloc) {
  const JsonValue* containers = member(&spec, list);
  if (!isArray(containers)) return;
  JsonValue copies(rapidjson::kArrayType);
  for (const JsonValue& container : containers->GetArray()) {
    if (!container.IsObject()) continue;
    JsonValue copy(rapidjson::kObjectType);
    copyMembers(container, copy, {"name", "resources", "restartPolicy"}, alloc);
    copies.PushBack(std::move(copy), alloc);
  }
  setMember(to, list, std::move(copies), alloc);
}

JsonValue slimMetadata(const JsonValue* metadata, JsonAllocator& alloc) {
  JsonValue copy(rapidjson::kObjectType);
  if (metadata == nullptr) return copy;
  copyMembers(*metadata, copy,
              {"name", "namespace", "labels", "ownerReferences", "creationTimestamp"}, alloc);
  const JsonValue* index =
      member(member(metadata, "annotations"), "batch.kubernetes.io/job-completion-index");
  if (index != nullptr) {
    JsonValue annotations(rapidjson::kObjectType);
    setMember(annotations, "batch.kubernetes.io/job-completion-index", JsonValue(*index, alloc),
              alloc);
    setMember(copy, "annotations", std::move(annotations), alloc);
  }
  return copy;
}

JsonValue slimPodSpec(const JsonValue* spec, JsonAllocator& alloc) {
  JsonValue copy(rapidjson::kObjectType);
  if (!isObject(spec)) return copy;
  copyContainers(*spec, copy, "initContainers", alloc);
  copyContainers(*spec, copy, "containers", alloc);
  copyMembers(*spec, copy,
              {"nodeName", "nodeSelector", "tolerations", "priority", "priorityClassName",
               "preemptionPolicy", "schedulingGates", "resourceClaims", "schedulerName",
               "schedulingGroup", "workloadRef"},
              alloc);
  const JsonValue* nodeAffinity = member(member(spec, "affinity"), "nodeAffinity");
  if (nodeAffinity != nullptr) {
    JsonValue affinity(rapidjson::kObjectType);
    setMember(affinity, "nodeAffinity", JsonValue(*nodeAffinity, alloc), alloc);
    setMember(copy, "affinity", std::move(affinity), alloc);
  }
  return copy;
}

std::shared_ptr<JsonDocument> slimPod(const JsonValue& pod) {
  auto document = std::make_shared<JsonDocument>();
  document->SetObject();
  JsonAllocator& alloc = document->GetAllocator();
  setString(*document, "apiVersion", "v1", alloc);
  setString(*document, "kind", "Pod", alloc);
  setMember(*document, "metadata", slimMetadata(member(&pod, "metadata"), alloc), alloc);
  setMember(*document, "spec", slimPodSpec(member(&pod, "spec"), alloc), alloc);
  const JsonValue* status = member(&pod, "status");
  JsonValue slimStatus(rapidjson::kObjectType);
  if (isObject(status)) {
    copyMembers(*status, slimStatus, {"phase", "resourceClaimStatuses"}, alloc);
    const JsonValue* scheduled = elementWith(member(status, "conditions"), "type", "PodScheduled");
    if (scheduled != nullptr) {
      JsonValue conditions(rapidjson::kArrayType);
      conditions.PushBack(JsonValue(*scheduled, alloc), alloc);
      setMember(slimStatus, "conditions", std::move(conditions), alloc);
    }
  }
  setMember(*document, "status", std::move(slimStatus), alloc);
  return document;
}

std::shared_ptr<JsonDocument> slimWorkload(const JsonValue& workload, std::string_view apiVersion) {
  auto document = std::make_shared<JsonDocument>();
  document->SetObject();
  JsonAllocator& alloc = document->GetAllocator();
  setString(*document, "apiVersion", apiVersion, alloc);
  setString(*document, "kind", "Workload", alloc);
  setMember(*document, "metadata", slimMetadata(member(&workload, "metadata"), alloc), alloc);
  const JsonValue* spec = member(&workload, "spec");
  JsonValue slimSpec(rapidjson::kObjectType);
  if (isObject(spec)) {
    copyMembers(*spec, slimSpec, {"queueName", "active", "priority"}, alloc);
    const JsonValue* podSets = member(spec, "podSets");
    JsonValue sets(rapidjson::kArrayType);
    for (rapidjson::SizeType i = 0; isArray(podSets) && i < podSets->Size(); ++i) {
      const JsonValue& podSet = (*podSets)[i];
      JsonValue set(rapidjson::kObjectType);
      copyMembers(podSet, set, {"name", "count"}, alloc);
      JsonValue podTemplate(rapidjson::kObjectType);
      setMember(podTemplate, "spec",
                slimPodSpec(member(member(&podSet, "template"), "spec"), alloc), alloc);
      setMember(set, "template", std::move(podTemplate), alloc);
      sets.PushBack(std::move(set), alloc);
    }
    setMember(slimSpec, "podSets", std::move(sets), alloc);
  }
  setMember(*document, "spec", std::move(slimSpec), alloc);
  const JsonValue* conditions = member(member(&workload, "status"), "conditions");
  JsonValue slimStatus(rapidjson::kObjectType);
  if (isArray(conditions)) {
    JsonValue kept(rapidjson::kArrayType);
    for (const JsonValue& condition : conditions->GetArray()) {
      JsonValue copy(rapidjson::kObjectType);
      copyMembers(condition, copy, {"type", "status", "reason", "message", "lastTransitionTime"},
                  alloc);
      kept.PushBack(std::move(copy), alloc);
    }
    setMember(slimStatus, "conditions", std::move(kept), alloc);
  }
  setMember(*document, "status", std::move(slimStatus), alloc);
  return document;
}

}  // namespace

bool readPodRecord(const JsonValue& pod, std::string namespaceName, std::string name,
                   PodRecord& out) {
  const JsonValue* metadata = member(&pod, "metadata");
  const JsonValue* spec = member(&pod, "spec");
  const PodReader reader(metadata, metadata, spec);
  // A PodGroup's Pods that ask for no GPU count toward its minCount all the
  // same: `explain` needs them to tell what holds the group's GPU Pods.
  if (!reader.asksForAccelerator() && !isArray(member(spec, "resourceClaims")) &&
      podGroupOf(spec).empty()) {
    return false;
  }
  out = PodRecord{std::move(namespaceName), std::move(name), slimPod(pod)};
  return true;
}

QueueWorkloadRecord readQueueWorkloadRecord(const JsonValue& workload, std::string_view apiVersion,
                                            std::string namespaceName, std::string name) {
  return QueueWorkloadRecord{std::move(namespaceName), std::move(name),
                             slimWorkload(workload, apiVersion)};
}

std::vector<AllocatedDevice> allocatedDevices(const JsonValue& claim, bool& allocated) {
  std::vector<AllocatedDevice> devices;
  const JsonValue* allocation = member(member(&claim, "status"), "allocation");
  allocated = isObject(allocation);
  const JsonValue* results = member(member(allocation, "devices"), "results");
  if (!isArray(results)) return devices;
  for (const JsonValue& result : results->GetArray()) {
    devices.push_back({std::string(stringMember(&result, "driver")),
                       std::string(stringMember(&result, "pool")),
                       std::string(stringMember(&result, "device"))});
  }
  return devices;
}

}  // namespace aiadmit
