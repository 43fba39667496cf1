// serve --client-ca: mutual TLS as the API server's admission configuration
// sets it up. A caller without a certificate of the client CA gets no review
// answered, and is refused before a byte of its body is read; one with a
// certificate of another CA does not get through the handshake; the API
// server's own certificate is answered as before, and the kubelet's probes
// (no certificate) still reach /healthz and /readyz.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "tests/support/test_support.h"

namespace aiadmit {
namespace {

using namespace testing;
namespace fs = std::filesystem;

// A CA and a client certificate it signs, made with the project's PKI steps
// (certs/pki.sh) as certs/webhook-certs.sh makes the API server's.
struct ClientPki {
  std::string caFile, certFile, keyFile;
};

ClientPki makeClientPki(const TempDir& dir, const std::string& name) {
  const ClientPki pki{dir.file(name + "-ca.crt"), dir.file(name + ".crt"), dir.file(name + ".key")};
  const std::string script =
      "source '" + sourceDir() + "/certs/pki.sh' && pki_new_ca '" + dir.file(name + "-ca.key") +
      "' '" + pki.caFile + "' 2 '" + name + " CA' && pki_new_client_cert '" + pki.keyFile + "' '" +
      pki.certFile + "' '" + pki.caFile + "' '" + dir.file(name + "-ca.key") + "' 2 kube-apiserver";
  const CommandResult made = runCommand({"bash", "-c", script});
  EXPECT_EQ(made.exitCode, 0) << made.err;
  return pki;
}

// A TLS client on 127.0.0.1 that trusts the dev CA, optionally with a
// client certificate, and sends what it is told, byte for byte.
class Caller {
 public:
  Caller(int port, const ClientPki* identity) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    timeval timeout{5, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) return;
    context_ = SSL_CTX_new(TLS_client_method());
    SSL_CTX_load_verify_locations(context_, devCertificates().file("ca.crt").c_str(), nullptr);
    SSL_CTX_set_verify(context_, SSL_VERIFY_PEER, nullptr);
    if (identity != nullptr) {
      SSL_CTX_use_certificate_file(context_, identity->certFile.c_str(), SSL_FILETYPE_PEM);
      SSL_CTX_use_PrivateKey_file(context_, identity->keyFile.c_str(), SSL_FILETYPE_PEM);
    }
    ssl_ = SSL_new(context_);
    SSL_set_fd(ssl_, fd_);
    handshaken_ = SSL_connect(ssl_) == 1;
    ERR_clear_error();
  }
  ~Caller() {
    if (ssl_ != nullptr) SSL_free(ssl_);
    if (context_ != nullptr) SSL_CTX_free(context_);
    if (fd_ >= 0) close(fd_);
  }
  Caller(const Caller&) = delete;
  Caller& operator=(const Caller&) = delete;

  bool handshaken() const { return handshaken_; }

  bool send(const std::string& bytes) {
    return handshaken_ && SSL_write(ssl_, bytes.data(), static_cast<int>(bytes.size())) > 0;
  }

  // One HTTP answer (headers and Content-Length body), or what arrived
  // before the connection ended.
  std::string answer() {
    std::string received;
    char buffer[4096];
    for (;;) {
      const size_t headerEnd = received.find("\r\n\r\n");
      if (headerEnd != std::string::npos) {
        const size_t at = received.find("Content-Length: ");
        const size_t length = at < headerEnd ? std::stoul(received.substr(at + 16)) : 0;
        if (received.size() >= headerEnd + 4 + length) return received;
      }
      if (!handshaken_) return received;
      const int n = SSL_read(ssl_, buffer, sizeof buffer);
      if (n <= 0) {
        ERR_clear_error();
        return received;
      }
      received.append(buffer, static_cast<size_t>(n));
    }
  }

 private:
  int fd_ = -1;
  SSL_CTX* context_ = nullptr;
  SSL* ssl_ = nullptr;
  bool handshaken_ = false;
};

std::string gpuPodReview() {
  return makeReview(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"},)"
      R"("spec":{"containers":[{"name":"c","image":"i","resources":{"limits":)"
      R"({"nvidia.com/gpu":"1"}}}]}})",
      "CREATE", "3f1c0a52-1111-4a7e-9c1d-000000000001");
}

std::string postHeaders(const std::string& path, size_t contentLength) {
  return "POST " + path + "?timeout=10s HTTP/1.1\r\nHost: aiadmit\r\n" +
         "Content-Type: application/json\r\nContent-Length: " + std::to_string(contentLength) +
         "\r\n\r\n";
}

std::string getRequest(const std::string& path) {
  return "GET " + path + " HTTP/1.1\r\nHost: aiadmit\r\n\r\n";
}

// The value of an unlabelled counter in a /metrics text, -1 when absent.
long counter(const std::string& metrics, const std::string& name) {
  const size_t at = metrics.find("\n" + name + " ");
  return at == std::string::npos ? -1 : std::stol(metrics.substr(at + name.size() + 2));
}

class ClientCa : public ::testing::Test {
 protected:
  void SetUp() override {
    callers_ = makeClientPki(dir_, "callers");
    stranger_ = makeClientPki(dir_, "stranger");
    WebhookServer::Options options;
    options.extraArgs = {"--client-ca", callers_.caFile, "--metrics-listen", "127.0.0.1:0"};
    server_ = std::make_unique<WebhookServer>(options);
  }

  std::string metrics() const { return server_->getPlain("/metrics").body; }

  TempDir dir_;
  ClientPki callers_, stranger_;
  std::unique_ptr<WebhookServer> server_;
};

TEST_F(ClientCa, ReviewWithoutACertificateIsRefusedBeforeItsBodyIsRead) {
  for (const char* path : {"/mutate", "/validate", "/validate-profiles"}) {
    Caller anonymous(server_->port(), nullptr);
    ASSERT_TRUE(anonymous.handshaken()) << "a certificate is asked for, not required, by TLS";
    // Only the headers go: the answer comes while the body is still owed.
    ASSERT_TRUE(anonymous.send(postHeaders(path, 100000)));
    const std::string answer = anonymous.answer();
    EXPECT_EQ(statusOf(answer), 403) << path << ": " << answer;
    EXPECT_NE(answer.find("client certificate"), std::string::npos) << answer;
    EXPECT_NE(answer.find("Connection: close"), std::string::npos) << answer;
  }
  const std::string text = metrics();
  EXPECT_EQ(counter(text, "aiadmit_unauthenticated_requests_total"), 3) << text;
  EXPECT_EQ(text.find("aiadmit_requests_total{endpoint=\"mutate\",kind=\"Pod\""), std::string::npos)
      << "no review was decided";
}

TEST_F(ClientCa, CertificateOfTheClientCaIsAnswered) {
  Caller apiServer(server_->port(), &callers_);
  ASSERT_TRUE(apiServer.handshaken());
  const std::string review = gpuPodReview();
  ASSERT_TRUE(apiServer.send(postHeaders("/mutate", review.size()) + review));
  const std::string answer = apiServer.answer();
  ASSERT_EQ(statusOf(answer), 200) << answer;
  const ReviewResponse response = parseReviewResponse(answer.substr(answer.find("\r\n\r\n") + 4));
  EXPECT_TRUE(response.allowed);
  EXPECT_FALSE(response.patch.empty()) << "the GPU Pod is mutated as without --client-ca";
  // The same connection serves the next review, as the API server reuses it.
  ASSERT_TRUE(apiServer.send(postHeaders("/validate", review.size()) + review));
  EXPECT_EQ(statusOf(apiServer.answer()), 200);
  EXPECT_EQ(counter(metrics(), "aiadmit_unauthenticated_requests_total"), 0);
}

TEST_F(ClientCa, CertificateOfAnotherCaEndsTheHandshake) {
  Caller stranger(server_->port(), &stranger_);
  // With TLS 1.3 the client finishes first and hears the refusal on its
  // first read; with TLS 1.2 already in the handshake.
  const std::string review = gpuPodReview();
  stranger.send(postHeaders("/mutate", review.size()) + review);
  EXPECT_EQ(statusOf(stranger.answer()), 0) << "no HTTP answer at all";
  // The server goes on answering its callers.
  Caller apiServer(server_->port(), &callers_);
  ASSERT_TRUE(apiServer.send(postHeaders("/validate", review.size()) + review));
  EXPECT_EQ(statusOf(apiServer.answer()), 200);
  // Counted once the refusal is sent, which the stranger may read first: by
  // the time another caller was answered, it is.
  EXPECT_GE(counter(metrics(), "aiadmit_tls_handshake_failures_total"), 1);
}

TEST_F(ClientCa, ProbesNeedNoCertificateAndMetricsDo) {
  for (const char* probe : {"/healthz", "/readyz"}) {
    Caller kubelet(server_->port(), nullptr);
    ASSERT_TRUE(kubelet.send(getRequest(probe)));
    EXPECT_EQ(statusOf(kubelet.answer()), 200) << probe;
  }
  Caller anonymous(server_->port(), nullptr);
  ASSERT_TRUE(anonymous.send(getRequest("/metrics")));
  EXPECT_EQ(statusOf(anonymous.answer()), 403) << "/metrics has the plain listener";
  EXPECT_EQ(server_->getPlain("/metrics").status, 200);
  Caller apiServer(server_->port(), &callers_);
  ASSERT_TRUE(apiServer.send(getRequest("/metrics")));
  EXPECT_EQ(statusOf(apiServer.answer()), 200);
}

// One CA signs both ends in the install: its serving certificate (server
// auth only) is no client certificate, while a client certificate of the
// same CA is.
TEST(ClientCaPurpose, ServingCertificateOfTheSameCaIsNoClientCertificate) {
  TempDir dir;
  const std::string ca = devCertificates().file("ca.crt");
  const ClientPki apiServer{ca, dir.file("client.crt"), dir.file("client.key")};
  const CommandResult made =
      runCommand({"bash", "-c",
                  "source '" + sourceDir() + "/certs/pki.sh' && pki_new_client_cert '" +
                      apiServer.keyFile + "' '" + apiServer.certFile + "' '" + ca + "' '" +
                      devCertificates().file("ca.key") + "' 2 kube-apiserver"});
  ASSERT_EQ(made.exitCode, 0) << made.err;
  WebhookServer::Options options;
  options.extraArgs = {"--client-ca", ca};
  WebhookServer server(options);
  const std::string review = gpuPodReview();

  const ClientPki serving{ca, devCertificates().file("tls.crt"), devCertificates().file("tls.key")};
  Caller impostor(server.port(), &serving);
  impostor.send(postHeaders("/mutate", review.size()) + review);
  EXPECT_EQ(statusOf(impostor.answer()), 0) << "refused in the handshake";

  Caller caller(server.port(), &apiServer);
  ASSERT_TRUE(caller.send(postHeaders("/mutate", review.size()) + review));
  EXPECT_EQ(statusOf(caller.answer()), 200);
}

TEST(ClientCaReload, ReplacedCaIsTrustedAndAnUnusableOneKeepsThePrevious) {
  TempDir dir;
  const ClientPki first = makeClientPki(dir, "first");
  const ClientPki second = makeClientPki(dir, "second");
  const std::string trusted = dir.file("client-ca.crt");
  writeFile(trusted, readFile(first.caFile));
  WebhookServer::Options options;
  options.extraArgs = {"--client-ca", trusted};
  WebhookServer server(options);
  const std::string probe = getRequest("/metrics");
  {
    Caller caller(server.port(), &first);
    ASSERT_TRUE(caller.send(probe));
    EXPECT_EQ(statusOf(caller.answer()), 200);
  }

  writeFile(trusted + ".new", "not a certificate\n");
  fs::rename(trusted + ".new", trusted);
  ASSERT_TRUE(server.waitForOutput("\"reason\":\"client_ca\"", 15)) << server.output();
  {
    Caller caller(server.port(), &first);
    ASSERT_TRUE(caller.send(probe));
    EXPECT_EQ(statusOf(caller.answer()), 200) << "the previous client CA stays in force";
  }

  writeFile(trusted + ".new", readFile(second.caFile));
  fs::rename(trusted + ".new", trusted);
  ASSERT_TRUE(server.waitForOutput("certificate reloaded", 15)) << server.output();
  Caller now(server.port(), &second);
  ASSERT_TRUE(now.send(probe));
  EXPECT_EQ(statusOf(now.answer()), 200);
  Caller before(server.port(), &first);
  before.send(probe);
  EXPECT_EQ(statusOf(before.answer()), 0) << "the replaced CA is no longer trusted";
}

TEST(ClientCaFlag, UnreadableClientCaStopsTheServerAtStart) {
  TempDir dir;
  writeFile(dir.file("empty.crt"), "");
  const CommandResult run =
      runCommand({binaryPath(), "serve", "--tls-cert", devCertificates().file("tls.crt"),
                  "--tls-key", devCertificates().file("tls.key"), "--client-ca",
                  dir.file("empty.crt"), "--listen", "127.0.0.1:0"});
  EXPECT_EQ(run.exitCode, 1);
  EXPECT_NE((run.out + run.err).find("client_ca"), std::string::npos) << run.out << run.err;
}

}  // namespace
}  // namespace aiadmit
