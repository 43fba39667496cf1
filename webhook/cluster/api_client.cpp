#include "webhook/cluster/api_client.h"

#include <httplib.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <algorithm>
#include <vector>

namespace aiadmit {

// The CA certificates and client key, parsed once; each connection gets its
// own X509_STORE because cpp-httplib hands the store to its SSL_CTX.
struct ApiClient::Credentials {
  std::vector<X509*> authorities;
  X509* clientCert = nullptr;
  EVP_PKEY* clientKey = nullptr;
  std::string error;

  ~Credentials() {
    for (X509* cert : authorities) X509_free(cert);
    X509_free(clientCert);
    EVP_PKEY_free(clientKey);
  }

  X509_STORE* store() const {
    X509_STORE* store = X509_STORE_new();
    if (store == nullptr) return nullptr;
    if (authorities.empty()) X509_STORE_set_default_paths(store);
    for (X509* cert : authorities) X509_STORE_add_cert(store, cert);
    return store;
  }
};

namespace {

BIO* memoryBio(const std::string& pem) {
  return BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
}

}  // namespace

ApiClient::ApiClient(ApiServerConfig config, ApiClientOptions options)
    : config_(std::move(config)),
      options_(std::move(options)),
      token_(config_.token, config_.tokenFile, options_.tokenRefresh),
      credentials_(std::make_unique<Credentials>()) {
  if (!config_.caPem.empty()) {
    BIO* bio = memoryBio(config_.caPem);
    while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
      credentials_->authorities.push_back(cert);
    }
    BIO_free(bio);
    if (credentials_->authorities.empty()) {
      credentials_->error = "the certificate authority holds no PEM certificate";
    }
  }
  if (!config_.clientCertPem.empty()) {
    BIO* certBio = memoryBio(config_.clientCertPem);
    credentials_->clientCert = PEM_read_bio_X509(certBio, nullptr, nullptr, nullptr);
    BIO_free(certBio);
    BIO* keyBio = memoryBio(config_.clientKeyPem);
    credentials_->clientKey = PEM_read_bio_PrivateKey(keyBio, nullptr, nullptr, nullptr);
    BIO_free(keyBio);
    if (credentials_->clientCert == nullptr || credentials_->clientKey == nullptr) {
      credentials_->error = "the client certificate or key is not PEM";
    }
  }
  ERR_clear_error();
}

ApiClient::~ApiClient() {
  stopAll();
}

bool ApiClient::ready(std::string* error) const {
  if (credentials_->error.empty()) return true;
  if (error) *error = credentials_->error;
  return false;
}

std::unique_ptr<httplib::ClientImpl> ApiClient::connect(bool keepAlive) const {
  std::unique_ptr<httplib::SSLClient> client;
  if (credentials_->clientCert != nullptr) {
    client = std::make_unique<httplib::SSLClient>(
        config_.host, config_.port, credentials_->clientCert, credentials_->clientKey);
  } else {
    client = std::make_unique<httplib::SSLClient>(config_.host, config_.port);
  }
  client->set_ca_cert_store(credentials_->store());
  client->enable_server_certificate_verification(true);
  client->set_connection_timeout(options_.connectTimeout);
  client->set_keep_alive(keepAlive);
  return client;
}

ApiConnection::ApiConnection() = default;
ApiConnection::~ApiConnection() = default;

ApiResponse ApiClient::get(const std::string& target) {
  return send(target, options_.requestTimeout, nullptr, nullptr, nullptr);
}

ApiResponse ApiClient::get(const std::string& target, ApiConnection& connection) {
  return send(target, options_.requestTimeout, nullptr, nullptr, &connection);
}

ApiResponse ApiClient::stream(const std::string& target, std::chrono::milliseconds readTimeout,
                              const std::function<bool(std::string_view)>& onLine,
                              const std::function<void()>& onOpen) {
  return send(target, readTimeout, &onLine, onOpen ? &onOpen : nullptr, nullptr);
}

void ApiClient::stopAll() {
  std::unique_lock<std::mutex> lock(activeMutex_);
  stopped_ = true;
  // httplib's stop() shuts down the socket a request has open (or, while it
  // connects, the one it is about to use), but on a client that has not yet
  // begun to connect it does nothing, and the request would then run until its
  // read timeout. Such a request has its socket a moment later: interrupt
  // every request again until each has ended.
  while (!active_.empty()) {
    for (httplib::ClientImpl* client : active_) client->stop();
    ended_.wait_for(lock, std::chrono::milliseconds(10), [&] { return active_.empty(); });
  }
}

namespace {

// Delay-seconds only: the API server never sends the HTTP-date form.
std::optional<std::chrono::seconds> retryAfterOf(const httplib::Response& head) {
  const std::string value = head.get_header_value("Retry-After");
  if (value.empty() || value.size() > 9) return std::nullopt;
  int64_t seconds = 0;
  for (const char c : value) {
    if (c < '0' || c > '9') return std::nullopt;
    seconds = seconds * 10 + (c - '0');
  }
  return std::chrono::seconds(std::min<int64_t>(seconds, 86400));
}

}  // namespace

ApiResponse ApiClient::send(const std::string& target, std::chrono::milliseconds readTimeout,
                            const std::function<bool(std::string_view)>* onLine,
                            const std::function<void()>* onOpen, ApiConnection* connection) {
  ApiResponse response;
  if (!ready(&response.error)) return response;
  bool tokenRetried = false;
  bool connectionRetried = false;
  while (true) {
    const std::string token = token_.current();
    std::unique_ptr<httplib::ClientImpl> own;
    httplib::ClientImpl* client;
    bool reused = false;
    if (connection != nullptr) {
      reused = connection->client_ != nullptr && connection->client_->is_socket_open() != 0;
      if (connection->client_ == nullptr) connection->client_ = connect(true);
      client = connection->client_.get();
    } else {
      own = connect(false);
      client = own.get();
    }
    response = attempt(*client, target, token, readTimeout, onLine, onOpen);
    if (response.status == 0 && reused && !connectionRetried && !stopped_) {
      // The server closed the idle connection as the request went out: a GET
      // is safe to send again, as Go's client does, on a new connection.
      connectionRetried = true;
      connection->client_.reset();
      continue;
    }
    if (response.status == 401) ++unauthorized_;
    if (response.status != 401 || tokenRetried) return response;
    // The token was refused: it may have rotated under us. Read it again and
    // retry once if it changed; otherwise the caller backs off.
    tokenRetried = true;
    token_.refused();
    if (token_.current() == token) return response;
  }
}

ApiResponse ApiClient::attempt(httplib::ClientImpl& client, const std::string& target,
                               const std::string& token, std::chrono::milliseconds readTimeout,
                               const std::function<bool(std::string_view)>* onLine,
                               const std::function<void()>* onOpen) {
  ApiResponse response;
  client.set_read_timeout(readTimeout);
  {
    // Checked under the lock stopAll() takes, so no request slips past it.
    std::lock_guard<std::mutex> lock(activeMutex_);
    if (stopped_) {
      response.error = "stopped";
      return response;
    }
    active_.insert(&client);
  }
  httplib::Headers headers = {{"Accept", "application/json"}, {"User-Agent", options_.userAgent}};
  if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);

  bool streaming = false;
  bool tooLarge = false;
  std::string pending;  // a watch event split across chunks
  const httplib::Result result = client.Get(
      target, headers,
      [&](const httplib::Response& head) {
        response.status = head.status;
        response.retryAfter = retryAfterOf(head);
        streaming = onLine != nullptr && head.status == 200;
        if (streaming && onOpen != nullptr) (*onOpen)();
        return true;
      },
      [&](const char* data, size_t length) {
        if (!streaming) {
          if (response.body.size() + length > options_.maxBodyBytes) return !(tooLarge = true);
          response.body.append(data, length);
          return true;
        }
        pending.append(data, length);
        size_t start = 0;
        for (size_t end; (end = pending.find('\n', start)) != std::string::npos; start = end + 1) {
          if (end > start && !(*onLine)(std::string_view(pending).substr(start, end - start))) {
            pending.clear();
            return false;
          }
        }
        pending.erase(0, start);
        return pending.size() <= options_.maxLineBytes || !(tooLarge = true);
      });
  {
    std::lock_guard<std::mutex> lock(activeMutex_);
    active_.erase(&client);
  }
  ended_.notify_all();
  if (tooLarge) {
    response.error = streaming ? "a watch event is larger than the limit"
                               : "the response is larger than the limit";
  } else if (!result && result.error() != httplib::Error::Canceled) {
    response.error = httplib::to_string(result.error());
    if (!streaming) response.status = 0;
  }
  return response;
}

}  // namespace aiadmit
