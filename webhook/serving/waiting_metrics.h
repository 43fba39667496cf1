// serve's waiting gauges (--waiting-metrics): `aiadmit explain` over the live
// view, which then also watches Pods (not Succeeded or Failed; only those
// that ask for accelerators are kept, and only the fields explain reads) and
// Kueue Workloads. Worked out on a thread of its own, at most once per
// interval, so that neither the publisher nor /metrics waits for it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "webhook/cluster/cluster_view.h"
#include "webhook/codec/non_copyable.h"

namespace aiadmit {

// What the gauges say of one view.
struct WaitingCounts {
  // Workloads waiting, by cause name and namespace.
  std::map<std::pair<std::string, std::string>, int64_t> waiting;
  std::map<std::string, int64_t> idleGpus;  // by pool
  // By pool: the idle GPUs on nodes where none of the Pods that wait for the
  // pool fits now.
  std::map<std::string, int64_t> unusableIdleGpus;
};
// The counts of a view that knows its Nodes and Pods; nullopt otherwise
// (before the first lists, the gauges say nothing rather than zero).
std::optional<WaitingCounts> countWaiting(const std::shared_ptr<const ClusterView>& view);

class WaitingGauges : NonCopyable {
 public:
  explicit WaitingGauges(std::chrono::milliseconds interval = std::chrono::seconds(5));
  ~WaitingGauges();

  // The newest view to count; only the last one given before a count is.
  void update(std::shared_ptr<const ClusterView> view);
  void stop();
  // Appends the gauges in the Prometheus text format.
  void render(std::string& out) const;
  // Waits until a count of a view is out: true, or false once `timeout` has
  // passed without one.
  bool awaitCount(std::chrono::milliseconds timeout) const;

 private:
  void run();

  const std::chrono::milliseconds interval_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  mutable std::condition_variable counted_;
  std::shared_ptr<const ClusterView> pending_;
  bool stopping_ = false;
  std::shared_ptr<const WaitingCounts> counts_;  // under mutex_
  std::thread thread_;
};

}  // namespace aiadmit
