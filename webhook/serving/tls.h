// The serving certificate, reloaded from its files when they change (a
// Kubernetes Secret volume swaps them by symlink) without a restart: each new
// TLS handshake picks the pair that is current when it starts. With a client
// CA (--client-ca), the same holds for the CA that callers' certificates are
// verified against.
#pragma once

#include <openssl/ssl.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace aiadmit {

struct Credentials;  // the X509 chain, its private key and the client CA

// Why a load was refused; the previous credentials, if any, stay in force.
enum class CertificateProblem {
  None,
  Unusable,     // unreadable files, no PEM, a key that does not match
  Expired,      // notAfter has passed: every caller would refuse it
  NotYetValid,  // notBefore is still to come
  WrongName,    // does not name what callers check (--tls-server-name)
  ClientCa,     // the --client-ca file holds no usable certificate
};
inline constexpr size_t kCertificateProblemCount =
    static_cast<size_t>(CertificateProblem::ClientCa) + 1;
// The `reason` label of aiadmit_certificate_refusals_total.
std::string_view certificateProblemName(CertificateProblem problem);

struct CertificateFiles {
  std::string certFile;
  std::string keyFile;
  std::string clientCaFile;  // empty: callers present no certificate
  // The name callers check the certificate against (the Service's
  // SERVICE.NAMESPACE.svc, or an address); empty: any of the names of the
  // first certificate loaded, so that a reload cannot swap in another
  // service's certificate.
  std::string serverName;
};

class CertificateStore {
 public:
  explicit CertificateStore(CertificateFiles files);
  ~CertificateStore();

  // Loads the files; false with `error` set when they are unusable or the
  // certificate is one callers would refuse (the previous pair, if any,
  // stays in force, and problem() says why).
  bool load(std::string* error);
  // Reloads when the files changed since the last load. Returns true on a reload.
  bool reloadIfChanged(std::string* error);
  CertificateProblem problem() const { return problem_; }

  // Configures a server context: TLS 1.2+, modern AEAD ciphers, a
  // certificate callback that serves the current pair, and with a client CA
  // the request for a client certificate verified against it.
  bool configure(SSL_CTX& context, std::string* error);

  // NotAfter of the current certificate, seconds since the epoch.
  double expiry() const;

  // Whether the caller of `ssl` presented a certificate that the client CA
  // verified; false without a client CA.
  static bool callerAuthenticated(SSL* ssl);

 private:
  static int selectCertificate(SSL* ssl, void* arg);
  std::string fingerprint() const;
  CertificateProblem check(const Credentials& loaded, std::string* error) const;

  CertificateFiles files_;
  std::string loadedFingerprint_;
  CertificateProblem problem_ = CertificateProblem::None;
  std::atomic<std::shared_ptr<const Credentials>> current_;
};

}  // namespace aiadmit
