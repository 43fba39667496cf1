#include "validators/claim_validator.h"

#include <algorithm>

#include "webhook/cluster/claim_resolution.h"

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
  return {claimFieldPath(context.claim, alternative, "deviceClassName"), std::move(problem),
          std::move(fix), std::move(brief)};
}

// AIA020: a device request of a ResourceClaim or ResourceClaimTemplate names
// an accelerator DeviceClass the profile's gpu.deviceClasses does not list
// (gpu.amd.com on an NVIDIA pool), or a near miss of one it lists
// ("gpu.nvidia.comm"), with "did you mean". Every alternative of a
// firstAvailable request is checked. Classes of other devices (NICs, CPUs)
// are not the profile's to judge; a class the cluster view knows does not
// exist is AIA019's.
void checkClaimDeviceClasses(const ClaimValidationContext& context, std::vector<Violation>& out) {
  const Profile& profile = *context.profile;
  const std::vector<std::string_view> allowed(profile.gpu.deviceClasses.begin(),
                                              profile.gpu.deviceClasses.end());
  for (const DeviceRequest& request : context.claim.spec.requests) {
    for (const DeviceAlternative& alternative : request.alternatives) {
      const std::string& name = alternative.deviceClassName;
      if (name.empty() || listed(profile.gpu.deviceClasses, name)) continue;
      const ClusterView* cluster = context.cluster;
      if (cluster != nullptr && cluster->hasDeviceClass(name) == Presence::No) continue;
      const bool accelerator = isGpuDeviceClass(name, cluster);
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

}  // namespace

extern const ClaimValidatorDeclaration kClaimDeviceClassesValidator{
    .name = "claim-device-classes", .check = checkClaimDeviceClasses};

}  // namespace aiadmit
