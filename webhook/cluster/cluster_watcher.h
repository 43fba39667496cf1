// The live cluster view: one reflector per resource, each on its own thread,
// and a publisher that assembles their caches into a new immutable
// ClusterView, swapped in atomically. The request path only ever loads the
// current view; it never waits on the API.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "webhook/cluster/api_client.h"
#include "webhook/cluster/cluster_view.h"
#include "webhook/cluster/reflector.h"
#include "webhook/codec/non_copyable.h"

namespace aiadmit {

struct ClusterWatchOptions {
  std::vector<ClusterKind> kinds{std::begin(kAdmissionClusterKinds),
                                 std::end(kAdmissionClusterKinds)};
  ApiClientOptions client;
  ReflectorOptions reflector;
  // Changes are gathered for this long before a new view is built, so a
  // burst of events costs one build.
  std::chrono::milliseconds publishInterval{500};
  // A resource whose list or watch has been failing this long drops out of
  // the view: its objects count as unknown again, and decisions fall back
  // to the profiles alone.
  std::chrono::milliseconds staleAfter{std::chrono::minutes(2)};
  Reflector::Log log;
  // Called with every view built, on the publisher's thread, after it is the
  // current one: `serve` hands it to the engine. Must not block.
  std::function<void(std::shared_ptr<const ClusterView>)> onPublish;
};

// For /metrics and the log.
struct ClusterWatchState {
  bool synced = false;  // every resource listed and none stale
  uint64_t publishes = 0;
  std::chrono::system_clock::time_point lastPublish{};
  std::vector<ResourceState> resources;
  uint64_t unauthorized = 0;  // 401 answers, those a re-read token cured included
  uint64_t tokenReads = 0;    // reads of the token file (rotation, 401s)
  std::chrono::steady_clock::time_point taken{};
  std::chrono::milliseconds staleAfter{};

  const ResourceState* resource(ClusterKind kind) const;
  // Failing for staleAfter or longer when the state was taken: out of the view.
  bool stale(const ResourceState& resource) const;
  uint64_t relists() const;  // summed over resources
};

class ClusterWatcher : NonCopyable {
 public:
  ClusterWatcher(ApiServerConfig config, ClusterWatchOptions options);
  ~ClusterWatcher();

  // Starts the reflectors; false with `error` when the credentials cannot be
  // used (nothing is started then).
  bool start(std::string* error);
  void stop();

  // The current view; never null. Before the first list it knows nothing,
  // so every question it is asked answers "unknown".
  std::shared_ptr<const ClusterView> view() const { return view_.load(); }
  ClusterWatchState state() const;
  // Waits until `ready(state())` holds, or `timeout` passes or the watcher is
  // stopped (false, unless it holds then). Wakes on every publish; for
  // start-up logging and tests.
  bool waitFor(const std::function<bool(const ClusterWatchState&)>& ready,
               std::chrono::milliseconds timeout) const;

 private:
  void changed();
  void publishLoop();
  void publish();
  void logTransitions(std::chrono::steady_clock::time_point now);

  ApiClient client_;
  ClusterWatchOptions options_;
  std::vector<std::unique_ptr<Reflector>> reflectors_;
  std::vector<std::thread> threads_;
  std::atomic<std::shared_ptr<const ClusterView>> view_;

  mutable std::mutex mutex_;
  mutable std::condition_variable wake_;       // the publisher
  mutable std::condition_variable published_;  // waitFor()
  bool dirty_ = false;
  bool stopping_ = false;
  bool started_ = false;
  uint64_t publishes_ = 0;
  bool synced_ = false;
  std::chrono::system_clock::time_point lastPublish_{};
  // Publisher thread only: what the log last said.
  std::vector<ClusterKind> staleKinds_;
  bool unusable_ = false;
};

}  // namespace aiadmit
