// `aiadmit profiles init` and `profiles lint --cluster`: profiles whose pools
// are the cluster's real GPU node groups, and the check that a profile's
// pool matches a node of a cluster that has GPU nodes.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "webhook/cluster/cluster_view.h"
#include "webhook/policy/profile_set.h"
#include "webhook/waiting/node_groups.h"

namespace aiadmit {

// What a cloud's GPU nodes carry when it makes them: the label that names
// its node groups, and the placement for a cluster whose GPU groups are
// scaled to zero (no node to read it from).
struct ProfilePreset {
  std::string_view name;       // "gke", "eks", "aks", "gpu-operator"
  std::string_view poolLabel;  // "cloud.google.com/gke-nodepool"
  Placement placement;         // with no GPU node to read
};
const ProfilePreset* profilePreset(std::string_view name);

// The placement that sends GPU Pods to `groups`: their label (a nodeSelector
// for one group, `In` their values for several of the same label), and a
// toleration for every taint of theirs.
Placement placementFor(const std::vector<NodeGroup>& groups);

// The pool of each profile with one that matches no GPU node of `view`: one
// message per profile, "FILE:LINE: spec.placement: ...". Empty when the
// cluster has no GPU node (nothing to match) or every pool matches one.
std::vector<std::string> poolsMatchingNoNode(const ProfileSet& profiles, const ClusterView& view);

int profilesInitCommand(const std::vector<std::string>& args);

}  // namespace aiadmit
