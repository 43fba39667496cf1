// Whether each profile's pool is a place in this cluster: a profile whose
// pool (node selector, required affinity and the taints it tolerates)
// matches none of the nodes that offer accelerators sends every workload it
// places to no node at all, so they would stay Pending without a word. Read
// once per profile set and per set of Nodes; `profiles lint --cluster`
// refuses such a profile, `serve` logs it, counts it in /metrics and warns on
// each request that uses it.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "webhook/cluster/cluster_view.h"
#include "webhook/policy/profile_set.h"

namespace aiadmit {

struct UnmatchedPool {
  std::string profile;
  std::string sourceFile;
  int sourceLine = 0;
  size_t gpuNodes = 0;     // the cluster's nodes that offer accelerators
  std::string nodeGroups;  // "cloud.google.com/gke-nodepool=a100, ..."

  // What is wrong and what it leads to, without where the profile is.
  std::string problem() const;
  // The fix, one sentence.
  static std::string_view fix();
  // Both in a few words, for the warning line of a request the profile
  // places (the API server drops a line over 120 characters).
  static std::string_view brief();
};

struct PoolFit {
  // By profile name. Empty when the cluster has no GPU node (nothing to
  // match: a cluster that scales its GPU groups to zero) or every pool
  // matches one, and when the view has not listed its Nodes.
  std::map<std::string, UnmatchedPool, std::less<>> unmatched;

  const UnmatchedPool* find(std::string_view profile) const;
  bool operator==(const PoolFit& other) const;
};

PoolFit fitPools(const ProfileSet& profiles, const ClusterView& view);

}  // namespace aiadmit
