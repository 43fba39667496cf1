#include "webhook/model/accelerator_vendors.h"

#include <algorithm>
#include <array>

#include "webhook/codec/text.h"
#include "webhook/model/resources.h"

namespace aiadmit {

namespace {

// NVIDIA's device plugin offers whole GPUs, time-sliced or MPS shares
// renamed ".shared", and MIG slices; HAMi sells GPU memory and cores by the
// unit under the same domain.
constexpr std::string_view kNvidiaResources[] = {"nvidia.com/gpu", "nvidia.com/gpu.shared",
                                                 "nvidia.com/gpumem", "nvidia.com/gpucores",
                                                 "nvidia.com/gpumem-percentage"};
constexpr std::string_view kNvidiaClasses[] = {"gpu.nvidia.com", "mig.nvidia.com"};
constexpr std::string_view kAmdResources[] = {"amd.com/gpu"};
constexpr std::string_view kAmdClasses[] = {"gpu.amd.com"};
// Intel's GPU plugin: i915 or xe by kernel driver, their monitoring
// resources, and the shared-GPU resources of its resource management.
constexpr std::string_view kIntelResources[] = {
    "gpu.intel.com/i915",          "gpu.intel.com/xe",         "gpu.intel.com/i915_monitoring",
    "gpu.intel.com/xe_monitoring", "gpu.intel.com/millicores", "gpu.intel.com/memory.max",
    "gpu.intel.com/tiles"};
constexpr std::string_view kIntelClasses[] = {"gpu.intel.com"};
constexpr std::string_view kGaudiResources[] = {"habana.ai/gaudi"};
constexpr std::string_view kGaudiClasses[] = {"gaudi.intel.com"};
constexpr std::string_view kNeuronResources[] = {
    "aws.amazon.com/neuron", "aws.amazon.com/neuroncore", "aws.amazon.com/neurondevice"};
constexpr std::string_view kTpuResources[] = {"google.com/tpu"};
constexpr std::string_view kTpuClasses[] = {"tpu.google.com"};
constexpr std::string_view kAscendResources[] = {"huawei.com/Ascend910", "huawei.com/Ascend310",
                                                 "huawei.com/Ascend310P"};

const std::array<AcceleratorVendor, 7> kVendors = {{
    {"nvidia", "NVIDIA", "nvidia.com", "nvidia.com/gpu", kNvidiaResources, kNvidiaClasses},
    {"amd", "AMD", "amd.com", "amd.com/gpu", kAmdResources, kAmdClasses},
    {"intel", "Intel", "gpu.intel.com", "gpu.intel.com/i915", kIntelResources, kIntelClasses},
    {"gaudi", "Intel Gaudi", "habana.ai", "habana.ai/gaudi", kGaudiResources, kGaudiClasses},
    {"neuron", "AWS Neuron", "aws.amazon.com", "aws.amazon.com/neuron", kNeuronResources, {}},
    {"tpu", "Google TPU", "google.com", "google.com/tpu", kTpuResources, kTpuClasses},
    {"ascend", "Huawei Ascend", "huawei.com", "huawei.com/Ascend910", kAscendResources, {}, false},
}};

// A misspelling is at most this many letters off a known name.
constexpr size_t kNearMiss = 2;

std::string_view domainOf(std::string_view name) {
  const size_t slash = name.find('/');
  return slash == std::string_view::npos ? std::string_view() : name.substr(0, slash);
}

bool isCanonicalMigSlice(std::string_view name) {
  if (domainOf(name) != "nvidia.com") return false;
  const std::optional<std::string> canonical = migResourceName(name);
  return canonical && *canonical == name;
}

// The closest known name of a vendor with closed names within kNearMiss;
// "" when none is.
std::string_view nearestKnownName(std::string_view name) {
  std::string_view best;
  size_t bestDistance = kNearMiss + 1;
  for (const AcceleratorVendor& vendor : kVendors) {
    if (!vendor.closedNames) continue;
    for (std::string_view known : vendor.resources) {
      const size_t longer = std::max(known.size(), name.size());
      const size_t shorter = std::min(known.size(), name.size());
      if (longer - shorter > kNearMiss) continue;
      const size_t distance = editDistance(name, known);
      if (distance < bestDistance) {
        best = known;
        bestDistance = distance;
      }
    }
  }
  return best;
}

// "nvidia/gpu": a vendor's domain cut short to its first label.
std::optional<std::string> shortDomain(std::string_view name) {
  const std::string_view domain = domainOf(name);
  if (domain.empty() || domain.find('.') != std::string_view::npos) return std::nullopt;
  for (const AcceleratorVendor& vendor : kVendors) {
    if (!vendor.closedNames || vendor.domain.substr(0, vendor.domain.find('.')) != domain) continue;
    const std::string full = std::string(vendor.domain) + std::string(name.substr(domain.size()));
    if (isKnownAcceleratorResource(full)) return full;
    const std::string_view near = nearestKnownName(full);
    if (!near.empty()) return std::string(near);
  }
  return std::nullopt;
}

}  // namespace

std::span<const AcceleratorVendor> acceleratorVendors() {
  return kVendors;
}

const AcceleratorVendor* vendorOfResource(std::string_view resourceName) {
  const std::string_view domain = domainOf(resourceName);
  for (const AcceleratorVendor& vendor : kVendors) {
    if (vendor.domain == domain) return &vendor;
  }
  return nullptr;
}

const AcceleratorVendor* vendorOfDeviceClass(std::string_view deviceClassOrDriver) {
  for (const AcceleratorVendor& vendor : kVendors) {
    for (std::string_view deviceClass : vendor.deviceClasses) {
      if (deviceClass == deviceClassOrDriver) return &vendor;
    }
  }
  return nullptr;
}

bool isKnownAcceleratorResource(std::string_view resourceName) {
  if (isCanonicalMigSlice(resourceName)) return true;
  const AcceleratorVendor* vendor = vendorOfResource(resourceName);
  return vendor != nullptr && std::find(vendor->resources.begin(), vendor->resources.end(),
                                        resourceName) != vendor->resources.end();
}

std::optional<std::string> misspeltAcceleratorName(std::string_view resourceName) {
  if (isKnownAcceleratorResource(resourceName)) return std::nullopt;
  if (editDistance(resourceName, kRemovedNvidiaGpuResource) == 0) return "nvidia.com/gpu";
  if (domainOf(resourceName).empty()) return std::nullopt;
  const AcceleratorVendor* vendor = vendorOfResource(resourceName);
  if (vendor != nullptr && !vendor->closedNames) return std::nullopt;
  if (std::optional<std::string> mig = migResourceName(resourceName);
      mig && (vendor == nullptr || vendor->key == "nvidia")) {
    return mig;
  }
  if (const std::string_view near = nearestKnownName(resourceName); !near.empty()) {
    return std::string(near);
  }
  return shortDomain(resourceName);
}

std::string acceleratorFamily(std::string_view resourceName) {
  const std::string_view domain = domainOf(resourceName);
  if (domain.empty()) return "";
  if (const AcceleratorVendor* vendor = vendorOfResource(resourceName)) {
    return std::string(vendor->key);
  }
  if (const std::optional<std::string> meant = misspeltAcceleratorName(resourceName)) {
    if (const AcceleratorVendor* vendor = vendorOfResource(*meant)) return std::string(vendor->key);
  }
  return std::string(domain);
}

}  // namespace aiadmit
