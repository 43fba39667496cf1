#include "webhook/policy/classify.h"

#include "webhook/kube/text.h"

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
std::string acceleratorRequest(const PodReader& pod) {
  const auto first = pod.firstAccelerator();
  if (!first) return {};
  return std::string(first->name) + " (" +
         (first->container->list == ContainerList::InitContainers ? "init container "
                                                                  : "container ") +
         std::string(first->container->name) + ")";
}

}  // namespace

std::optional<std::string_view> declaredAnnotation(const PodTemplateView& view,
                                                   std::string_view key) {
  return PodReader(member(view.object, "metadata"), view.metadata, nullptr).annotation(key);
}

Classification classify(const PodTemplateView& view) {
  return classify(view, PodReader::of(view));
}

Classification classify(const PodTemplateView& view, const PodReader& pod) {
  Classification result;
  if (view.kind == WorkloadKind::Other) return result;

  // 1. The developer's statement.
  const auto onTemplate = pod.templateAnnotation(kWorkloadAnnotation);
  const auto onObject = pod.objectAnnotation(kWorkloadAnnotation);
  const bool isController = pod.isTemplateOfController();
  for (const auto& [value, where] :
       {std::pair{onTemplate, "on the pod template"}, std::pair{onObject, "on the object"}}) {
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
  if (onTemplate && onObject && *onTemplate != *onObject &&
      result.basis == ClassBasis::WorkloadAnnotation && !result.unknownWorkloadValue) {
    result.reason += " (the object says " + std::string(*onObject) +
                     "; the template wins because its Pods carry it)";
  }
  if (result.isAiWorkload()) return result;

  std::string why;
  if (result.unknownWorkloadValue) {
    result.workloadClass = classOfKind(view, &why);
    result.basis = ClassBasis::Kind;
    result.reason = "annotation aiadmit.dev/workload=" + inQuotes(*result.unknownWorkloadValue) +
                    " is not training, batch or realtime, so the kind decides: " + why;
    return result;
  }

  // 2. The class aiadmit stamped on the controller that created this object.
  for (const auto& value :
       {pod.templateAnnotation(kClassAnnotation), pod.objectAnnotation(kClassAnnotation)}) {
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
  std::string request = acceleratorRequest(pod);
  if (request.empty()) {
    const auto gpus = pod.annotation(kGpusAnnotation);
    if (!gpus || gpus->empty() || *gpus == "0") return result;
    request = "GPUs by annotation aiadmit.dev/gpus=" + std::string(*gpus);
  }
  result.workloadClass = classOfKind(view, &why);
  result.basis = ClassBasis::Kind;
  result.reason = "requests " + request + " and " + why;
  return result;
}

}  // namespace aiadmit
