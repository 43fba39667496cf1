#pragma once

#include <string_view>

#include "mutators/mutator.h"

namespace aiadmit {

// The manager of aiadmit's own entry in a TrainJob's spec.runtimePatches
// (a list keyed by manager, so that users, Kueue and webhooks each own one).
inline constexpr std::string_view kRuntimePatchManager = "aiadmit.dev/webhook";
// The replicated job that trains: Trainer's runtimes name it `node` (the
// job Trainer gives trainer.resourcesPerNode, numNodes and the trainer's
// image), which is the one whose Pods ask for the GPUs.
inline constexpr std::string_view kTrainerReplicatedJob = "node";

// Aims a TrainJob that asks for GPUs in trainer.resourcesPerNode at the
// profile's pool. A TrainJob has no pod template: Trainer builds its JobSet
// from the runtime it names and applies spec.runtimePatches to it, so the
// pool's tolerations and node selector go into one runtimePatches entry of
// aiadmit's own, for the `node` replicated job. What another manager's patch
// already gives that job (a toleration that covers the pool's taint, a node
// selector key) is left out, and the entry is removed when nothing is
// missing. A pool known only by required node affinity is left to the
// runtime, with a notice. A TrainJob written for a Trainer release whose CRD
// has no runtimePatches (it uses podSpecOverrides or podTemplateOverrides) is
// left alone: that CRD's schema would drop the entry.
struct TrainJobPlacementMutator final : Mutator {
  TrainJobPlacementMutator();
};

}  // namespace aiadmit
