#pragma once

#include "validators/validator.h"

namespace aiadmit {

// AIA015: a realtime GPU server without a memory limit can grow until it
// starves its GPU node (warns by default).
class MemoryLimitValidator final : public Validator {
 public:
  RuleId rule() const override { return AIA015; }
  void check(const ValidationContext& context, std::vector<Violation>& out) const override;
};

}  // namespace aiadmit
