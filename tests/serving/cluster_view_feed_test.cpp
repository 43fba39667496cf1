// Where serve's cluster view reads from (--cluster-view, --kubeconfig, the
// Pod's service account) and the feed that hands every view the watcher
// publishes to the engine, against the stand-in API server.
#include <gtest/gtest.h>

#include <chrono>

#include "mutators/mutator.h"
#include "tests/support/api_standin.h"
#include "tests/support/test_support.h"
#include "webhook/policy/profile_loader.h"
#include "webhook/serving/cluster_view_feed.h"

namespace aiadmit {
namespace {

using namespace testing;
using namespace std::chrono_literals;

// A Pod's environment: the service variables and, when `token`, the files
// the kubelet mounts for a service-account token.
InClusterEnvironment pod(const TempDir& dir, bool token) {
  InClusterEnvironment environment;
  environment.host = "10.96.0.1";
  environment.port = "443";
  environment.serviceAccountDir = dir.path();
  if (token) {
    writeFile(dir.file("token"), "pod-token\n");
    writeFile(dir.file("ca.crt"), readFile(devCertificates().file("ca.crt")));
  }
  return environment;
}

std::string kubeconfig(const std::string& server) {
  return "apiVersion: v1\nkind: Config\ncurrent-context: dev\nclusters:\n- name: dev\n  cluster:\n"
         "    server: " +
         server + "\n    certificate-authority: " + devCertificates().file("ca.crt") +
         "\ncontexts:\n- name: dev\n  context:\n    cluster: dev\n    user: dev\n"
         "users:\n- name: dev\n  user:\n    token: token-1\n";
}

TEST(ClusterViewSource, AutoIsOnInAPodThatMountsAToken) {
  TempDir dir;
  ClusterViewSource source;
  std::string error;
  ASSERT_TRUE(resolveClusterViewSource({}, pod(dir, true), source, error)) << error;
  ASSERT_TRUE(source.config.has_value());
  EXPECT_EQ(source.config->host, "10.96.0.1");
  EXPECT_EQ(source.config->port, 443);
  EXPECT_EQ(source.config->tokenFile, dir.file("token"));
  EXPECT_EQ(source.config->source, "in-cluster");
}

TEST(ClusterViewSource, AutoIsOffWithoutCredentialsAndOnRefusesToStart) {
  TempDir dir;
  ClusterViewSource source;
  std::string error;
  ASSERT_TRUE(resolveClusterViewSource({}, pod(dir, false), source, error)) << error;
  EXPECT_FALSE(source.config.has_value());
  EXPECT_EQ(source.reason, "no service-account token in the Pod and no --kubeconfig");
  ASSERT_TRUE(resolveClusterViewSource({}, InClusterEnvironment{}, source, error)) << error;
  EXPECT_FALSE(source.config.has_value());

  const ClusterViewSettings on{ClusterViewMode::On, ""};
  EXPECT_FALSE(resolveClusterViewSource(on, pod(dir, false), source, error));
  EXPECT_NE(error.find("--cluster-view=on needs credentials for the Kubernetes API: " +
                       dir.file("token") + " cannot be read"),
            std::string::npos)
      << error;
  EXPECT_FALSE(resolveClusterViewSource(on, InClusterEnvironment{}, source, error));
  EXPECT_NE(error.find("KUBERNETES_SERVICE_HOST"), std::string::npos) << error;
}

TEST(ClusterViewSource, AKubeconfigWinsOverThePodAndOffOverBoth) {
  TempDir dir;
  writeFile(dir.file("config"), kubeconfig("https://127.0.0.1:6443"));
  ClusterViewSource source;
  std::string error;
  const ClusterViewSettings withKubeconfig{ClusterViewMode::Auto, dir.file("config")};
  ASSERT_TRUE(resolveClusterViewSource(withKubeconfig, pod(dir, true), source, error)) << error;
  ASSERT_TRUE(source.config.has_value());
  EXPECT_EQ(source.config->host, "127.0.0.1");
  EXPECT_EQ(source.config->port, 6443);
  EXPECT_EQ(source.config->token, "token-1");

  const ClusterViewSettings off{ClusterViewMode::Off, dir.file("config")};
  ASSERT_TRUE(resolveClusterViewSource(off, pod(dir, true), source, error)) << error;
  EXPECT_FALSE(source.config.has_value());
  EXPECT_EQ(source.reason, "--cluster-view=off");

  const ClusterViewSettings missing{ClusterViewMode::Auto, dir.file("absent")};
  EXPECT_FALSE(resolveClusterViewSource(missing, pod(dir, true), source, error));
  EXPECT_EQ(error, "--kubeconfig: " + dir.file("absent") + " cannot be read");
}

TEST(ClusterViewMode, ParsesItsThreeNames) {
  for (const ClusterViewMode mode :
       {ClusterViewMode::Auto, ClusterViewMode::On, ClusterViewMode::Off}) {
    EXPECT_EQ(parseClusterViewMode(clusterViewModeName(mode)), mode);
  }
  EXPECT_FALSE(parseClusterViewMode("yes").has_value());
  EXPECT_FALSE(parseClusterViewMode("").has_value());
}

std::string node(const std::string& name, int gpus) {
  return R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + name +
         R"("},"status":{"allocatable":{"nvidia.com/gpu":")" + std::to_string(gpus) + R"("}}})";
}

TEST(ClusterViewFeed, HandsEveryPublishedViewToTheEngine) {
  ApiStandIn api;
  api.serve("/api/v1/nodes", "v1", "Node");
  api.put("/api/v1/nodes", node("gpu-a", 4));
  TempDir dir;
  writeFile(dir.file("config"), kubeconfig("https://127.0.0.1:" + std::to_string(api.port())));
  ApiServerConfig config;
  std::string error;
  ASSERT_TRUE(kubeconfigConfig(dir.file("config"), "", config, error)) << error;

  ProfileLoadResult loaded = loadProfileDirectory(sourceDir() + "/profiles", mutationSwitches());
  ASSERT_TRUE(loaded.ok());
  Engine engine(loaded.set);
  EXPECT_EQ(engine.clusterView(), nullptr);
  ClusterWatchOptions options;
  // DeviceClasses too: whether DRA backs nvidia.com/gpu is part of its count.
  options.kinds = {ClusterKind::Node, ClusterKind::DeviceClass};
  options.publishInterval = 5ms;
  options.log = [](std::string_view, const std::string&) {};
  ClusterViewFeed feed(config, engine, options);
  ASSERT_TRUE(feed.start(&error)) << error;
  const auto engineHolds = [&engine](size_t nodes) {
    const auto view = engine.clusterView();
    return view != nullptr && view->synced() && view->nodes().size() == nodes;
  };
  EXPECT_TRUE(feed.watcher().waitFor([&](const auto&) { return engineHolds(1); }, 20s));

  api.put("/api/v1/nodes", node("gpu-b", 8));
  EXPECT_TRUE(feed.watcher().waitFor([&](const auto&) { return engineHolds(2); }, 20s));
  const auto largest = engine.clusterView()->largestNodeForResource("nvidia.com/gpu", Placement{});
  ASSERT_TRUE(largest.has_value());
  EXPECT_EQ(largest->devices, 8);
  EXPECT_EQ(largest->node, "gpu-b");
  feed.stop();
}

}  // namespace
}  // namespace aiadmit
