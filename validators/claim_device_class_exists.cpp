#include "validators/claim_device_class_exists.h"

namespace aiadmit {

void ClaimDeviceClassExistsValidator::check(const ClaimValidationContext& context,
                                            std::vector<Violation>& out) const {
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
      out.push_back({AIA019, claimFieldPath(context.claim, alternative, "deviceClassName"),
                     std::move(problem), std::move(fix),
                     "DeviceClass " + quoted + " does not exist" +
                         (suggestion.empty() ? "; name one that exists"
                                             : "; did you mean " + inQuotes(suggestion) + "?")});
      out.back().absent = ClusterRef{ClusterKind::DeviceClass, "", name};
    }
  }
}

}  // namespace aiadmit
