#include "webhook/policy/accelerators.h"

#include <algorithm>

#include "webhook/kube/quantity.h"
#include "webhook/kube/resources.h"
#include "webhook/kube/text.h"

namespace aiadmit {

namespace {

bool nearAllowedName(std::string_view name, const Profile& profile) {
  if (name.find('/') == std::string_view::npos) return false;
  auto near = [&](std::string_view allowed) {
    const size_t longer = std::max(name.size(), allowed.size());
    const size_t shorter = std::min(name.size(), allowed.size());
    return longer - shorter <= 2 && editDistance(name, allowed) <= 2;
  };
  if (near(profile.gpu.resourceName)) return true;
  return std::any_of(profile.gpu.allowedResources.begin(), profile.gpu.allowedResources.end(),
                     [&](const std::string& allowed) { return near(allowed); });
}

}  // namespace

bool ProfileAcceleratorNames::isAccelerator(std::string_view name) const {
  if (profile_ != nullptr && profile_->allowsResource(name)) return true;
  if (looksLikeAccelerator(name)) return true;
  return profile_ != nullptr && nearAllowedName(name, *profile_);
}

bool usesProfilePool(const PodReader& pod, const Profile& profile) {
  bool uses = false;
  pod.forEachResource([&](const ResourceEntry& entry) {
    if (uses || !profile.allowsResource(entry.name)) return;
    const auto quantity = Quantity::fromJson(entry.value);
    uses = quantity && !quantity->isZero() && !quantity->isNegative();
  });
  // The resources first: most GPU Pods ask for them, and the claims cost a
  // read of their own. A KAI share is a part of the GPUs the pool's nodes hold.
  return uses || pod.claimsGpus() || pod.asksForGpuShare();
}

}  // namespace aiadmit
