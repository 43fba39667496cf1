#include "webhook/serving/tls.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/stat.h>

#include <cstdio>
#include <ctime>
#include <vector>

namespace aiadmit {

struct CertifiedKey {
  X509* certificate = nullptr;
  STACK_OF(X509) * chain = nullptr;
  EVP_PKEY* key = nullptr;
  double notAfter = 0;

  ~CertifiedKey() {
    if (certificate != nullptr) X509_free(certificate);
    if (chain != nullptr) sk_X509_pop_free(chain, X509_free);
    if (key != nullptr) EVP_PKEY_free(key);
  }
};

namespace {

std::string opensslError() {
  const unsigned long code = ERR_get_error();
  if (code == 0) return "unknown OpenSSL error";
  char buffer[256];
  ERR_error_string_n(code, buffer, sizeof buffer);
  ERR_clear_error();
  return buffer;
}

std::string fileStamp(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) return "missing";
  return std::to_string(info.st_ino) + ":" + std::to_string(info.st_size) + ":" +
         std::to_string(info.st_mtim.tv_sec) + "." + std::to_string(info.st_mtim.tv_nsec);
}

double notAfterOf(X509* certificate) {
  const ASN1_TIME* notAfter = X509_get0_notAfter(certificate);
  struct tm parsed {};
  if (notAfter == nullptr || ASN1_TIME_to_tm(notAfter, &parsed) != 1) return 0;
  return static_cast<double>(timegm(&parsed));
}

}  // namespace

CertificateStore::CertificateStore(std::string certFile, std::string keyFile)
    : certFile_(std::move(certFile)), keyFile_(std::move(keyFile)) {}

CertificateStore::~CertificateStore() = default;

std::string CertificateStore::fingerprint() const {
  return fileStamp(certFile_) + "|" + fileStamp(keyFile_);
}

bool CertificateStore::load(std::string* error) {
  const std::string stamp = fingerprint();
  auto pair = std::make_shared<CertifiedKey>();
  FILE* certIn = std::fopen(certFile_.c_str(), "rb");
  if (certIn == nullptr) {
    *error = "cannot open certificate file " + certFile_;
    return false;
  }
  pair->certificate = PEM_read_X509(certIn, nullptr, nullptr, nullptr);
  if (pair->certificate != nullptr) {
    pair->chain = sk_X509_new_null();
    while (X509* intermediate = PEM_read_X509(certIn, nullptr, nullptr, nullptr)) {
      sk_X509_push(pair->chain, intermediate);
    }
    ERR_clear_error();  // the loop ends on "no start line"
  }
  std::fclose(certIn);
  if (pair->certificate == nullptr) {
    *error = "no PEM certificate in " + certFile_ + ": " + opensslError();
    return false;
  }
  FILE* keyIn = std::fopen(keyFile_.c_str(), "rb");
  if (keyIn == nullptr) {
    *error = "cannot open key file " + keyFile_;
    return false;
  }
  pair->key = PEM_read_PrivateKey(keyIn, nullptr, nullptr, nullptr);
  std::fclose(keyIn);
  if (pair->key == nullptr) {
    *error = "no PEM private key in " + keyFile_ + ": " + opensslError();
    return false;
  }
  if (X509_check_private_key(pair->certificate, pair->key) != 1) {
    *error = "the private key in " + keyFile_ + " does not match the certificate in " + certFile_;
    ERR_clear_error();
    return false;
  }
  pair->notAfter = notAfterOf(pair->certificate);
  current_.store(std::move(pair));
  loadedFingerprint_ = stamp;
  return true;
}

bool CertificateStore::reloadIfChanged(std::string* error) {
  if (fingerprint() == loadedFingerprint_) return false;
  return load(error);
}

double CertificateStore::expiry() const {
  const auto pair = current_.load();
  return pair ? pair->notAfter : 0;
}

int CertificateStore::selectCertificate(SSL* ssl, void* arg) {
  const auto* store = static_cast<const CertificateStore*>(arg);
  const auto pair = store->current_.load();
  if (!pair) return 0;
  // The connection starts with the context's pair; OpenSSL keeps one pair per
  // key type, so without clearing, an old ECDSA pair would still be chosen
  // after a rotation to RSA (or the reverse).
  SSL_certs_clear(ssl);
  if (SSL_use_certificate(ssl, pair->certificate) != 1) return 0;
  if (SSL_use_PrivateKey(ssl, pair->key) != 1) return 0;
  if (pair->chain != nullptr && SSL_set1_chain(ssl, pair->chain) != 1) return 0;
  return 1;
}

bool CertificateStore::configure(SSL_CTX& context, std::string* error) {
  const auto pair = current_.load();
  if (!pair) {
    *error = "no certificate loaded";
    return false;
  }
  SSL_CTX_set_min_proto_version(&context, TLS1_2_VERSION);
  SSL_CTX_set_options(
      &context, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  // Idle keep-alive connections give their 34 KB of record buffers back.
  SSL_CTX_set_mode(&context, SSL_MODE_RELEASE_BUFFERS);
  // TLS 1.2: forward-secret AEAD suites only; TLS 1.3 suites are all modern.
  if (SSL_CTX_set_cipher_list(&context,
                              "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
                              "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
                              "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305") != 1) {
    *error = "cipher list rejected: " + opensslError();
    return false;
  }
  // The context also holds the first pair so that it is valid on its own; the
  // callback replaces it per handshake with whatever is current.
  if (SSL_CTX_use_certificate(&context, pair->certificate) != 1 ||
      SSL_CTX_use_PrivateKey(&context, pair->key) != 1) {
    *error = "certificate rejected: " + opensslError();
    return false;
  }
  SSL_CTX_set_cert_cb(&context, &CertificateStore::selectCertificate, this);
  return true;
}

}  // namespace aiadmit
