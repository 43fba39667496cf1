#pragma once

#include "validators/validator.h"

namespace aiadmit {

// AIA006: a Pod cannot ask for more GPUs than the largest node of its pool
// has (GPUs by extended resource and those its DRA claims certainly need);
// the scheduler would keep it Pending forever.
class GpusPerNodeValidator final : public RuleValidator<AIA006> {
 public:
  void check(const ValidationContext& context, std::vector<Violation>& out) const override;
};

}  // namespace aiadmit
