#include "webhook/policy/classify.h"

#include "webhook/kube/resources.h"

namespace aiadmit {

std::string_view className(WorkloadClass workloadClass) {
  switch (workloadClass) {
    case WorkloadClass::Training:
      return "training";
    case WorkloadClass::Batch:
      return "batch";
    case WorkloadClass::Realtime:
      return "realtime";
    case WorkloadClass::None:
      break;
  }
  return "none";
}

std::optional<WorkloadClass> parseClass(std::string_view text) {
  if (text == "training") return WorkloadClass::Training;
  if (text == "batch") return WorkloadClass::Batch;
  if (text == "realtime") return WorkloadClass::Realtime;
  return std::nullopt;
}

namespace {

std::optional<std::string_view> annotationOf(const JsonValue* metadata, std::string_view key) {
  const JsonValue* value = member(member(metadata, "annotations"), key);
  if (value == nullptr || !value->IsString()) return std::nullopt;
  return stringOf(value);
}

// The template's value first, then the object's (absent ones skipped).
struct Declared {
  std::optional<std::string_view> onTemplate;
  std::optional<std::string_view> onObject;
};

Declared declared(const PodTemplateView& view, std::string_view key) {
  Declared out;
  const JsonValue* objectMetadata = member(view.object, "metadata");
  out.onObject = annotationOf(objectMetadata, key);
  if (view.metadata != objectMetadata) out.onTemplate = annotationOf(view.metadata, key);
  return out;
}

WorkloadClass classOfKind(const PodTemplateView& view, std::string* why) {
  switch (view.kind) {
    case WorkloadKind::Deployment:
    case WorkloadKind::StatefulSet:
    case WorkloadKind::ReplicaSet:
      *why = "a " + std::string(kindName(view.kind)) + " is a long-running server";
      return WorkloadClass::Realtime;
    case WorkloadKind::Job:
    case WorkloadKind::CronJob:
      *why = "a " + std::string(kindName(view.kind)) + " runs to completion";
      return WorkloadClass::Batch;
    case WorkloadKind::Pod: {
      const std::string_view restartPolicy = stringMember(view.spec, "restartPolicy");
      if (restartPolicy.empty() || restartPolicy == "Always") {
        *why = "a Pod with restartPolicy Always is a long-running server";
        return WorkloadClass::Realtime;
      }
      *why = "a Pod with restartPolicy " + std::string(restartPolicy) + " runs to completion";
      return WorkloadClass::Batch;
    }
    case WorkloadKind::Other:
      break;
  }
  return WorkloadClass::None;
}

// "nvidia.com/gpu (container vllm)" for the first accelerator asked for, or "".
std::string acceleratorRequest(const PodTemplateView& view) {
  std::string found;
  forEachContainer(view.spec, [&](const JsonValue& container, ContainerList list, size_t) {
    if (!found.empty()) return;
    const JsonValue* resources = member(&container, "resources");
    for (std::string_view section : {"limits", "requests"}) {
      const JsonValue* quantities = member(resources, section);
      if (!isObject(quantities)) continue;
      for (auto it = quantities->MemberBegin(); it != quantities->MemberEnd(); ++it) {
        const std::string_view resource{it->name.GetString(), it->name.GetStringLength()};
        if (!looksLikeAccelerator(resource)) continue;
        found = std::string(resource) + " (" +
                (list == ContainerList::InitContainers ? "init container " : "container ") +
                std::string(stringMember(&container, "name")) + ")";
        return;
      }
    }
  });
  return found;
}

std::string quotedValue(std::string_view value) {
  return "\"" + std::string(value) + "\"";
}

}  // namespace

std::optional<std::string_view> declaredAnnotation(const PodTemplateView& view,
                                                   std::string_view key) {
  const Declared values = declared(view, key);
  return values.onTemplate ? values.onTemplate : values.onObject;
}

Classification classify(const PodTemplateView& view) {
  Classification result;
  if (view.kind == WorkloadKind::Other) return result;

  // 1. The developer's statement.
  const Declared workload = declared(view, kWorkloadAnnotation);
  const bool isController = view.metadata != member(view.object, "metadata");
  for (const auto& [value, where] : {std::pair{workload.onTemplate, "on the pod template"},
                                     std::pair{workload.onObject, "on the object"}}) {
    if (!value) continue;
    if (auto parsed = parseClass(*value)) {
      if (result.isAiWorkload()) continue;
      result.workloadClass = *parsed;
      result.basis = ClassBasis::WorkloadAnnotation;
      result.reason = "annotation aiadmit.dev/workload=" + std::string(*value);
      if (isController) result.reason += std::string(" ") + where;
    } else if (!result.unknownWorkloadValue) {
      result.unknownWorkloadValue = std::string(*value);
    }
  }
  if (workload.onTemplate && workload.onObject && *workload.onTemplate != *workload.onObject &&
      result.basis == ClassBasis::WorkloadAnnotation && !result.unknownWorkloadValue) {
    result.reason += " (the object says " + std::string(*workload.onObject) +
                     "; the template wins because its Pods carry it)";
  }
  if (result.isAiWorkload()) return result;

  std::string why;
  if (result.unknownWorkloadValue) {
    result.workloadClass = classOfKind(view, &why);
    result.basis = ClassBasis::Kind;
    result.reason = "annotation aiadmit.dev/workload=" + quotedValue(*result.unknownWorkloadValue) +
                    " is not training, batch or realtime, so the kind decides: " + why;
    return result;
  }

  // 2. The class aiadmit stamped on the controller that created this object.
  const Declared stamp = declared(view, kClassAnnotation);
  for (const auto& value : {stamp.onTemplate, stamp.onObject}) {
    if (!value) continue;
    if (auto parsed = parseClass(*value)) {
      result.workloadClass = *parsed;
      result.basis = ClassBasis::ClassStamp;
      result.reason = "annotation aiadmit.dev/class=" + std::string(*value) +
                      ", stamped by aiadmit on the workload that created it";
      return result;
    }
  }

  // 3. The kind, for objects that ask for an accelerator.
  std::string request = acceleratorRequest(view);
  if (request.empty()) {
    const auto gpus = declaredAnnotation(view, kGpusAnnotation);
    if (!gpus || gpus->empty() || *gpus == "0") return result;
    request = "GPUs by annotation aiadmit.dev/gpus=" + std::string(*gpus);
  }
  result.workloadClass = classOfKind(view, &why);
  result.basis = ClassBasis::Kind;
  result.reason = "requests " + request + " and " + why;
  return result;
}

}  // namespace aiadmit
