#pragma once

#include "validators/validator.h"

namespace aiadmit {

// AIA016: the Pod asks for more accelerators than the largest node of the
// cluster that it may land on holds, counted from the nodes' allocatable
// resources and the devices ResourceSlices publish for them. Unlike AIA006,
// which trusts the profile's gpusPerNode, this reads the cluster view, and
// says nothing unless the view counted matching nodes.
class ClusterCapacityValidator final : public Validator {
 public:
  RuleId rule() const override { return AIA016; }
  void check(const ValidationContext& context, std::vector<Violation>& out) const override;
};

}  // namespace aiadmit
