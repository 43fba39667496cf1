#include "validators/claim_device_classes.h"

#include <algorithm>

#include "webhook/model/resources.h"

namespace aiadmit {

namespace {

constexpr size_t kNearMiss = 2;

bool listed(const std::vector<std::string>& classes, std::string_view name) {
  return std::find(classes.begin(), classes.end(), name) != classes.end();
}

Violation notAllowed(const ClaimValidationContext& context, const DeviceAlternative& alternative,
                     std::string_view suggestion) {
  const Profile& profile = *context.profile;
  std::vector<std::string_view> allowed(profile.gpu.deviceClasses.begin(),
                                        profile.gpu.deviceClasses.end());
  const std::string name = inQuotes(alternative.deviceClassName);
  std::string problem = "DeviceClass " + name + " is not one profile " + profile.name +
                        " allows (" + quotedList(allowed, "or") + ")";
  std::string fix, brief;
  if (!suggestion.empty()) {
    problem += "; a misspelt class matches no device, so a Pod using the claim stays Pending";
    fix = "did you mean " + inQuotes(suggestion) + "? Set deviceClassName to it";
    brief = name + " is not allowed; did you mean " + inQuotes(suggestion) + "?";
  } else {
    problem += ", so Pods using this claim get devices outside the profile's pool";
    fix = "name one of " + quotedList(allowed, "or") +
          ", or ask the platform team to add it to the profile's gpu.deviceClasses";
    brief = name + " is not allowed; use " + quotedList(allowed, "or");
  }
  return {AIA020, claimFieldPath(context.claim, alternative, "deviceClassName"), std::move(problem),
          std::move(fix), std::move(brief)};
}

}  // namespace

void ClaimDeviceClassesValidator::check(const ClaimValidationContext& context,
                                        std::vector<Violation>& out) const {
  const Profile& profile = *context.profile;
  const std::vector<std::string_view> allowed(profile.gpu.deviceClasses.begin(),
                                              profile.gpu.deviceClasses.end());
  for (const DeviceRequest& request : context.claim.spec.requests) {
    for (const DeviceAlternative& alternative : request.alternatives) {
      const std::string& name = alternative.deviceClassName;
      if (name.empty() || listed(profile.gpu.deviceClasses, name)) continue;
      const ClusterView* cluster = context.cluster;
      if (cluster != nullptr && cluster->hasDeviceClass(name) == Presence::No) continue;
      const bool accelerator =
          looksLikeAcceleratorDriver(name) ||
          (cluster != nullptr && cluster->isGpuDeviceClass(name) == Presence::Yes);
      // A class of other devices may be a few letters away from a GPU
      // class ("rdma.nvidia.com"): only a very near miss is a typo of one.
      const Suggestion closest = closestName(name, allowed);
      const bool nearMiss = !closest.name.empty() && closest.distance <= kNearMiss;
      if (!accelerator && !nearMiss) continue;
      out.push_back(notAllowed(context, alternative,
                               accelerator ? plausibleName(name, allowed) : closest.name));
    }
  }
}

}  // namespace aiadmit
