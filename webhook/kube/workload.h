// What kind of object a request carries and where its pod template lives.
#pragma once

#include <string>
#include <string_view>

#include "webhook/kube/json.h"
#include "webhook/kube/workload_type.h"

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

// Read-only view of one pod template of an object: for a Pod its own
// metadata and spec, for controllers spec.template, for a CronJob
// spec.jobTemplate.spec.template, for the kinds of the workload-type table
// the template a ResolvedTemplate names. Members are nullptr where absent.
struct PodTemplateView {
  WorkloadKind kind = WorkloadKind::Other;  // Other for custom resources
  const JsonValue* object = nullptr;
  const JsonValue* metadata = nullptr;  // the Pod's or the template's metadata
  const JsonValue* spec = nullptr;      // the PodSpec
  const JsonValue* jobSpec = nullptr;   // JobSpec of a Job or CronJob's jobTemplate
  // The row of the object's kind; null only for kinds the table lacks.
  const WorkloadType* type = nullptr;
  // Where the template is in the object, its role and its Pod count; null
  // for a view of a built-in kind's only template made by of().
  const ResolvedTemplate* place = nullptr;

  // The only template of a built-in kind (Pod, Deployment, ..., CronJob).
  static PodTemplateView of(const JsonValue& object, WorkloadKind kind);
  // The template `place` names in `object` (the object it was resolved on,
  // or a copy of it that is being edited).
  static PodTemplateView at(const JsonValue& object, WorkloadKind kind, const WorkloadType& type,
                            const ResolvedTemplate& place);

  // kubectl field paths: "spec.template.spec", "spec.pytorchReplicaSpecs.Worker.template.spec".
  std::string specFieldPath() const;
  std::string metadataFieldPath() const;
  // "worker", "head"; "pod" for the template of a built-in kind.
  std::string_view role() const;
  // Whether the template's shape lets aiadmit inject this
  // (TemplateSlot::injectable); every injection for a built-in kind.
  bool allows(Injection injection) const {
    return place == nullptr || place->slot == nullptr || (place->slot->injectable & injection) != 0;
  }
  // Whether the kind is a custom resource (its role names a part of it).
  bool isCustomResource() const { return type != nullptr && kind == WorkloadKind::Other; }
};

// The API group of a built-in kind ("" for Pod, "apps", "batch").
std::string_view groupOf(WorkloadKind kind);

// Mutable access that creates the path when it is missing.
JsonValue& ensurePodSpec(JsonValue& object, WorkloadKind kind, JsonAllocator& alloc);
JsonValue& ensurePodMetadata(JsonValue& object, WorkloadKind kind, JsonAllocator& alloc);
// JobSpec of a Job or CronJob; must not be called for other kinds.
JsonValue& ensureJobSpec(JsonValue& object, WorkloadKind kind, JsonAllocator& alloc);

enum class ContainerList { Containers, InitContainers };
std::string_view containerListName(ContainerList list);

}  // namespace aiadmit
