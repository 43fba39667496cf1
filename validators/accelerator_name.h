#pragma once

#include "validators/validator.h"

namespace aiadmit {

// AIA003: a misspelt accelerator resource name. No node offers
// "nvidia.com/gpus", so such a Pod stays Pending without a word. A name the
// selected profile places (its vendor's) but does not allow is judged
// against the profile's pool; any other name only when it misspells a name a
// known vendor offers ("amd.com/gpus"), never another vendor's real name
// (webhook/model/accelerator_vendors.h). The "did you mean" knows the names
// users carry over from elsewhere: the removed alpha.kubernetes.io/nvidia-gpu,
// the ".shared" name NVIDIA's device plugin gives time-sliced and MPS GPUs,
// and MIG slices written otherwise. With a cluster view, a name some node
// offers is never reported: it is not a misspelling, whatever the profile
// lists.
class AcceleratorNameValidator final : public RuleValidator<AIA003> {
 public:
  void check(const ValidationContext& context, std::vector<Violation>& out) const override;
};

}  // namespace aiadmit
