#include "webhook/cluster/claim_resolution.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "webhook/model/resources.h"

namespace aiadmit {

bool isGpuDeviceClass(std::string_view deviceClassName, const ClusterView* cluster) {
  if (looksLikeAcceleratorDriver(deviceClassName)) return true;
  return cluster != nullptr && cluster->isGpuDeviceClass(deviceClassName) == Presence::Yes;
}

namespace {

// The devices one request of a claim needs, when it asks for GPUs at all:
// nullopt when none of its alternatives is a GPU class, or it only watches
// devices (adminAccess). Counts as GpuClaim::devices says.
struct GpuRequest {
  std::string deviceClassName;
  int64_t devices = 0;
  bool shares = false;
};
std::optional<GpuRequest> gpuRequestOf(const DeviceRequest& request, const ClusterView* cluster) {
  std::optional<GpuRequest> gpu;
  bool allGpus = true;
  int64_t fewest = std::numeric_limits<int64_t>::max();
  for (const DeviceAlternative& alternative : request.alternatives) {
    if (alternative.adminAccess || !isGpuDeviceClass(alternative.deviceClassName, cluster)) {
      allGpus = false;
      continue;
    }
    if (!gpu) gpu = GpuRequest{alternative.deviceClassName, 0, false};
    gpu->shares = gpu->shares || alternative.consumesShares();
    fewest = alternative.mode == AllocationMode::All ? 0 : std::min(fewest, alternative.count);
  }
  if (gpu && allGpus) gpu->devices = fewest;
  return gpu;
}

// The first container that uses `claim`, for messages.
const ContainerClaimUse* firstUse(const PodClaims& claims, std::string_view claim) {
  for (const ContainerClaimUse& use : claims.uses) {
    if (use.claim == claim) return &use;
  }
  return nullptr;
}

// The spec of the claim `source` names, from the view: a ResourceClaim by
// resourceClaimName, or the template of resourceClaimTemplateName. Null,
// with the reason in `out.unresolved`, when the view does not hold it.
const ClaimSpec* claimSpecOf(const PodClaimSource& source, const ClusterView* cluster,
                             std::string_view namespaceName, ClaimedDevices& out) {
  const bool byName = !source.resourceClaimName.empty();
  const ClaimSpec* spec = nullptr;
  if (byName && cluster != nullptr) {
    const ClaimRecord* record = cluster->claim(namespaceName, source.resourceClaimName);
    spec = record != nullptr ? &record->spec : nullptr;
  } else if (!byName && cluster != nullptr) {
    const ClaimTemplateRecord* record =
        cluster->claimTemplate(namespaceName, source.resourceClaimTemplateName);
    spec = record != nullptr ? &record->spec : nullptr;
  }
  if (spec == nullptr) {
    out.unresolved.push_back("claim " + source.name + ": " +
                             (byName
                                  ? "ResourceClaim " + source.resourceClaimName
                                  : "ResourceClaimTemplate " + source.resourceClaimTemplateName) +
                             " is not known");
  }
  return spec;
}

void resolveSource(const PodClaims& claims, const PodClaimSource& source,
                   const ClusterView* cluster, std::string_view namespaceName,
                   ClaimedDevices& out) {
  // Neither name, or both: malformed; AIA019 reads it.
  if (source.resourceClaimName.empty() == source.resourceClaimTemplateName.empty()) return;
  const ClaimSpec* spec = claimSpecOf(source, cluster, namespaceName, out);
  if (spec == nullptr) return;
  const ContainerClaimUse* use = firstUse(claims, source.name);
  std::optional<GpuClaim> gpu;
  for (const DeviceRequest& request : spec->requests) {
    const std::optional<GpuRequest> asked = gpuRequestOf(request, cluster);
    if (!asked) continue;
    if (!gpu) {
      gpu = GpuClaim{source.name,
                     "",
                     use ? use->container : "",
                     use && use->initContainer,
                     asked->deviceClassName,
                     0,
                     false,
                     source.fieldPath};
    }
    gpu->devices += asked->devices;
    gpu->shares = gpu->shares || asked->shares;
  }
  if (gpu) out.gpus.push_back(std::move(*gpu));
}

}  // namespace

ClaimedDevices resolveClaims(const PodClaims& podClaims, const ClusterView* cluster,
                             std::string_view namespaceName) {
  ClaimedDevices out;
  for (const PodClaimSource& source : podClaims.sources) {
    resolveSource(podClaims, source, cluster, namespaceName, out);
  }
  for (const ContainerDeviceClassRequest& request : podClaims.deviceClassRequests) {
    if (!isGpuDeviceClass(request.deviceClassName, cluster)) continue;
    // Asked for by an operator's annotation: named by that annotation.
    out.gpus.push_back(
        {"",
         request.byAnnotation ? request.fieldPath
                              : std::string(kDeviceClassResourcePrefix) + request.deviceClassName,
         request.container, request.initContainer, request.deviceClassName,
         // An init container runs before the others and its devices
         // may be theirs afterwards: leaving them out keeps the count
         // one the Pod certainly needs.
         request.initContainer ? 0 : request.count.value_or(0), false, request.fieldPath});
  }
  return out;
}

PodReader& resolveClaimsOf(PodReader& pod, const ClusterView* cluster,
                           std::string_view namespaceName) {
  pod.setClaimedDevices(resolveClaims(pod.claims(), cluster, namespaceName));
  return pod;
}

}  // namespace aiadmit
