// Certificates replaced under the running server: it picks up replaced
// files (a Secret volume's symlink swap, a plain rename, a key-type change, a
// broken file) without a restart and without a failed request, while OpenSSL
// clients verify it for the Service's DNS name as the API server does.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "tests/support/certs_harness.h"
#include "tests/support/test_support.h"

namespace aiadmit {
namespace {

using namespace testing;
namespace fs = std::filesystem;

double notAfterOfFile(const std::string& path) {
  std::unique_ptr<FILE, decltype(&fclose)> in(fopen(path.c_str(), "rb"), fclose);
  if (!in) return 0;
  std::unique_ptr<X509, decltype(&X509_free)> certificate(
      PEM_read_X509(in.get(), nullptr, nullptr, nullptr), X509_free);
  struct tm parsed {};
  if (!certificate || ASN1_TIME_to_tm(X509_get0_notAfter(certificate.get()), &parsed) != 1)
    return 0;
  return static_cast<double>(timegm(&parsed));
}

std::string opensslErrors() {
  std::string out;
  while (const unsigned long code = ERR_get_error()) {
    char buffer[256];
    ERR_error_string_n(code, buffer, sizeof buffer);
    out += std::string(out.empty() ? "" : "; ") + buffer;
  }
  return out;
}

struct TlsAnswer {
  bool ok = false;
  std::string error;
  int status = 0;
  std::string body;
};

// A TLS connection as kube-apiserver opens one to a webhook: it trusts only
// the caBundle and checks the certificate against the Service's DNS name,
// while the TCP connection goes to whatever address the name resolves to.
class TlsConnection {
 public:
  TlsConnection(int port, const std::string& caFile, const std::string& serverName) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    timeval timeout{5, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      error_ = "connect failed";
      return;
    }
    context_ = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_min_proto_version(context_, TLS1_2_VERSION);
    if (SSL_CTX_load_verify_locations(context_, caFile.c_str(), nullptr) != 1) {
      error_ = "cannot load " + caFile + ": " + opensslErrors();
      return;
    }
    SSL_CTX_set_verify(context_, SSL_VERIFY_PEER, nullptr);
    ssl_ = SSL_new(context_);
    SSL_set_tlsext_host_name(ssl_, serverName.c_str());
    SSL_set1_host(ssl_, serverName.c_str());
    SSL_set_fd(ssl_, fd_);
    if (SSL_connect(ssl_) != 1) {
      error_ = "handshake failed: " +
               std::string(X509_verify_cert_error_string(SSL_get_verify_result(ssl_))) + " " +
               opensslErrors();
      return;
    }
    if (X509* peer = SSL_get1_peer_certificate(ssl_)) {
      serial_ = serialOf(peer);
      keyType_ = EVP_PKEY_get_base_id(X509_get0_pubkey(peer));
      X509_free(peer);
    }
  }
  ~TlsConnection() {
    if (ssl_ != nullptr) {
      SSL_shutdown(ssl_);
      SSL_free(ssl_);
    }
    if (context_ != nullptr) SSL_CTX_free(context_);
    if (fd_ >= 0) close(fd_);
  }
  TlsConnection(const TlsConnection&) = delete;
  TlsConnection& operator=(const TlsConnection&) = delete;

  bool connected() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  const std::string& serial() const { return serial_; }  // of the certificate served
  int keyType() const { return keyType_; }

  // One HTTP/1.1 GET on this connection, which stays open for the next.
  TlsAnswer get(const std::string& path) {
    TlsAnswer answer;
    if (!connected()) {
      answer.error = error_;
      return answer;
    }
    const std::string request = "GET " + path + " HTTP/1.1\r\nHost: " + std::string(kServiceName) +
                                "\r\nConnection: keep-alive\r\n\r\n";
    if (SSL_write(ssl_, request.data(), static_cast<int>(request.size())) <= 0) {
      answer.error = "write failed: " + opensslErrors();
      return answer;
    }
    std::string received;
    size_t headerEnd = std::string::npos;
    size_t contentLength = 0;
    char buffer[4096];
    for (;;) {
      if (headerEnd != std::string::npos && received.size() >= headerEnd + 4 + contentLength) break;
      const int n = SSL_read(ssl_, buffer, sizeof buffer);
      if (n <= 0) {
        answer.error = "read failed after " + std::to_string(received.size()) + " bytes";
        return answer;
      }
      received.append(buffer, static_cast<size_t>(n));
      if (headerEnd == std::string::npos &&
          (headerEnd = received.find("\r\n\r\n")) != std::string::npos) {
        const size_t at = received.find("Content-Length: ");
        if (at != std::string::npos && at < headerEnd) {
          contentLength = std::stoul(received.substr(at + 16));
        }
      }
    }
    answer.status = std::atoi(received.c_str() + received.find(' ') + 1);
    answer.body = received.substr(headerEnd + 4, contentLength);
    answer.ok = answer.status == 200;
    return answer;
  }

 private:
  int fd_ = -1;
  SSL_CTX* context_ = nullptr;
  SSL* ssl_ = nullptr;
  std::string error_;
  std::string serial_;
  int keyType_ = 0;
};

// A directory laid out as the kubelet lays out a Secret volume: the files are
// symlinks through ..data, and an update swaps ..data atomically.
class SecretVolume {
 public:
  std::string file(const std::string& name) const { return dir_.file(name); }
  void publish(const std::map<std::string, std::string>& files) {
    const std::string version = "..v" + std::to_string(++version_);
    fs::create_directory(dir_.file(version));
    for (const auto& [name, content] : files) writeFile(dir_.file(version + "/" + name), content);
    fs::create_symlink(version, dir_.file("..data_tmp"));
    fs::rename(dir_.file("..data_tmp"), dir_.file("..data"));
    for (const auto& [name, content] : files) {
      if (!fs::is_symlink(dir_.file(name))) fs::create_symlink("..data/" + name, dir_.file(name));
    }
    if (version_ > 1) fs::remove_all(dir_.file("..v" + std::to_string(version_ - 1)));
  }

 private:
  TempDir dir_;
  int version_ = 0;
};

std::map<std::string, std::string> servingPair(const std::string& pki) {
  return {{"tls.crt", readFile(pki + "/tls.crt")}, {"tls.key", readFile(pki + "/tls.key")}};
}

// Replaces a file the way an atomic writer does: write aside, then rename.
void replaceFile(const std::string& path, const std::string& content) {
  writeFile(path + ".new", content);
  fs::rename(path + ".new", path);
}

struct LoopRecord {
  bool ok = false;
  std::string serial;
  std::string error;
};

// A bounded client loop, one new TLS connection per request (so each one
// handshakes with whatever pair the server holds), trusting the CA file as
// it is at that moment, as the API server trusts the current caBundle.
class ClientLoop {
 public:
  ClientLoop(int port, std::string caFile) : port_(port), caFile_(std::move(caFile)) {
    thread_ = std::thread([this] { run(); });
  }
  ~ClientLoop() { stop(); }

  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  // Waits until `count` successful answers served `serial`; false after `seconds`.
  bool waitForServed(const std::string& serial, int count, double seconds) {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, std::chrono::duration<double>(seconds), [&] {
      int seen = 0;
      for (const LoopRecord& record : records_) seen += record.ok && record.serial == serial;
      return seen >= count || done_;
    }) && !done_;
  }
  std::vector<LoopRecord> records() {
    std::lock_guard<std::mutex> lock(mutex_);
    return records_;
  }

 private:
  static constexpr int kMaxRequests = 10000;
  static constexpr auto kMaxDuration = std::chrono::seconds(40);

  void run() {
    const auto started = std::chrono::steady_clock::now();
    for (int i = 0;
         i < kMaxRequests && !stop_ && std::chrono::steady_clock::now() - started < kMaxDuration;
         ++i) {
      LoopRecord record;
      TlsConnection connection(port_, caFile_, kServiceName);
      const TlsAnswer answer = connection.get("/readyz");
      record.ok = answer.ok && answer.body == "ok\n";
      record.serial = connection.serial();
      record.error = answer.error.empty() ? "HTTP " + std::to_string(answer.status) : answer.error;
      std::lock_guard<std::mutex> lock(mutex_);
      records_.push_back(std::move(record));
      changed_.notify_all();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
    changed_.notify_all();
  }

  int port_;
  std::string caFile_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<LoopRecord> records_;
  bool done_ = false;
};

TEST(CertificateRotation, CaRotationUnderLoadServesTheNewCertificateWithoutAFailedRequest) {
  TempDir dir;
  ASSERT_EQ(runScript(dir).exitCode, 0);
  const std::string pki = dir.file("pki");
  SecretVolume volume;
  volume.publish(servingPair(pki));
  const std::string trust = dir.file("trusted-ca.crt");
  writeFile(trust, readFile(pki + "/ca-bundle.crt"));

  WebhookServer::Options options;
  options.certFile = volume.file("tls.crt");
  options.keyFile = volume.file("tls.key");
  WebhookServer server(options);
  const std::string oldSerial = serialOfFile(pki + "/tls.crt");

  // A connection the API server opened before the rotation and keeps reusing.
  TlsConnection kept(server.port(), trust, kServiceName);
  ASSERT_TRUE(kept.connected()) << kept.error();
  ASSERT_TRUE(kept.get("/healthz").ok);

  ClientLoop loop(server.port(), trust);
  ASSERT_TRUE(loop.waitForServed(oldSerial, 20, 20)) << server.output();

  // Rotation as documented: the new caBundle (both CAs) reaches the API
  // server first, the Secret reaches the Pod's volume later.
  ASSERT_EQ(runScript(dir, {"--rotate-ca"}).exitCode, 0);
  replaceFile(trust, readFile(pki + "/ca-bundle.crt"));
  const std::string newSerial = serialOfFile(pki + "/tls.crt");
  ASSERT_NE(newSerial, oldSerial);
  volume.publish(servingPair(pki));
  ASSERT_TRUE(server.waitForOutput("certificate reloaded", 15)) << server.output();
  ASSERT_TRUE(loop.waitForServed(newSerial, 20, 20)) << server.output();
  loop.stop();

  const std::vector<LoopRecord> records = loop.records();
  size_t failures = 0, firstNew = records.size();
  std::string firstFailure;
  for (size_t i = 0; i < records.size(); ++i) {
    if (!records[i].ok) {
      if (failures++ == 0) firstFailure = records[i].error;
      continue;
    }
    if (records[i].serial == newSerial && firstNew == records.size()) firstNew = i;
    EXPECT_TRUE(records[i].serial == oldSerial || records[i].serial == newSerial)
        << records[i].serial;
    if (firstNew < i) {
      EXPECT_EQ(records[i].serial, newSerial) << "request " << i << " went back";
    }
  }
  EXPECT_EQ(failures, 0u) << "first failure: " << firstFailure;
  EXPECT_GE(records.size(), 40u);
  std::cout << "[ rotation ] " << records.size() << " requests, " << failures << " failed, "
            << firstNew << " served the old certificate\n";

  // The kept connection still works, on the certificate it began with.
  EXPECT_TRUE(kept.get("/healthz").ok);
  EXPECT_EQ(kept.serial(), oldSerial);

  // The rotation is finished: only the new CA is trusted, and that is enough.
  ASSERT_EQ(runScript(dir, {"--finish-ca-rotation"}).exitCode, 0);
  TlsConnection after(server.port(), pki + "/ca-bundle.crt", kServiceName);
  const TlsAnswer metrics = after.get("/metrics");
  ASSERT_TRUE(metrics.ok) << metrics.error;
  EXPECT_EQ(after.serial(), newSerial);
  const std::string metric = "\naiadmit_certificate_expiry_timestamp_seconds ";
  const size_t at = metrics.body.find(metric);
  ASSERT_NE(at, std::string::npos) << metrics.body;
  EXPECT_NEAR(std::stod(metrics.body.substr(at + metric.size())), notAfterOfFile(pki + "/tls.crt"),
              10.0)
      << "the expiry metric follows the reloaded certificate";
  TlsConnection oldTrust(server.port(), dir.file("pki/ca-previous.crt"), kServiceName);
  EXPECT_FALSE(oldTrust.connected()) << "the old CA is gone from the PKI directory";
}

TEST(CertificateRotation, ChangingTheKeyTypeServesTheNewCertificate) {
  TempDir dir;
  ASSERT_EQ(runScript(dir).exitCode, 0);
  const std::string pki = dir.file("pki");
  fs::copy_file(pki + "/tls.crt", dir.file("tls.crt"));
  fs::copy_file(pki + "/tls.key", dir.file("tls.key"));
  WebhookServer::Options options;
  options.certFile = dir.file("tls.crt");
  options.keyFile = dir.file("tls.key");
  WebhookServer server(options);
  {
    TlsConnection before(server.port(), pki + "/ca.crt", kServiceName);
    ASSERT_TRUE(before.connected()) << before.error();
    EXPECT_EQ(before.keyType(), EVP_PKEY_EC);
  }

  // cert-manager issues RSA keys unless told otherwise.
  writeFile(dir.file("rsa.ext"),
            "subjectAltName=DNS:" + std::string(kServiceName) + "\nextendedKeyUsage=serverAuth\n");
  ASSERT_EQ(
      runCommand({"openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", dir.file("rsa.key"),
                  "-out", dir.file("rsa.csr"), "-subj", "/CN=" + std::string(kServiceName)})
          .exitCode,
      0);
  ASSERT_EQ(runCommand({"openssl", "x509", "-req", "-in", dir.file("rsa.csr"), "-CA",
                        pki + "/ca.crt", "-CAkey", pki + "/ca.key", "-set_serial", "0x5a5a5a",
                        "-days", "2", "-extfile", dir.file("rsa.ext"), "-out", dir.file("rsa.crt")})
                .exitCode,
            0);
  replaceFile(dir.file("tls.key"), readFile(dir.file("rsa.key")));
  replaceFile(dir.file("tls.crt"), readFile(dir.file("rsa.crt")));
  ASSERT_TRUE(server.waitForOutput("certificate reloaded", 15)) << server.output();

  for (int i = 0; i < 3; ++i) {
    TlsConnection after(server.port(), pki + "/ca.crt", kServiceName);
    ASSERT_TRUE(after.connected()) << after.error();
    EXPECT_EQ(after.keyType(), EVP_PKEY_RSA);
    EXPECT_EQ(after.serial(), "5A5A5A");
    EXPECT_TRUE(after.get("/healthz").ok);
  }
}

TEST(CertificateRotation, UnusableFilesKeepThePreviousCertificateInService) {
  TempDir dir;
  ASSERT_EQ(runScript(dir).exitCode, 0);
  const std::string pki = dir.file("pki");
  SecretVolume volume;
  volume.publish(servingPair(pki));
  WebhookServer::Options options;
  options.certFile = volume.file("tls.crt");
  options.keyFile = volume.file("tls.key");
  WebhookServer server(options);
  const std::string oldSerial = serialOfFile(pki + "/tls.crt");

  // A renewed certificate whose key has not been written yet (a half-done
  // manual edit): the pair does not match and is refused.
  const std::string oldKey = readFile(pki + "/tls.key");
  ASSERT_EQ(runScript(dir).exitCode, 0);
  volume.publish({{"tls.crt", readFile(pki + "/tls.crt")}, {"tls.key", oldKey}});
  ASSERT_TRUE(server.waitForOutput("certificate reload failed", 15)) << server.output();
  {
    TlsConnection during(server.port(), pki + "/ca.crt", kServiceName);
    EXPECT_TRUE(during.get("/healthz").ok) << during.error();
    EXPECT_EQ(during.serial(), oldSerial);
    // Tried again at each poll until the files change.
    const std::string metrics = during.get("/metrics").body;
    const std::string failures = "\naiadmit_certificate_reloads_total{result=\"failure\"} ";
    ASSERT_NE(metrics.find(failures), std::string::npos) << metrics;
    EXPECT_GE(std::stoi(metrics.substr(metrics.find(failures) + failures.size())), 1);
    EXPECT_NE(metrics.find("aiadmit_certificate_last_reload_successful 0\n"), std::string::npos);
  }

  volume.publish(servingPair(pki));
  ASSERT_TRUE(server.waitForOutput("certificate reloaded", 15)) << server.output();
  TlsConnection after(server.port(), pki + "/ca.crt", kServiceName);
  EXPECT_TRUE(after.get("/healthz").ok) << after.error();
  EXPECT_EQ(after.serial(), serialOfFile(pki + "/tls.crt"));
  const std::string metrics = after.get("/metrics").body;
  EXPECT_NE(metrics.find("aiadmit_certificate_reloads_total{result=\"success\"} 2\n"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("aiadmit_certificate_last_reload_successful 1\n"), std::string::npos);
}

// --- certificates callers would refuse ------------------------------------------

using Pkey = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using Cert = std::unique_ptr<X509, decltype(&X509_free)>;

Cert readCertificate(const std::string& path) {
  std::unique_ptr<FILE, decltype(&fclose)> in(fopen(path.c_str(), "rb"), fclose);
  return Cert(in ? PEM_read_X509(in.get(), nullptr, nullptr, nullptr) : nullptr, X509_free);
}

Pkey readKey(const std::string& path) {
  std::unique_ptr<FILE, decltype(&fclose)> in(fopen(path.c_str(), "rb"), fclose);
  return Pkey(in ? PEM_read_PrivateKey(in.get(), nullptr, nullptr, nullptr) : nullptr,
              EVP_PKEY_free);
}

// What no OpenSSL command line of Debian 12 makes: a serving certificate of
// the script's CA valid from `fromSeconds` to `toSeconds` (relative to now),
// for `names` (subjectAltName syntax); its pair as {"tls.crt", "tls.key"}.
std::map<std::string, std::string> issuePair(const std::string& pki, long fromSeconds,
                                             long toSeconds, const std::string& names) {
  const Cert ca = readCertificate(pki + "/ca.crt");
  const Pkey caKey = readKey(pki + "/ca.key");
  EXPECT_TRUE(ca && caKey);
  Pkey key(EVP_EC_gen("P-256"), EVP_PKEY_free);
  Cert leaf(X509_new(), X509_free);
  X509_set_version(leaf.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(leaf.get()), 0x7e57);
  X509_NAME_add_entry_by_txt(X509_get_subject_name(leaf.get()), "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("aiadmit test"), -1, -1, 0);
  X509_set_issuer_name(leaf.get(), X509_get_subject_name(ca.get()));
  X509_gmtime_adj(X509_getm_notBefore(leaf.get()), fromSeconds);
  X509_gmtime_adj(X509_getm_notAfter(leaf.get()), toSeconds);
  X509_set_pubkey(leaf.get(), key.get());
  X509V3_CTX context;
  X509V3_set_ctx(&context, ca.get(), leaf.get(), nullptr, nullptr, 0);
  X509_EXTENSION* san = X509V3_EXT_conf_nid(nullptr, &context, NID_subject_alt_name, names.c_str());
  X509_add_ext(leaf.get(), san, -1);
  X509_EXTENSION_free(san);
  EXPECT_GT(X509_sign(leaf.get(), caKey.get(), EVP_sha256()), 0);
  std::unique_ptr<BIO, decltype(&BIO_free)> certOut(BIO_new(BIO_s_mem()), BIO_free);
  std::unique_ptr<BIO, decltype(&BIO_free)> keyOut(BIO_new(BIO_s_mem()), BIO_free);
  PEM_write_bio_X509(certOut.get(), leaf.get());
  PEM_write_bio_PrivateKey(keyOut.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  const auto text = [](BIO* bio) {
    char* data = nullptr;
    const long size = BIO_get_mem_data(bio, &data);
    return std::string(data, static_cast<size_t>(size));
  };
  return {{"tls.crt", text(certOut.get())}, {"tls.key", text(keyOut.get())}};
}

const std::string kServiceNames =
    "DNS:" + std::string(kServiceName) + ",DNS:" + std::string(kServiceName) + ".cluster.local";
constexpr long kDay = 86400;

long metricValue(const std::string& metrics, const std::string& series) {
  const size_t at = metrics.find("\n" + series + " ");
  return at == std::string::npos ? -1 : std::stol(metrics.substr(at + series.size() + 2));
}

std::string refusals(const std::string& reason) {
  return "aiadmit_certificate_refusals_total{reason=\"" + reason + "\"}";
}

// Each certificate a caller would refuse is refused at reload, with its
// reason in the log and /metrics, while the previous one is served; then a
// good one is taken at once.
void expectRefusedThenRecovered(const std::map<std::string, std::string>& refused,
                                const std::string& reason,
                                const std::vector<std::string>& extraArgs = {}) {
  TempDir dir;
  ASSERT_EQ(runScript(dir).exitCode, 0);
  const std::string pki = dir.file("pki");
  SecretVolume volume;
  volume.publish(servingPair(pki));
  WebhookServer::Options options;
  options.certFile = volume.file("tls.crt");
  options.keyFile = volume.file("tls.key");
  options.extraArgs = extraArgs;
  WebhookServer server(options);
  const std::string servedSerial = serialOfFile(pki + "/tls.crt");

  volume.publish(refused);
  ASSERT_TRUE(server.waitForOutput("\"reason\":\"" + reason + "\"", 15)) << server.output();
  TlsConnection during(server.port(), pki + "/ca.crt", kServiceName);
  ASSERT_TRUE(during.connected()) << during.error();
  EXPECT_EQ(during.serial(), servedSerial) << "the previous certificate is still served";
  const std::string metrics = during.get("/metrics").body;
  EXPECT_GE(metricValue(metrics, refusals(reason)), 1) << metrics;
  EXPECT_NE(metrics.find("aiadmit_certificate_last_reload_successful 0\n"), std::string::npos);

  // The near miss: a good certificate of the same CA is taken at once.
  ASSERT_EQ(runScript(dir).exitCode, 0);
  volume.publish(servingPair(pki));
  ASSERT_TRUE(server.waitForOutput("certificate reloaded", 15)) << server.output();
  TlsConnection after(server.port(), pki + "/ca.crt", kServiceName);
  EXPECT_TRUE(after.get("/healthz").ok) << after.error();
  EXPECT_EQ(after.serial(), serialOfFile(pki + "/tls.crt"));
}

TEST(CertificateChecks, ExpiredCertificateIsRefusedOnReload) {
  TempDir dir;
  ASSERT_EQ(runScript(dir).exitCode, 0);
  expectRefusedThenRecovered(issuePair(dir.file("pki"), -2 * kDay, -60, kServiceNames), "expired");
}

TEST(CertificateChecks, NotYetValidCertificateIsRefusedOnReload) {
  TempDir dir;
  ASSERT_EQ(runScript(dir).exitCode, 0);
  expectRefusedThenRecovered(issuePair(dir.file("pki"), kDay, 2 * kDay, kServiceNames),
                             "not_yet_valid");
}

TEST(CertificateChecks, CertificateWithoutTheServerNameIsRefusedOnReload) {
  TempDir dir;
  ASSERT_EQ(runScript(dir).exitCode, 0);
  expectRefusedThenRecovered(issuePair(dir.file("pki"), -60, kDay, "DNS:other.aiadmit-system.svc"),
                             "wrong_name", {"--tls-server-name", kServiceName});
}

// Without --tls-server-name, the names served so far are what callers check:
// a certificate sharing none of them (another Service's) is refused; one
// that shares one (ChangingTheKeyTypeServesTheNewCertificate) is taken.
TEST(CertificateChecks, CertificateOfAnotherServiceIsRefusedWithoutTheFlag) {
  TempDir dir;
  ASSERT_EQ(runScript(dir).exitCode, 0);
  expectRefusedThenRecovered(issuePair(dir.file("pki"), -60, kDay, "DNS:other.default.svc"),
                             "wrong_name");
}

TEST(CertificateChecks, ServerNameMatchesWildcardsAndAddresses) {
  TempDir dir;
  ASSERT_EQ(runScript(dir).exitCode, 0);
  const std::string pki = dir.file("pki");
  for (const auto& [names, serverName] : std::vector<std::pair<std::string, std::string>>{
           {"DNS:*.aiadmit-system.svc", kServiceName}, {"IP:127.0.0.1", "127.0.0.1"}}) {
    const auto pair = issuePair(pki, -60, kDay, names);
    writeFile(dir.file("tls.crt"), pair.at("tls.crt"));
    writeFile(dir.file("tls.key"), pair.at("tls.key"));
    WebhookServer::Options options;
    options.certFile = dir.file("tls.crt");
    options.keyFile = dir.file("tls.key");
    options.extraArgs = {"--tls-server-name", serverName};
    // A refused certificate stops the server before it listens
    // (RefusedCertificateStopsTheServerAtStart); this one is served.
    WebhookServer server(options);
    EXPECT_EQ(serialOfFile(dir.file("tls.crt")), "7E57");
    EXPECT_EQ(server.output().find("cannot load"), std::string::npos) << server.output();
  }
}

TEST(CertificateChecks, RefusedCertificateStopsTheServerAtStart) {
  TempDir dir;
  ASSERT_EQ(runScript(dir).exitCode, 0);
  const std::string pki = dir.file("pki");
  const std::vector<std::tuple<long, long, std::string, std::string>> cases = {
      {-2 * kDay, -60, kServiceNames, "expired"},
      {kDay, 2 * kDay, kServiceNames, "not_yet_valid"},
      {-60, kDay, "DNS:other.aiadmit-system.svc", "wrong_name"}};
  for (const auto& [from, to, names, reason] : cases) {
    const auto pair = issuePair(pki, from, to, names);
    writeFile(dir.file("tls.crt"), pair.at("tls.crt"));
    writeFile(dir.file("tls.key"), pair.at("tls.key"));
    const CommandResult run = runCommand({binaryPath(), "serve", "--tls-cert", dir.file("tls.crt"),
                                          "--tls-key", dir.file("tls.key"), "--tls-server-name",
                                          kServiceName, "--listen", "127.0.0.1:0"});
    EXPECT_EQ(run.exitCode, 1) << reason;
    EXPECT_NE((run.out + run.err).find("\"reason\":\"" + reason + "\""), std::string::npos)
        << run.out << run.err;
  }
}

}  // namespace
}  // namespace aiadmit
