// The Pods of a PodGroup of Kubernetes' own, judged together as
// kube-scheduler's GangScheduling places them: none until minCount of them
// fit at once. Judged one by one, each Pod of a gang that waits whole may
// fit a node alone, and its cause would look like anything but GPUs.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "webhook/waiting/waiting_parts.h"

namespace aiadmit::waiting {

// The cause of the waiting Pods `pods` of one native PodGroup (all of its
// Pods that wait), when the group decides it; nullopt when `current`, the
// first cause of its Pods judged one by one, stands: a lasting cause, a
// group partly placed (gang-partial), a basic policy.
std::optional<PodVerdict> judgeNativeGroup(const std::vector<const PodFacts*>& pods,
                                           const PodVerdict& current, const Occupancy& occupancy,
                                           const ClusterView& view);

// What the scheduler wrote on the PodGroup when it could not place it (its
// PodGroupInitiallyScheduled or PodGroupScheduled condition, False), and
// whether that names `cause`; nullopt when it wrote no such thing.
std::optional<SchedulerWord> podGroupWord(const WorkloadKey& group, WaitCause cause);
// Whether a message of the scheduler on a gang names `cause`: its GangScheduling
// plugin says that minCount is not met where the filters say Insufficient.
std::optional<bool> gangMessageAgrees(std::string_view message, WaitCause cause);

}  // namespace aiadmit::waiting
