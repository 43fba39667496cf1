#include "validators/claim_validator.h"

namespace aiadmit {

namespace {

// AIA019 on claim objects: a device request of a ResourceClaim or
// ResourceClaimTemplate (any alternative of a firstAvailable request) names
// a DeviceClass the cluster view knows does not exist. The same fact as for
// a Pod's claims (claim_references), found where it was written; says
// nothing without a cluster view or while DeviceClasses are not listed.
void checkClaimDeviceClassExists(const ClaimValidationContext& context,
                                 std::vector<Violation>& out) {
  const ClusterView* cluster = context.cluster;
  if (cluster == nullptr) return;
  std::vector<std::string_view> known;
  if (context.profile != nullptr) {
    known.assign(context.profile->gpu.deviceClasses.begin(),
                 context.profile->gpu.deviceClasses.end());
  }
  for (const DeviceRequest& request : context.claim.spec.requests) {
    for (const DeviceAlternative& alternative : request.alternatives) {
      const std::string& name = alternative.deviceClassName;
      if (name.empty() || cluster->hasDeviceClass(name) != Presence::No) continue;
      // Only suggest a class the cluster has.
      std::string_view suggestion = plausibleName(name, known);
      if (!suggestion.empty() && cluster->hasDeviceClass(suggestion) != Presence::Yes) {
        suggestion = {};
      }
      const std::string quoted = inQuotes(name);
      std::string problem = "DeviceClass " + quoted +
                            " does not exist in the cluster, so no claim for it can be " +
                            "allocated and a Pod using it stays Pending";
      std::string fix = "name a DeviceClass that `kubectl get deviceclasses` lists";
      if (!suggestion.empty()) {
        fix = "did you mean " + inQuotes(suggestion) + "? Set deviceClassName to it";
      }
      out.push_back({claimFieldPath(context.claim, alternative, "deviceClassName"),
                     std::move(problem), std::move(fix),
                     "DeviceClass " + quoted + " does not exist" +
                         (suggestion.empty() ? "; name one that exists"
                                             : "; did you mean " + inQuotes(suggestion) + "?")});
      out.back().absent = ClusterRef{ClusterKind::DeviceClass, "", name};
    }
  }
}

}  // namespace

extern const ClaimValidatorDeclaration kClaimDeviceClassExistsValidator{
    .name = "claim-device-class-exists",
    .profile = ProfileUse::NotNeeded,
    .check = checkClaimDeviceClassExists};

}  // namespace aiadmit
