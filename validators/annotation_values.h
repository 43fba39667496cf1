#pragma once

#include "validators/validator.h"

namespace aiadmit {

// AIA001: the other aiadmit.dev annotations a developer writes must hold a
// value aiadmit can use. A gpu-container that names no container, a GPU count
// that is not a positive whole number, or a profile that cannot apply would
// otherwise be ignored, and the workload would run without what it asked for.
class AnnotationValuesValidator final : public RuleValidator<AIA001> {
 public:
  void check(const ValidationContext& context, std::vector<Violation>& out) const override;
};

}  // namespace aiadmit
