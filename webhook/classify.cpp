#include "webhook/classify.h"

namespace aiadmit {

std::string_view className(WorkloadClass workloadClass) {
  switch (workloadClass) {
    case WorkloadClass::Training: return "training";
    case WorkloadClass::Batch: return "batch";
    case WorkloadClass::Realtime: return "realtime";
    case WorkloadClass::None: break;
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

WorkloadClass defaultClassForKind(const PodTemplateView& view, std::string* why) {
  switch (view.kind) {
    case WorkloadKind::Deployment:
    case WorkloadKind::StatefulSet:
    case WorkloadKind::ReplicaSet:
      *why = std::string(kindName(view.kind)) + " is a long-running server";
      return WorkloadClass::Realtime;
    case WorkloadKind::Job:
    case WorkloadKind::CronJob:
      *why = std::string(kindName(view.kind)) + " runs to completion";
      return WorkloadClass::Batch;
    case WorkloadKind::Pod: {
      const std::string_view restartPolicy = stringMember(view.spec, "restartPolicy");
      if (restartPolicy.empty() || restartPolicy == "Always") {
        *why = "Pod with restartPolicy Always is a long-running server";
        return WorkloadClass::Realtime;
      }
      *why = "Pod with restartPolicy " + std::string(restartPolicy) + " runs to completion";
      return WorkloadClass::Batch;
    }
    case WorkloadKind::Other: break;
  }
  return WorkloadClass::None;
}

}  // namespace

Classification classify(const PodTemplateView& view) {
  Classification result;
  if (view.kind == WorkloadKind::Other) return result;

  const std::string_view declared = workloadAnnotation(view, kWorkloadAnnotation);
  if (!declared.empty()) {
    if (auto parsed = parseClass(declared)) {
      result.workloadClass = *parsed;
      result.reason = "annotation aiadmit.dev/workload=" + std::string(declared);
      return result;
    }
    std::string why;
    result.workloadClass = defaultClassForKind(view, &why);
    result.unknownWorkloadValue = std::string(declared);
    result.reason = "annotation aiadmit.dev/workload has unknown value; " + why;
    return result;
  }

  // Pods created by a controller carry the class aiadmit stamped on the template.
  const std::string_view stamped = workloadAnnotation(view, kClassAnnotation);
  if (auto parsed = parseClass(stamped)) {
    result.workloadClass = *parsed;
    result.reason = "annotation aiadmit.dev/class=" + std::string(stamped);
    return result;
  }

  const bool byAnnotation = !workloadAnnotation(view, kGpusAnnotation).empty();
  if (!byAnnotation && !requestsAccelerator(view.spec)) return result;

  std::string why;
  result.workloadClass = defaultClassForKind(view, &why);
  result.reason = (byAnnotation ? "asks for GPUs by annotation; " : "requests an accelerator; ") +
                  why;
  return result;
}

}  // namespace aiadmit
