// Accelerators as a profile sees them: the resource names it allows, their
// near misses (so a typo is reported rather than ignored), the accelerators
// it places (so that each workload goes to its own vendor's pool), and
// whether a Pod belongs on the profile's GPU pool.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "webhook/cluster/cluster_view.h"
#include "webhook/model/pod_reader.h"
#include "webhook/policy/profile.h"

namespace aiadmit {

// Whether the rules treat `name` as an accelerator: a name the profile allows;
// a name that looks like one (webhook/model/resources.h); or a domain-qualified
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

// The accelerator a workload asks for, which decides the profiles that may
// place it: the first accelerator resource its main template asks a
// positive quantity of, else the DeviceClass of its first GPU claim; none
// for a workload that names no accelerator (GPUs by aiadmit.dev/gpus or the
// profile's default, a KAI share).
struct AcceleratorAsk {
  std::string resourceName;  // an extended resource: "amd.com/gpu"
  // A DRA DeviceClass: "gpu.intel.com", of a claim, of a KEP-5004 name, or
  // the class that backs `resourceName` in the cluster view.
  std::string deviceClass;
  std::vector<std::string> drivers;  // the class's drivers, where the cluster view reads them
  // Else, for a workload whose GPUs hang on claims the cluster view cannot
  // resolve yet, why ("claim gpu: ResourceClaimTemplate gpu-claim is not
  // known"): which vendor's pool they are in is not known, so no profile
  // places it until they are.
  std::string pendingClaim;

  static AcceleratorAsk ofResource(std::string_view name) {
    AcceleratorAsk ask;
    ask.resourceName = std::string(name);
    return ask;
  }
  bool any() const {
    return !resourceName.empty() || !deviceClass.empty() || !pendingClaim.empty();
  }
  // "amd.com/gpu", "DeviceClass gpu.intel.com"
  std::string describe() const;
};

// What the Pod asks for; `cluster` reads a claim's DeviceClass drivers.
AcceleratorAsk acceleratorAsk(const PodReader& pod, const ClusterView* cluster);
// What a DRA claim object asks for: its first request's DeviceClass.
AcceleratorAsk deviceClassAsk(std::string_view deviceClass, const ClusterView* cluster);

// Whether `profile` places what is asked for: a resource of a vendor whose
// names the profile lists (gpu.resourceName, gpu.allowedResources; a name
// it does not allow, such as a misspelling or a MIG slice where sharing is
// forbidden, is then its rules' to judge), or a DeviceClass it lists in
// gpu.deviceClasses (or whose driver it lists). Every profile places a
// workload that names no accelerator; none places a pending claim.
bool placesAccelerator(const Profile& profile, const AcceleratorAsk& ask);

// Whether some accelerator is placed by both profiles: then, of one class
// and with scopes that tie, they would both select one workload.
bool placeSameAccelerator(const Profile& a, const Profile& b);

// "nvidia.com/gpu, nvidia.com/mig-* and DeviceClasses gpu.nvidia.com,
// mig.nvidia.com": what a profile places, for messages.
std::string describePlaced(const Profile& profile);

// Whether any container asks for a positive quantity of an accelerator
// resource the profile allows, the Pod claims GPUs through DRA of a
// DeviceClass the profile places, or it asks for a KAI GPU share
// (PodReader::gpuShare): such a Pod belongs on the profile's GPU pool. `cluster`
// tells what a DeviceClass hands out (null: none).
bool usesProfilePool(const PodReader& pod, const Profile& profile, const ClusterView* cluster);

}  // namespace aiadmit
