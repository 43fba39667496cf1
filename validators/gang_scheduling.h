#pragma once

#include "validators/validator.h"

namespace aiadmit {

// AIA010: distributed GPU training without gang scheduling can start in
// part and hold GPUs while the rest waits, where the profile requires it. A
// GPU worker asks for GPUs by extended resource or by DRA claim.
class GangSchedulingValidator final : public RuleValidator<AIA010, Validator::Scope::Workload> {
 public:
  void check(const ValidationContext& context, std::vector<Violation>& out) const override;
};

}  // namespace aiadmit
