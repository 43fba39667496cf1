#include "webhook/policy/classify.h"

#include <vector>

#include "webhook/cluster/claim_resolution.h"
#include "webhook/codec/enum_table.h"
#include "webhook/codec/text.h"
#include "webhook/policy/profile_set.h"
#include "webhook/policy/training_evidence.h"

namespace aiadmit {

namespace {

// The class the kind gives an object that asks for an accelerator: the
// workload-type table's default, or the first of its conditions that holds
// (a Pod's restartPolicy).
WorkloadClass classOfKind(const PodTemplateView& view, std::string* why) {
  if (view.type == nullptr || view.object == nullptr) return WorkloadClass::None;
  const DefaultClass byKind = defaultClassOf(*view.type, *view.object);
  *why = std::string(byKind.reason);
  return byKind.workloadClass;
}

// "nvidia.com/gpu (container vllm)" for the first accelerator asked for, or "".
// A custom resource's templates are named by their role: "(container
// pytorch of Worker)".
std::string acceleratorRequest(const PodTemplateView& view, const PodReader& pod) {
  const auto first = pod.firstAccelerator();
  if (!first) return {};
  // A template that is only a ResourceRequirements is named by its field.
  if (first->container->resourcesOnly) {
    return std::string(first->name) + " (" + view.specFieldPath() + ")";
  }
  std::string request =
      std::string(first->name) + " (" +
      (first->container->list == ContainerList::InitContainers ? "init container " : "container ") +
      std::string(first->container->name);
  if (view.isCustomResource()) request += " of " + std::string(view.role());
  return request + ")";
}

// "claims a gpu.nvidia.com device (claim gpu of container trainer)" for the
// first claim that resolves to GPUs, or "".
std::string gpuClaimRequest(const PodTemplateView& view, const PodReader& pod) {
  const std::vector<GpuClaim>& gpus = pod.claimedDevices().gpus;
  if (gpus.empty()) return {};
  const GpuClaim& first = gpus.front();
  std::string request = first.devices > 1 ? "claims " + std::to_string(first.devices) + " " +
                                                first.deviceClassName + " devices"
                                          : "claims a " + first.deviceClassName + " device";
  request += first.claim.empty() ? " (" + first.resourceName : " (claim " + first.claim;
  if (!first.container.empty()) {
    request += first.initContainer ? " of init container " : " of container ";
    request += first.container;
  }
  if (view.isCustomResource()) request += " of " + std::string(view.role());
  return request + ")";
}

// "asks for a GPU share by annotation gpu-fraction=0.5" (KAI Scheduler), or "".
std::string gpuShareRequest(const PodReader& pod) {
  const std::optional<GpuShare> share = pod.gpuShare();
  if (!share) return {};
  std::string request = "asks for a GPU share by annotation " + std::string(share->key) + "=" +
                        std::string(share->value);
  if (share->devices > 1) request += " on " + std::to_string(share->devices) + " GPUs";
  return request;
}

// Why a Pod that claims devices is still not an AI workload: none of its
// claims could be resolved to a GPU. "" when it claims nothing unresolved.
std::string unresolvedClaims(const PodReader& pod) {
  const std::vector<std::string>& unresolved = pod.claimedDevices().unresolved;
  if (unresolved.empty()) return {};
  std::string reason = "claims devices through DRA, but ";
  for (size_t i = 0; i < unresolved.size(); ++i) {
    if (i > 0) reason += "; ";
    reason += unresolved[i];
  }
  return reason + ", so no GPU is assumed";
}

}  // namespace

std::optional<std::string_view> declaredAnnotation(const PodTemplateView& view,
                                                   std::string_view key) {
  return PodReader::annotation(member(view.object, "metadata"), view.metadata, key);
}

Classification classify(const PodTemplateView& view) {
  PodReader pod = PodReader::of(view);
  return classify(view, resolveClaimsOf(pod, nullptr, ""));
}

namespace {

// The GPUs asked for by aiadmit.dev/gpus: its value when it asks for any
// (not empty, not "0"), nullopt otherwise.
std::optional<std::string_view> gpusByAnnotation(const PodReader& pod) {
  const auto gpus = pod.annotation(kGpusAnnotation);
  if (!gpus || gpus->empty() || *gpus == "0") return std::nullopt;
  return gpus;
}

// Whether a stamp of aiadmit's alone may classify the object: only when it
// asks for GPUs itself. Operators copy a template's metadata onto every Pod
// of a group (KubeRay's head Pod gets its workers' stamp), and those that ask
// for no GPU are no AI workload; nor is a workload whose GPU requests its
// developer took out since aiadmit stamped it. A claim the cluster view
// cannot resolve yet may hold GPUs: its stamp stands.
bool stampApplies(const PodReader& pod) {
  if (pod.asksForGpus()) return true;
  if (!pod.claimedDevices().unresolved.empty()) return true;
  return gpusByAnnotation(pod).has_value();
}

}  // namespace

namespace {

// 2. The profile the developer named, whose class it chose with it. Beside
// aiadmit's class stamp the name is aiadmit's own record of its last
// decision (the stamp mutator writes both), not the developer's choice.
std::optional<Classification> namedProfileClass(const PodReader& pod, const ProfileSet* profiles) {
  if (profiles == nullptr || pod.annotation(kClassAnnotation)) return std::nullopt;
  const auto named = pod.annotation(kProfileAnnotation);
  if (!named || named->empty()) return std::nullopt;
  const Profile* profile = profiles->find(*named);
  if (profile == nullptr) return std::nullopt;
  Classification result;
  result.workloadClass = profile->workloadClass;
  result.basis = ClassBasis::ProfileAnnotation;
  result.reason = "declared by annotation " + annotationSetting(kProfileAnnotation, *named) +
                  ", a " + std::string(className(profile->workloadClass)) + " profile";
  return result;
}

}  // namespace

Classification classify(const PodTemplateView& view, const PodReader& pod, bool madeByController,
                        const ProfileSet* profiles) {
  Classification result;
  if (view.type == nullptr) return result;

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
      result.reason = "declared by annotation " + annotationSetting(kWorkloadAnnotation, *value);
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

  if (std::optional<Classification> named = namedProfileClass(pod, profiles)) {
    named->unknownWorkloadValue = std::move(result.unknownWorkloadValue);
    return std::move(*named);
  }

  std::string why;
  if (result.unknownWorkloadValue) {
    result.workloadClass = classOfKind(view, &why);
    result.basis = ClassBasis::Kind;
    result.reason = "inferred from its kind, since annotation " +
                    annotationSetting(kWorkloadAnnotation, inQuotes(*result.unknownWorkloadValue)) +
                    " is not training, batch or realtime: " + why;
    return result;
  }

  // 3. The class aiadmit stamped on the controller that created this object.
  std::optional<std::string_view> ignoredStamp;
  for (const auto& value :
       {pod.templateAnnotation(kClassAnnotation), pod.objectAnnotation(kClassAnnotation)}) {
    if (!value) continue;
    if (!stampApplies(pod)) {
      ignoredStamp = *value;
      continue;
    }
    if (auto parsed = parseClass(*value)) {
      result.workloadClass = *parsed;
      result.basis = ClassBasis::ClassStamp;
      result.reason = "inferred from annotation " + annotationSetting(kClassAnnotation, *value) +
                      ", stamped by aiadmit on the workload that created it";
      return result;
    }
  }

  // 4. The kind, for objects that ask for an accelerator: by extended
  // resource, by a DRA claim of a GPU class, by a KAI share, or by annotation.
  std::string request = acceleratorRequest(view, pod);
  if (!request.empty()) request = "requests " + request;
  if (request.empty()) request = gpuClaimRequest(view, pod);
  if (request.empty()) request = gpuShareRequest(pod);
  if (request.empty()) {
    const auto gpus = gpusByAnnotation(pod);
    if (!gpus) {
      result.reason = unresolvedClaims(pod);
      if (result.reason.empty() && ignoredStamp) {
        result.reason = "annotation " + annotationSetting(kClassAnnotation, *ignoredStamp) +
                        (madeByController ? " was copied from its controller's workload"
                                          : " is aiadmit's record of an earlier decision") +
                        ", but it asks for no GPU";
      }
      return result;
    }
    request = "requests GPUs by annotation " + annotationSetting(kGpusAnnotation, *gpus);
  }
  result.workloadClass = classOfKind(view, &why);
  result.basis = ClassBasis::Kind;
  result.reason = "inferred from its kind: it " + request + " and " + why;
  return result;
}

}  // namespace aiadmit

namespace aiadmit {

namespace {

// Which basis wins when templates disagree: the developer's annotation, the
// profile the developer named, then aiadmit's own stamp, then the kind.
constexpr EnumEntry<ClassBasis, int> kBasisRanks[] = {{ClassBasis::WorkloadAnnotation, 4},
                                                      {ClassBasis::ProfileAnnotation, 3},
                                                      {ClassBasis::ClassStamp, 2},
                                                      {ClassBasis::Kind, 1},
                                                      {ClassBasis::Evidence, 1}};

int basisRank(ClassBasis basis) {
  return valueIn(kBasisRanks, basis, 0);
}

// A workload its kind makes batch that shows a sign of training is
// training: the kind cannot tell a training run from batch inference, and
// batch would give it batch priority. Still a guess, reported as inferred.
// An unknown aiadmit.dev/workload value keeps the kind's class: AIA001 asks
// the developer to state it. A controller's object is its workload's role.
void inferTrainingFromWhatItRuns(WorkloadClassification& workload,
                                 std::span<const PodTemplateView> templates,
                                 std::span<const PodReader> pods, bool madeByController) {
  Classification& classification = workload.classification;
  if (madeByController || classification.basis != ClassBasis::Kind ||
      classification.workloadClass != WorkloadClass::Batch || classification.unknownWorkloadValue) {
    return;
  }
  const std::optional<std::string> sign = trainingSign(templates, pods);
  if (!sign) return;
  classification.workloadClass = WorkloadClass::Training;
  classification.basis = ClassBasis::Evidence;
  classification.reason =
      "inferred from what it runs: " + *sign + "; by its kind alone it would be batch";
}

}  // namespace

size_t WorkloadClassification::primaryTemplate() const {
  return acceleratorTemplate.value_or(decidingTemplate.value_or(0));
}

WorkloadClassification classifyWorkload(std::span<const PodTemplateView> templates,
                                        std::span<const PodReader> pods, bool madeByController,
                                        const ProfileSet* profiles) {
  WorkloadClassification result;
  for (size_t i = 0; i < templates.size() && i < pods.size(); ++i) {
    Classification one = classify(templates[i], pods[i], madeByController, profiles);
    if (!result.classification.unknownWorkloadValue && one.unknownWorkloadValue) {
      result.classification.unknownWorkloadValue = one.unknownWorkloadValue;
    }
    // The strongest statement decides; among equals, the first template.
    if (basisRank(one.basis) > basisRank(result.classification.basis)) {
      one.unknownWorkloadValue = result.classification.unknownWorkloadValue;
      result.classification = std::move(one);
      result.decidingTemplate = i;
    } else if (!result.classification.isAiWorkload() && result.classification.reason.empty()) {
      // Why an object that is no AI workload was not taken for one.
      result.classification.reason = std::move(one.reason);
    }
  }
  inferTrainingFromWhatItRuns(result, templates, pods, madeByController);
  // The template that asks for an accelerator is the workload's main one:
  // profile selection reads its labels and annotations. Failing that, the
  // first that names one, even as 0: it has said what it wants, whatever
  // else (aiadmit's own stamps on a second look) decided the class, so the
  // same object has the same main template every time it is judged.
  for (size_t i = 0; i < pods.size(); ++i) {
    if (pods[i].asksForGpus()) {
      result.acceleratorTemplate = i;
      return result;
    }
  }
  for (size_t i = 0; i < pods.size(); ++i) {
    if (pods[i].namesAccelerator()) {
      result.acceleratorTemplate = i;
      break;
    }
  }
  return result;
}

}  // namespace aiadmit
