#include "webhook/policy/pool_fit.h"

#include <set>

#include "webhook/cluster/cluster_pools.h"
#include "webhook/model/scheduling.h"
#include "webhook/waiting/node_groups.h"

namespace aiadmit {

std::string UnmatchedPool::problem() const {
  return "the pool of profile " + profile + " matches none of the cluster's " +
         std::to_string(gpuNodes) + " GPU nodes (node groups: " + nodeGroups +
         "), so every workload it places would stay Pending";
}

std::string_view UnmatchedPool::fix() {
  return "fit the profiles to the cluster's GPU node groups (`aiadmit profiles init`)";
}

std::string_view UnmatchedPool::brief() {
  return "no GPU node of this cluster matches the pool: its Pods would stay Pending; run "
         "profiles init";
}

const UnmatchedPool* PoolFit::find(std::string_view profile) const {
  const auto found = unmatched.find(profile);
  return found == unmatched.end() ? nullptr : &found->second;
}

bool PoolFit::operator==(const PoolFit& other) const {
  if (unmatched.size() != other.unmatched.size()) return false;
  for (const auto& [name, pool] : unmatched) {
    const UnmatchedPool* same = other.find(name);
    if (same == nullptr || same->problem() != pool.problem()) return false;
  }
  return true;
}

PoolFit fitPools(const ProfileSet& profiles, const ClusterView& view) {
  PoolFit fit;
  if (!view.knows(ClusterKind::Node) || !hasGpuNodes(view)) return fit;
  const std::vector<NodeGroup> groups = gpuNodeGroups(view);
  std::set<std::string, std::less<>> gpuNodes;
  std::string names;
  for (const NodeGroup& group : groups) {
    gpuNodes.insert(group.nodes.begin(), group.nodes.end());
    names +=
        (names.empty() ? "" : ", ") +
        (group.labelKey.empty() ? group.nodes.front() : group.labelKey + "=" + group.labelValue);
  }
  for (const Profile& profile : profiles.profiles()) {
    if (!placementDefinesPool(profile.placement)) continue;
    bool matched = false;
    for (const ClusterNode& node : view.nodes()) {
      if (gpuNodes.contains(node.name) && nodeMatches(node, profile.placement)) {
        matched = true;
        break;
      }
    }
    if (matched) continue;
    fit.unmatched.emplace(profile.name, UnmatchedPool{profile.name, profile.sourceFile,
                                                      profile.sourceLine, gpuNodes.size(), names});
  }
  return fit;
}

}  // namespace aiadmit
