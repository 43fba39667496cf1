#include "webhook/engine/assessment.h"

#include <algorithm>

#include "webhook/cluster/claim_resolution.h"
#include "webhook/codec/json_pointer.h"
#include "webhook/engine/engine.h"
#include "webhook/model/annotations.h"

namespace aiadmit {

namespace {

const JsonValue* labelsOf(const JsonValue* metadata) {
  return member(metadata, "labels");
}

ProfileSelection selectProfile(const ProfileSet& profiles, const PodTemplateView& view,
                               WorkloadClass workloadClass, std::string_view namespaceName,
                               const AcceleratorAsk& ask) {
  const JsonValue* labels = labelsOf(member(view.object, "metadata"));
  const JsonValue* templateLabels = labelsOf(view.metadata);
  const std::string_view requested = declaredAnnotation(view, kProfileAnnotation).value_or("");
  ProfileSelection selection =
      profiles.select(workloadClass, namespaceName, labels, templateLabels, requested, ask);
  // aiadmit writes aiadmit.dev/profile beside aiadmit.dev/class on what it
  // mutates: with a class stamp, the profile is aiadmit's record of its last
  // decision, not the developer's choice. When that record cannot apply (the
  // profile was renamed or removed, or the developer changed the class), the
  // workload must stay updatable: select again as if it named none, and the
  // stamp mutator brings the record up to date.
  const bool recorded = declaredAnnotation(view, kClassAnnotation).has_value();
  if (selection.profile == nullptr && !requested.empty() && recorded) {
    ProfileSelection fresh =
        profiles.select(workloadClass, namespaceName, labels, templateLabels, "", ask);
    if (fresh.profile != nullptr) {
      fresh.reason =
          "recorded profile " + std::string(requested) + " no longer applies; " + fresh.reason;
      return fresh;
    }
  }
  return selection;
}

}  // namespace

const PodTemplateView* Assessment::primary() const {
  if (views.empty()) return nullptr;
  const size_t index = workload.primaryTemplate();
  return &views[index < views.size() ? index : 0];
}

const WorkloadType* workloadTypeOf(const AdmissionSubject& subject,
                                   const WorkloadTypeTable& table) {
  return table.find(subject.group, subject.version, subject.kindName);
}

namespace {

// Whether any template or the object speaks to aiadmit: its stamp, or a
// developer's statement (class, profile, GPUs, main container).
bool anyAiadmitAnnotation(const std::vector<PodReader>& pods) {
  return std::any_of(pods.begin(), pods.end(), [](const PodReader& pod) {
    return std::any_of(std::begin(kWorkloadAnnotationKeys), std::end(kWorkloadAnnotationKeys),
                       [&](std::string_view key) { return pod.annotation(key).has_value(); });
  });
}

bool madeByTableKind(const JsonValue& object, const WorkloadTypeTable& table) {
  const auto [group, kind] = controllerGroupKind(object);
  return !kind.empty() && table.findGroupKind(group, kind) != nullptr;
}

// "KIND.GROUP" of a controller that is neither a row's kind nor one of
// Kubernetes' own; "" otherwise.
std::string unknownControllerOf(const JsonValue& object, const WorkloadTypeTable& table) {
  const auto [group, kind] = controllerGroupKind(object);
  if (kind.empty() || group.empty() || group == "apps" || group == "batch" ||
      table.findGroupKind(group, kind) != nullptr) {
    return "";
  }
  return std::string(kind) + "." + std::string(group);
}

}  // namespace

Assessment assess(const JsonValue& object, const AdmissionSubject& subject,
                  const ProfileSet& profiles, const ClusterView* cluster,
                  std::optional<WorkloadClass> asClass) {
  Assessment assessment;
  assessment.madeByController = subject.ownerTrusted && madeByController(object);
  assessment.type = workloadTypeOf(subject, profiles.workloadTypes());
  if (assessment.type == nullptr) return assessment;
  if (assessment.madeByController) {
    assessment.unknownController = unknownControllerOf(object, profiles.workloadTypes());
  }
  assessment.resolution = resolveTemplates(*assessment.type, object);
  if (!assessment.resolution.ok()) return assessment;
  for (const ResolvedTemplate& place : assessment.resolution.templates) {
    // A template that is only a ResourceRequirements (a TrainJob's
    // resourcesPerNode) is a view too: the pod reader reads it as the main
    // container of each node, and the row lets only GPU limits in.
    if (place.slot == nullptr) continue;
    assessment.views.push_back(PodTemplateView::at(object, *assessment.type, place));
  }
  // A Kubernetes kind without its template (a Pod without spec) is still
  // read as one: its annotations may declare it.
  if (assessment.views.empty() && !assessment.type->customResource) {
    assessment.views.push_back(PodTemplateView::ofFirstSlot(object, *assessment.type));
  }
  assessment.pods.reserve(assessment.views.size());
  for (const PodTemplateView& view : assessment.views) {
    assessment.pods.push_back(PodReader::of(view));
    resolveClaimsOf(assessment.pods.back(), cluster, subject.namespaceName);
  }
  assessment.fromUnjudgedController = assessment.madeByController &&
                                      !anyAiadmitAnnotation(assessment.pods) &&
                                      madeByTableKind(object, profiles.workloadTypes());
  assessment.workload =
      classifyWorkload(assessment.views, assessment.pods, assessment.madeByController, &profiles);
  if (asClass && assessment.workload.classification.isAiWorkload()) {
    assessment.workload.classification.workloadClass = *asClass;
    assessment.workload.classification.basis = ClassBasis::Kind;
  }
  const Classification& classification = assessment.workload.classification;
  if (classification.isAiWorkload()) {
    const size_t primary = assessment.workload.primaryTemplate();
    assessment.ask =
        acceleratorAsk(assessment.pods[primary < assessment.pods.size() ? primary : 0], cluster);
    assessment.selection =
        selectProfile(profiles, *assessment.primary(), classification.workloadClass,
                      subject.namespaceName, assessment.ask);
  }
  return assessment;
}

std::string describeTemplate(const PodTemplateView& view) {
  std::string text(view.role());
  if (view.place == nullptr) return text;
  text += " \u00d7";
  text += view.place->replicas ? std::to_string(*view.place->replicas) : std::string("?");
  return text;
}

namespace {

const JsonValue* controllerOwner(const JsonValue& object) {
  const JsonValue* owners = member(member(&object, "metadata"), "ownerReferences");
  if (owners == nullptr || !owners->IsArray()) return nullptr;
  for (const JsonValue& owner : owners->GetArray()) {
    const JsonValue* controller = member(&owner, "controller");
    if (controller != nullptr && controller->IsBool() && controller->GetBool()) return &owner;
  }
  return nullptr;
}

}  // namespace

bool madeByController(const JsonValue& object) {
  return controllerOwner(object) != nullptr;
}

std::pair<std::string_view, std::string_view> controllerGroupKind(const JsonValue& object) {
  const JsonValue* owner = controllerOwner(object);
  if (owner == nullptr) return {};
  return {splitApiVersion(stringOf(member(owner, "apiVersion"))).group,
          stringOf(member(owner, "kind"))};
}

}  // namespace aiadmit
