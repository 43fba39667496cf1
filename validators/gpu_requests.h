// How the rules read a pod template's accelerator requests: which resource
// names are accelerators, how many a Pod asks for as the scheduler counts
// them, and which container is the main one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "webhook/kube/json.h"
#include "webhook/kube/resources.h"
#include "webhook/kube/workload.h"
#include "webhook/policy/profile.h"

namespace aiadmit {

// Whether the rules treat `name` as an accelerator: a name the profile allows;
// a name with "gpu" or "mig-" in it, or a "tpu", "neuron" or "gaudi" segment;
// or a domain-qualified name within two edits of one the profile allows
// ("nvidia.com/gp"). Other extended resources (RDMA devices, hugepages,
// FUSE devices) are not the rules' business.
bool isAcceleratorResource(std::string_view name, const Profile* profile);

// A node label that selects GPUs shared between Pods (GKE time-sharing, MPS
// or MIG partitions; GPU feature discovery's sharing strategy), given the
// label's value ("" for Exists).
bool isSharedGpuNodeLabel(std::string_view key, std::string_view value);

struct AcceleratorEntry {
  const JsonValue& container;
  ContainerList list;
  size_t index;
  std::string_view section;  // "limits" or "requests"
  std::string_view name;
  const JsonValue& value;
};

// Every accelerator entry of every container and init container, limits
// before requests.
void forEachAcceleratorEntry(const JsonValue* podSpec, const Profile* profile,
                             const std::function<void(const AcceleratorEntry&)>& visit);

// What a container asks of `resource` as the scheduler reads it: its request,
// else its limit (the API server defaults one from the other). Zero when
// absent or not a whole number (AIA004 reports those).
int64_t containerRequest(const JsonValue& container, std::string_view resource);

// What a Pod asks of `resource`, as kube-scheduler sums it: regular
// containers and sidecars (init containers with restartPolicy Always) add
// up; each other init container runs alone beside the sidecars started
// before it; the Pod needs the larger of the two.
int64_t podRequest(const JsonValue* podSpec, std::string_view resource);

// Whether any container asks for a positive amount of an accelerator.
bool asksForAccelerator(const JsonValue* podSpec, const Profile* profile);

// Whether the Pod claims devices through dynamic resource allocation.
bool claimsDevices(const JsonValue* podSpec);

struct ContainerRef {
  const JsonValue* container = nullptr;
  size_t index = 0;
};

// The main container: the one named by aiadmit.dev/gpu-container, else the
// first container.
ContainerRef mainContainer(const PodTemplateView& view);

// ` in container "vllm"` when the PodSpec has more than one container (init
// containers included) and this one has a name; "" when the path says enough.
std::string inContainer(const JsonValue* podSpec, const JsonValue& container);

}  // namespace aiadmit
