#pragma once

#include "validators/validator.h"

namespace aiadmit {

// AIA013: shared GPUs (MIG slices, time-slicing, MPS) for a class whose
// profile forbids sharing, such as training that needs whole devices.
class GpuSharingValidator final : public Validator {
 public:
  RuleId rule() const override { return AIA013; }
  void check(const ValidationContext& context, std::vector<Violation>& out) const override;
};

}  // namespace aiadmit
