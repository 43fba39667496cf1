#include "webhook/serving/tls.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <set>
#include <vector>

namespace aiadmit {

struct Credentials {
  X509* certificate = nullptr;
  STACK_OF(X509) * chain = nullptr;
  EVP_PKEY* key = nullptr;
  double notAfter = 0;
  // With --client-ca: what callers' certificates are verified against, and
  // the CA names the server's certificate request lists.
  X509_STORE* clientCa = nullptr;
  STACK_OF(X509_NAME) * clientCaNames = nullptr;

  ~Credentials() {
    if (certificate != nullptr) X509_free(certificate);
    if (chain != nullptr) sk_X509_pop_free(chain, X509_free);
    if (key != nullptr) EVP_PKEY_free(key);
    if (clientCa != nullptr) X509_STORE_free(clientCa);
    if (clientCaNames != nullptr) sk_X509_NAME_pop_free(clientCaNames, X509_NAME_free);
  }
};

namespace {

constexpr std::string_view kProblemNames[] = {"none",          "unusable",   "expired",
                                              "not_yet_valid", "wrong_name", "client_ca"};
static_assert(std::size(kProblemNames) == kCertificateProblemCount, "a label for every problem");

std::string opensslError() {
  const unsigned long code = ERR_get_error();
  if (code == 0) return "unknown OpenSSL error";
  char buffer[256];
  ERR_error_string_n(code, buffer, sizeof buffer);
  ERR_clear_error();
  return buffer;
}

std::string fileStamp(const std::string& path) {
  if (path.empty()) return "";
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) return "missing";
  return std::to_string(info.st_ino) + ":" + std::to_string(info.st_size) + ":" +
         std::to_string(info.st_mtim.tv_sec) + "." + std::to_string(info.st_mtim.tv_nsec);
}

double timeOf(const ASN1_TIME* time) {
  struct tm parsed {};
  if (time == nullptr || ASN1_TIME_to_tm(time, &parsed) != 1) return 0;
  return static_cast<double>(timegm(&parsed));
}

using File = std::unique_ptr<FILE, decltype(&std::fclose)>;

File openFile(const std::string& path) {
  return File(std::fopen(path.c_str(), "rb"), &std::fclose);
}

// Opens the file at `path` and reads its first PEM object with `read`; false
// with what went wrong, naming the file as a `fileKind` file and the object
// as a `pemKind`.
template <class Read>
bool readPem(const std::string& path, const char* fileKind, const char* pemKind, Read read,
             std::string* error) {
  const File in = openFile(path);
  if (!in) {
    *error = std::string("cannot open ") + fileKind + " file " + path;
    return false;
  }
  if (!read(in.get())) {
    *error = std::string("no PEM ") + pemKind + " in " + path + ": " + opensslError();
    return false;
  }
  return true;
}

// The certificate and the intermediates after it.
bool readChain(const std::string& path, Credentials& into, std::string* error) {
  return readPem(
      path, "certificate", "certificate",
      [&](FILE* in) {
        into.certificate = PEM_read_X509(in, nullptr, nullptr, nullptr);
        if (into.certificate == nullptr) return false;
        into.chain = sk_X509_new_null();
        while (X509* intermediate = PEM_read_X509(in, nullptr, nullptr, nullptr)) {
          sk_X509_push(into.chain, intermediate);
        }
        ERR_clear_error();  // the loop ends on "no start line"
        return true;
      },
      error);
}

bool readKey(const std::string& path, Credentials& into, std::string* error) {
  return readPem(
      path, "key", "private key",
      [&](FILE* in) {
        into.key = PEM_read_PrivateKey(in, nullptr, nullptr, nullptr);
        return into.key != nullptr;
      },
      error);
}

// Every certificate of the file becomes a trust anchor for callers.
bool readClientCa(const std::string& path, Credentials& into, std::string* error) {
  const File in = openFile(path);
  if (!in) {
    *error = "cannot open client CA file " + path;
    return false;
  }
  into.clientCa = X509_STORE_new();
  // Any certificate of the file is an anchor, an intermediate CA too, as
  // the API server takes its own --client-ca-file.
  X509_STORE_set_flags(into.clientCa, X509_V_FLAG_PARTIAL_CHAIN);
  into.clientCaNames = sk_X509_NAME_new_null();
  while (X509* ca = PEM_read_X509(in.get(), nullptr, nullptr, nullptr)) {
    X509_STORE_add_cert(into.clientCa, ca);
    sk_X509_NAME_push(into.clientCaNames, X509_NAME_dup(X509_get_subject_name(ca)));
    X509_free(ca);
  }
  ERR_clear_error();
  if (sk_X509_NAME_num(into.clientCaNames) == 0) {
    *error = "no PEM certificate in client CA file " + path;
    return false;
  }
  return true;
}

// The certificate's subject alternative names, as "DNS:name" and "IP:bytes".
std::set<std::string> namesOf(X509* certificate) {
  std::set<std::string> names;
  auto* general = static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(certificate, NID_subject_alt_name, nullptr, nullptr));
  for (int i = 0; general != nullptr && i < sk_GENERAL_NAME_num(general); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(general, i);
    if (name->type != GEN_DNS && name->type != GEN_IPADD) continue;
    const ASN1_STRING* value = name->type == GEN_DNS ? name->d.dNSName : name->d.iPAddress;
    std::string text(reinterpret_cast<const char*>(ASN1_STRING_get0_data(value)),
                     static_cast<size_t>(ASN1_STRING_length(value)));
    if (name->type == GEN_DNS) std::transform(text.begin(), text.end(), text.begin(), ::tolower);
    names.insert((name->type == GEN_DNS ? "DNS:" : "IP:") + text);
  }
  GENERAL_NAMES_free(general);
  return names;
}

bool namesServer(X509* certificate, const std::string& serverName) {
  unsigned char address[16];
  const bool ip = inet_pton(AF_INET, serverName.c_str(), address) == 1 ||
                  inet_pton(AF_INET6, serverName.c_str(), address) == 1;
  return ip ? X509_check_ip_asc(certificate, serverName.c_str(), 0) == 1
            : X509_check_host(certificate, serverName.data(), serverName.size(), 0, nullptr) == 1;
}

std::string joined(const std::set<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out.empty() ? "none" : out;
}

}  // namespace

std::string_view certificateProblemName(CertificateProblem problem) {
  const auto index = static_cast<size_t>(problem);
  return index < kCertificateProblemCount ? kProblemNames[index] : kProblemNames[0];
}

CertificateStore::CertificateStore(CertificateFiles files) : files_(std::move(files)) {}

CertificateStore::~CertificateStore() = default;

std::string CertificateStore::fingerprint() const {
  return fileStamp(files_.certFile) + "|" + fileStamp(files_.keyFile) + "|" +
         fileStamp(files_.clientCaFile);
}

// What a caller would refuse, checked before the pair is served: a
// certificate out of its validity, or one that does not name the server.
CertificateProblem CertificateStore::check(const Credentials& loaded, std::string* error) const {
  if (X509_cmp_current_time(X509_get0_notBefore(loaded.certificate)) >= 0) {
    *error = "the certificate in " + files_.certFile + " is not valid yet";
    return CertificateProblem::NotYetValid;
  }
  if (X509_cmp_current_time(X509_get0_notAfter(loaded.certificate)) <= 0) {
    *error = "the certificate in " + files_.certFile + " has expired";
    return CertificateProblem::Expired;
  }
  if (!files_.serverName.empty()) {
    if (namesServer(loaded.certificate, files_.serverName)) return CertificateProblem::None;
    *error = "the certificate in " + files_.certFile + " does not name " + files_.serverName +
             " (it names " + joined(namesOf(loaded.certificate)) + ")";
    return CertificateProblem::WrongName;
  }
  const auto served = current_.load();
  if (!served) return CertificateProblem::None;
  const std::set<std::string> before = namesOf(served->certificate);
  const std::set<std::string> now = namesOf(loaded.certificate);
  const bool shared = std::any_of(
      now.begin(), now.end(), [&before](const std::string& name) { return before.count(name); });
  if (shared || before.empty()) return CertificateProblem::None;
  *error = "the certificate in " + files_.certFile + " names " + joined(now) +
           ", none of the names served so far (" + joined(before) + ")";
  return CertificateProblem::WrongName;
}

bool CertificateStore::load(std::string* error) {
  const std::string stamp = fingerprint();
  auto loaded = std::make_shared<Credentials>();
  problem_ = CertificateProblem::Unusable;
  if (!readChain(files_.certFile, *loaded, error) || !readKey(files_.keyFile, *loaded, error)) {
    return false;
  }
  if (X509_check_private_key(loaded->certificate, loaded->key) != 1) {
    *error = "the private key in " + files_.keyFile + " does not match the certificate in " +
             files_.certFile;
    ERR_clear_error();
    return false;
  }
  if (!files_.clientCaFile.empty() && !readClientCa(files_.clientCaFile, *loaded, error)) {
    problem_ = CertificateProblem::ClientCa;
    return false;
  }
  problem_ = check(*loaded, error);
  if (problem_ != CertificateProblem::None) return false;
  loaded->notAfter = timeOf(X509_get0_notAfter(loaded->certificate));
  current_.store(std::move(loaded));
  loadedFingerprint_ = stamp;
  return true;
}

bool CertificateStore::reloadIfChanged(std::string* error) {
  if (fingerprint() == loadedFingerprint_) return false;
  return load(error);
}

double CertificateStore::expiry() const {
  const auto loaded = current_.load();
  return loaded ? loaded->notAfter : 0;
}

bool CertificateStore::callerAuthenticated(SSL* ssl) {
  return ssl != nullptr && (SSL_get_verify_mode(ssl) & SSL_VERIFY_PEER) != 0 &&
         SSL_get0_peer_certificate(ssl) != nullptr && SSL_get_verify_result(ssl) == X509_V_OK;
}

int CertificateStore::selectCertificate(SSL* ssl, void* arg) {
  const auto* store = static_cast<const CertificateStore*>(arg);
  const auto loaded = store->current_.load();
  if (!loaded) return 0;
  // The connection starts with the context's pair; OpenSSL keeps one pair per
  // key type, so without clearing, an old ECDSA pair would still be chosen
  // after a rotation to RSA (or the reverse).
  SSL_certs_clear(ssl);
  if (SSL_use_certificate(ssl, loaded->certificate) != 1) return 0;
  if (SSL_use_PrivateKey(ssl, loaded->key) != 1) return 0;
  if (loaded->chain != nullptr && SSL_set1_chain(ssl, loaded->chain) != 1) return 0;
  if (loaded->clientCa == nullptr) return 1;
  // The caller's certificate is verified against the client CA current at
  // this handshake, which the certificate request names.
  if (SSL_set1_verify_cert_store(ssl, loaded->clientCa) != 1) return 0;
  SSL_set_client_CA_list(ssl, SSL_dup_CA_list(loaded->clientCaNames));
  return 1;
}

bool CertificateStore::configure(SSL_CTX& context, std::string* error) {
  const auto loaded = current_.load();
  if (!loaded) {
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
  if (SSL_CTX_use_certificate(&context, loaded->certificate) != 1 ||
      SSL_CTX_use_PrivateKey(&context, loaded->key) != 1) {
    *error = "certificate rejected: " + opensslError();
    return false;
  }
  SSL_CTX_set_cert_cb(&context, &CertificateStore::selectCertificate, this);
  if (files_.clientCaFile.empty()) return true;
  // A certificate is asked of every caller but not required at this level:
  // the kubelet's probes come without one, and /healthz and /readyz answer
  // them. One that does not verify ends the handshake; a request to any
  // other path without one is refused before its body is read.
  SSL_CTX_set_verify(&context, SSL_VERIFY_PEER | SSL_VERIFY_CLIENT_ONCE, nullptr);
  // Resumed sessions keep the caller's verified certificate; OpenSSL
  // refuses to resume without a context to tie them to.
  static constexpr unsigned char kSessionContext[] = "aiadmit";
  SSL_CTX_set_session_id_context(&context, kSessionContext, sizeof kSessionContext - 1);
  return true;
}

}  // namespace aiadmit
