// What the API server keeps of admission warnings: it drops a warning line
// longer than 120 characters and keeps at most 4096 characters of all of a
// request's warnings.
#pragma once

#include <cstddef>

namespace aiadmit {

inline constexpr size_t kMaxWarningLength = 120;
inline constexpr size_t kMaxWarningsTotal = 4096;

}  // namespace aiadmit
