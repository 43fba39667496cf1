// Prometheus counters and histograms for the request path, lock-free to
// update (fixed label sets, atomics) and rendered in text format on /metrics.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "webhook/cluster/cluster_watcher.h"
#include "webhook/engine/admission.h"
#include "webhook/engine/engine.h"
#include "webhook/model/workload.h"
#include "webhook/policy/classify.h"
#include "webhook/policy/rules.h"
#include "webhook/serving/tls.h"
#include "webhook/serving/waiting_metrics.h"

namespace aiadmit {

// The transport's limits and deadlines, each counted when it ends a request
// or a connection.
enum class Limit {
  None,
  HeaderBytes,
  RequestLine,
  BodyBytes,
  InflightBodyBytes,
  HandshakeDeadline,
  HeaderDeadline,
  BodyDeadline,
  WriteDeadline,
  IdleTimeout,
  Connections,
};
inline constexpr size_t kLimitCount = static_cast<size_t>(Limit::Connections) + 1;
std::string_view limitName(Limit limit);

class Metrics {
 public:
  Metrics();
  // `kubernetesKind`: the row of the request's kind when it is one of
  // Kubernetes' own (kubernetesKindOf), which labels it; null labels it Other.
  void recordRequest(Endpoint endpoint, const WorkloadType* kubernetesKind,
                     WorkloadClass workloadClass, Decision decision, double seconds);
  void recordRuleHit(RuleId rule, RuleAction action);
  // Counts an object made by a controller of a kind no row describes, by
  // that kind ("NIMService.apps.nvidia.com"; past kUnknownControllerKinds
  // kinds, as "other"). True the first time the kind is counted: serve then
  // logs it, once.
  bool recordUnknownController(const std::string& kind);
  static constexpr size_t kUnknownControllerKinds = 64;
  void setEnforcement(RuleAction enforcement);
  void recordProfileReload(bool success, double unixTime);
  // A review of the profiles ConfigMap (POST /validate-profiles).
  void recordProfileReview(Decision decision);
  // A load of the serving certificate: at start, on a change, on SIGHUP.
  void recordCertificateReload(bool success);
  // A load refused, and why (the previous certificate stays served).
  void recordCertificateRefusal(CertificateProblem problem);
  void setCertificateExpiry(double unixTime);
  // A request refused for want of a client certificate (--client-ca).
  void recordUnauthenticatedCaller();
  void setProfilesLoaded(size_t count);
  // The profiles whose pool matches no GPU node of the cluster (Engine::poolFit).
  void setPoolFit(std::shared_ptr<const PoolFit> fit);
  // The live cluster view whose state /metrics shows; null (the default)
  // when serve runs without one. Must outlive every render().
  void setClusterView(const ClusterWatcher* watcher);
  // serve's waiting gauges (--waiting-metrics); null when off. Must outlive
  // every render().
  void setWaitingGauges(const WaitingGauges* gauges);

  void recordLimit(Limit limit);
  void recordConnectionOpened();
  void recordConnectionClosed();
  void recordHandshakeFailure();
  void recordMalformedRequest();
  void recordAcceptError();
  void addInflightBodyBytes(int64_t delta);
  // Reviews handed to the review workers and not yet decided.
  void addReviewsOnWorkers(int64_t delta);

  std::string render() const;

 private:
  // The parts of render(), each a family or a few of them.
  void renderRequests(std::string& out) const;
  void renderLatency(std::string& out) const;
  void renderRules(std::string& out) const;
  void renderProfiles(std::string& out) const;
  void renderCertificate(std::string& out) const;
  void renderPoolFit(std::string& out) const;
  void renderUnknownControllers(std::string& out) const;
  void renderTransport(std::string& out) const;
  // The counter of one endpoint, kind (an index into kinds_, or
  // kinds_.size() for Other), class and decision.
  size_t requestIndex(size_t endpoint, size_t kind, WorkloadClass workloadClass,
                      Decision decision) const;
  static constexpr size_t kEndpoints = 2, kClasses = 4, kDecisions = 4;
  static constexpr std::array<double, 14> kBuckets = {0.00005, 0.0001, 0.00025, 0.0005, 0.001,
                                                      0.0025,  0.005,  0.01,    0.025,  0.05,
                                                      0.1,     0.25,   0.5,     1.0};
  struct Histogram {
    std::array<std::atomic<uint64_t>, kBuckets.size() + 1> buckets{};
    std::atomic<uint64_t> count{0};
    std::atomic<uint64_t> sumNanoseconds{0};
  };

  // The built-in rows of Kubernetes' own kinds, in table order.
  std::vector<const WorkloadType*> kinds_;
  std::vector<std::atomic<uint64_t>> requests_;
  std::array<Histogram, kEndpoints> latency_{};
  // Deny, warn and audit for each rule.
  static constexpr size_t kHitActions = 3;
  std::array<std::atomic<uint64_t>, (kRuleCapacity + 1) * kHitActions> ruleHits_{};
  std::atomic<RuleAction> enforcement_{RuleAction::Deny};
  std::atomic<uint64_t> reloadSuccess_{0};
  std::atomic<uint64_t> reloadFailure_{0};
  std::atomic<double> lastGoodReload_{0};
  std::atomic<bool> lastReloadGood_{true};
  std::array<std::atomic<uint64_t>, kDecisions> profileReviews_{};
  std::atomic<uint64_t> certificateLoads_{0};
  std::atomic<uint64_t> certificateLoadFailures_{0};
  std::atomic<bool> lastCertificateLoadGood_{true};
  std::atomic<double> certificateExpiry_{0};
  std::array<std::atomic<uint64_t>, kCertificateProblemCount> certificateRefusals_{};
  std::atomic<uint64_t> unauthenticatedCallers_{0};
  std::atomic<uint64_t> profilesLoaded_{0};
  std::array<std::atomic<uint64_t>, kLimitCount> limitHits_{};
  std::atomic<uint64_t> connectionsAccepted_{0};
  std::atomic<uint64_t> connectionsClosed_{0};
  std::atomic<uint64_t> handshakeFailures_{0};
  std::atomic<uint64_t> malformedRequests_{0};
  std::atomic<uint64_t> acceptErrors_{0};
  std::atomic<int64_t> inflightBodyBytes_{0};
  std::atomic<int64_t> reviewsOnWorkers_{0};
  std::atomic<const ClusterWatcher*> clusterView_{nullptr};
  std::atomic<const WaitingGauges*> waitingGauges_{nullptr};
  std::atomic<std::shared_ptr<const PoolFit>> poolFit_;
  mutable std::mutex unknownControllersMutex_;
  std::map<std::string, uint64_t> unknownControllers_;
};

}  // namespace aiadmit
