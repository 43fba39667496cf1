// A snapshot of a live cluster as `aiadmit explain --kubeconfig` reads it:
// the objects of the kinds it explains from, listed in pages and written as
// kubectl writes `get -o json` (Lists whose items carry kind and apiVersion),
// so that a live cluster and a snapshot file are read by the same code.
#pragma once

#include <string>
#include <vector>

#include "webhook/cluster/api_client.h"

namespace aiadmit {

struct ListedSnapshot {
  std::string text;  // one List per resource and page, one after another
  // "resourceslices.resource.k8s.io": resources the cluster does not serve
  // (no DRA, no Kueue), which are then left out.
  std::vector<std::string> absent;
  // Optional resources the reader may not list (RBAC): also left out, and
  // named to the user, since what they hold is then unknown.
  std::vector<std::string> forbidden;
  std::string error;  // why a list failed (a refusal, no answer); names only
};

// Non-terminal Pods, Nodes, FailedScheduling Events, ResourceSlices,
// ResourceClaims, DeviceClasses, DeviceTaintRules, PodGroups, PriorityClasses,
// and Kueue's LocalQueues, ClusterQueues and Workloads, each in the first
// version the API serves.
ListedSnapshot listWaitingSnapshot(ApiClient& client);
// Nodes, ResourceSlices and DeviceClasses: the node groups `profiles init`
// writes pools for.
ListedSnapshot listNodeSnapshot(ApiClient& client);

}  // namespace aiadmit
