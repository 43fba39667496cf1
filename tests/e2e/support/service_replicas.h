// aiadmit registered through its Service, as the shipped install registers
// it, in place of the URL registration of manifests/overlays/local: two
// replicas (processes of `scripts/e2e-cluster replica`), a Pod object for
// each made from the shipped Deployment's template, the Service and the
// PodDisruptionBudget of manifests/base, and both webhook configurations of
// the base with the replicas' CA bundle. The controller manager's
// EndpointSlice controller builds the Service's endpoints from the Pods,
// and the API server calls one ready endpoint per call
// (--enable-aggregator-routing).
//
// There is no kubelet, so this stands in for it: the Pods are bound to a
// Node of their own ("aiadmit-host", tainted so that nothing else lands
// there), their podIP is the machine's global address (endpoints may not be
// loopback ones), each declares its own port under the name the Service's
// targetPort gives, and a prober thread probes each process's /readyz as
// the shipped readiness probe says (period, timeout, failure threshold) and
// sets the Pod's Ready condition through the status subresource.
//
// The destructor removes all of it and applies the local overlay again:
// the suite's other tests find the URL registration and the single aiadmit
// process as `up` left them.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/support/e2e_cluster.h"

namespace aiadmit::e2e {

// The shipped readiness probe (manifests/base/deployment.yaml).
struct ReadinessProbe {
  std::chrono::seconds period{10};
  std::chrono::seconds timeout{1};
  int failureThreshold = 3;
};

class ServiceReplicas {
 public:
  ServiceReplicas();
  ~ServiceReplicas();
  ServiceReplicas(const ServiceReplicas&) = delete;
  ServiceReplicas& operator=(const ServiceReplicas&) = delete;

  // Both replicas ready and in the Service's endpoints: the API server
  // calls them, not the URL.
  bool ready() const { return ready_; }
  const ReadinessProbe& probe() const { return probe_; }
  std::vector<std::string> podNames() const;
  // HOST:PORT of each running replica, for its /metrics.
  std::vector<std::string> addresses() const;

  // The Deployment's rolling update (maxSurge 1, maxUnavailable 0) of both
  // replicas, as the controllers and the kubelet carry it out.
  bool rollingRestart();
  // SIGKILL of `pod`'s process; its Pod unready once the readiness probe
  // has failed failureThreshold times; its container started again (same
  // Pod, same port) and the Pod ready again.
  bool killAndRecover(const std::string& pod);
  // A CA rotation as docs/install.md does it with certs/webhook-certs.sh.
  bool rotateCa();
  // Every Pod Ready and each of their ports in a ready endpoint.
  bool waitForEndpoints(std::chrono::seconds timeout) const;

 private:
  struct Replica {
    std::string address;  // HOST:PORT
    int failures = 0;
    bool probing = true;
    bool reportedReady = false;
    bool reported = false;  // the last status patch went through
    std::chrono::steady_clock::time_point nextProbe;
  };
  bool setUp();
  bool startReplica(const std::string& pod, const std::string& port = "");
  bool createPod(const std::string& pod, const std::string& address);
  bool setPodStatus(const std::string& pod, bool ready);
  bool waitForPodReady(const std::string& pod, bool ready, std::chrono::seconds timeout) const;
  bool terminate(const std::string& pod);
  bool applyWebhooks();
  void probeLoop();
  void probeOnce(const std::string& pod, Replica& replica);
  void stopProbing(const std::string& pod);
  std::string nextPodName();

  ReadinessProbe probe_;
  std::vector<json> base_;
  std::string host_;
  int made_ = 0;
  bool ready_ = false;
  mutable std::mutex mutex_;
  std::map<std::string, Replica> replicas_;
  std::atomic<bool> stopping_{false};
  std::thread prober_;
};

}  // namespace aiadmit::e2e
