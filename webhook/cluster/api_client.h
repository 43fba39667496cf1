// A read-only HTTPS client of the Kubernetes API (cpp-httplib's client):
// GET requests and watch streams, with the service-account token or the
// kubeconfig's credentials, verifying the server against the cluster's CA.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "webhook/cluster/api_config.h"
#include "webhook/codec/non_copyable.h"

namespace httplib {
class ClientImpl;
}

namespace aiadmit {

struct ApiClientOptions {
  std::chrono::milliseconds connectTimeout{5000};
  std::chrono::milliseconds requestTimeout{60000};  // no byte for this long ends a GET
  size_t maxBodyBytes = size_t{256} << 20;          // one list page
  size_t maxLineBytes = size_t{16} << 20;           // one watch event
  std::chrono::milliseconds tokenRefresh{std::chrono::minutes(1)};
  std::string userAgent = "aiadmit";
};

struct ApiResponse {
  int status = 0;     // 0: no HTTP answer (connect, TLS, read timeout, stopped)
  std::string body;   // the body of a GET, or of a watch refused before streaming
  std::string error;  // why status is 0, or why a stream ended early
  // A Retry-After header in seconds (the API server's form; 429 from API
  // Priority and Fairness, 503 while it starts), at most a day.
  std::optional<std::chrono::seconds> retryAfter;
};

// One keep-alive connection for a sequence of GETs from one thread (the
// discovery and the pages of one list): one TLS handshake for all of them
// instead of one per request. It closes when destroyed, which must happen
// before its ApiClient is.
class ApiConnection : NonCopyable {
 public:
  ApiConnection();
  ~ApiConnection();

 private:
  friend class ApiClient;
  std::unique_ptr<httplib::ClientImpl> client_;
};

class ApiClient {
 public:
  ApiClient(ApiServerConfig config, ApiClientOptions options = {});
  ~ApiClient();
  ApiClient(const ApiClient&) = delete;
  ApiClient& operator=(const ApiClient&) = delete;

  // False with `error` when the CA bundle or the client certificate and key
  // cannot be read.
  bool ready(std::string* error) const;
  const ApiServerConfig& config() const { return config_; }
  BearerToken& token() { return token_; }
  const BearerToken& token() const { return token_; }

  // GET `target` (path and query). A 401 makes the token be read again and
  // the request sent once more when the token changed.
  ApiResponse get(const std::string& target);
  // The same over `connection`, opened by the first request that uses it. A
  // request that gets no answer on a connection an earlier one left open (the
  // server may close an idle one at any time) is sent once more on a new one.
  ApiResponse get(const std::string& target, ApiConnection& connection);
  // GET a watch: each newline-terminated event goes to `onLine` (false stops
  // the stream). Returns when the server ends the stream, no byte arrived
  // for `readTimeout`, `onLine` says stop, or stopAll() is called. The
  // status is the HTTP status; a non-200 answer's body is in `body`.
  // `onOpen` runs when the server has answered 200, before any event.
  ApiResponse stream(const std::string& target, std::chrono::milliseconds readTimeout,
                     const std::function<bool(std::string_view)>& onLine,
                     const std::function<void()>& onOpen = nullptr);
  // Interrupts every request in flight and refuses new ones (shutdown);
  // returns when every request has ended.
  void stopAll();
  // Every 401 the API answered, those a re-read token then cured included.
  uint64_t unauthorizedAnswers() const { return unauthorized_.load(); }

 private:
  struct Credentials;
  ApiResponse send(const std::string& target, std::chrono::milliseconds readTimeout,
                   const std::function<bool(std::string_view)>* onLine,
                   const std::function<void()>* onOpen, ApiConnection* connection);
  ApiResponse attempt(httplib::ClientImpl& client, const std::string& target,
                      const std::string& token, std::chrono::milliseconds readTimeout,
                      const std::function<bool(std::string_view)>* onLine,
                      const std::function<void()>* onOpen);
  std::unique_ptr<httplib::ClientImpl> connect(bool keepAlive) const;

  ApiServerConfig config_;
  ApiClientOptions options_;
  BearerToken token_;
  std::unique_ptr<Credentials> credentials_;
  std::mutex activeMutex_;
  std::set<httplib::ClientImpl*> active_;
  std::condition_variable ended_;  // a request left active_
  std::atomic<bool> stopped_{false};
  std::atomic<uint64_t> unauthorized_{0};
};

}  // namespace aiadmit
