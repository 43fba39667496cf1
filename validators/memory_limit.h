#pragma once

#include "validators/validator.h"

namespace aiadmit {

// AIA015: a realtime GPU server without a memory limit can grow until it
// starves its GPU node (warns by default).
class MemoryLimitValidator final : public RuleValidator<AIA015> {
 public:
  void check(const ValidationContext& context, std::vector<Violation>& out) const override;
};

}  // namespace aiadmit
