// A claim validator checks one rule against a DRA ResourceClaim or
// ResourceClaimTemplate: objects that carry no Pod, only the device requests
// that Pods' claims are made of. The engine selects the profile that judges
// the object (docs/rules.md, "DRA claim objects") and applies its actions.
#pragma once

#include <memory>
#include <string>
#include <string_view>
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

class ClaimValidator {
 public:
  virtual ~ClaimValidator() = default;
  virtual RuleId rule() const = 0;
  // Most rules need the profile; those on the cluster view alone do not.
  virtual bool needsProfile() const { return true; }
  virtual void check(const ClaimValidationContext& context, std::vector<Violation>& out) const = 0;
};

enum class ProfileUse { Needed, NotNeeded };

// The base of a claim validator of `Rule`: its class then declares only check().
template <RuleId Rule, ProfileUse Use = ProfileUse::Needed>
class ClaimRuleValidator : public ClaimValidator {
 public:
  RuleId rule() const final { return Rule; }
  bool needsProfile() const final { return Use == ProfileUse::Needed; }
};

// All claim validators, in rule order (validators/registry.cpp).
const std::vector<std::unique_ptr<const ClaimValidator>>& allClaimValidators();

// "spec.spec.devices.requests[0].exactly.deviceClassName": a field of one
// alternative of a request, as kubectl names it in the object.
std::string claimFieldPath(const ClaimObject& claim, const DeviceAlternative& alternative,
                           std::string_view field);

// "ResourceClaimTemplate" or "ResourceClaim".
std::string_view claimKindName(const ClaimObject& claim);

}  // namespace aiadmit
