#pragma once

#include "mutators/mutator.h"

namespace aiadmit {

// Multi-GPU work (NCCL, PyTorch DataLoader workers) exchanges data through
// /dev/shm, which a container runtime caps at 64 MiB. When a pod holds at
// least the profile's sharedMemory.minGpus GPUs, each GPU container that
// mounts nothing at /dev/shm gets a memory-backed emptyDir there (sized by
// sharedMemory.sizeLimit when set). A memory emptyDir the pod already mounts
// at /dev/shm in another container is shared rather than duplicated.
struct SharedMemoryMutator final : Mutator {
  SharedMemoryMutator();
};

}  // namespace aiadmit
