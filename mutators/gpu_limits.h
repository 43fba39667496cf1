#pragma once

#include "mutators/mutator.h"

namespace aiadmit {

// Makes GPU asks explicit in `limits`, where the scheduler and the device
// plugin read them:
// - a request for an accelerator the profile allows, with no limit for it,
//   gets an equal limit (the API server refuses extended resources requested
//   without a limit);
// - a workload that asks for GPUs with the aiadmit.dev/gpus annotation, or
//   whose profile gives a default GPU count, gets the limit on its main
//   container when that container asks for no accelerator yet and the Pod
//   claims no GPU through DRA (the default also not beside a claim that
//   cannot be resolved: it may hold the GPUs).
struct GpuLimitsMutator final : Mutator {
  GpuLimitsMutator();
};

}  // namespace aiadmit
