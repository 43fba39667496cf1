#include "webhook/cluster/cluster_watcher.h"

#include <algorithm>

namespace aiadmit {

const ResourceState* ClusterWatchState::resource(ClusterKind kind) const {
  for (const ResourceState& state : resources) {
    if (state.kind == kind) return &state;
  }
  return nullptr;
}

bool ClusterWatchState::stale(const ResourceState& resource) const {
  return resource.failing && taken - resource.failingSince >= staleAfter;
}

uint64_t ClusterWatchState::relists() const {
  uint64_t total = 0;
  for (const ResourceState& state : resources) total += state.relists;
  return total;
}

ClusterWatcher::ClusterWatcher(ApiServerConfig config, ClusterWatchOptions options)
    : client_(std::move(config), options.client), options_(std::move(options)) {
  view_.store(std::move(ClusterView::Builder{}).build());
  for (const ResourceType& type : clusterResourceTypes()) {
    if (std::find(options_.kinds.begin(), options_.kinds.end(), type.kind) ==
        options_.kinds.end()) {
      continue;
    }
    reflectors_.push_back(std::make_unique<Reflector>(
        client_, type, options_.reflector, [this] { changed(); }, options_.log));
  }
}

ClusterWatcher::~ClusterWatcher() {
  stop();
}

bool ClusterWatcher::start(std::string* error) {
  if (!client_.ready(error)) return false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (started_) return true;
    started_ = true;
  }
  if (options_.log) options_.log("info", "cluster view: watching " + client_.config().describe());
  threads_.emplace_back([this] { publishLoop(); });
  for (const auto& reflector : reflectors_) {
    threads_.emplace_back([&reflector] { reflector->run(); });
  }
  return true;
}

void ClusterWatcher::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
    wake_.notify_all();
  }
  for (const auto& reflector : reflectors_) reflector->stop();
  client_.stopAll();
  for (std::thread& thread : threads_) thread.join();
  threads_.clear();
}

void ClusterWatcher::changed() {
  std::lock_guard<std::mutex> lock(mutex_);
  dirty_ = true;
  wake_.notify_all();
}

void ClusterWatcher::publishLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    // Also wakes each staleAfter/4 when nothing changes, so that a resource
    // failing for too long leaves the view even while no event arrives.
    const auto tick = std::max(options_.staleAfter / 4, std::chrono::milliseconds(10));
    wake_.wait_for(lock, tick, [&] { return stopping_ || dirty_; });
    if (stopping_) return;
    if (dirty_) {
      // Gather the rest of a burst before building.
      wake_.wait_for(lock, options_.publishInterval, [&] { return stopping_; });
      if (stopping_) return;
    }
    dirty_ = false;
    lock.unlock();
    publish();
    lock.lock();
  }
}

void ClusterWatcher::publish() {
  const auto now = std::chrono::steady_clock::now();
  ClusterView::Builder builder;
  // Kinds whose caches did not change since the view in force keep its
  // parts (records and indexes) as they are.
  builder.reuse(*view_.load());
  for (const auto& reflector : reflectors_)
    reflector->contribute(builder, now, options_.staleAfter);
  // An optional resource that is not installed counts as synced: there is
  // nothing more to wait for. So does a group served only in versions
  // aiadmit cannot read: its kind stays unknown (out of the view), but
  // waiting will not change that before the cluster is upgraded, and an
  // alert on the view would fire for as long.
  bool synced = true;
  for (const auto& reflector : reflectors_) {
    const ResourceState state = reflector->state();
    const bool stale = state.failing && now - state.failingSince >= options_.staleAfter;
    synced = synced && (state.synced || state.unserved) && !stale;
  }
  builder.markSynced(synced);
  std::shared_ptr<const ClusterView> view = std::move(builder).build();
  bool becameSynced = false;
  bool lostSync = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    view_.store(view);
    ++publishes_;
    lastPublish_ = std::chrono::system_clock::now();
    becameSynced = synced && !synced_;
    lostSync = !synced && synced_;
    synced_ = synced;
  }
  if (options_.onPublish) options_.onPublish(std::move(view));
  published_.notify_all();
  if (options_.log && becameSynced) options_.log("info", "cluster view: synced");
  if (options_.log && lostSync) {
    options_.log("warn",
                 "cluster view: out of date; decisions use the profiles alone where it "
                 "cannot answer");
  }
  logTransitions(now);
}

// Once per change: a resource going stale (and coming back), and the API
// becoming unusable, every resource failing (and answering again).
void ClusterWatcher::logTransitions(std::chrono::steady_clock::time_point now) {
  if (!options_.log) return;
  std::vector<ClusterKind> stale;
  size_t failing = 0;
  std::string firstError;
  for (const auto& reflector : reflectors_) {
    const ResourceState state = reflector->state();
    const std::string kind(kindName(state.kind));
    if (state.failing) {
      ++failing;
      if (firstError.empty()) firstError = kind + ": " + state.lastError;
    }
    const bool isStale = state.failing && now - state.failingSince >= options_.staleAfter;
    const bool wasStale =
        std::find(staleKinds_.begin(), staleKinds_.end(), state.kind) != staleKinds_.end();
    if (isStale) stale.push_back(state.kind);
    if (isStale && !wasStale) {
      const int64_t ms = options_.staleAfter.count();
      const std::string after =
          ms % 1000 == 0 ? std::to_string(ms / 1000) + "s" : std::to_string(ms) + "ms";
      options_.log("warn", "cluster view: " + kind +
                               " is stale: its list or watch has failed for " + after +
                               " or more; it answers unknown until its watch is back");
    } else if (!isStale && wasStale) {
      options_.log("info", "cluster view: " + kind + " is current again");
    }
  }
  staleKinds_ = std::move(stale);
  const bool unusable = !reflectors_.empty() && failing == reflectors_.size();
  if (unusable && !unusable_) {
    options_.log("warn", "cluster view: the API server cannot be used (" +
                             client_.config().describe() + "; " + firstError +
                             "); decisions use the profiles alone");
  } else if (!unusable && unusable_) {
    options_.log("info", "cluster view: the API server answers again");
  }
  unusable_ = unusable;
}

ClusterWatchState ClusterWatcher::state() const {
  ClusterWatchState state;
  for (const auto& reflector : reflectors_) state.resources.push_back(reflector->state());
  state.unauthorized = client_.unauthorizedAnswers();
  state.tokenReads = client_.token().reads();
  state.taken = std::chrono::steady_clock::now();
  state.staleAfter = options_.staleAfter;
  std::lock_guard<std::mutex> lock(mutex_);
  state.synced = synced_;
  state.publishes = publishes_;
  state.lastPublish = lastPublish_;
  return state;
}

bool ClusterWatcher::waitFor(const std::function<bool(const ClusterWatchState&)>& ready,
                             std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    // state() takes mutex_: never call it (or `ready`) with the lock held.
    if (ready(state())) return true;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    std::unique_lock<std::mutex> lock(mutex_);
    if (stopping_) break;  // nothing will change any more
    const uint64_t seen = publishes_;
    // Reflector state changes without a publish too (a failure, a stall):
    // look again at least every 20 ms.
    published_.wait_until(lock, std::min(deadline, now + std::chrono::milliseconds(20)),
                          [&] { return publishes_ != seen || stopping_; });
  }
  return ready(state());
}

}  // namespace aiadmit
