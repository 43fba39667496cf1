// What kind of object a request carries and where its pod template lives.
#pragma once

#include <string_view>

#include "webhook/kube/json.h"

namespace aiadmit {

// The operation of an admission request.
enum class Operation { Create, Update, Delete, Connect, Unknown };
std::string_view operationName(Operation operation);

enum class WorkloadKind { Pod, Job, CronJob, Deployment, StatefulSet, ReplicaSet, Other };

// From an API group ("" for core, "apps", "batch") and a kind. Kinds of other
// groups that share a name (Volcano's batch.volcano.sh CronJob) are Other.
WorkloadKind workloadKindOf(std::string_view group, std::string_view kind);
// From an object's own apiVersion ("apps/v1") and kind, for offline input.
WorkloadKind workloadKindOfObject(const JsonValue& object);
std::string_view kindName(WorkloadKind kind);
bool isController(WorkloadKind kind);  // everything but a bare Pod
bool isJobLike(WorkloadKind kind);     // Job, CronJob

// Field paths of the pod template, as JSON Pointer and as kubectl prints them.
std::string_view podSpecPointer(WorkloadKind kind);
std::string_view podSpecFieldPath(WorkloadKind kind);
std::string_view podMetadataFieldPath(WorkloadKind kind);

// Read-only view of the pod template of an object: for a Pod its own metadata
// and spec, for controllers spec.template, for a CronJob
// spec.jobTemplate.spec.template. Members are nullptr where absent.
struct PodTemplateView {
  WorkloadKind kind = WorkloadKind::Other;
  const JsonValue* object = nullptr;
  const JsonValue* metadata = nullptr;  // the Pod's or the template's metadata
  const JsonValue* spec = nullptr;      // the PodSpec
  const JsonValue* jobSpec = nullptr;   // JobSpec of a Job or CronJob's jobTemplate

  static PodTemplateView of(const JsonValue& object, WorkloadKind kind);
};

// Mutable access that creates the path when it is missing.
JsonValue& ensurePodSpec(JsonValue& object, WorkloadKind kind, JsonAllocator& alloc);
JsonValue& ensurePodMetadata(JsonValue& object, WorkloadKind kind, JsonAllocator& alloc);
// JobSpec of a Job or CronJob; must not be called for other kinds.
JsonValue& ensureJobSpec(JsonValue& object, WorkloadKind kind, JsonAllocator& alloc);

enum class ContainerList { Containers, InitContainers };
std::string_view containerListName(ContainerList list);

}  // namespace aiadmit
