#pragma once

#include "validators/validator.h"

namespace aiadmit {

inline constexpr std::string_view kKueueQueueLabel = "kueue.x-k8s.io/queue-name";

// AIA018: the kueue.x-k8s.io/queue-name label names a LocalQueue that the
// namespace does not have. Kueue then keeps the workload suspended (its Pods
// never appear) with only a condition on a Workload object to say why.
class LocalQueueExistsValidator final : public RuleValidator<AIA018> {
 public:
  void check(const ValidationContext& context, std::vector<Violation>& out) const override;
};

}  // namespace aiadmit
