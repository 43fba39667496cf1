// `aiadmit serve`: the HTTPS webhook, tuned for how kube-apiserver calls it
// (one HTTP/1.1 connection per concurrent request, idle ones reused for 90 s).
#pragma once

#include <cstddef>
#include <string>

#include "webhook/policy/rules.h"

namespace aiadmit {

struct ServerOptions {
  std::string host = "0.0.0.0";
  int port = 8443;  // 0: any free port, reported in the "listening" log line
  std::string certFile;
  std::string keyFile;
  std::string profilesDir;
  // Caps every rule's action (--enforcement): audit, warn or deny.
  RuleAction enforcement = RuleAction::Deny;
  // Each open connection holds a thread while it lives (cpp-httplib's model);
  // threads start on demand, so this only caps open connections.
  // kube-apiserver opens one per concurrent admission.
  size_t maxConnections = 4096;
  // An UPDATE review carries the object twice; the API server accepts 3 MiB objects.
  size_t maxBodyBytes = 8 * 1024 * 1024;
  // Longer than the API server's 90 s idle timeout, so we are never the side
  // that closes a connection it may be about to reuse.
  int keepAliveSeconds = 120;
  // Per read or write on a socket: a stalled request is answered (with an
  // error) after this long without a byte.
  int readTimeoutSeconds = 2;
  int writeTimeoutSeconds = 5;
  // A request must be complete within the API server's ?timeout= (at most
  // this), else it is answered with an error instead of waiting on.
  int requestDeadlineSeconds = 30;
  // After SIGTERM, /readyz fails at once; listening stops after this delay so
  // that endpoints are updated before connections are refused.
  int shutdownDelaySeconds = 5;
  int reloadIntervalMillis = 1000;
};

// Runs until SIGTERM or SIGINT; returns the process exit code.
int runServer(const ServerOptions& options);

}  // namespace aiadmit
