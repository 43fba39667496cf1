// certs/webhook-certs.sh as the certificate tests run it, and what they read
// back from a certificate: its serial number.
#pragma once

#include <openssl/bn.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/test_support.h"

namespace aiadmit::testing {

// The DNS name the API server checks the webhook's certificate against.
inline constexpr const char* kServiceName = "aiadmit.aiadmit-system.svc";

inline std::string certsScript() {
  return sourceDir() + "/certs/webhook-certs.sh";
}

// certs/webhook-certs.sh with the Secret written beside the PKI directory.
inline CommandResult runScript(const TempDir& dir, std::vector<std::string> options = {}) {
  std::vector<std::string> argv = {certsScript(), "--secret", dir.file("tls-secret.yaml")};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back(dir.file("pki"));
  return runCommand(argv);
}

inline std::string serialOf(X509* certificate) {
  std::unique_ptr<BIGNUM, decltype(&BN_free)> number(
      ASN1_INTEGER_to_BN(X509_get_serialNumber(certificate), nullptr), BN_free);
  char* hex = BN_bn2hex(number.get());
  std::string out = hex;
  OPENSSL_free(hex);
  return out;
}

inline std::string serialOfFile(const std::string& path) {
  std::unique_ptr<FILE, decltype(&fclose)> in(fopen(path.c_str(), "rb"), fclose);
  if (!in) return "";
  std::unique_ptr<X509, decltype(&X509_free)> certificate(
      PEM_read_X509(in.get(), nullptr, nullptr, nullptr), X509_free);
  return certificate ? serialOf(certificate.get()) : "";
}

}  // namespace aiadmit::testing
