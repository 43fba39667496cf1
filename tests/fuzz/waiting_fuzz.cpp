// Snapshots as `aiadmit explain --cluster` reads them: any text is read or
// refused, never a crash, and every waiting workload it reports has a cause,
// a reason and a fix, and no pool has more idle GPUs than GPUs.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "webhook/waiting/waiting.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const aiadmit::WaitingInput input = aiadmit::readWaitingInput(text, "snapshot");
  if (!input.error.empty()) return 0;
  const aiadmit::WaitingReport report = aiadmit::explainWaiting(input, {});
  for (const aiadmit::WaitingWorkload& workload : report.waiting) {
    if (workload.reason.empty() || workload.fix.empty()) __builtin_trap();
  }
  for (const aiadmit::PoolIdle& pool : report.idle) {
    if (pool.idleGpus > pool.gpus || pool.idleGpus < 0) __builtin_trap();
  }
  return 0;
}
