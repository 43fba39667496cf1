// What extended resource names mean: accelerators, and shares of a GPU.
// One vocabulary for classification, mutators, validators and the profile
// loader, so that they never disagree about what a GPU request is.
#pragma once

#include <string_view>

namespace aiadmit {

// Case-insensitive search for a lower-case `word`; with `atSegmentStart`,
// only where a name segment begins (after '/', '.', '-', '_' or at the start),
// so that "tpu" is found in "google.com/tpu" but not in "example.com/outputs".
bool containsWord(std::string_view text, std::string_view word, bool atSegmentStart);
bool endsWithIgnoringCase(std::string_view text, std::string_view lowerSuffix);

// A resource name that looks like an accelerator without any profile to ask:
// a GPU ("gpu" anywhere, so misspellings like "nvidia.com/gpus", "nvidia/gpu"
// and "gpu" count and are then reported), a MIG slice, or a TPU, Neuron or
// Gaudi device. RDMA devices, hugepages and FUSE devices are not.
bool looksLikeAccelerator(std::string_view resourceName);

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
