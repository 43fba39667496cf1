#include "webhook/serving/metrics.h"

#include <algorithm>
#include <cstdio>
#include <iterator>

#include "webhook/serving/cluster_view_metrics.h"
#include "webhook/serving/logging.h"
#include "webhook/serving/prometheus_text.h"

namespace aiadmit {

namespace {
// The label of requests for kinds that are not Kubernetes' own.
constexpr std::string_view kOtherKind = "Other";
constexpr std::array<WorkloadClass, 4> kAllClasses = {
    WorkloadClass::None, WorkloadClass::Training, WorkloadClass::Batch, WorkloadClass::Realtime};
// The actions that count a violation, in the order of RuleAction.
constexpr std::array<RuleAction, 3> kHitActionsInOrder = {RuleAction::Deny, RuleAction::Warn,
                                                          RuleAction::Audit};
// recordRuleHit indexes its counters by the action's value.
static_assert(static_cast<int>(RuleAction::Deny) == 0 && static_cast<int>(RuleAction::Warn) == 1 &&
              static_cast<int>(RuleAction::Audit) == 2);
constexpr std::array<Decision, 4> kAllDecisions = {Decision::Allowed, Decision::Patched,
                                                   Decision::Denied, Decision::Errored};

void gauge(std::string& out, std::string_view name, std::string_view help, std::string_view value) {
  appendFamilyHeader(out, name, "gauge", help);
  out.append(name).append(" ").append(value).append("\n");
}
}  // namespace

Metrics::Metrics() {
  for (const WorkloadType& type : WorkloadTypeTable::builtIn()->types()) {
    if (!type.customResource) kinds_.push_back(&type);
  }
  requests_ =
      std::vector<std::atomic<uint64_t>>(kEndpoints * (kinds_.size() + 1) * kClasses * kDecisions);
}

size_t Metrics::requestIndex(size_t endpoint, size_t kind, WorkloadClass workloadClass,
                             Decision decision) const {
  return ((endpoint * (kinds_.size() + 1) + kind) * kClasses + static_cast<size_t>(workloadClass)) *
             kDecisions +
         static_cast<size_t>(decision);
}

void Metrics::recordRequest(Endpoint endpoint, const WorkloadType* kubernetesKind,
                            WorkloadClass workloadClass, Decision decision, double seconds) {
  const size_t e = static_cast<size_t>(endpoint);
  const size_t kind =
      static_cast<size_t>(std::find(kinds_.begin(), kinds_.end(), kubernetesKind) - kinds_.begin());
  const size_t index = requestIndex(e, kind, workloadClass, decision);
  requests_[index].fetch_add(1, std::memory_order_relaxed);
  Histogram& histogram = latency_[e];
  size_t bucket = 0;
  while (bucket < kBuckets.size() && seconds > kBuckets[bucket]) ++bucket;
  histogram.buckets[bucket].fetch_add(1, std::memory_order_relaxed);
  histogram.count.fetch_add(1, std::memory_order_relaxed);
  histogram.sumNanoseconds.fetch_add(static_cast<uint64_t>(seconds * 1e9),
                                     std::memory_order_relaxed);
}

void Metrics::recordRuleHit(RuleId rule, RuleAction action) {
  if (action == RuleAction::Off) return;
  ruleHits_[static_cast<size_t>(rule.number) * kHitActions + static_cast<size_t>(action)].fetch_add(
      1, std::memory_order_relaxed);
}

bool Metrics::recordUnknownController(const std::string& kind) {
  std::lock_guard<std::mutex> lock(unknownControllersMutex_);
  auto it = unknownControllers_.find(kind);
  if (it == unknownControllers_.end()) {
    const bool room = unknownControllers_.size() < kUnknownControllerKinds;
    it = unknownControllers_.emplace(room ? kind : "other", 0).first;
    ++it->second;
    return room;
  }
  ++it->second;
  return false;
}

void Metrics::renderUnknownControllers(std::string& out) const {
  appendFamilyHeader(out, "aiadmit_unknown_controller_objects_total", "counter",
                     "Objects made by a controller of a kind no WorkloadType names, by that kind: "
                     "placed for their role, the workload itself judged by nobody.");
  std::lock_guard<std::mutex> lock(unknownControllersMutex_);
  for (const auto& [kind, count] : unknownControllers_) {
    out += "aiadmit_unknown_controller_objects_total{controller=\"" + prometheusLabel(kind) +
           "\"} " + std::to_string(count) + "\n";
  }
}

void Metrics::setEnforcement(RuleAction enforcement) {
  enforcement_.store(enforcement);
}

void Metrics::recordProfileReload(bool success, double unixTime) {
  if (success) {
    reloadSuccess_.fetch_add(1, std::memory_order_relaxed);
    lastGoodReload_.store(unixTime, std::memory_order_relaxed);
  } else {
    reloadFailure_.fetch_add(1, std::memory_order_relaxed);
  }
  lastReloadGood_.store(success);
}

void Metrics::recordProfileReview(Decision decision) {
  profileReviews_[static_cast<size_t>(decision)].fetch_add(1, std::memory_order_relaxed);
}

void Metrics::recordCertificateReload(bool success) {
  (success ? certificateLoads_ : certificateLoadFailures_).fetch_add(1, std::memory_order_relaxed);
  lastCertificateLoadGood_.store(success);
}

void Metrics::recordCertificateRefusal(CertificateProblem problem) {
  certificateRefusals_[static_cast<size_t>(problem)].fetch_add(1, std::memory_order_relaxed);
}

void Metrics::recordUnauthenticatedCaller() {
  unauthenticatedCallers_.fetch_add(1, std::memory_order_relaxed);
}

// The `limit` label of aiadmit_http_limit_hits_total, in the order of Limit,
// as the counters are kept.
constexpr std::string_view kLimitNames[] = {
    "none",           "header_bytes",        "request_line_bytes",
    "body_bytes",     "inflight_body_bytes", "handshake_timeout",
    "header_timeout", "body_timeout",        "write_timeout",
    "idle_timeout",   "connections"};
static_assert(std::size(kLimitNames) == kLimitCount, "a label for every limit");

std::string_view limitName(Limit limit) {
  const auto index = static_cast<size_t>(limit);
  return index < kLimitCount ? kLimitNames[index] : kLimitNames[0];
}

void Metrics::recordLimit(Limit limit) {
  limitHits_[static_cast<size_t>(limit)].fetch_add(1, std::memory_order_relaxed);
}
void Metrics::recordConnectionOpened() {
  connectionsAccepted_.fetch_add(1, std::memory_order_relaxed);
}
void Metrics::recordConnectionClosed() {
  connectionsClosed_.fetch_add(1, std::memory_order_relaxed);
}
void Metrics::recordHandshakeFailure() {
  handshakeFailures_.fetch_add(1, std::memory_order_relaxed);
}
void Metrics::recordMalformedRequest() {
  malformedRequests_.fetch_add(1, std::memory_order_relaxed);
}
void Metrics::recordAcceptError() {
  acceptErrors_.fetch_add(1, std::memory_order_relaxed);
}
void Metrics::addInflightBodyBytes(int64_t delta) {
  inflightBodyBytes_.fetch_add(delta, std::memory_order_relaxed);
}

void Metrics::addReviewsOnWorkers(int64_t delta) {
  reviewsOnWorkers_.fetch_add(delta, std::memory_order_relaxed);
}

void Metrics::setCertificateExpiry(double unixTime) {
  certificateExpiry_.store(unixTime);
}
void Metrics::setProfilesLoaded(size_t count) {
  profilesLoaded_.store(count);
}
void Metrics::setClusterView(const ClusterWatcher* watcher) {
  clusterView_.store(watcher);
}
void Metrics::setWaitingGauges(const WaitingGauges* gauges) {
  waitingGauges_.store(gauges);
}

std::string Metrics::render() const {
  std::string out;
  out.reserve(16384);
  renderRequests(out);
  renderLatency(out);
  renderRules(out);
  renderUnknownControllers(out);
  renderProfiles(out);
  renderTransport(out);
  if (const ClusterWatcher* watcher = clusterView_.load()) {
    const ClusterWatchState state = watcher->state();
    renderClusterViewMetrics(&state, out);
  } else {
    renderClusterViewMetrics(nullptr, out);
  }
  if (const WaitingGauges* gauges = waitingGauges_.load()) gauges->render(out);
  return out;
}

void Metrics::renderRequests(std::string& out) const {
  appendFamilyHeader(out, "aiadmit_requests_total", "counter",
                     "Admission requests by endpoint, kind, class and decision.");
  for (size_t e = 0; e < kEndpoints; ++e) {
    for (size_t kind = 0; kind <= kinds_.size(); ++kind) {
      for (WorkloadClass workloadClass : kAllClasses) {
        for (Decision decision : kAllDecisions) {
          const uint64_t value = requests_[requestIndex(e, kind, workloadClass, decision)].load(
              std::memory_order_relaxed);
          if (value == 0) continue;
          out += "aiadmit_requests_total{endpoint=\"";
          out += endpointName(static_cast<Endpoint>(e));
          out += "\",kind=\"";
          out += kind < kinds_.size() ? std::string_view(kinds_[kind]->kind) : kOtherKind;
          out += "\",class=\"";
          out += className(workloadClass);
          out += "\",decision=\"";
          out += decisionName(decision);
          out += "\"} " + std::to_string(value) + "\n";
        }
      }
    }
  }
}

void Metrics::renderLatency(std::string& out) const {
  appendFamilyHeader(out, "aiadmit_request_duration_seconds", "histogram",
                     "Time from a decoded body to an encoded answer.");
  for (size_t e = 0; e < kEndpoints; ++e) {
    const Histogram& histogram = latency_[e];
    const std::string label =
        "endpoint=\"" + std::string(endpointName(static_cast<Endpoint>(e))) + "\"";
    uint64_t cumulative = 0;
    for (size_t b = 0; b <= kBuckets.size(); ++b) {
      cumulative += histogram.buckets[b].load(std::memory_order_relaxed);
      out += "aiadmit_request_duration_seconds_bucket{" + label + ",le=\"" +
             (b < kBuckets.size() ? prometheusNumber(kBuckets[b]) : std::string("+Inf")) + "\"} " +
             std::to_string(cumulative) + "\n";
    }
    out += "aiadmit_request_duration_seconds_sum{" + label + "} " +
           prometheusNumber(static_cast<double>(histogram.sumNanoseconds.load()) / 1e9) + "\n";
    out += "aiadmit_request_duration_seconds_count{" + label + "} " +
           std::to_string(histogram.count.load()) + "\n";
  }
}

void Metrics::renderRules(std::string& out) const {
  appendFamilyHeader(out, "aiadmit_rule_hits_total", "counter",
                     "Violations found, by rule and the action applied.");
  for (const RuleInfo& rule : ruleCatalogue()) {
    for (RuleAction action : kHitActionsInOrder) {
      const size_t index =
          static_cast<size_t>(rule.id.number) * kHitActions + static_cast<size_t>(action);
      out += "aiadmit_rule_hits_total{rule=\"" + rule.id.name() + "\",action=\"" +
             std::string(actionName(action)) + "\"} " + std::to_string(ruleHits_[index].load()) +
             "\n";
    }
  }
  appendFamilyHeader(out, "aiadmit_enforcement", "gauge",
                     "The enforcement level in force: the strongest action a rule may take.");
  for (RuleAction level : kHitActionsInOrder) {
    out += "aiadmit_enforcement{level=\"" + std::string(actionName(level)) + "\"} " +
           (enforcement_.load() == level ? "1" : "0") + "\n";
  }
}

namespace {

// A counter family of successes and failures.
void byResult(std::string& out, const std::string& name, std::string_view help, uint64_t success,
              uint64_t failure) {
  appendFamilyHeader(out, name, "counter", help);
  out += name + "{result=\"success\"} " + std::to_string(success) + "\n";
  out += name + "{result=\"failure\"} " + std::to_string(failure) + "\n";
}

}  // namespace

void Metrics::renderProfiles(std::string& out) const {
  byResult(out, "aiadmit_profile_reloads_total", "Profile set loads by result.",
           reloadSuccess_.load(), reloadFailure_.load());
  appendFamilyHeader(out, "aiadmit_profile_last_success_timestamp_seconds", "gauge",
                     "When the profiles in force were loaded.");
  out += "aiadmit_profile_last_success_timestamp_seconds " +
         prometheusNumber(lastGoodReload_.load()) + "\n";
  gauge(out, "aiadmit_profile_last_reload_successful",
        "Whether the last load of the profiles succeeded (0: a broken set was refused and the "
        "last good one is in force).",
        lastReloadGood_.load() ? "1" : "0");
  appendFamilyHeader(out, "aiadmit_profiles", "gauge", "Profiles in force.");
  out += "aiadmit_profiles " + std::to_string(profilesLoaded_.load()) + "\n";
  appendFamilyHeader(out, "aiadmit_profile_reviews_total", "counter",
                     "Reviews of the profiles ConfigMap (/validate-profiles), by decision.");
  for (Decision decision : {Decision::Allowed, Decision::Denied, Decision::Errored}) {
    out += "aiadmit_profile_reviews_total{decision=\"" + std::string(decisionName(decision)) +
           "\"} " + std::to_string(profileReviews_[static_cast<size_t>(decision)].load()) + "\n";
  }
  renderCertificate(out);
  renderPoolFit(out);
}

void Metrics::renderCertificate(std::string& out) const {
  appendFamilyHeader(out, "aiadmit_certificate_expiry_timestamp_seconds", "gauge",
                     "NotAfter of the serving certificate.");
  out += "aiadmit_certificate_expiry_timestamp_seconds " +
         prometheusNumber(certificateExpiry_.load()) + "\n";
  byResult(out, "aiadmit_certificate_reloads_total",
           "Loads of the serving certificate and key, by result.", certificateLoads_.load(),
           certificateLoadFailures_.load());
  gauge(out, "aiadmit_certificate_last_reload_successful",
        "Whether the last load of the serving certificate succeeded (0: a changed pair was "
        "refused and the previous one is served).",
        lastCertificateLoadGood_.load() ? "1" : "0");
  appendFamilyHeader(out, "aiadmit_certificate_refusals_total", "counter",
                     "Loads of the serving certificate refused, by reason (expired, not_yet_valid, "
                     "wrong_name: what callers would refuse; unusable; client_ca).");
  for (size_t p = 1; p < kCertificateProblemCount; ++p) {
    out += "aiadmit_certificate_refusals_total{reason=\"" +
           std::string(certificateProblemName(static_cast<CertificateProblem>(p))) + "\"} " +
           std::to_string(certificateRefusals_[p].load()) + "\n";
  }
  appendFamilyHeader(out, "aiadmit_unauthenticated_requests_total", "counter",
                     "Requests refused before their body was read: the caller presented no "
                     "certificate of the --client-ca.");
  out += "aiadmit_unauthenticated_requests_total " +
         std::to_string(unauthenticatedCallers_.load()) + "\n";
}

void Metrics::renderPoolFit(std::string& out) const {
  const std::shared_ptr<const PoolFit> fit = poolFit_.load();
  const size_t unmatched = fit != nullptr ? fit->unmatched.size() : 0;
  appendFamilyHeader(out, "aiadmit_profile_pools_unmatched", "gauge",
                     "Profiles whose pool matches none of the cluster's GPU nodes: every workload "
                     "they place would stay Pending.");
  out += "aiadmit_profile_pools_unmatched " + std::to_string(unmatched) + "\n";
  appendFamilyHeader(out, "aiadmit_profile_pool_unmatched", "gauge",
                     "A profile whose pool matches none of the cluster's GPU nodes.");
  if (fit == nullptr) return;
  for (const auto& [name, pool] : fit->unmatched) {
    out += "aiadmit_profile_pool_unmatched{profile=\"" + prometheusLabel(name) + "\"} 1\n";
  }
}

void Metrics::setPoolFit(std::shared_ptr<const PoolFit> fit) {
  poolFit_.store(std::move(fit));
}

void Metrics::renderTransport(std::string& out) const {
  const auto counter = [&out](const char* name, const char* help, uint64_t value) {
    appendFamilyHeader(out, name, "counter", help);
    out += std::string(name) + " " + std::to_string(value) + "\n";
  };
  appendFamilyHeader(out, "aiadmit_http_limit_hits_total", "counter",
                     "Requests refused and connections closed by a limit or deadline.");
  for (size_t l = 1; l < kLimitCount; ++l) {
    out += "aiadmit_http_limit_hits_total{limit=\"" +
           std::string(limitName(static_cast<Limit>(l))) + "\"} " +
           std::to_string(limitHits_[l].load(std::memory_order_relaxed)) + "\n";
  }
  const uint64_t accepted = connectionsAccepted_.load();
  const uint64_t closed = connectionsClosed_.load();
  counter("aiadmit_connections_accepted_total", "TCP connections accepted.", accepted);
  appendFamilyHeader(out, "aiadmit_connections_open", "gauge", "Connections open now.");
  out += "aiadmit_connections_open " + std::to_string(accepted >= closed ? accepted - closed : 0) +
         "\n";
  counter("aiadmit_tls_handshake_failures_total", "TLS handshakes that failed.",
          handshakeFailures_.load());
  counter("aiadmit_http_malformed_requests_total",
          "Requests refused as malformed HTTP (400), duplicate Content-Length included.",
          malformedRequests_.load());
  counter("aiadmit_accept_errors_total", "Failed accepts (out of descriptors or memory).",
          acceptErrors_.load());
  appendFamilyHeader(out, "aiadmit_inflight_body_bytes", "gauge",
                     "Request body bytes that arrived for requests in flight.");
  out += "aiadmit_inflight_body_bytes " + std::to_string(inflightBodyBytes_.load()) + "\n";
  appendFamilyHeader(out, "aiadmit_reviews_on_workers", "gauge",
                     "Large reviews queued for or being decided on the review workers.");
  out += "aiadmit_reviews_on_workers " + std::to_string(reviewsOnWorkers_.load()) + "\n";
  counter("aiadmit_log_lines_dropped_total",
          "Request log lines dropped because the log queue was full.", logLinesDropped());
}

}  // namespace aiadmit
