#include "validators/claim_validator.h"

namespace aiadmit {

std::string claimFieldPath(const ClaimObject& claim, const DeviceAlternative& alternative,
                           std::string_view field) {
  std::string path = claim.specPath + "." + alternative.fieldPath;
  if (!field.empty()) {
    path += '.';
    path += field;
  }
  return path;
}

std::string_view claimKindName(const ClaimObject& claim) {
  return claim.isTemplate ? "ResourceClaimTemplate" : "ResourceClaim";
}

}  // namespace aiadmit
