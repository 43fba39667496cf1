// What `explain --kubeconfig` lists, against the stand-in API server over
// TLS: each resource in the first version served, absent ones left out, and
// an optional resource the reader may not list left out with its name,
// while a refusal of Pods or Nodes stops the snapshot.
#include "webhook/cluster/api_snapshot.h"

#include <gtest/gtest.h>

#include "tests/support/api_standin.h"
#include "tests/support/test_support.h"
#include "webhook/cluster/cluster_kinds.h"

namespace aiadmit {
namespace {

constexpr const char* kPods = "/api/v1/pods";
constexpr const char* kNodes = "/api/v1/nodes";
constexpr const char* kRules = "/apis/resource.k8s.io/v1/devicetaintrules";

class Snapshot : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::writeFile(dir_.file("token"), "token-1");
    api_.serve(kPods, "v1", "Pod");
    api_.serve(kNodes, "v1", "Node");
    api_.serve(kRules, "resource.k8s.io/v1", "DeviceTaintRule");
    api_.put(kNodes, R"({"metadata":{"name":"gpu-1"}})");
    api_.put(kRules, R"({"metadata":{"name":"maintenance"},"spec":{}})");
  }
  ListedSnapshot list() {
    const ApiServerConfig config = api_.config(dir_.file("token"));
    ApiClient client(config, ApiClientOptions{});
    return listWaitingSnapshot(client);
  }

  testing::TempDir dir_;
  testing::ApiStandIn api_;
};

TEST_F(Snapshot, ListsWhatIsServedInItsVersionAndNamesWhatIsNot) {
  const ListedSnapshot snapshot = list();
  ASSERT_EQ(snapshot.error, "");
  EXPECT_NE(snapshot.text.find(R"("name":"gpu-1")"), std::string::npos) << snapshot.text;
  EXPECT_NE(snapshot.text.find(R"("name":"maintenance")"), std::string::npos);
  EXPECT_NE(
      std::find(snapshot.absent.begin(), snapshot.absent.end(), "resourceslices.resource.k8s.io"),
      snapshot.absent.end());
  EXPECT_NE(
      std::find(snapshot.absent.begin(), snapshot.absent.end(), "podgroups.scheduling.k8s.io"),
      snapshot.absent.end())
      << "explain lists Kubernetes' own PodGroups where they are served";
  EXPECT_TRUE(snapshot.forbidden.empty());
}

TEST_F(Snapshot, AnOptionalResourceTheReaderMayNotListIsLeftOutAndNamed) {
  api_.refuseNextLists(
      kRules, -1, 403, "Forbidden",
      "devicetaintrules.resource.k8s.io is forbidden: User \"reader\" cannot list");
  const ListedSnapshot snapshot = list();
  ASSERT_EQ(snapshot.error, "");
  EXPECT_EQ(snapshot.forbidden, std::vector<std::string>{"devicetaintrules.resource.k8s.io"});
  EXPECT_EQ(snapshot.text.find("maintenance"), std::string::npos);
  EXPECT_NE(snapshot.text.find("gpu-1"), std::string::npos);
}

TEST_F(Snapshot, ARefusalToListNodesStopsTheSnapshot) {
  api_.refuseNextLists(kNodes, -1, 403, "Forbidden", "nodes is forbidden");
  const ListedSnapshot snapshot = list();
  EXPECT_NE(snapshot.error.find("listing nodes"), std::string::npos) << snapshot.error;
  EXPECT_NE(snapshot.error.find("403"), std::string::npos) << snapshot.error;
}

TEST(ClusterKinds, EachKindHasItsRowInItsPlace) {
  ASSERT_EQ(clusterResourceTypes().size(), kClusterKinds);
  for (const ClusterKind kind : kAllClusterKinds) {
    EXPECT_EQ(resourceType(kind).kind, kind) << kindName(kind);
    EXPECT_EQ(clusterKindOf(kindName(kind)), kind);
    EXPECT_FALSE(resourceType(kind).versions.empty()) << kindName(kind);
  }
  EXPECT_EQ(resourceType(ClusterKind::QueueWorkload).qualifiedPlural(), "workloads.kueue.x-k8s.io");
  EXPECT_EQ(resourceType(ClusterKind::Pod).qualifiedPlural(), "pods");
}

}  // namespace
}  // namespace aiadmit
