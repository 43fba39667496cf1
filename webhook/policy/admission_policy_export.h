// `aiadmit profiles export --admission-policies`: the profiles as native
// admission policies (admissionregistration.k8s.io/v1 MutatingAdmissionPolicy,
// ValidatingAdmissionPolicy and their bindings), whose CEL the API server
// evaluates without calling the webhook. Only what CEL can decide exactly as
// the webhook does is exported; everything else is named in the report as
// staying with the webhook, so that no exported policy refuses or changes
// what the webhook would not.
#pragma once

#include <string>
#include <vector>

#include "webhook/policy/profile_set.h"

namespace aiadmit {

struct AdmissionPolicyExport {
  // The policies and bindings, each one YAML document ("---" between them).
  std::vector<std::string> documents;
  // What is exported and what stays with the webhook, one line each.
  std::vector<std::string> report;
};

AdmissionPolicyExport exportAdmissionPolicies(const ProfileSet& profiles);

// The file: the report as comments, then the documents.
std::string admissionPolicyFile(const AdmissionPolicyExport& exported);

}  // namespace aiadmit
