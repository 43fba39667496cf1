// How many GPUs a container and a pod ask for, read the way the scheduler
// reads them, for the mutators that depend on it (pool placement, /dev/shm).
#pragma once

#include <cstdint>
#include <string_view>

#include "webhook/kube/json.h"
#include "webhook/policy/profile.h"

namespace aiadmit {

// The whole number of `resource` a container asks for: its limit, else its
// request; 0 when absent or not a positive whole number.
int64_t containerGpus(const JsonValue& container, std::string_view resource);

// The GPUs one pod occupies on a node: regular and sidecar containers add up,
// and an init container that runs alone before them may need more.
int64_t podGpus(const JsonValue* podSpec, std::string_view resource);

// Whether any container asks for a positive quantity of an accelerator
// resource the profile allows: such a pod belongs on the profile's GPU pool.
bool usesProfilePool(const JsonValue* podSpec, const Profile& profile);

// The quantity as a positive whole number, or 0.
int64_t positiveWholeQuantity(const JsonValue& value);

}  // namespace aiadmit
