// Where the Kubernetes API is and how to prove who we are: the Pod's
// service account (in-cluster) or a kubeconfig for development, as client-go's
// rest.InClusterConfig and clientcmd read them.
#pragma once

#include <chrono>
#include <mutex>
#include <string>

namespace aiadmit {

struct ApiServerConfig {
  std::string host;  // a name or an address (IPv6 without brackets)
  int port = 443;
  std::string caPem;  // CA bundle; empty: the system's trust store
  // Bearer token: a fixed one, or a file re-read as the kubelet rotates it.
  std::string token;
  std::string tokenFile;
  std::string clientCertPem;  // client certificate and key (kubeconfig users)
  std::string clientKeyPem;
  std::string source;  // "in-cluster" or the kubeconfig's path and context, for logs
  // The kubeconfig context's namespace ("" when it names none): where
  // kubectl's namespaced commands look by default.
  std::string namespaceName;

  std::string describe() const;  // "https://HOST:PORT (SOURCE)", no secrets
};

// What the kubelet puts in every Pod that mounts a service-account token.
struct InClusterEnvironment {
  std::string host;  // KUBERNETES_SERVICE_HOST
  std::string port;  // KUBERNETES_SERVICE_PORT
  std::string serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

  static InClusterEnvironment fromProcess();
};

// The in-cluster configuration; false with `error` when the environment or
// the token and CA files are missing (not running in a Pod, or the Pod does
// not mount a token).
bool inClusterConfig(const InClusterEnvironment& environment, ApiServerConfig& out,
                     std::string& error);

// The cluster and user of `context` (the current context when empty) of a
// kubeconfig: server, certificate-authority(-data), token or tokenFile, or
// client-certificate(-data) and client-key(-data). Exec and auth-provider
// plugins and insecure-skip-tls-verify are refused: this client runs none.
bool kubeconfigConfig(const std::string& path, const std::string& context, ApiServerConfig& out,
                      std::string& error);

// The bearer token to send. A token file is re-read once `refresh` has passed
// since it was last read (projected tokens rotate hourly, client-go re-reads
// each minute) and at once after a 401. Thread-safe.
class BearerToken {
 public:
  BearerToken(std::string fixed, std::string file,
              std::chrono::milliseconds refresh = std::chrono::minutes(1));
  // The token, or "" when there is none or the file cannot be read.
  std::string current();
  // The API refused the token: read the file again on the next call.
  void refused();
  uint64_t reads() const;

 private:
  mutable std::mutex mutex_;
  std::string fixed_;
  std::string file_;
  std::chrono::milliseconds refresh_;
  std::string cached_;
  std::chrono::steady_clock::time_point readAt_{};
  bool fresh_ = false;
  uint64_t reads_ = 0;
};

}  // namespace aiadmit
