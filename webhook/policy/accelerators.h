// Accelerators as a profile sees them: the resource names it allows, their
// near misses (so a typo is reported rather than ignored), and whether a Pod
// belongs on the profile's GPU pool.
#pragma once

#include <string_view>

#include "webhook/kube/pod_reader.h"
#include "webhook/policy/profile.h"

namespace aiadmit {

// Whether the rules treat `name` as an accelerator: a name the profile allows;
// a name that looks like one (webhook/kube/resources.h); or a domain-qualified
// name within two edits of one the profile allows ("nvidia.com/gp"). Other
// extended resources (RDMA devices, hugepages, FUSE devices) are not the
// rules' business. Without a profile, only the look counts.
class ProfileAcceleratorNames final : public AcceleratorNames {
 public:
  explicit ProfileAcceleratorNames(const Profile* profile) : profile_(profile) {}
  bool isAccelerator(std::string_view resourceName) const override;

 private:
  const Profile* profile_;
};

// Whether any container asks for a positive quantity of an accelerator
// resource the profile allows, the Pod claims GPUs through DRA
// (PodReader::claimsGpus), or it asks for a KAI GPU share
// (PodReader::gpuShare): such a Pod belongs on the profile's GPU pool.
bool usesProfilePool(const PodReader& pod, const Profile& profile);

}  // namespace aiadmit
