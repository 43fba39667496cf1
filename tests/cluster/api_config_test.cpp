// Where the API is and how to prove who we are: the service-account files a
// Pod gets, kubeconfigs as kubectl writes them, and the token that rotates.
#include "webhook/cluster/api_config.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "tests/support/api_standin.h"
#include "tests/support/test_support.h"
#include "webhook/cluster/cluster_watcher.h"
#include "webhook/codec/base64.h"
#include "webhook/engine/admission.h"

namespace aiadmit {
namespace {

using namespace testing;
using namespace std::chrono_literals;

std::string caPem() {
  return readFile(devCertificates().file("ca.crt"));
}

TEST(InClusterConfig, ReadsTheServiceAccountFilesAndEnvironment) {
  TempDir account;
  writeFile(account.file("token"), "service-account-token\n");
  writeFile(account.file("ca.crt"), caPem());
  InClusterEnvironment environment{"10.96.0.1", "443", account.path()};
  ApiServerConfig config;
  std::string error;
  ASSERT_TRUE(inClusterConfig(environment, config, error)) << error;
  EXPECT_EQ(config.host, "10.96.0.1");
  EXPECT_EQ(config.port, 443);
  EXPECT_EQ(config.tokenFile, account.file("token"));
  EXPECT_EQ(config.caPem, caPem());
  EXPECT_EQ(config.describe(), "https://10.96.0.1:443 (in-cluster)");
  EXPECT_EQ(config.describe().find("service-account-token"), std::string::npos);

  InClusterEnvironment ipv6{"fd00::1", "6443", account.path()};
  ASSERT_TRUE(inClusterConfig(ipv6, config, error)) << error;
  EXPECT_EQ(config.describe(), "https://[fd00::1]:6443 (in-cluster)");
}

TEST(InClusterConfig, SaysWhyItCannotBeUsed) {
  TempDir account;
  ApiServerConfig config;
  std::string error;
  EXPECT_FALSE(inClusterConfig(InClusterEnvironment{"", "", account.path()}, config, error));
  EXPECT_NE(error.find("not running in a Pod"), std::string::npos) << error;
  EXPECT_FALSE(
      inClusterConfig(InClusterEnvironment{"10.96.0.1", "443", account.path()}, config, error));
  EXPECT_NE(error.find("mounts no service-account token"), std::string::npos) << error;
  writeFile(account.file("token"), "t");
  EXPECT_FALSE(
      inClusterConfig(InClusterEnvironment{"10.96.0.1", "443", account.path()}, config, error));
  EXPECT_NE(error.find("ca.crt"), std::string::npos) << error;
  writeFile(account.file("ca.crt"), caPem());
  EXPECT_FALSE(
      inClusterConfig(InClusterEnvironment{"10.96.0.1", "http", account.path()}, config, error));
}

std::string kubeconfig(const std::string& server, const std::string& cluster,
                       const std::string& user) {
  return "apiVersion: v1\nkind: Config\ncurrent-context: dev\nclusters:\n- name: dev\n  cluster:\n"
         "    server: " +
         server + "\n" + cluster +
         "contexts:\n- name: dev\n  context:\n    cluster: dev\n    user: dev\n"
         "- name: other\n  context:\n    cluster: dev\n    user: other\n"
         "users:\n- name: dev\n  user:\n" +
         user + "- name: other\n  user:\n    token: other-token\n";
}

TEST(KubeconfigConfig, ReadsServerAuthorityAndCredentials) {
  TempDir dir;
  writeFile(dir.file("ca.crt"), caPem());
  writeFile(dir.file("config"),
            kubeconfig("https://127.0.0.1:6443", "    certificate-authority: ca.crt\n",
                       "    client-certificate-data: " + base64Encode("CERT") +
                           "\n    client-key-data: " + base64Encode("KEY") + "\n"));
  ApiServerConfig config;
  std::string error;
  ASSERT_TRUE(kubeconfigConfig(dir.file("config"), "", config, error)) << error;
  EXPECT_EQ(config.host, "127.0.0.1");
  EXPECT_EQ(config.port, 6443);
  EXPECT_EQ(config.caPem, caPem()) << "a relative path is the kubeconfig's folder's";
  EXPECT_EQ(config.clientCertPem, "CERT");
  EXPECT_EQ(config.clientKeyPem, "KEY");
  EXPECT_EQ(config.source, dir.file("config") + " context dev");

  ASSERT_TRUE(kubeconfigConfig(dir.file("config"), "other", config, error)) << error;
  EXPECT_EQ(config.token, "other-token");
  EXPECT_FALSE(kubeconfigConfig(dir.file("config"), "missing", config, error));
  EXPECT_NE(error.find("no context \"missing\""), std::string::npos) << error;

  writeFile(dir.file("v6"), kubeconfig("https://[::1]", "", "    tokenFile: token\n"));
  ASSERT_TRUE(kubeconfigConfig(dir.file("v6"), "", config, error)) << error;
  EXPECT_EQ(config.host, "::1");
  EXPECT_EQ(config.port, 443);
  EXPECT_EQ(config.tokenFile, dir.file("token"));
}

TEST(KubeconfigConfig, RefusesWhatThisClientCannotHonour) {
  TempDir dir;
  std::string error;
  ApiServerConfig config;
  const std::pair<std::string, std::string> cases[] = {
      {kubeconfig("https://k:6443", "", "    exec:\n      command: aws\n"), "exec"},
      {kubeconfig("https://k:6443", "    insecure-skip-tls-verify: true\n", "    token: t\n"),
       "insecure-skip-tls-verify"},
      {kubeconfig("http://k:6443", "", "    token: t\n"), "not an https:// URL"},
      {kubeconfig("https://k:6443/prefix", "", "    token: t\n"), "has a path"},
      {kubeconfig("https://k:6443", "    certificate-authority-data: '%%%'\n", "    token: t\n"),
       "not base64"},
      {kubeconfig("https://k:6443", "", "    client-certificate-data: " + base64Encode("C") + "\n"),
       "go together"},
  };
  for (const auto& [text, expected] : cases) {
    writeFile(dir.file("config"), text);
    EXPECT_FALSE(kubeconfigConfig(dir.file("config"), "", config, error)) << expected;
    EXPECT_NE(error.find(expected), std::string::npos) << error;
  }
}

TEST(BearerToken, ReadsTheFileAgainAsItRotates) {
  TempDir dir;
  writeFile(dir.file("token"), "first\n");
  BearerToken cached("", dir.file("token"), std::chrono::hours(1));
  EXPECT_EQ(cached.current(), "first");
  writeFile(dir.file("token"), "second\n");
  EXPECT_EQ(cached.current(), "first") << "not yet due";
  cached.refused();
  EXPECT_EQ(cached.current(), "second") << "a 401 makes it read again";
  EXPECT_EQ(cached.reads(), 2u);

  BearerToken due("", dir.file("token"), 0ms);
  EXPECT_EQ(due.current(), "second");
  writeFile(dir.file("token"), "third");
  EXPECT_EQ(due.current(), "third");
  std::remove(dir.file("token").c_str());
  EXPECT_EQ(due.current(), "third") << "a token file that is gone for a moment keeps the last";

  BearerToken fixed("fixed", "", std::chrono::hours(1));
  EXPECT_EQ(fixed.current(), "fixed");
}

// A kubeconfig as a developer has it, against the stand-in API over TLS:
// the server is verified with the kubeconfig's authority.
TEST(KubeconfigConfig, ConnectsToTheApiItNames) {
  ApiStandIn api;
  api.serve("/api/v1/nodes", "v1", "Node");
  api.put("/api/v1/nodes", R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"}})");
  TempDir dir;
  writeFile(dir.file("config"),
            kubeconfig("https://localhost:" + std::to_string(api.port()),
                       "    certificate-authority-data: " + base64Encode(caPem()) + "\n",
                       "    token: token-1\n"));
  ApiServerConfig config;
  std::string error;
  ASSERT_TRUE(kubeconfigConfig(dir.file("config"), "", config, error)) << error;
  ClusterWatchOptions options;
  options.kinds = {ClusterKind::Node};
  ClusterWatcher watcher(config, options);
  ASSERT_TRUE(watcher.start(&error)) << error;
  EXPECT_TRUE(watcher.waitFor([](const auto& state) { return state.synced; }, 20s));
  EXPECT_EQ(watcher.view()->nodes().size(), 1u);

  // The same server with another authority is refused at the handshake.
  ApiServerConfig stranger = config;
  TempDir other;
  ASSERT_EQ(
      runCommand({"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                  other.file("k"), "-out", other.file("c"), "-subj", "/CN=other", "-days", "1"})
          .exitCode,
      0);
  stranger.caPem = readFile(other.file("c"));
  ClusterWatchOptions quick = options;
  quick.reflector.backoffInitial = 10ms;
  ClusterWatcher refused(stranger, quick);
  ASSERT_TRUE(refused.start(&error)) << error;
  EXPECT_TRUE(refused.waitFor(
      [](const auto& state) { return state.resource(ClusterKind::Node)->failures >= 1; }, 20s));
  EXPECT_FALSE(refused.state().synced);
}

}  // namespace
}  // namespace aiadmit
