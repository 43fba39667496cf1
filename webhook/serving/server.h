// `aiadmit serve`: the HTTPS webhook, tuned for how kube-apiserver calls it
// (one HTTP/1.1 connection per concurrent request, idle ones reused until the
// API server's idle timeout).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "webhook/policy/rules.h"
#include "webhook/serving/cluster_view_feed.h"
#include "webhook/serving/http_connection.h"

namespace aiadmit {

struct ServerOptions {
  // Both IPv6 and IPv4 (a dual-stack socket), as IPv6-only clusters need;
  // where the host has no IPv6 at all, 0.0.0.0 instead.
  std::string host = "::";
  int port = 8443;  // 0: any free port, reported in the "listening" log line
  std::string certFile;
  std::string keyFile;
  // --client-ca: callers of every path but /healthz and /readyz must present
  // a certificate this CA verifies; empty: no client certificate is asked.
  std::string clientCaFile;
  // --tls-server-name: the name a certificate must carry to be served.
  std::string tlsServerName;
  std::string profilesDir;
  // Caps every rule's action (--enforcement): audit, warn or deny.
  RuleAction enforcement = RuleAction::Deny;
  TransportLimits limits;
  size_t ioThreads = 0;  // 0: one per core
  // After SIGTERM, /readyz fails at once and every answer closes its
  // connection; listening stops after this delay, so that endpoints are
  // updated and clients have moved before connections are refused.
  std::chrono::milliseconds shutdownDelay{5000};
  std::chrono::milliseconds reloadInterval{1000};
  // GET /metrics, /healthz and /readyz over plain HTTP on a port of their
  // own (--metrics-listen), beside the webhook's; off while metricsPort < 0.
  std::string metricsHost = "::";
  int metricsPort = -1;
  // The live cluster view (--cluster-view, --kubeconfig).
  ClusterViewSettings clusterView;
};

// Runs until SIGTERM, SIGINT or SIGQUIT (then drains: stops accepting,
// finishes the requests in flight, then stops the cluster view); SIGHUP
// reloads the profiles and the certificate. Returns the process exit code.
int runServer(const ServerOptions& options);

}  // namespace aiadmit
