// A Pod's DRA claims resolved into the accelerator devices they hand out:
// its ResourceClaims and ResourceClaimTemplates looked up in the cluster
// view, each request's DeviceClass judged by what the view holds of it (a
// class the view lacks, by its name alone). Without a view only KEP-5004
// names resolve, and every claim is reported unresolved.
#pragma once

#include <string_view>

#include "webhook/cluster/cluster_view.h"
#include "webhook/model/dra.h"
#include "webhook/model/pod_reader.h"

namespace aiadmit {

// Whether `deviceClassName` hands out GPUs (or other accelerators): its name
// looks like an accelerator driver's (gpu.nvidia.com, mig.nvidia.com,
// gpu.amd.com, tpu.google.com), or `cluster` holds the class and its
// selectors or extended resource name are an accelerator's.
bool isGpuDeviceClass(std::string_view deviceClassName, const ClusterView* cluster);

// The Pod's claims resolved in `cluster` (null: none) for the namespace the
// object is admitted in.
ClaimedDevices resolveClaims(const PodClaims& claims, const ClusterView* cluster,
                             std::string_view namespaceName);
// The same, handed to the reader (PodReader::claimedDevices).
PodReader& resolveClaimsOf(PodReader& pod, const ClusterView* cluster,
                           std::string_view namespaceName);

}  // namespace aiadmit
