#include "validators/claim_annotations.h"

#include "webhook/policy/classify.h"

namespace aiadmit {

void ClaimAnnotationsValidator::check(const ClaimValidationContext& context,
                                      std::vector<Violation>& out) const {
  if (!context.unknownWorkloadValue.empty()) {
    const std::string value = inQuotes(context.unknownWorkloadValue);
    out.push_back({AIA001, "metadata.annotations[" + std::string(kWorkloadAnnotation) + "]",
                   value + " is not a class of AI work, so the class of the " +
                       std::string(claimKindName(context.claim)) + " falls back to the default",
                   "write training, batch or realtime",
                   value + " is not a class; write training, batch or realtime"});
  }
  if (!context.selection.error.empty()) {
    Violation violation{AIA001, "metadata.annotations[" + std::string(kProfileAnnotation) + "]",
                        context.selection.error,
                        "name a profile that applies to this namespace, or remove the annotation",
                        "the profile cannot apply; name another or remove it"};
    violation.profile = context.selection.withoutAnnotation;
    out.push_back(std::move(violation));
  }
}

}  // namespace aiadmit
