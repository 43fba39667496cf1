#include "webhook/serving/waiting_metrics.h"

#include "webhook/serving/prometheus_text.h"
#include "webhook/waiting/waiting.h"

namespace aiadmit {

namespace {

// One sample of `family` per pool.
void appendPoolSamples(std::string& out, std::string_view family,
                       const std::map<std::string, int64_t>& byPool) {
  for (const auto& [pool, value] : byPool) {
    out.append(family).append("{pool=\"").append(prometheusLabel(pool)).append("\"} ");
    out.append(std::to_string(value)).append("\n");
  }
}

}  // namespace

std::optional<WaitingCounts> countWaiting(const std::shared_ptr<const ClusterView>& view) {
  if (view == nullptr || !view->knows(ClusterKind::Node) || !view->knows(ClusterKind::Pod)) {
    return std::nullopt;
  }
  const WaitingReport report = explainWaiting(waitingInputOf(view), WaitingScope{});
  WaitingCounts counts;
  for (const WaitingWorkload& workload : report.waiting) {
    ++counts.waiting[{std::string(causeName(workload.cause)), workload.namespaceName}];
  }
  for (const PoolIdle& pool : report.idle) {
    counts.idleGpus[pool.pool] = pool.idleGpus;
    counts.unusableIdleGpus[pool.pool] = pool.unusableIdleGpus;
  }
  return counts;
}

WaitingGauges::WaitingGauges(std::chrono::milliseconds interval)
    : interval_(interval), thread_([this] { run(); }) {}

WaitingGauges::~WaitingGauges() {
  stop();
}

void WaitingGauges::update(std::shared_ptr<const ClusterView> view) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_ = std::move(view);
  }
  wake_.notify_all();
}

void WaitingGauges::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void WaitingGauges::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || pending_ != nullptr; });
    if (stopping_) return;
    std::shared_ptr<const ClusterView> view = std::move(pending_);
    pending_ = nullptr;
    lock.unlock();
    std::optional<WaitingCounts> counts = countWaiting(view);
    lock.lock();
    if (counts) {
      counts_ = std::make_shared<const WaitingCounts>(std::move(*counts));
      counted_.notify_all();
    }
    // At most one count per interval: a burst of publishes costs one.
    wake_.wait_for(lock, interval_, [this] { return stopping_; });
  }
}

bool WaitingGauges::awaitCount(std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mutex_);
  return counted_.wait_for(lock, timeout, [this] { return counts_ != nullptr; });
}

void WaitingGauges::render(std::string& out) const {
  std::shared_ptr<const WaitingCounts> counts;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    counts = counts_;
  }
  appendFamilyHeader(out, "aiadmit_gpu_workloads_waiting", "gauge",
                     "GPU workloads that wait (Pending Pods that ask for accelerators, Kueue "
                     "Workloads not admitted), by the cause `aiadmit explain` gives.");
  if (counts) {
    for (const auto& [key, value] : counts->waiting) {
      out += "aiadmit_gpu_workloads_waiting{cause=\"" + prometheusLabel(key.first) +
             "\",namespace=\"" + prometheusLabel(key.second) + "\"} " + std::to_string(value) +
             "\n";
    }
  }
  appendFamilyHeader(out, "aiadmit_gpus_idle", "gauge",
                     "Accelerators of each pool that no bound Pod requests and no claim holds "
                     "(free devices a device taint keeps requests off are not counted).");
  if (counts) appendPoolSamples(out, "aiadmit_gpus_idle", counts->idleGpus);
  appendFamilyHeader(out, "aiadmit_gpus_idle_unusable", "gauge",
                     "Idle accelerators of each pool that no Pod waiting for the pool can use: "
                     "those on nodes where each such Pod asks for more than the node has idle "
                     "(0 when no Pod waits for the pool).");
  if (counts) appendPoolSamples(out, "aiadmit_gpus_idle_unusable", counts->unusableIdleGpus);
}

}  // namespace aiadmit
