#include "validators/claim_validator.h"

#include "webhook/policy/classify.h"

namespace aiadmit {

namespace {

// AIA001 on claim objects: aiadmit.dev/workload with a value that is not a
// class, or aiadmit.dev/profile naming a profile that cannot apply. The
// object is then judged as if it had no such annotation.
void checkClaimAnnotations(const ClaimValidationContext& context, std::vector<Violation>& out) {
  if (!context.unknownWorkloadValue.empty()) {
    const std::string value = inQuotes(context.unknownWorkloadValue);
    out.push_back({"metadata.annotations[" + std::string(kWorkloadAnnotation) + "]",
                   value + " is not a class of AI work, so the class of the " +
                       std::string(claimKindName(context.claim)) + " falls back to the default",
                   "write training, batch or realtime",
                   value + " is not a class; write training, batch or realtime"});
  }
  if (!context.selection.error.empty()) {
    Violation violation{"metadata.annotations[" + std::string(kProfileAnnotation) + "]",
                        context.selection.error,
                        "name a profile that applies to this namespace, or remove the annotation",
                        "the profile cannot apply; name another or remove it"};
    violation.profile = context.selection.withoutAnnotation;
    out.push_back(std::move(violation));
  }
}

}  // namespace

extern const ClaimValidatorDeclaration kClaimAnnotationsValidator{
    .name = "claim-annotations", .profile = ProfileUse::NotNeeded, .check = checkClaimAnnotations};

}  // namespace aiadmit
