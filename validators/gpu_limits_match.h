#pragma once

#include "validators/validator.h"

namespace aiadmit {

// AIA005: a request of an extended resource (a GPU of any vendor, an NPU, an
// FPGA, an RDMA device) must equal its limit, and needs one. No extended
// resource can be overcommitted: the API server refuses the difference, for
// a custom resource only when its operator creates the Pods, and with a
// message that does not say which value to change.
class GpuLimitsMatchValidator final : public RuleValidator<AIA005> {
 public:
  void check(const ValidationContext& context, std::vector<Violation>& out) const override;
};

}  // namespace aiadmit
