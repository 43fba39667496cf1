// explain's Pods: what each asks for and holds, whose workload it is, what
// the scheduler said of it; and the nodes as the bound Pods and allocated
// claims fill them.
#include <algorithm>
#include <cctype>

#include "webhook/cluster/claim_resolution.h"
#include "webhook/model/dra.h"
#include "webhook/model/pod_reader.h"
#include "webhook/waiting/waiting_devices.h"
#include "webhook/waiting/waiting_pods.h"

namespace aiadmit::waiting {

namespace {

std::string key(std::string_view ns, std::string_view name) {
  return std::string(ns) + "/" + std::string(name);
}

std::string_view labelOf(const JsonValue* metadata, std::string_view name) {
  return stringMember(member(metadata, "labels"), name);
}

// The ReplicaSet a Deployment made is named DEPLOYMENT-HASH, the hash its
// Pods carry as pod-template-hash.
std::string deploymentOf(std::string_view replicaSet, std::string_view hash) {
  const std::string suffix = "-" + std::string(hash);
  if (hash.empty() || replicaSet.size() <= suffix.size() ||
      replicaSet.substr(replicaSet.size() - suffix.size()) != suffix) {
    return "";
  }
  return std::string(replicaSet.substr(0, replicaSet.size() - suffix.size()));
}

// The labels the operators put on their Pods name the object a user made;
// without one, the Pod's controller; without one, the Pod itself.
WorkloadKey workloadOf(const JsonValue* metadata, std::string_view podName) {
  struct Marker {
    std::string_view label;
    std::string_view kind;
    bool gang;
  };
  static constexpr Marker kMarkers[] = {
      {"jobset.sigs.k8s.io/jobset-name", "JobSet", true},
      {"leaderworkerset.sigs.k8s.io/name", "LeaderWorkerSet", true},
      {"trainer.kubeflow.org/trainjob-name", "TrainJob", true},
      {"volcano.sh/job-name", "Job.batch.volcano.sh", true},
      {"ray.io/cluster", "RayCluster", false},
      // The coscheduling plugin's; "PodGroup" alone is Kubernetes' own.
      {"scheduling.x-k8s.io/pod-group", "PodGroup.scheduling.x-k8s.io", true},
  };
  for (const Marker& marker : kMarkers) {
    const std::string_view value = labelOf(metadata, marker.label);
    if (!value.empty()) return {std::string(marker.kind), std::string(value), marker.gang};
  }
  const std::string_view trainingJob = labelOf(metadata, "training.kubeflow.org/job-name");
  if (!trainingJob.empty()) {
    std::string operatorName(labelOf(metadata, "training.kubeflow.org/operator-name"));
    std::string kind = "TrainingJob";
    if (const size_t dash = operatorName.find("job-controller"); dash != std::string::npos) {
      kind = operatorName.substr(0, dash) + "Job";
      if (!kind.empty()) kind[0] = static_cast<char>(std::toupper(kind[0]));
      static const std::map<std::string, std::string> kSpelling = {
          {"PytorchJob", "PyTorchJob"}, {"TfJob", "TFJob"},   {"MpiJob", "MPIJob"},
          {"XgboostJob", "XGBoostJob"}, {"JaxJob", "JAXJob"}, {"PaddleJob", "PaddleJob"}};
      if (const auto spelt = kSpelling.find(kind); spelt != kSpelling.end()) kind = spelt->second;
    }
    return {kind, std::string(trainingJob), true};
  }
  const JsonValue* owners = member(metadata, "ownerReferences");
  if (isArray(owners)) {
    for (const JsonValue& owner : owners->GetArray()) {
      const JsonValue* controller = member(&owner, "controller");
      if (controller == nullptr || !controller->IsBool() || !controller->GetBool()) continue;
      const std::string_view kind = stringMember(&owner, "kind");
      const std::string_view name = stringMember(&owner, "name");
      if (kind == "ReplicaSet") {
        const std::string deployment = deploymentOf(name, labelOf(metadata, "pod-template-hash"));
        if (!deployment.empty()) return {"Deployment", deployment, false};
      }
      // An Indexed Job's Pods are ranks of one run (distributed training);
      // a Job of independent Pods is no gang.
      const bool indexed =
          !stringMember(member(metadata, "annotations"), "batch.kubernetes.io/job-completion-index")
               .empty();
      return {std::string(kind), std::string(name), kind == "Job" && indexed};
    }
  }
  return {"Pod", std::string(podName), false};
}

// The PodGroup of Kubernetes' own that the Pod names, which decides before
// any operator's label how the scheduler places it: spec.schedulingGroup's
// (1.36+), whose policy the view holds; or, in 1.35, the pod group of the
// Workload that spec.workloadRef names (one per replica key), whose policy
// the view does not read.
std::optional<WorkloadKey> nativeGroupOf(const JsonValue* spec, std::string_view ns,
                                         const ClusterView& view) {
  WorkloadKey group{"PodGroup", "", false, true};
  const std::string_view named = stringMember(member(spec, "schedulingGroup"), "podGroupName");
  if (!named.empty()) {
    group.name = std::string(named);
    group.podGroup = view.podGroup(ns, named);
    group.podGroupsListed = view.knows(ClusterKind::PodGroup);
    group.gang = group.podGroup != nullptr && group.podGroup->minCount.has_value();
    return group;
  }
  const JsonValue* reference = member(spec, "workloadRef");
  const std::string_view workload = stringMember(reference, "name");
  if (workload.empty()) return std::nullopt;
  group.name = std::string(workload) + "/" + std::string(stringMember(reference, "podGroup"));
  const std::string_view replica = stringMember(reference, "podGroupReplicaKey");
  if (!replica.empty()) group.name += "/" + std::string(replica);
  return group;
}

const JsonValue* podScheduledCondition(const JsonValue* status) {
  const JsonValue* conditions = member(status, "conditions");
  return elementWith(conditions, "type", "PodScheduled");
}

// A message and when it was said.
using Timed = std::pair<std::string, std::string>;  // time, message

// The latest FailedScheduling message of each Pod ("ns/name").
std::map<std::string, Timed> schedulingEvents(const std::vector<const JsonValue*>& events) {
  std::map<std::string, Timed> latest;
  for (const JsonValue* event : events) {
    if (stringMember(event, "reason") != "FailedScheduling") continue;
    const JsonValue* about = member(event, "involvedObject");
    if (about == nullptr) about = member(event, "regarding");
    if (stringMember(about, "kind") != "Pod") continue;
    std::string at(stringMember(event, "lastTimestamp"));
    if (at.empty()) at = std::string(stringMember(member(event, "series"), "lastObservedTime"));
    if (at.empty()) at = std::string(stringMember(event, "eventTime"));
    if (at.empty()) at = std::string(stringMember(member(event, "metadata"), "creationTimestamp"));
    std::string message(stringMember(event, "message"));
    if (message.empty()) message = std::string(stringMember(event, "note"));
    auto& slot = latest[key(stringMember(about, "namespace"), stringMember(about, "name"))];
    if (slot.first.empty() || at >= slot.first) slot = {at, message};
  }
  return latest;
}

// What the scheduler said of the Pod: its PodScheduled condition when False
// (and since when it waits), else the last FailedScheduling event's message.
void readSchedulerWord(const JsonValue* status, const std::map<std::string, Timed>& events,
                       PodFacts& pod) {
  const JsonValue* scheduled = podScheduledCondition(status);
  if (stringMember(scheduled, "status") == "False") {
    pod.scheduler.condition = "PodScheduled";
    pod.scheduler.status = "False";
    pod.scheduler.reason = std::string(stringMember(scheduled, "reason"));
    pod.scheduler.message = std::string(stringMember(scheduled, "message"));
    const std::string_view changed = stringMember(scheduled, "lastTransitionTime");
    if (!changed.empty()) pod.since = std::string(changed);
  }
  const auto event = events.find(key(pod.namespaceName, pod.name));
  if (pod.scheduler.message.empty() && event != events.end()) {
    pod.scheduler = SchedulerWord{};  // an event's words name no condition
    pod.scheduler.message = event->second.second;
  }
}

// The ResourceClaims a Pod uses: by name, or made for it from a template
// (status.resourceClaimStatuses names those), and the template of each made one.
void readClaimsOf(const JsonValue* spec, const JsonValue* status, PodFacts& pod) {
  const std::string& ns = pod.namespaceName;
  const JsonValue* sources = member(spec, "resourceClaims");
  if (isArray(sources)) {
    for (const JsonValue& source : sources->GetArray()) {
      const std::string_view named = stringMember(&source, "resourceClaimName");
      if (!named.empty()) pod.claimKeys.push_back(key(ns, named));
    }
  }
  const JsonValue* made = member(status, "resourceClaimStatuses");
  if (!isArray(made)) return;
  for (const JsonValue& entry : made->GetArray()) {
    const std::string_view named = stringMember(&entry, "resourceClaimName");
    if (named.empty()) continue;
    pod.claimKeys.push_back(key(ns, named));
    const JsonValue* source = elementWith(sources, "name", stringMember(&entry, "name"));
    const std::string_view from = stringMember(source, "resourceClaimTemplateName");
    if (!from.empty()) pod.claimTemplates[key(ns, named)] = std::string(from);
  }
}

}  // namespace

// Devices of accelerator classes that the claim asks for: each request's
// count (the smallest of a firstAvailable list).
int64_t claimDevices(const ClaimRecord& claim, const ClusterView& view) {
  int64_t devices = 0;
  for (const DeviceRequest& request : claim.spec.requests) {
    std::optional<int64_t> fewest;
    for (const DeviceAlternative& alternative : request.alternatives) {
      if (alternative.mode != AllocationMode::ExactCount) continue;
      if (!isGpuDeviceClass(alternative.deviceClassName, &view)) continue;
      fewest = std::min(fewest.value_or(alternative.count), alternative.count);
    }
    devices += fewest.value_or(0);
  }
  return devices;
}

namespace {

// What the Pod asks for: its extended accelerator resources, as the
// scheduler sums them, and the accelerator devices of its claims.
void readAsks(const JsonValue* metadata, const JsonValue* status, const WaitingInput& input,
              const Occupancy& occupancy, PodFacts& pod) {
  const PodReader reader(metadata, metadata, pod.spec);
  reader.forEachAccelerator([&](const ResourceEntry& entry) {
    pod.accelerators.emplace(std::string(entry.name), reader.podRequest(entry.name));
  });
  std::erase_if(pod.accelerators, [](const auto& entry) { return entry.second <= 0; });
  readClaimsOf(pod.spec, status, pod);
  for (const std::string& claimKey : pod.claimKeys) {
    const auto claim = occupancy.claims.find(claimKey);
    if (claim != occupancy.claims.end()) {
      pod.claimedDevices += claimDevices(*claim->second, *input.view);
    }
  }
  pod.gpus = pod.claimedDevices;
  for (const auto& [resource, count] : pod.accelerators) pod.gpus += count;
}

// Its priority, scheduling gates, and since when it waits.
void readScheduling(const JsonValue* metadata, PodFacts& pod) {
  const JsonValue* priority = member(pod.spec, "priority");
  pod.priority = priority != nullptr && priority->IsInt64() ? priority->GetInt64() : 0;
  pod.preemptsNever = stringMember(pod.spec, "preemptionPolicy") == "Never";
  pod.priorityClassName = std::string(stringMember(pod.spec, "priorityClassName"));
  const JsonValue* gates = member(pod.spec, "schedulingGates");
  if (isArray(gates)) {
    for (const JsonValue& gate : gates->GetArray()) {
      pod.gates.emplace_back(stringMember(&gate, "name"));
    }
  }
  pod.since = std::string(stringMember(metadata, "creationTimestamp"));
}

// A bound Pod's GPUs: in use on its node, and placed for its workload.
void addPlaced(const PodFacts& pod, Occupancy& occupancy) {
  for (const auto& [resource, count] : pod.accelerators) {
    occupancy.used[pod.nodeName][resource] += count;
  }
  occupancy.holders[pod.nodeName].push_back(occupancy.pods.size());
  auto& placed = occupancy.placed[workloadIdOf(pod)];
  ++placed.first;
  placed.second += pod.gpus;
}

}  // namespace

Occupancy readOccupancy(const WaitingInput& input) {
  Occupancy occupancy;
  for (const ClaimRecord& claim : input.view->claims()) {
    occupancy.claims[key(claim.namespaceName, claim.name)] = &claim;
    occupancy.allocatedDevices.insert(claim.devices.begin(), claim.devices.end());
  }
  occupancy.devices = indexDevices(*input.view, occupancy.allocatedDevices);
  const auto events = schedulingEvents(input.events);
  for (const JsonValue* json : input.pods) {
    PodFacts pod;
    pod.json = json;
    const JsonValue* metadata = member(json, "metadata");
    const JsonValue* status = member(json, "status");
    pod.spec = member(json, "spec");
    pod.namespaceName = std::string(stringMember(metadata, "namespace"));
    pod.name = std::string(stringMember(metadata, "name"));
    pod.nodeName = std::string(stringMember(pod.spec, "nodeName"));
    const std::string_view phase = stringMember(status, "phase");
    pod.terminal = phase == "Succeeded" || phase == "Failed";
    if (pod.terminal) continue;
    readAsks(metadata, status, input, occupancy, pod);
    std::optional<WorkloadKey> group = nativeGroupOf(pod.spec, pod.namespaceName, *input.view);
    pod.workload = group ? std::move(*group) : workloadOf(metadata, pod.name);
    if (pod.gpus == 0) {
      if (pod.workload.native) {
        auto& members = occupancy.withoutGpus[workloadIdOf(pod)];
        ++(pod.nodeName.empty() ? members.second : members.first);
      }
      continue;
    }
    readScheduling(metadata, pod);
    readSchedulerWord(status, events, pod);
    if (!pod.nodeName.empty()) addPlaced(pod, occupancy);
    occupancy.pods.push_back(std::move(pod));
  }
  return occupancy;
}

}  // namespace aiadmit::waiting
