// Why one Pod waits: the lasting causes first (no node can hold it, a
// taint, a selector), then the ones that pass (a full pool, a partial gang).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "webhook/waiting/waiting_parts.h"

namespace aiadmit::waiting {

// The cause of one waiting Pod.
PodVerdict judgePod(const PodFacts& pod, const Occupancy& occupancy, const ClusterView& view);

// What judging one Pod is made of, for judging Pods together
// (webhook/waiting/waiting_gang.h):

// The nodes that can ever hold its accelerators, that its node selection
// allows and whose taints it tolerates, by name.
std::vector<const ClusterNode*> nodesItMayUse(const PodFacts& pod, const ClusterView& view);
// Whether a passing taint it does not tolerate (not ready, cordoned) keeps
// it off `node` now.
bool keptOffNow(const PodFacts& pod, const ClusterNode& node);
// pool-full on `eligible`, which it fits but whose GPUs are in use: who
// holds them, and whether preemption can help.
PodVerdict poolFull(const PodFacts& pod, const std::vector<const ClusterNode*>& eligible,
                    const Occupancy& occupancy);
// "a100, h100": the pools of `nodes`.
std::string poolsOf(const std::vector<const ClusterNode*>& nodes);
// "2,2,2,2,2,2": idle blocks, the first dozen, then how many more nodes.
std::string blockList(const std::vector<int64_t>& blocks);
// The fix for idle GPUs of `resource` spread too thin.
std::string packFix(const std::string& resource);

}  // namespace aiadmit::waiting
