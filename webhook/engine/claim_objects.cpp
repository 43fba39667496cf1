#include "webhook/engine/claim_objects.h"

#include "validators/registry.h"
#include "webhook/cluster/claim_resolution.h"
#include "webhook/engine/engine.h"
#include "webhook/model/accelerator_vendors.h"

namespace aiadmit {

bool isClaimObject(const AdmissionSubject& subject) {
  if (subject.group != "resource.k8s.io") return false;
  return subject.kindName == "ResourceClaim" || subject.kindName == "ResourceClaimTemplate";
}

namespace {

// What the claim asks for: the DeviceClass of its first request for
// accelerators (a known vendor's class, one whose name looks like an
// accelerator driver's, or one the cluster view says hands out GPUs).
AcceleratorAsk claimAsk(const ClaimObject& claim, const ClusterView* cluster) {
  for (const DeviceRequest& request : claim.spec.requests) {
    for (const DeviceAlternative& alternative : request.alternatives) {
      const std::string& name = alternative.deviceClassName;
      if (name.empty()) continue;
      if (vendorOfDeviceClass(name) != nullptr || isGpuDeviceClass(name, cluster)) {
        return deviceClassAsk(name, cluster);
      }
    }
  }
  return {};
}

// The class whose profile judges the object, and why.
WorkloadClass claimClass(const JsonValue& object, std::string_view namespaceName,
                         const ProfileSet& profiles, ClaimAssessment& out) {
  const JsonValue* metadata = member(&object, "metadata");
  const JsonValue* annotations = member(metadata, "annotations");
  const JsonValue* labels = member(metadata, "labels");
  const std::string_view declared = stringMember(annotations, kWorkloadAnnotation);
  if (const std::optional<WorkloadClass> stated = parseClass(declared)) {
    out.classReason = std::string(kWorkloadAnnotation) + ": " + std::string(declared);
    out.classDeclared = true;
    return *stated;
  }
  if (!declared.empty()) out.unknownWorkloadValue = std::string(declared);
  const std::string_view named = stringMember(annotations, kProfileAnnotation);
  if (const Profile* profile = profiles.find(named)) {
    out.classReason = std::string(kProfileAnnotation) + ": " + profile->name;
    out.classDeclared = true;
    return profile->workloadClass;
  }
  for (WorkloadClass candidate :
       {WorkloadClass::Training, WorkloadClass::Batch, WorkloadClass::Realtime}) {
    if (profiles.select(candidate, namespaceName, labels, nullptr, "", out.ask).profile !=
        nullptr) {
      out.classReason = "a " + std::string(claimKindName(out.claim)) + " without " +
                        std::string(kWorkloadAnnotation) + " is judged by the first of training, " +
                        "batch and realtime with a profile for namespace " +
                        std::string(namespaceName);
      return candidate;
    }
  }
  return WorkloadClass::None;
}

// Why no class has a profile for the claim when profiles match its scope but
// none places what it asks for; "" otherwise.
std::string unplacedByAnyClass(std::string_view namespaceName, const JsonValue* labels,
                               const ProfileSet& profiles, const AcceleratorAsk& ask) {
  if (!ask.any()) return "";
  for (WorkloadClass candidate :
       {WorkloadClass::Training, WorkloadClass::Batch, WorkloadClass::Realtime}) {
    std::string unplaced =
        profiles.select(candidate, namespaceName, labels, nullptr, "", ask).unplaced;
    if (!unplaced.empty()) return unplaced;
  }
  return "";
}

}  // namespace

ClaimAssessment assessClaim(const JsonValue& object, std::string_view namespaceName,
                            const ProfileSet& profiles, const ClusterView* cluster) {
  ClaimAssessment out;
  out.readable = readClaimObject(object, out.claim, nullptr);
  if (!out.readable) return out;
  out.ask = claimAsk(out.claim, cluster);
  out.workloadClass = claimClass(object, namespaceName, profiles, out);
  if (out.workloadClass == WorkloadClass::None) {
    out.unplaced = unplacedByAnyClass(namespaceName, member(member(&object, "metadata"), "labels"),
                                      profiles, out.ask);
    return out;
  }
  const JsonValue* metadata = member(&object, "metadata");
  out.selection =
      profiles.select(out.workloadClass, namespaceName, member(metadata, "labels"), nullptr,
                      stringMember(member(metadata, "annotations"), kProfileAnnotation), out.ask);
  out.unplaced = out.selection.unplaced;
  return out;
}

void collectClaimViolations(const ClaimAssessment& assessment, Operation operation,
                            const ClusterView* cluster, std::vector<Violation>& out) {
  if (!assessment.readable) return;
  // A profile named by annotation that cannot apply is judged by the one the
  // object gets without it (AIA001 says so).
  const Profile* profile = assessment.selection.profile != nullptr
                               ? assessment.selection.profile
                               : assessment.selection.withoutAnnotation;
  const ClaimValidationContext context{
      assessment.claim, profile, assessment.selection, assessment.unknownWorkloadValue,
      operation,        cluster};
  for (const RuleRow& row : ruleRows()) {
    for (const ClaimValidatorDeclaration* validator : row.claimChecks) {
      if (validator->profile == ProfileUse::Needed && profile == nullptr) continue;
      runCheck(row.rule.id, validator->check, context, out);
    }
  }
}

}  // namespace aiadmit
