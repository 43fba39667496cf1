// A claim validator checks one rule against a DRA ResourceClaim or
// ResourceClaimTemplate: objects that carry no Pod, only the device requests
// that Pods' claims are made of. The engine selects the profile that judges
// the object (docs/rules.md, "DRA claim objects") and applies its actions.
#pragma once

#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "validators/validator.h"
#include "webhook/cluster/cluster_view.h"
#include "webhook/model/dra.h"
#include "webhook/policy/profile.h"

namespace aiadmit {

struct ClaimValidationContext {
  const ClaimObject& claim;
  // The profile that judges the object; null when none applies (only rules
  // on the cluster view run then).
  const Profile* profile;
  // How it was selected: its error says why aiadmit.dev/profile names a
  // profile that cannot apply.
  const ProfileSelection& selection;
  // aiadmit.dev/workload when its value is not a class; empty otherwise.
  std::string_view unknownWorkloadValue;
  Operation operation;
  // What the cluster holds, when a view of it is known; null otherwise.
  const ClusterView* cluster = nullptr;
};

// Whether a claim rule needs the profile: most do; those on the cluster view
// alone do not, and run when no profile applies.
enum class ProfileUse { Needed, NotNeeded };

// A claim validator: one check of one rule, stated once in its own .cpp as a
// constant that validators/registry.cpp lists in its rule's row:
//
//   extern const ClaimValidatorDeclaration kClaimDeviceClassesValidator{
//       .name = "claim-device-classes", .check = checkClaimDeviceClasses};
struct ClaimValidatorDeclaration {
  std::string_view name;  // "claim-device-classes"
  ProfileUse profile = ProfileUse::Needed;
  void (*check)(const ClaimValidationContext& context, std::vector<Violation>& out) = nullptr;
};
static_assert(std::is_trivially_destructible_v<ClaimValidatorDeclaration>);

// "spec.spec.devices.requests[0].exactly.deviceClassName": a field of one
// alternative of a request, as kubectl names it in the object.
std::string claimFieldPath(const ClaimObject& claim, const DeviceAlternative& alternative,
                           std::string_view field);

// "ResourceClaimTemplate" or "ResourceClaim".
std::string_view claimKindName(const ClaimObject& claim);

}  // namespace aiadmit
