// The accelerator vendors aiadmit knows by name: the extended resources
// their device plugins offer and the DeviceClasses of their DRA drivers.
// Every accelerator has a home: a resource name belongs to the vendor whose
// domain it carries, and is never "corrected" into another vendor's. A name
// a few letters away from a name of a vendor whose names are all known here
// ("nvidia.com/gpus", "nvidia/gpu", "amd.com/gpus") is a misspelling of it.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace aiadmit {

struct AcceleratorVendor {
  std::string_view key;           // "amd": a profile's name suffix (profiles init)
  std::string_view name;          // "AMD", for messages
  std::string_view domain;        // the domain of its resource names: "amd.com"
  std::string_view resourceName;  // a whole device: "amd.com/gpu"
  // Every name its device plugins offer, but NVIDIA's MIG slices, which
  // follow nvidia.com/mig-<profile> (migResourceName).
  std::span<const std::string_view> resources;
  // The DeviceClasses its DRA drivers install, each named as its driver.
  std::span<const std::string_view> deviceClasses;
  // Whether `resources` lists every name its plugins offer: only then is a
  // near name a misspelling (Ascend's names follow each chip generation).
  bool closedNames = true;
};

// NVIDIA, AMD, Intel (GPU), Intel Gaudi, AWS Neuron, Google TPU, Huawei Ascend.
std::span<const AcceleratorVendor> acceleratorVendors();

// The vendor whose domain `resourceName` carries; null for any other.
const AcceleratorVendor* vendorOfResource(std::string_view resourceName);
// The vendor whose DRA driver installs `deviceClassOrDriver` (a DeviceClass
// named as its driver, or a driver's name); null for any other.
const AcceleratorVendor* vendorOfDeviceClass(std::string_view deviceClassOrDriver);

// Whether `resourceName` is a name a known vendor's device plugin offers:
// nvidia.com/gpu, nvidia.com/mig-1g.10gb, amd.com/gpu, habana.ai/gaudi.
bool isKnownAcceleratorResource(std::string_view resourceName);

// The known name that `resourceName` misspells: another case
// ("nvidia.com/GPU"), a few letters off ("amd.com/gpus"), the vendor's
// domain cut short ("nvidia/gpu"), a MIG slice written otherwise, or the
// GPU name Kubernetes removed. nullopt for a known name, for a name no known
// name is near, for a name of a vendor whose names are not all known, and
// for a name without a domain (which vendor it meant is anyone's guess).
std::optional<std::string> misspeltAcceleratorName(std::string_view resourceName);

// Where an accelerator resource belongs, for choosing the profile that
// places it: its vendor's key ("nvidia"), or for a misspelling, the key of
// the vendor whose name it misspells; else its own domain ("example.com").
// "" for a name without a domain.
std::string acceleratorFamily(std::string_view resourceName);

}  // namespace aiadmit
