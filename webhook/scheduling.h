// Scheduling semantics shared by mutators and validators, the way
// kube-scheduler reads them (k8s.io/api/core/v1 toleration helpers).
#pragma once

#include "webhook/json.h"
#include "webhook/profile.h"

namespace aiadmit {

// Whether the toleration `existing` (from a manifest) tolerates everything
// that `wanted` (from a profile) tolerates: an empty key with Exists tolerates
// every taint, an empty effect every effect, Exists every value.
bool tolerationCovers(const JsonValue& existing, const Toleration& wanted);

// Whether any toleration in `tolerations` (a PodSpec's list) covers `wanted`.
bool anyTolerationCovers(const JsonValue* tolerations, const Toleration& wanted);

// The toleration as a PodSpec list item.
JsonValue tolerationToJson(const Toleration& toleration, JsonAllocator& alloc);

// "accelerator=gpu:NoSchedule", "accelerator:NoSchedule" (Exists), "*" (all).
std::string describeToleration(const Toleration& toleration);

}  // namespace aiadmit
