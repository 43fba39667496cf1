#pragma once

#include "validators/validator.h"

namespace aiadmit {

// AIA016: the Pod asks for more accelerators than the largest node of the
// cluster that it may land on holds, counted from the nodes' allocatable
// resources and the devices ResourceSlices publish for them. Unlike AIA006,
// which trusts the profile's gpusPerNode, this reads the cluster view. It
// refuses only a lasting "no": where the Pod may land is judged as the API
// server will admit the Pod (validators/admitted_placement.h); a pool the
// profile marks as autoscaled (spec.gpu.maxNodeGpus) counts the nodes its
// autoscaler can add; and no node with any of the resource (a pool scaled
// to zero, a driver without slices for now) is no answer; where other nodes
// have the resource, the Pod's selection is what keeps it off them, and that
// is warned (a node that matches may yet be added), never refused.
class ClusterCapacityValidator final : public RuleValidator<AIA016> {
 public:
  void check(const ValidationContext& context, std::vector<Violation>& out) const override;
};

}  // namespace aiadmit
