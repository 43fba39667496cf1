// The small facts explain's steps share: counts in words, scopes, what a
// scheduler's message says, what a node has and what its Pods use.
#include "webhook/waiting/waiting_parts.h"

#include <algorithm>

namespace aiadmit::waiting {

std::string gpuCount(int64_t gpus) {
  return std::to_string(gpus) + (gpus == 1 ? " GPU" : " GPUs");
}

WorkloadId workloadIdOf(const PodFacts& pod) {
  return {pod.namespaceName, pod.workload.kind, pod.workload.name};
}

int64_t allocatableOf(const ClusterNode& node, const std::string& resource) {
  const auto entry = node.allocatable.find(resource);
  return entry == node.allocatable.end() ? 0 : entry->second;
}

int64_t usedOn(const Occupancy& occupancy, const ClusterNode& node, const std::string& resource) {
  const auto onNode = occupancy.used.find(node.name);
  if (onNode == occupancy.used.end()) return 0;
  const auto entry = onNode->second.find(resource);
  return entry == onNode->second.end() ? 0 : entry->second;
}

bool inScope(const WaitingScope& scope, std::string_view namespaceName) {
  return scope.namespaces.empty() || std::find(scope.namespaces.begin(), scope.namespaces.end(),
                                               namespaceName) != scope.namespaces.end();
}

std::optional<bool> messageAgrees(std::string_view message, WaitCause cause) {
  if (message.empty()) return std::nullopt;
  const auto says = [&](std::string_view words) {
    return message.find(words) != std::string_view::npos;
  };
  switch (cause) {
    case WaitCause::NoNodeCanHold:
    case WaitCause::PoolFull:
    case WaitCause::Fragmented:
    case WaitCause::GangPartial:
      return says("Insufficient") || says("cannot allocate all claims");
    case WaitCause::DeviceTainted:
      // The scheduler says no more for devices a taint keeps the claim off.
      return says("cannot allocate all claims");
    case WaitCause::ClaimUnallocatable:
      return says("cannot allocate all claims") || says("resourceclaim") || says("device class") ||
             says("DeviceClass");
    case WaitCause::UntoleratedTaint:
      return says("untolerated taint");
    case WaitCause::SelectorExcludes:
      return says("didn't match Pod's node affinity/selector");
    case WaitCause::Quota:
      return says("quota") || says("LocalQueue") || says("ClusterQueue");
    case WaitCause::Unknown:
      return false;
  }
  return false;
}

}  // namespace aiadmit::waiting
