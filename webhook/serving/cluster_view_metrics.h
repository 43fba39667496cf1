// The cluster view's part of /metrics, in the Prometheus text format of the
// rest: whether it runs and is synced, its publishes, and per resource
// (`resource` label, the API's plural) what its list+watch cache is doing.
#pragma once

#include <string>

#include "webhook/cluster/cluster_watcher.h"

namespace aiadmit {

// `state` is null when `serve` runs without the view (--cluster-view=off, or
// auto without credentials): only aiadmit_cluster_view_enabled 0 is written.
void renderClusterViewMetrics(const ClusterWatchState* state, std::string& out);

}  // namespace aiadmit
