// DRA claim objects on /validate: ResourceClaims and ResourceClaimTemplates
// of resource.k8s.io carry no Pod, so they have no row in the workload-type
// table and take their own, short path: read the device requests, select the
// profile that judges them, run the claim validators (docs/rules.md, "DRA
// claim objects").
#pragma once

#include <string>
#include <vector>

#include "validators/claim_validator.h"
#include "webhook/model/dra.h"
#include "webhook/policy/classify.h"
#include "webhook/policy/profile_set.h"

namespace aiadmit {

struct AdmissionSubject;

// Whether the subject is a ResourceClaim or ResourceClaimTemplate of
// resource.k8s.io, at any version.
bool isClaimObject(const AdmissionSubject& subject);

struct ClaimAssessment {
  bool readable = false;  // false: an apiVersion whose request shape is not known
  ClaimObject claim;
  WorkloadClass workloadClass = WorkloadClass::None;
  std::string classReason;
  bool classDeclared = false;  // by aiadmit.dev/workload or aiadmit.dev/profile
  std::string unknownWorkloadValue;
  // The accelerator the claim asks for, which picks the profile.
  AcceleratorAsk ask;
  ProfileSelection selection;
  // Set when profiles match the claim's scope but none places what it asks
  // for: what to add, for the warning.
  std::string unplaced;
};

// Which profile judges a claim object, in order:
//  1. aiadmit.dev/workload, when it holds a class: that class;
//  2. else aiadmit.dev/profile, when it names a profile: that profile's class;
//  3. else the first of training, batch and realtime that has a profile for
//     the namespace and the object's labels that places what it asks for.
// The profile of that class is then selected as for a workload (the
// object's labels, aiadmit.dev/profile, the DeviceClass it asks for).
// `cluster` reads the drivers of its DeviceClasses; null: none known.
ClaimAssessment assessClaim(const JsonValue& object, std::string_view namespaceName,
                            const ProfileSet& profiles, const ClusterView* cluster = nullptr);

void collectClaimViolations(const ClaimAssessment& assessment, Operation operation,
                            const ClusterView* cluster, std::vector<Violation>& out);

}  // namespace aiadmit
