#include "webhook/policy/accelerators.h"

#include <algorithm>

#include "webhook/codec/text.h"
#include "webhook/model/accelerator_vendors.h"
#include "webhook/model/dra.h"
#include "webhook/model/quantity.h"
#include "webhook/model/resources.h"

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

// The families (webhook/model/accelerator_vendors.h) of the names a profile
// lists: its vendors, or the domains of names of no known vendor.
std::vector<std::string> familiesOf(const Profile& profile) {
  std::vector<std::string> families{acceleratorFamily(profile.gpu.resourceName)};
  for (const std::string& allowed : profile.gpu.allowedResources) {
    std::string family = acceleratorFamily(allowed);
    if (std::find(families.begin(), families.end(), family) == families.end()) {
      families.push_back(std::move(family));
    }
  }
  return families;
}

bool listed(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool placesResource(const Profile& profile, std::string_view name) {
  if (profile.allowsResource(name)) return true;
  const std::string family = acceleratorFamily(name);
  // A name without a domain could be anyone's: the API server refuses it in
  // a container, and the profile's rules say what was meant.
  if (family.empty() || listed(familiesOf(profile), family)) return true;
  return nearAllowedName(name, profile);
}

// A DeviceClass the profile lists, a class of a driver it lists, or a near
// miss of a listed name that is no known vendor's class (a typo the profile's
// rules report rather than a pool it does not know).
bool placesDeviceClass(const Profile& profile, const AcceleratorAsk& ask) {
  const std::vector<std::string>& classes = profile.gpu.deviceClasses;
  if (listed(classes, ask.deviceClass)) return true;
  for (const std::string& driver : ask.drivers) {
    if (listed(classes, driver)) return true;
  }
  if (vendorOfDeviceClass(ask.deviceClass) != nullptr) return false;
  return std::any_of(classes.begin(), classes.end(), [&](const std::string& listedClass) {
    return editDistance(listedClass, ask.deviceClass) <= 2;
  });
}

// Another accelerator of the profile's vendor that misspells no name (a
// share its device plugin was configured to name, nvidia.com/sharedgpu):
// it runs on the vendor's pool. A misspelling runs nowhere (AIA003).
bool otherNameOfTheVendor(const PodReader& pod, const ResourceEntry& entry,
                          const Profile& profile) {
  const std::string_view name = entry.name;
  if (!pod.isAccelerator(entry) || name.find('/') == std::string_view::npos) return false;
  const AcceleratorVendor* vendor = vendorOfResource(name);
  const std::string family =
      vendor != nullptr ? std::string(vendor->key) : std::string(name.substr(0, name.find('/')));
  return listed(familiesOf(profile), family) && !nearAllowedName(name, profile) &&
         !misspeltAcceleratorName(name);
}

// What an extended resource asks for: the DeviceClass a KEP-5004 name
// stands for, or the name itself, with the DeviceClass that backs it where
// the cluster view knows one (DeviceClass spec.extendedResourceName).
AcceleratorAsk resourceAsk(std::string_view name, const ClusterView* cluster) {
  if (const std::optional<std::string_view> implicit = deviceClassOfResourceName(name)) {
    return deviceClassAsk(*implicit, cluster);
  }
  AcceleratorAsk ask = AcceleratorAsk::ofResource(name);
  if (cluster == nullptr) return ask;
  if (const DeviceClassRecord* backing = cluster->deviceClassForResource(name)) {
    ask.deviceClass = backing->name;
    ask.drivers = backing->drivers;
  }
  return ask;
}

}  // namespace

std::string AcceleratorAsk::describe() const {
  if (!resourceName.empty()) return resourceName;
  if (!deviceClass.empty()) return "DeviceClass " + deviceClass;
  return "devices of a claim not known yet";
}

AcceleratorAsk acceleratorAsk(const PodReader& pod, const ClusterView* cluster) {
  AcceleratorAsk ask;
  pod.forEachAccelerator([&](const ResourceEntry& entry) {
    if (ask.any()) return;
    const auto quantity = Quantity::fromJson(entry.value);
    if (quantity && !quantity->isZero() && !quantity->isNegative()) {
      ask = resourceAsk(entry.name, cluster);
    }
  });
  if (ask.any()) return ask;
  const ClaimedDevices& claimed = pod.claimedDevices();
  if (!claimed.gpus.empty()) return deviceClassAsk(claimed.gpus.front().deviceClassName, cluster);
  if (!claimed.unresolved.empty()) ask.pendingClaim = claimed.unresolved.front();
  return ask;
}

AcceleratorAsk deviceClassAsk(std::string_view deviceClass, const ClusterView* cluster) {
  AcceleratorAsk ask;
  ask.deviceClass = std::string(deviceClass);
  if (cluster == nullptr) return ask;
  if (const DeviceClassRecord* record = cluster->deviceClass(deviceClass)) {
    ask.drivers = record->drivers;
  }
  return ask;
}

bool placesAccelerator(const Profile& profile, const AcceleratorAsk& ask) {
  if (!ask.any()) return true;
  if (!ask.pendingClaim.empty()) return false;
  if (!ask.resourceName.empty() && placesResource(profile, ask.resourceName)) return true;
  return !ask.deviceClass.empty() && placesDeviceClass(profile, ask);
}

bool placeSameAccelerator(const Profile& a, const Profile& b) {
  const std::vector<std::string> familiesOfB = familiesOf(b);
  for (const std::string& family : familiesOf(a)) {
    if (listed(familiesOfB, family)) return true;
  }
  return std::any_of(a.gpu.deviceClasses.begin(), a.gpu.deviceClasses.end(),
                     [&](const std::string& name) { return listed(b.gpu.deviceClasses, name); });
}

std::string describePlaced(const Profile& profile) {
  std::vector<std::string_view> names(profile.gpu.allowedResources.begin(),
                                      profile.gpu.allowedResources.end());
  std::string text = quotedList(names, "and");
  if (profile.gpu.deviceClasses.empty()) return text;
  const std::vector<std::string_view> classes(profile.gpu.deviceClasses.begin(),
                                              profile.gpu.deviceClasses.end());
  return text + " and DeviceClasses " + quotedList(classes, "and");
}

bool ProfileAcceleratorNames::isAccelerator(std::string_view name) const {
  if (profile_ != nullptr && profile_->allowsResource(name)) return true;
  if (looksLikeAccelerator(name)) return true;
  return profile_ != nullptr && nearAllowedName(name, *profile_);
}

bool usesProfilePool(const PodReader& pod, const Profile& profile, const ClusterView* cluster) {
  bool uses = false;
  pod.forEachResource([&](const ResourceEntry& entry) {
    if (uses) return;
    if (!profile.allowsResource(entry.name) && !otherNameOfTheVendor(pod, entry, profile)) return;
    const auto quantity = Quantity::fromJson(entry.value);
    uses = quantity && !quantity->isZero() && !quantity->isNegative();
  });
  // The resources first: most GPU Pods ask for them, and the claims cost a
  // read of their own. A KAI share is a part of the GPUs the pool's nodes hold.
  if (uses || pod.asksForGpuShare()) return true;
  const std::vector<GpuClaim>& gpus = pod.claimedDevices().gpus;
  return std::any_of(gpus.begin(), gpus.end(), [&](const GpuClaim& claim) {
    return placesAccelerator(profile, deviceClassAsk(claim.deviceClassName, cluster));
  });
}

}  // namespace aiadmit
