#include "webhook/serving/cluster_view_metrics.h"

#include <cstdint>
#include <cstdio>

#include "webhook/cluster/reflector.h"
#include "webhook/serving/prometheus_text.h"

namespace aiadmit {

namespace {

void sample(std::string& out, const char* name, const std::string& value) {
  out += std::string(name) + " " + value + "\n";
}

std::string resourceName(ClusterKind kind) {
  for (const ResourceType& type : clusterResourceTypes()) {
    if (type.kind == kind) return type.plural;
  }
  return std::string(kindName(kind));
}

// One sample of a metric per resource, labelled with the resource's plural.
void perResource(std::string& out, const char* name, const ResourceState& resource,
                 uint64_t value) {
  out += std::string(name) + "{resource=\"" + resourceName(resource.kind) + "\"} " +
         std::to_string(value) + "\n";
}

// The state of each resource, as gauges.
struct PerResource {
  const char* name;
  const char* help;
  uint64_t (*value)(const ClusterWatchState&, const ResourceState&);
};

const PerResource kPerResource[] = {
    {"aiadmit_cluster_view_resource_synced",
     "Whether the resource's cache holds a list its watch keeps current (0 before the first "
     "list, and from an ERROR event until it is listed again).",
     [](const auto&, const auto& r) -> uint64_t { return r.synced; }},
    {"aiadmit_cluster_view_resource_stale",
     "Whether the resource has been failing long enough to drop out of the view (it answers "
     "unknown).",
     [](const auto& s, const auto& r) -> uint64_t { return s.stale(r); }},
    {"aiadmit_cluster_view_resource_failing",
     "Whether the last list or watch of the resource failed.",
     [](const auto&, const auto& r) -> uint64_t { return r.failing; }},
    {"aiadmit_cluster_view_resource_absent",
     "Whether the cluster does not serve the resource (a CRD that is not installed).",
     [](const auto&, const auto& r) -> uint64_t { return r.absent; }},
    {"aiadmit_cluster_view_resource_unserved",
     "Whether the cluster serves the resource's group only in versions aiadmit does not read "
     "(it answers unknown).",
     [](const auto&, const auto& r) -> uint64_t { return r.unserved; }},
    {"aiadmit_cluster_view_objects", "Objects in the resource's cache.",
     [](const auto&, const auto& r) -> uint64_t { return r.objects; }},
};

// The counters of each resource: how often its reflector did each thing.
struct PerResourceCounter {
  const char* name;
  const char* help;
  uint64_t ResourceState::*count;
};

const PerResourceCounter kPerResourceCounters[] = {
    {"aiadmit_cluster_view_lists_total", "Lists of the resource completed.", &ResourceState::lists},
    {"aiadmit_cluster_view_relists_total",
     "Lists after the first (410 Gone, a resource served again, restarts).",
     &ResourceState::relists},
    {"aiadmit_cluster_view_watches_total", "Watch streams opened.", &ResourceState::watches},
    {"aiadmit_cluster_view_events_total", "ADDED, MODIFIED and DELETED events applied.",
     &ResourceState::events},
    {"aiadmit_cluster_view_bookmarks_total", "BOOKMARK events received.",
     &ResourceState::bookmarks},
    {"aiadmit_cluster_view_expired_total",
     "410 Gone answers and ERROR events: the resourceVersion was compacted away.",
     &ResourceState::expired},
    {"aiadmit_cluster_view_stalls_total", "Watch streams dropped for silence.",
     &ResourceState::stalls},
    {"aiadmit_cluster_view_watch_errors_total",
     "ERROR events other than 410 Gone (the resource is unknown until listed again).",
     &ResourceState::errorEvents},
    {"aiadmit_cluster_view_throttled_total",
     "List pages answered 429, or 503 with Retry-After, and asked for again when told.",
     &ResourceState::throttled},
    {"aiadmit_cluster_view_consistent_lists_total",
     "Lists from etcd (resourceVersion unset) after the watch cache could not serve the version "
     "asked for.",
     &ResourceState::consistentLists},
    {"aiadmit_cluster_view_failures_total", "Failed lists and watches.", &ResourceState::failures},
};

}  // namespace

void renderClusterViewMetrics(const ClusterWatchState* state, std::string& out) {
  appendFamilyHeader(out, "aiadmit_cluster_view_enabled", "gauge",
                     "Whether serve keeps a live cluster view (--cluster-view).");
  sample(out, "aiadmit_cluster_view_enabled", state != nullptr ? "1" : "0");
  if (state == nullptr) return;
  appendFamilyHeader(
      out, "aiadmit_cluster_view_synced", "gauge",
      "Whether every resource is listed and current; 0: decisions use the profiles alone "
      "where the view cannot answer.");
  sample(out, "aiadmit_cluster_view_synced", state->synced ? "1" : "0");
  appendFamilyHeader(out, "aiadmit_cluster_view_publishes_total", "counter",
                     "Cluster views built.");
  sample(out, "aiadmit_cluster_view_publishes_total", std::to_string(state->publishes));
  appendFamilyHeader(out, "aiadmit_cluster_view_last_publish_timestamp_seconds", "gauge",
                     "When the view in force was built (0: never).");
  const double lastPublish =
      state->publishes == 0
          ? 0
          : std::chrono::duration<double>(state->lastPublish.time_since_epoch()).count();
  sample(out, "aiadmit_cluster_view_last_publish_timestamp_seconds", prometheusNumber(lastPublish));
  appendFamilyHeader(out, "aiadmit_cluster_view_unauthorized_total", "counter",
                     "401 answers of the API, those a re-read token then cured included.");
  sample(out, "aiadmit_cluster_view_unauthorized_total", std::to_string(state->unauthorized));
  appendFamilyHeader(out, "aiadmit_cluster_view_token_reads_total", "counter",
                     "Reads of the service-account token file (rotation, 401s).");
  sample(out, "aiadmit_cluster_view_token_reads_total", std::to_string(state->tokenReads));
  for (const PerResource& metric : kPerResource) {
    appendFamilyHeader(out, metric.name, "gauge", metric.help);
    for (const ResourceState& resource : state->resources) {
      perResource(out, metric.name, resource, metric.value(*state, resource));
    }
  }
  for (const PerResourceCounter& metric : kPerResourceCounters) {
    appendFamilyHeader(out, metric.name, "counter", metric.help);
    for (const ResourceState& resource : state->resources) {
      perResource(out, metric.name, resource, resource.*metric.count);
    }
  }
}

}  // namespace aiadmit
