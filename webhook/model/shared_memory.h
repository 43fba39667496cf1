// Where aiadmit mounts a memory-backed /dev/shm, for the mutator that mounts
// it and for the admission policies that do the same.
#pragma once

#include <string_view>

namespace aiadmit {

inline constexpr std::string_view kSharedMemoryPath = "/dev/shm";
// The volume's name, unless a volume of the workload's own took it.
inline constexpr std::string_view kSharedMemoryVolume = "aiadmit-shm";

}  // namespace aiadmit
