#pragma once

#include "mutators/mutator.h"

namespace aiadmit {

// PyTorch DataLoader workers pass batches through /dev/shm, and NCCL passes
// data between the GPUs of a Pod through it; a container runtime caps it at
// 64 MiB, so both die ("Bus error", "failed to extend /dev/shm") once the
// work grows. When a Pod asks for at least the profile's sharedMemory.minGpus
// GPUs (the shipped profiles: every GPU training and batch Pod, and serving
// Pods from 2 GPUs), each of its GPU containers that mounts nothing at
// /dev/shm gets a memory-backed emptyDir there, sized by sharedMemory.sizeLimit
// and never beyond the containers' memory limits. A memory emptyDir the Pod
// already mounts at /dev/shm is shared rather than duplicated; a Pod that
// mounts anything else there, or uses the node's IPC namespace, has chosen
// its own and is left alone.
struct SharedMemoryMutator final : Mutator {
  SharedMemoryMutator();
};

}  // namespace aiadmit
