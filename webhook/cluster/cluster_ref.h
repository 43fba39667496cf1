// An object of the cluster named by a workload (a PriorityClass, a
// LocalQueue, a claim template, a DeviceClass), and what a direct read of the
// API said of those the cluster view lacks. The view is a watch cache: an
// object created a moment ago (the same `kubectl apply -f` as the workload)
// may not be in it yet, so a rule that would deny because the view lacks an
// object asks the API first (webhook/cluster/api_lookup).
#pragma once

#include <compare>
#include <map>
#include <string>
#include <vector>

#include "webhook/cluster/cluster_view.h"

namespace aiadmit {

struct ClusterRef {
  ClusterKind kind = ClusterKind::PriorityClass;
  std::string namespaceName;  // "" for cluster-scoped kinds
  std::string name;

  auto operator<=>(const ClusterRef&) const = default;
  bool operator==(const ClusterRef&) const = default;
  // "PriorityClass ai-batch", "LocalQueue team-a/gpu-queue": for logs.
  std::string describe() const;
};

// What a direct read of the API said. presence: Yes, the API has it; No, it
// answered 404; Unknown, no answer in time or the question could not be
// asked (rules act only on No). found: the objects it had, as the view reads
// them, so that a request decides with them as if the view held them.
struct ClusterAnswers {
  std::map<ClusterRef, Presence> presence{};
  std::vector<ClusterObject> found{};
};

}  // namespace aiadmit
