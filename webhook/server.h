// `aiadmit serve`: the HTTPS webhook, tuned for how kube-apiserver calls it
// (one HTTP/1.1 connection per concurrent request, idle ones reused for 90 s).
#pragma once

#include <cstddef>
#include <string>

namespace aiadmit {

struct ServerOptions {
  std::string host = "0.0.0.0";
  int port = 8443;  // 0: any free port, reported in the "listening" log line
  std::string certFile;
  std::string keyFile;
  std::string profilesDir;
  // Each open connection holds a worker while it lives (cpp-httplib's model),
  // so this bounds concurrent connections; kube-apiserver opens one per
  // concurrent admission.
  size_t workerThreads = 384;
  // An UPDATE review carries the object twice; the API server accepts 3 MiB objects.
  size_t maxBodyBytes = 8 * 1024 * 1024;
  // Longer than the API server's 90 s idle timeout, so we are never the side
  // that closes a connection it may be about to reuse.
  int keepAliveSeconds = 120;
  int readTimeoutSeconds = 10;
  int writeTimeoutSeconds = 10;
  // After SIGTERM, /readyz fails at once; listening stops after this delay so
  // that endpoints are updated before connections are refused.
  int shutdownDelaySeconds = 5;
  int reloadIntervalMillis = 1000;
};

// Runs until SIGTERM or SIGINT; returns the process exit code.
int runServer(const ServerOptions& options);

}  // namespace aiadmit
