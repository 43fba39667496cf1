#include "webhook/serving/cluster_view_metrics.h"

#include <cstdint>
#include <cstdio>

#include "webhook/cluster/reflector.h"

namespace aiadmit {

namespace {

std::string number(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.9g", value);
  return buffer;
}

void header(std::string& out, const char* name, const char* type, const char* help) {
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

void sample(std::string& out, const char* name, const std::string& value) {
  out += std::string(name) + " " + value + "\n";
}

std::string resourceName(ClusterKind kind) {
  for (const ResourceType& type : clusterResourceTypes()) {
    if (type.kind == kind) return type.plural;
  }
  return std::string(kindName(kind));
}

struct PerResource {
  const char* name;
  const char* type;
  const char* help;
  uint64_t (*value)(const ClusterWatchState&, const ResourceState&);
};

const PerResource kPerResource[] = {
    {"aiadmit_cluster_view_resource_synced", "gauge",
     "Whether the resource's cache holds a list its watch keeps current (0 before the first "
     "list, and from an ERROR event until it is listed again).",
     [](const auto&, const auto& r) -> uint64_t { return r.synced; }},
    {"aiadmit_cluster_view_resource_stale", "gauge",
     "Whether the resource has been failing long enough to drop out of the view (it answers "
     "unknown).",
     [](const auto& s, const auto& r) -> uint64_t { return s.stale(r); }},
    {"aiadmit_cluster_view_resource_failing", "gauge",
     "Whether the last list or watch of the resource failed.",
     [](const auto&, const auto& r) -> uint64_t { return r.failing; }},
    {"aiadmit_cluster_view_resource_absent", "gauge",
     "Whether the cluster does not serve the resource (a CRD that is not installed).",
     [](const auto&, const auto& r) -> uint64_t { return r.absent; }},
    {"aiadmit_cluster_view_resource_unserved", "gauge",
     "Whether the cluster serves the resource's group only in versions aiadmit does not read "
     "(it answers unknown).",
     [](const auto&, const auto& r) -> uint64_t { return r.unserved; }},
    {"aiadmit_cluster_view_objects", "gauge", "Objects in the resource's cache.",
     [](const auto&, const auto& r) -> uint64_t { return r.objects; }},
    {"aiadmit_cluster_view_lists_total", "counter", "Lists of the resource completed.",
     [](const auto&, const auto& r) { return r.lists; }},
    {"aiadmit_cluster_view_relists_total", "counter",
     "Lists after the first (410 Gone, a resource served again, restarts).",
     [](const auto&, const auto& r) { return r.relists; }},
    {"aiadmit_cluster_view_watches_total", "counter", "Watch streams opened.",
     [](const auto&, const auto& r) { return r.watches; }},
    {"aiadmit_cluster_view_events_total", "counter", "ADDED, MODIFIED and DELETED events applied.",
     [](const auto&, const auto& r) { return r.events; }},
    {"aiadmit_cluster_view_bookmarks_total", "counter", "BOOKMARK events received.",
     [](const auto&, const auto& r) { return r.bookmarks; }},
    {"aiadmit_cluster_view_expired_total", "counter",
     "410 Gone answers and ERROR events: the resourceVersion was compacted away.",
     [](const auto&, const auto& r) { return r.expired; }},
    {"aiadmit_cluster_view_stalls_total", "counter", "Watch streams dropped for silence.",
     [](const auto&, const auto& r) { return r.stalls; }},
    {"aiadmit_cluster_view_watch_errors_total", "counter",
     "ERROR events other than 410 Gone (the resource is unknown until listed again).",
     [](const auto&, const auto& r) { return r.errorEvents; }},
    {"aiadmit_cluster_view_throttled_total", "counter",
     "List pages answered 429, or 503 with Retry-After, and asked for again when told.",
     [](const auto&, const auto& r) { return r.throttled; }},
    {"aiadmit_cluster_view_consistent_lists_total", "counter",
     "Lists from etcd (resourceVersion unset) after the watch cache could not serve the version "
     "asked for.",
     [](const auto&, const auto& r) { return r.consistentLists; }},
    {"aiadmit_cluster_view_failures_total", "counter", "Failed lists and watches.",
     [](const auto&, const auto& r) { return r.failures; }},
};

}  // namespace

void renderClusterViewMetrics(const ClusterWatchState* state, std::string& out) {
  header(out, "aiadmit_cluster_view_enabled", "gauge",
         "Whether serve keeps a live cluster view (--cluster-view).");
  sample(out, "aiadmit_cluster_view_enabled", state != nullptr ? "1" : "0");
  if (state == nullptr) return;
  header(out, "aiadmit_cluster_view_synced", "gauge",
         "Whether every resource is listed and current; 0: decisions use the profiles alone "
         "where the view cannot answer.");
  sample(out, "aiadmit_cluster_view_synced", state->synced ? "1" : "0");
  header(out, "aiadmit_cluster_view_publishes_total", "counter", "Cluster views built.");
  sample(out, "aiadmit_cluster_view_publishes_total", std::to_string(state->publishes));
  header(out, "aiadmit_cluster_view_last_publish_timestamp_seconds", "gauge",
         "When the view in force was built (0: never).");
  const double lastPublish =
      state->publishes == 0
          ? 0
          : std::chrono::duration<double>(state->lastPublish.time_since_epoch()).count();
  sample(out, "aiadmit_cluster_view_last_publish_timestamp_seconds", number(lastPublish));
  header(out, "aiadmit_cluster_view_unauthorized_total", "counter",
         "401 answers of the API, those a re-read token then cured included.");
  sample(out, "aiadmit_cluster_view_unauthorized_total", std::to_string(state->unauthorized));
  header(out, "aiadmit_cluster_view_token_reads_total", "counter",
         "Reads of the service-account token file (rotation, 401s).");
  sample(out, "aiadmit_cluster_view_token_reads_total", std::to_string(state->tokenReads));
  for (const PerResource& metric : kPerResource) {
    header(out, metric.name, metric.type, metric.help);
    for (const ResourceState& resource : state->resources) {
      out += std::string(metric.name) + "{resource=\"" + resourceName(resource.kind) + "\"} " +
             std::to_string(metric.value(*state, resource)) + "\n";
    }
  }
}

}  // namespace aiadmit
