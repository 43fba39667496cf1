#pragma once

#include "mutators/mutator.h"

namespace aiadmit {

// Adds the profile's tolerations for the accelerator pool, unless a toleration
// already in the pod tolerates the same taint.
class PoolTolerationsMutator final : public Mutator {
 public:
  std::string_view name() const override { return "pool-tolerations"; }
  bool mutate(MutationContext& context) const override;
};

}  // namespace aiadmit
