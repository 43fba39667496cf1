// `serve`'s live cluster view: whether it runs (--cluster-view, --kubeconfig,
// the Pod's service-account token), the watcher that keeps it, and the hook
// that hands every view it publishes to the engine, and the lookup that
// confirms with the API what the view lacks before a rule denies for it. The
// request path only reads the engine's current view; an I/O thread never
// waits on the API.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "webhook/cluster/api_config.h"
#include "webhook/cluster/api_lookup.h"
#include "webhook/cluster/cluster_watcher.h"
#include "webhook/engine/engine.h"
#include "webhook/serving/waiting_metrics.h"

namespace aiadmit {

// auto: on when the Pod mounts a service-account token or --kubeconfig is
// given, off otherwise; on: missing credentials stop the server; off: the
// profiles alone decide.
enum class ClusterViewMode { Auto, On, Off };
std::optional<ClusterViewMode> parseClusterViewMode(std::string_view text);
std::string_view clusterViewModeName(ClusterViewMode mode);

struct ClusterViewSettings {
  ClusterViewMode mode = ClusterViewMode::Auto;
  std::string kubeconfig;  // wins over the in-cluster credentials
  // --waiting-metrics: the view also watches Pods and Kueue Workloads, for
  // the gauges of GPU work that waits (webhook/serving/waiting_metrics.h).
  bool waitingMetrics = false;
};

// Where the view reads from: `config` is empty when the view is off, with
// `reason` saying why. False with `error` when it must run and cannot: on
// without credentials, or credentials that cannot be read.
struct ClusterViewSource {
  std::optional<ApiServerConfig> config;
  std::string reason;
};
bool resolveClusterViewSource(const ClusterViewSettings& settings,
                              const InClusterEnvironment& environment, ClusterViewSource& out,
                              std::string& error);

class ClusterViewFeed {
 public:
  // Every view the watcher publishes goes to `engine`, which must outlive
  // this feed.
  // With `waitingMetrics`, it watches Pods and Workloads too, and hands each
  // view to the waiting gauges.
  ClusterViewFeed(ApiServerConfig config, Engine& engine,
                  ClusterWatchOptions options = ClusterWatchOptions{},
                  ApiLookupOptions lookup = ApiLookupOptions{}, bool waitingMetrics = false);
  ClusterViewFeed(const ClusterViewFeed&) = delete;
  ClusterViewFeed& operator=(const ClusterViewFeed&) = delete;

  // False with `error` when the credentials cannot be used.
  bool start(std::string* error) { return watcher_.start(error); }
  void stop();
  const ClusterWatcher& watcher() const { return watcher_; }
  ApiLookup& lookup() { return lookup_; }
  // Null without --waiting-metrics.
  const WaitingGauges* waitingGauges() const { return waiting_.get(); }

 private:
  static ClusterWatchOptions wired(ClusterWatchOptions options, Engine& engine,
                                   WaitingGauges* waiting);
  static ApiLookup::ServedVersion servedVersions(const ClusterWatcher& watcher);
  std::unique_ptr<WaitingGauges> waiting_;  // before the watcher that feeds it
  ClusterWatcher watcher_;
  ApiLookup lookup_;
};

}  // namespace aiadmit
