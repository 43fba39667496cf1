#include "webhook/kube/workload.h"

#include <algorithm>
#include <cctype>

namespace aiadmit {

std::string_view operationName(Operation operation) {
  switch (operation) {
    case Operation::Create:
      return "CREATE";
    case Operation::Update:
      return "UPDATE";
    case Operation::Delete:
      return "DELETE";
    case Operation::Connect:
      return "CONNECT";
    case Operation::Unknown:
      break;
  }
  return "UNKNOWN";
}

WorkloadKind workloadKindOf(std::string_view group, std::string_view kind) {
  if (group.empty()) return kind == "Pod" ? WorkloadKind::Pod : WorkloadKind::Other;
  if (group == "apps") {
    if (kind == "Deployment") return WorkloadKind::Deployment;
    if (kind == "StatefulSet") return WorkloadKind::StatefulSet;
    if (kind == "ReplicaSet") return WorkloadKind::ReplicaSet;
  }
  if (group == "batch") {
    if (kind == "Job") return WorkloadKind::Job;
    if (kind == "CronJob") return WorkloadKind::CronJob;
  }
  return WorkloadKind::Other;
}

WorkloadKind workloadKindOfObject(const JsonValue& object) {
  return workloadKindOf(splitApiVersion(stringMember(&object, "apiVersion")).group,
                        stringMember(&object, "kind"));
}

std::string_view kindName(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::Pod:
      return "Pod";
    case WorkloadKind::Job:
      return "Job";
    case WorkloadKind::CronJob:
      return "CronJob";
    case WorkloadKind::Deployment:
      return "Deployment";
    case WorkloadKind::StatefulSet:
      return "StatefulSet";
    case WorkloadKind::ReplicaSet:
      return "ReplicaSet";
    case WorkloadKind::Other:
      break;
  }
  return "Other";
}

bool isController(WorkloadKind kind) {
  return kind != WorkloadKind::Pod && kind != WorkloadKind::Other;
}

bool isJobLike(WorkloadKind kind) {
  return kind == WorkloadKind::Job || kind == WorkloadKind::CronJob;
}

std::string_view podSpecPointer(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::Pod:
      return "/spec";
    case WorkloadKind::CronJob:
      return "/spec/jobTemplate/spec/template/spec";
    default:
      return "/spec/template/spec";
  }
}

std::string_view podSpecFieldPath(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::Pod:
      return "spec";
    case WorkloadKind::CronJob:
      return "spec.jobTemplate.spec.template.spec";
    default:
      return "spec.template.spec";
  }
}

std::string_view podMetadataFieldPath(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::Pod:
      return "metadata";
    case WorkloadKind::CronJob:
      return "spec.jobTemplate.spec.template.metadata";
    default:
      return "spec.template.metadata";
  }
}

std::string_view groupOf(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::Deployment:
    case WorkloadKind::StatefulSet:
    case WorkloadKind::ReplicaSet:
      return "apps";
    case WorkloadKind::Job:
    case WorkloadKind::CronJob:
      return "batch";
    default:
      return "";
  }
}

namespace {

const JsonValue* jobSpecOf(const JsonValue& object, WorkloadKind kind) {
  const JsonValue* spec = member(&object, "spec");
  if (kind == WorkloadKind::Job) return spec;
  if (kind == WorkloadKind::CronJob) return member(member(spec, "jobTemplate"), "spec");
  return nullptr;
}

}  // namespace

PodTemplateView PodTemplateView::of(const JsonValue& object, WorkloadKind kind) {
  PodTemplateView view;
  view.kind = kind;
  view.object = &object;
  if (kind == WorkloadKind::Other) return view;
  view.type = WorkloadTypeTable::builtIn()->findGroupKind(groupOf(kind), kindName(kind));
  view.jobSpec = jobSpecOf(object, kind);
  if (kind == WorkloadKind::Pod) {
    view.metadata = member(&object, "metadata");
    view.spec = member(&object, "spec");
    return view;
  }
  const JsonValue* spec = kind == WorkloadKind::CronJob ? view.jobSpec : member(&object, "spec");
  const JsonValue* templ = member(spec, "template");
  view.metadata = member(templ, "metadata");
  view.spec = member(templ, "spec");
  return view;
}

PodTemplateView PodTemplateView::at(const JsonValue& object, WorkloadKind kind,
                                    const WorkloadType& type, const ResolvedTemplate& place) {
  PodTemplateView view;
  view.kind = kind;
  view.object = &object;
  view.type = &type;
  view.place = &place;
  view.jobSpec = jobSpecOf(object, kind);
  view.spec = valueAt(object, place.specPointer);
  if (!place.metadataPointer.empty()) {
    view.metadata = valueAt(object, place.metadataPointer);
    if (view.metadata != nullptr && !view.metadata->IsObject()) view.metadata = nullptr;
  }
  return view;
}

std::string PodTemplateView::specFieldPath() const {
  if (place != nullptr) return place->specFieldPath;
  return std::string(podSpecFieldPath(kind));
}

std::string PodTemplateView::metadataFieldPath() const {
  if (place != nullptr && !place->metadataFieldPath.empty()) return place->metadataFieldPath;
  return std::string(podMetadataFieldPath(kind));
}

std::string_view PodTemplateView::role() const {
  return place != nullptr ? std::string_view(place->role) : std::string_view("pod");
}

namespace {
JsonValue& ensureTemplate(JsonValue& object, WorkloadKind kind, JsonAllocator& alloc) {
  JsonValue& spec = ensureObject(object, "spec", alloc);
  if (kind == WorkloadKind::CronJob) {
    JsonValue& jobSpec = ensureObject(ensureObject(spec, "jobTemplate", alloc), "spec", alloc);
    return ensureObject(jobSpec, "template", alloc);
  }
  return ensureObject(spec, "template", alloc);
}
}  // namespace

JsonValue& ensurePodSpec(JsonValue& object, WorkloadKind kind, JsonAllocator& alloc) {
  if (kind == WorkloadKind::Pod) return ensureObject(object, "spec", alloc);
  return ensureObject(ensureTemplate(object, kind, alloc), "spec", alloc);
}

JsonValue& ensurePodMetadata(JsonValue& object, WorkloadKind kind, JsonAllocator& alloc) {
  if (kind == WorkloadKind::Pod) return ensureObject(object, "metadata", alloc);
  return ensureObject(ensureTemplate(object, kind, alloc), "metadata", alloc);
}

JsonValue& ensureJobSpec(JsonValue& object, WorkloadKind kind, JsonAllocator& alloc) {
  JsonValue& spec = ensureObject(object, "spec", alloc);
  if (kind == WorkloadKind::CronJob) {
    return ensureObject(ensureObject(spec, "jobTemplate", alloc), "spec", alloc);
  }
  return spec;
}

std::string_view containerListName(ContainerList list) {
  return list == ContainerList::Containers ? "containers" : "initContainers";
}

}  // namespace aiadmit
