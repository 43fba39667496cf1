// What extended resource names mean: accelerators, and shares of a GPU.
// One vocabulary for classification, mutators, validators and the profile
// loader, so that they never disagree about what a GPU request is.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace aiadmit {

// Case-insensitive search for a lower-case `word`; with `atSegmentStart`,
// only where a name segment begins (after '/', '.', '-', '_' or at the start),
// so that "tpu" is found in "google.com/tpu" but not in "example.com/outputs".
bool containsWord(std::string_view text, std::string_view word, bool atSegmentStart);
bool endsWithIgnoringCase(std::string_view text, std::string_view lowerSuffix);

// A resource name that looks like an accelerator without any profile to ask:
// a GPU ("gpu" anywhere, so misspellings like "nvidia.com/gpus", "nvidia/gpu"
// and "gpu" count and are then reported), a MIG slice (also one written
// otherwise, see migResourceName), a TPU, Neuron, Gaudi or
// Ascend device, or any device of xilinx.com (FPGA cards). RDMA devices,
// hugepages and FUSE devices are not.
bool looksLikeAccelerator(std::string_view resourceName);
// Whether `name` looks like a driver or class of accelerators (gpu.nvidia.com,
// gpu.amd.com, mig.nvidia.com, tpu.google.com) as opposed to NICs or CPUs.
bool looksLikeAcceleratorDriver(std::string_view name);

// Whether the API server takes `name` for an extended resource
// (k8s.io/kubernetes/pkg/apis/core/helper IsExtendedResourceName): a domain
// and neither native (a name that contains "kubernetes.io/", such as
// deviceclass.resource.kubernetes.io/<class>) nor a quota's "requests."
// name: nvidia.com/gpu, but not cpu or hugepages-2Mi. No extended
// resource can be overcommitted, whatever its vendor: the API server refuses
// a container whose request of one differs from its limit, or has no limit.
bool isExtendedResourceName(std::string_view name);

// The GPU resource of the kubelet's Accelerators feature gate, gone since
// Kubernetes 1.11: no node offers it, yet the API server still accepts it
// (it is a kubernetes.io name), so a Pod asking for it waits forever.
inline constexpr std::string_view kRemovedNvidiaGpuResource = "alpha.kubernetes.io/nvidia-gpu";

// The name NVIDIA's device plugin gives a MIG slice written some other way:
// "nvidia.com/mig-1g.10gb" for "nvidia.com/mig1g.10gb", "mig-1g.10gb",
// "nvidia.com/MIG-1G.10GB" or "nvidia.com/1g-10gb"; a compute instance
// ("1c.3g.20gb") is kept. nullopt when the name does not end in a
// <N>g.<M>gb slice profile.
std::optional<std::string> migResourceName(std::string_view name);

// Whether `name` is a share of a GPU rather than a whole one: a MIG slice
// (nvidia.com/mig-1g.10gb), a time-sliced or MPS replica renamed by the
// device plugin (nvidia.com/gpu.shared), a shared-GPU resource
// (nvidia.com/sharedgpu) or GPU memory or cores sold by the unit
// (nvidia.com/gpumem, nvidia.com/gpucores).
bool isSharedGpuResource(std::string_view name);

// A node label that selects GPUs shared between Pods (GKE time-sharing, MPS
// or MIG partitions; GPU feature discovery's sharing strategy), given the
// label's value ("" for Exists).
bool isSharedGpuNodeLabel(std::string_view key, std::string_view value);

}  // namespace aiadmit
