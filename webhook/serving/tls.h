// The serving certificate, reloaded from its files when they change (a
// Kubernetes Secret volume swaps them by symlink) without a restart: each new
// TLS handshake picks the pair that is current when it starts.
#pragma once

#include <openssl/ssl.h>

#include <atomic>
#include <memory>
#include <string>

namespace aiadmit {

struct CertifiedKey;  // an X509 chain and its private key

class CertificateStore {
 public:
  CertificateStore(std::string certFile, std::string keyFile);
  ~CertificateStore();

  // Loads the files; false with `error` set when they are unusable (the
  // previous pair, if any, stays in force).
  bool load(std::string* error);
  // Reloads when the files changed since the last load. Returns true on a reload.
  bool reloadIfChanged(std::string* error);

  // Configures a server context: TLS 1.2+, modern AEAD ciphers, and a
  // certificate callback that serves the current pair.
  bool configure(SSL_CTX& context, std::string* error);

  // NotAfter of the current certificate, seconds since the epoch.
  double expiry() const;

 private:
  static int selectCertificate(SSL* ssl, void* arg);
  std::string fingerprint() const;

  std::string certFile_;
  std::string keyFile_;
  std::string loadedFingerprint_;
  std::atomic<std::shared_ptr<const CertifiedKey>> current_;
};

}  // namespace aiadmit
