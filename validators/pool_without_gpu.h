#pragma once

#include "validators/validator.h"

namespace aiadmit {

// AIA007: a Pod aimed at the GPU pool that asks for no GPU holds a GPU
// node's CPU and memory and leaves its GPUs idle.
class PoolWithoutGpuValidator final : public RuleValidator<AIA007> {
 public:
  bool appliesToUnclassified() const override { return true; }
  void check(const ValidationContext& context, std::vector<Violation>& out) const override;
};

}  // namespace aiadmit
