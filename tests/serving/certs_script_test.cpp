// Certificates without cert-manager: certs/webhook-certs.sh makes a CA and a
// serving certificate and the Secret manifest, that the real server loads and
// that curl verifies for the Service's DNS name, and renews and rotates them
// as documented.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <set>
#include <string>

#include "tests/support/certs_harness.h"
#include "tests/support/test_support.h"
#include "webhook/codec/base64.h"
#include "webhook/codec/yaml_json.h"

namespace aiadmit {
namespace {

using namespace testing;
namespace fs = std::filesystem;

size_t certificateCount(const std::string& pem) {
  size_t count = 0;
  for (size_t at = pem.find("BEGIN CERTIFICATE"); at != std::string::npos;
       at = pem.find("BEGIN CERTIFICATE", at + 1)) {
    ++count;
  }
  return count;
}

bool verifies(const std::string& caFile, const std::string& certificateFile) {
  return runCommand({"openssl", "verify", "-CAfile", caFile, certificateFile}).exitCode == 0;
}

TEST(CertsScript, MakesACaAServingCertificateAndTheSecretManifest) {
  TempDir dir;
  const CommandResult result = runScript(dir);
  ASSERT_EQ(result.exitCode, 0) << result.err;
  const std::string pki = dir.file("pki");
  EXPECT_TRUE(verifies(pki + "/ca.crt", pki + "/tls.crt"));
  EXPECT_EQ(readFile(pki + "/ca-bundle.crt"), readFile(pki + "/ca.crt"));
  // Private keys and the Secret holding one are readable by their owner only.
  for (const char* secret : {"pki/ca.key", "pki/tls.key", "tls-secret.yaml"}) {
    EXPECT_EQ(fs::status(dir.file(secret)).permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write)
        << secret;
  }

  // The certificate names the Service, and nothing else.
  const CommandResult text =
      runCommand({"openssl", "x509", "-in", pki + "/tls.crt", "-noout", "-ext",
                  "subjectAltName,extendedKeyUsage,basicConstraints"});
  EXPECT_NE(
      text.out.find("DNS:aiadmit.aiadmit-system.svc, DNS:aiadmit.aiadmit-system.svc.cluster.local"),
      std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find("localhost"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("TLS Web Server Authentication"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("CA:FALSE"), std::string::npos) << text.out;

  std::vector<ManifestDocument> documents;
  std::string error;
  ASSERT_TRUE(parseManifests(readFile(dir.file("tls-secret.yaml")), documents, &error)) << error;
  ASSERT_EQ(documents.size(), 1u);
  const JsonValue* secret = documents[0].json.get();
  EXPECT_EQ(stringMember(secret, "kind"), "Secret");
  EXPECT_EQ(stringMember(secret, "type"), "kubernetes.io/tls");
  EXPECT_EQ(stringMember(member(secret, "metadata"), "name"), "aiadmit-tls");
  EXPECT_EQ(stringMember(member(secret, "metadata"), "namespace"), "aiadmit-system");
  const JsonValue* data = member(secret, "data");
  EXPECT_EQ(base64Decode(stringMember(data, "tls.crt")), readFile(pki + "/tls.crt"));
  EXPECT_EQ(base64Decode(stringMember(data, "tls.key")), readFile(pki + "/tls.key"));
  EXPECT_EQ(base64Decode(stringMember(data, "ca.crt")), readFile(pki + "/ca.crt"));
  const CommandResult schema = validateSchemas({toJson(*secret)});
  EXPECT_EQ(schema.exitCode, 0) << schema.out;
}

TEST(CertsScript, ServerLoadsTheCertificateAndCurlVerifiesItForTheServiceName) {
  TempDir dir;
  ASSERT_EQ(runScript(dir).exitCode, 0);
  const std::string pki = dir.file("pki");
  WebhookServer::Options options;
  options.certFile = pki + "/tls.crt";
  options.keyFile = pki + "/tls.key";
  WebhookServer server(options);
  const std::string port = std::to_string(server.port());

  for (const std::string& name :
       {std::string(kServiceName), std::string(kServiceName) + ".cluster.local"}) {
    const CommandResult curl = runCommand(
        {"curl", "-sS", "--max-time", "10", "--resolve", name + ":" + port + ":127.0.0.1",
         "--cacert", pki + "/ca-bundle.crt", "https://" + name + ":" + port + "/healthz"});
    EXPECT_EQ(curl.exitCode, 0) << name << ": " << curl.err;
    EXPECT_EQ(curl.out, "ok\n") << name;
  }

  // An admission review over the same verified connection.
  const std::string name = kServiceName;
  const CommandResult review =
      runCommand({"curl", "-sS", "--max-time", "10", "--resolve", name + ":" + port + ":127.0.0.1",
                  "--cacert", pki + "/ca-bundle.crt", "-H", "Content-Type: application/json",
                  "--data-binary", "@" + corpusDir() + "/../bench/gpu-pod-review.json",
                  "https://" + name + ":" + port + "/mutate"});
  EXPECT_EQ(review.exitCode, 0) << review.err;
  EXPECT_EQ(parseReviewResponse(review.out).uid, "fbeb1f36-14d3-4562-a099-b9c52a1b3b4d");

  // curl exit 60: the certificate does not verify. Another name, or another
  // CA, and the connection is refused.
  const CommandResult otherName = runCommand(
      {"curl", "-sS", "--max-time", "10", "--resolve", "aiadmit.other.svc:" + port + ":127.0.0.1",
       "--cacert", pki + "/ca-bundle.crt", "https://aiadmit.other.svc:" + port + "/healthz"});
  EXPECT_EQ(otherName.exitCode, 60) << otherName.err;
  const CommandResult otherCa = runCommand(
      {"curl", "-sS", "--max-time", "10", "--resolve", name + ":" + port + ":127.0.0.1", "--cacert",
       devCertificates().file("ca.crt"), "https://" + name + ":" + port + "/healthz"});
  EXPECT_EQ(otherCa.exitCode, 60) << otherCa.err;
}

TEST(CertsScript, RenewalKeepsTheCaAndIssuesANewKey) {
  TempDir dir;
  ASSERT_EQ(runScript(dir).exitCode, 0);
  const std::string pki = dir.file("pki");
  const std::string ca = readFile(pki + "/ca.crt");
  const std::string key = readFile(pki + "/tls.key");
  const std::string serial = serialOfFile(pki + "/tls.crt");
  const CommandResult again = runScript(dir);
  ASSERT_EQ(again.exitCode, 0) << again.err;
  EXPECT_EQ(readFile(pki + "/ca.crt"), ca) << "the caBundle does not change on renewal";
  EXPECT_NE(readFile(pki + "/tls.key"), key);
  EXPECT_NE(serialOfFile(pki + "/tls.crt"), serial);
  EXPECT_TRUE(verifies(pki + "/ca.crt", pki + "/tls.crt"));
}

TEST(CertsScript, CaRotationTrustsBothCasUntilItIsFinished) {
  TempDir dir;
  ASSERT_EQ(runScript(dir).exitCode, 0);
  const std::string pki = dir.file("pki");
  fs::copy_file(pki + "/ca.crt", dir.file("old-ca.crt"));
  fs::copy_file(pki + "/tls.crt", dir.file("old-tls.crt"));

  const CommandResult rotate = runScript(dir, {"--rotate-ca"});
  ASSERT_EQ(rotate.exitCode, 0) << rotate.err;
  EXPECT_NE(readFile(pki + "/ca.crt"), readFile(dir.file("old-ca.crt")));
  EXPECT_EQ(certificateCount(readFile(pki + "/ca-bundle.crt")), 2u);
  // During the rotation the bundle trusts the certificate still served by
  // Pods that have not reloaded yet, and the new one.
  EXPECT_TRUE(verifies(pki + "/ca-bundle.crt", dir.file("old-tls.crt")));
  EXPECT_TRUE(verifies(pki + "/ca-bundle.crt", pki + "/tls.crt"));
  EXPECT_FALSE(verifies(dir.file("old-ca.crt"), pki + "/tls.crt"));
  EXPECT_FALSE(fs::exists(pki + "/ca-previous.key")) << "the old CA signs nothing again";

  const CommandResult twice = runScript(dir, {"--rotate-ca"});
  EXPECT_EQ(twice.exitCode, 1);
  EXPECT_NE(twice.err.find("--finish-ca-rotation"), std::string::npos) << twice.err;

  const std::string served = readFile(pki + "/tls.crt");
  const CommandResult finish = runScript(dir, {"--finish-ca-rotation"});
  ASSERT_EQ(finish.exitCode, 0) << finish.err;
  EXPECT_EQ(readFile(pki + "/tls.crt"), served) << "finishing keeps the serving pair";
  EXPECT_EQ(certificateCount(readFile(pki + "/ca-bundle.crt")), 1u);
  EXPECT_TRUE(verifies(pki + "/ca-bundle.crt", pki + "/tls.crt"));
  EXPECT_FALSE(verifies(pki + "/ca-bundle.crt", dir.file("old-tls.crt")));
  EXPECT_NE(runScript(dir, {"--finish-ca-rotation"}).exitCode, 0) << "no rotation under way";
}

TEST(CertsScript, RefusesACertificateThatWouldOutliveItsCa) {
  TempDir dir;
  ASSERT_EQ(runScript(dir, {"--ca-days", "30", "--days", "10"}).exitCode, 0);
  const CommandResult tooLong = runScript(dir, {"--days", "60"});
  EXPECT_EQ(tooLong.exitCode, 1);
  EXPECT_NE(tooLong.err.find("--rotate-ca"), std::string::npos) << tooLong.err;
  EXPECT_NE(tooLong.err.find("less than 90 days"), std::string::npos)
      << "a CA near its end is announced: " << tooLong.err;
}

TEST(CertsScript, RejectsUnusableArguments) {
  TempDir dir;
  EXPECT_EQ(runCommand({certsScript()}).exitCode, 2);
  EXPECT_EQ(runCommand({certsScript(), "--bogus", dir.file("pki")}).exitCode, 2);
  EXPECT_EQ(runScript(dir, {"--namespace", "Not_A_Name"}).exitCode, 1);
  EXPECT_EQ(runScript(dir, {"--days", "0"}).exitCode, 1);
  EXPECT_FALSE(fs::exists(dir.file("tls-secret.yaml")));
  ASSERT_EQ(runScript(dir).exitCode, 0);
  fs::remove(dir.file("pki/ca.key"));
  const CommandResult halfCa = runScript(dir);
  EXPECT_EQ(halfCa.exitCode, 1);
  EXPECT_NE(halfCa.err.find("ca.key"), std::string::npos) << halfCa.err;
}

TEST(CertsScript, DevelopmentCertificatesKeepTheirInterface) {
  TempDir dir;
  const CommandResult result =
      runCommand({"bash", sourceDir() + "/certs/gen-dev-certs.sh", dir.file("dev"), "2"});
  ASSERT_EQ(result.exitCode, 0) << result.err;
  for (const char* file : {"ca.crt", "ca.key", "tls.crt", "tls.key"}) {
    EXPECT_TRUE(fs::exists(dir.file(std::string("dev/") + file))) << file;
  }
  EXPECT_TRUE(verifies(dir.file("dev/ca.crt"), dir.file("dev/tls.crt")));
  const CommandResult text = runCommand(
      {"openssl", "x509", "-in", dir.file("dev/tls.crt"), "-noout", "-ext", "subjectAltName"});
  for (const char* name :
       {"DNS:localhost", "IP Address:127.0.0.1", "DNS:aiadmit.aiadmit-system.svc"}) {
    EXPECT_NE(text.out.find(name), std::string::npos) << text.out;
  }
}

// The API server's side of mutual TLS: a client certificate of the same CA,
// in a kubeconfig entry named for the Service, referenced by an
// AdmissionConfiguration for both webhook plugins; aiadmit with --client-ca
// set to the Secret's ca.crt answers it, and answers no one without it.
TEST(CertsScript, IssuesTheApiServersClientCertificateAndAdmissionConfiguration) {
  TempDir dir;
  ASSERT_EQ(runScript(dir, {"--apiserver-config-dir", "/etc/kubernetes/aiadmit-test"}).exitCode, 0);
  const std::string pki = dir.file("pki");
  EXPECT_EQ(runCommand({"openssl", "verify", "-purpose", "sslclient", "-CAfile", pki + "/ca.crt",
                        pki + "/apiserver-client.crt"})
                .exitCode,
            0);
  EXPECT_NE(runCommand({"openssl", "verify", "-purpose", "sslserver", "-CAfile", pki + "/ca.crt",
                        pki + "/apiserver-client.crt"})
                .exitCode,
            0)
      << "a client certificate only";
  struct stat info {};
  ASSERT_EQ(stat((pki + "/admission-kubeconfig.yaml").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 077, 0u) << "the kubeconfig holds the client key";

  std::vector<ManifestDocument> documents;
  std::string error;
  ASSERT_TRUE(parseManifests(readFile(pki + "/admission-kubeconfig.yaml"), documents, &error))
      << error;
  ASSERT_EQ(documents.size(), 1u);
  const JsonValue& user = (*member(documents[0].json.get(), "users"))[0];
  EXPECT_EQ(stringMember(&user, "name"), kServiceName);
  EXPECT_EQ(base64Decode(stringMember(member(&user, "user"), "client-certificate-data")),
            readFile(pki + "/apiserver-client.crt"));
  EXPECT_EQ(base64Decode(stringMember(member(&user, "user"), "client-key-data")),
            readFile(pki + "/apiserver-client.key"));

  documents.clear();
  ASSERT_TRUE(parseManifests(readFile(pki + "/admission-config.yaml"), documents, &error)) << error;
  const JsonValue* config = documents.at(0).json.get();
  EXPECT_EQ(stringMember(config, "apiVersion"), "apiserver.config.k8s.io/v1");
  EXPECT_EQ(stringMember(config, "kind"), "AdmissionConfiguration");
  std::set<std::string> plugins;
  for (const JsonValue& plugin : member(config, "plugins")->GetArray()) {
    plugins.insert(std::string(stringMember(&plugin, "name")));
    const JsonValue* configuration = member(&plugin, "configuration");
    EXPECT_EQ(stringMember(configuration, "kind"), "WebhookAdmissionConfiguration");
    EXPECT_EQ(stringMember(configuration, "kubeConfigFile"),
              "/etc/kubernetes/aiadmit-test/admission-kubeconfig.yaml");
  }
  EXPECT_EQ(plugins,
            (std::set<std::string>{"ValidatingAdmissionWebhook", "MutatingAdmissionWebhook"}));

  WebhookServer::Options options;
  options.certFile = pki + "/tls.crt";
  options.keyFile = pki + "/tls.key";
  options.extraArgs = {"--client-ca", pki + "/ca-bundle.crt"};
  WebhookServer server(options);
  const std::string port = std::to_string(server.port());
  const std::string name = kServiceName;
  const auto curlMutate = [&](const std::vector<std::string>& identity) {
    std::vector<std::string> argv = {"curl",
                                     "-sS",
                                     "--max-time",
                                     "10",
                                     "-o",
                                     "/dev/null",
                                     "-w",
                                     "%{http_code}",
                                     "--resolve",
                                     name + ":" + port + ":127.0.0.1",
                                     "--cacert",
                                     pki + "/ca-bundle.crt",
                                     "-H",
                                     "Content-Type: application/json",
                                     "--data-binary",
                                     "@" + corpusDir() + "/../bench/gpu-pod-review.json",
                                     "https://" + name + ":" + port + "/mutate"};
    argv.insert(argv.begin() + 1, identity.begin(), identity.end());
    return runCommand(argv).out;
  };
  EXPECT_EQ(
      curlMutate({"--cert", pki + "/apiserver-client.crt", "--key", pki + "/apiserver-client.key"}),
      "200");
  EXPECT_EQ(curlMutate({}), "403");
}

}  // namespace
}  // namespace aiadmit
