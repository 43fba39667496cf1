#pragma once

#include "validators/validator.h"

namespace aiadmit {

// AIA013: shared GPUs (MIG slices, time-slicing, MPS) for a class whose
// profile forbids sharing, such as training that needs whole devices.
class GpuSharingValidator final : public RuleValidator<AIA013> {
 public:
  void check(const ValidationContext& context, std::vector<Violation>& out) const override;
};

}  // namespace aiadmit
