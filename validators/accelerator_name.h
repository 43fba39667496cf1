#pragma once

#include "validators/validator.h"

namespace aiadmit {

// AIA003: an accelerator resource name the profile does not allow. No node
// offers "nvidia.com/gpus", so such a Pod stays Pending without a word.
class AcceleratorNameValidator final : public RuleValidator<AIA003> {
 public:
  void check(const ValidationContext& context, std::vector<Violation>& out) const override;
};

}  // namespace aiadmit
