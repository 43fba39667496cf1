#include "webhook/serving/cluster_view_feed.h"

#include <unistd.h>

#include <algorithm>

#include "webhook/codec/enum_table.h"
#include "webhook/serving/logging.h"

namespace aiadmit {

namespace {

constexpr std::string_view kPrefix = "cluster view: ";

// The watcher's and reflectors' lines, in the server's log. They name
// resources, HTTP statuses and reasons, never object contents or the token.
void logClusterView(std::string_view level, const std::string& message) {
  const std::string line =
      message.rfind(kPrefix, 0) == 0 ? message : std::string(kPrefix) + message;
  if (level == "info") {
    logLifecycle(line);
  } else if (level == "warn") {
    logWarn(line);
  } else {
    logError(line);
  }
}

// What auto looks for: the variables and the token the kubelet gives a Pod
// that mounts a service-account token.
bool inClusterCredentialsPresent(const InClusterEnvironment& environment) {
  return !environment.host.empty() &&
         access((environment.serviceAccountDir + "/token").c_str(), R_OK) == 0;
}

}  // namespace

// The values of --cluster-view.
constexpr EnumEntry<ClusterViewMode> kClusterViewModeNames[] = {
    {ClusterViewMode::Auto, "auto"}, {ClusterViewMode::On, "on"}, {ClusterViewMode::Off, "off"}};

std::optional<ClusterViewMode> parseClusterViewMode(std::string_view text) {
  return keyIn(kClusterViewModeNames, text);
}

std::string_view clusterViewModeName(ClusterViewMode mode) {
  return valueIn(kClusterViewModeNames, mode, "auto");
}

bool resolveClusterViewSource(const ClusterViewSettings& settings,
                              const InClusterEnvironment& environment, ClusterViewSource& out,
                              std::string& error) {
  out = ClusterViewSource{};
  if (settings.mode == ClusterViewMode::Off) {
    out.reason = "--cluster-view=off";
    return true;
  }
  ApiServerConfig config;
  if (!settings.kubeconfig.empty()) {
    if (!kubeconfigConfig(settings.kubeconfig, "", config, error)) {
      error = "--kubeconfig: " + error;
      return false;
    }
  } else if (settings.mode == ClusterViewMode::On || inClusterCredentialsPresent(environment)) {
    if (!inClusterConfig(environment, config, error)) {
      if (settings.mode == ClusterViewMode::On) {
        error = "--cluster-view=on needs credentials for the Kubernetes API: " + error +
                "; pass --kubeconfig FILE, or mount the service-account token "
                "(docs/cluster-view.md)";
      }
      return false;
    }
  } else {
    out.reason = "no service-account token in the Pod and no --kubeconfig";
    return true;
  }
  out.config = std::move(config);
  return true;
}

ClusterViewFeed::ClusterViewFeed(ApiServerConfig config, Engine& engine,
                                 ClusterWatchOptions options, ApiLookupOptions lookup,
                                 bool waitingMetrics)
    : waiting_(waitingMetrics ? std::make_unique<WaitingGauges>() : nullptr),
      watcher_(config, wired(std::move(options), engine, waiting_.get())),
      lookup_(std::move(config), servedVersions(watcher_), lookup) {}

void ClusterViewFeed::stop() {
  lookup_.stop();
  watcher_.stop();
  if (waiting_) waiting_->stop();
}

// The lookup asks in the version the view watches: one the API serves.
ApiLookup::ServedVersion ClusterViewFeed::servedVersions(const ClusterWatcher& watcher) {
  return [&watcher](ClusterKind kind) {
    const ClusterWatchState state = watcher.state();
    const ResourceState* resource = state.resource(kind);
    return resource != nullptr ? resource->apiVersion : std::string();
  };
}

ClusterWatchOptions ClusterViewFeed::wired(ClusterWatchOptions options, Engine& engine,
                                           WaitingGauges* waiting) {
  if (waiting != nullptr) {
    for (const ClusterKind kind : kWaitingClusterKinds) {
      if (std::find(options.kinds.begin(), options.kinds.end(), kind) == options.kinds.end()) {
        options.kinds.push_back(kind);
      }
    }
  }
  options.onPublish = [&engine, waiting](std::shared_ptr<const ClusterView> view) {
    if (waiting != nullptr) waiting->update(view);
    engine.replaceClusterView(std::move(view));
  };
  if (!options.log) options.log = logClusterView;
  return options;
}

}  // namespace aiadmit
