// One binary beside the API servers a platform team runs at once: the
// watcher reads each kind in the newest version the server serves (DRA in
// resource.k8s.io/v1 on 1.34 and later, v1beta2 or v1beta1 before), and a
// kind an older server does not serve at all (DeviceTaintRules before 1.33,
// or with the feature off) is known to have no objects rather than failing.
#include <gtest/gtest.h>

#include "tests/support/api_standin.h"
#include "tests/support/test_support.h"
#include "webhook/cluster/cluster_watcher.h"

namespace aiadmit {
namespace {

using namespace testing;
using namespace std::chrono_literals;

constexpr auto kDeadline = 20s;

std::string slice(const std::string& apiVersion, bool basic) {
  const std::string device = basic ? R"({"name":"gpu-0","basic":{}},{"name":"gpu-1","basic":{}})"
                                   : R"({"name":"gpu-0"},{"name":"gpu-1"})";
  return R"({"apiVersion":")" + apiVersion +
         R"(","kind":"ResourceSlice","metadata":{"name":"node-a-gpu"},)"
         R"("spec":{"driver":"gpu.nvidia.com","nodeName":"node-a",)"
         R"("pool":{"name":"node-a","generation":1,"resourceSliceCount":1},"devices":[)" +
         device + "]}}";
}

class VersionSkew : public ::testing::TestWithParam<std::pair<std::string, bool>> {
 protected:
  void SetUp() override { writeFile(dir_.file("token"), "token-1\n"); }

  std::unique_ptr<ClusterWatcher> start() {
    ApiServerConfig config;
    config.host = "127.0.0.1";
    config.port = api_.port();
    config.caPem = api_.caPem();
    config.tokenFile = dir_.file("token");
    config.source = "test";
    ClusterWatchOptions options;
    options.kinds = {ClusterKind::ResourceSlice, ClusterKind::DeviceTaintRule};
    options.reflector.backoffInitial = 20ms;
    options.reflector.backoffMax = 200ms;
    options.publishInterval = 5ms;
    auto watcher = std::make_unique<ClusterWatcher>(config, options);
    std::string error;
    EXPECT_TRUE(watcher->start(&error)) << error;
    return watcher;
  }

  ApiStandIn api_;
  TempDir dir_;
};

// A server that serves resource.k8s.io in this version alone, with no
// DeviceTaintRules: 1.32 (v1beta1), 1.33 (v1beta2 beside v1beta1), 1.34 (v1).
TEST_P(VersionSkew, SlicesAreReadInTheServedVersionAndTaintRulesAreNone) {
  const auto& [version, basic] = GetParam();
  const std::string path = "/apis/resource.k8s.io/" + version + "/resourceslices";
  api_.serve(path, "resource.k8s.io/" + version, "ResourceSlice");
  api_.put(path, slice("resource.k8s.io/" + version, basic));
  auto watcher = start();
  ASSERT_TRUE(watcher->waitFor([](const ClusterWatchState& s) { return s.synced; }, kDeadline));
  const ClusterWatchState state = watcher->state();
  ASSERT_NE(state.resource(ClusterKind::ResourceSlice), nullptr);
  EXPECT_EQ(state.resource(ClusterKind::ResourceSlice)->apiVersion, "resource.k8s.io/" + version);
  const auto view = watcher->view();
  ASSERT_EQ(view->resourceSlices().size(), 1u);
  EXPECT_EQ(view->resourceSlices()[0].devices.size(), 2u);
  EXPECT_TRUE(view->knows(ClusterKind::DeviceTaintRule));
  EXPECT_TRUE(view->deviceTaintRules().empty());
}

INSTANTIATE_TEST_SUITE_P(Releases, VersionSkew,
                         ::testing::Values(std::make_pair(std::string("v1beta1"), true),
                                           std::make_pair(std::string("v1beta2"), false),
                                           std::make_pair(std::string("v1"), false)),
                         [](const auto& info) { return info.param.first; });

}  // namespace
}  // namespace aiadmit
