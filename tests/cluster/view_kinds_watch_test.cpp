// The kinds that only say what exists, kept from the API as the other kinds
// are: RuntimeClasses listed and watched from node.k8s.io/v1, and a cluster
// that does not serve them is an error (every supported cluster does), not
// "none exist"; DeviceTaintRules, which a cluster before 1.37 does not serve
// and then has none of; PodGroups, in the version of scheduling.k8s.io that
// serves them, and unknown where the group serves none that aiadmit reads.
// One binary beside the API servers a platform team runs at once: each kind
// is read in the newest version the server serves (DRA in resource.k8s.io/v1
// on 1.34 and later, v1beta2 or v1beta1 before).
#include <gtest/gtest.h>

#include <cstdio>

#include "tests/support/api_standin.h"
#include "tests/support/test_support.h"
#include "webhook/cluster/cluster_watcher.h"

namespace aiadmit {
namespace {

using namespace testing;
using namespace std::chrono_literals;

constexpr const char* kRuntimeClasses = "/apis/node.k8s.io/v1/runtimeclasses";
constexpr auto kDeadline = 20s;

class ViewKindsWatch : public ::testing::Test {
 protected:
  void SetUp() override { writeFile(dir_.file("token"), "token-1\n"); }

  std::unique_ptr<ClusterWatcher> start(std::vector<ClusterKind> kinds) {
    const ApiServerConfig config = api_.config(dir_.file("token"));
    ClusterWatchOptions options;
    options.kinds = std::move(kinds);
    options.reflector.backoffInitial = 20ms;
    options.reflector.backoffMax = 200ms;
    options.reflector.absentRecheck = 200ms;
    options.publishInterval = 5ms;
    auto watcher = std::make_unique<ClusterWatcher>(config, options);
    std::string error;
    EXPECT_TRUE(watcher->start(&error)) << error;
    return watcher;
  }

  ApiStandIn api_;
  TempDir dir_;
};

std::string runtimeClass(const std::string& name, const std::string& toleratedKey) {
  return R"({"apiVersion":"node.k8s.io/v1","kind":"RuntimeClass","metadata":{"name":")" + name +
         R"("},"handler":"nvidia","scheduling":{"nodeSelector":{"pool":"h100"},)"
         R"("tolerations":[{"key":")" +
         toleratedKey + R"(","operator":"Exists","effect":"NoSchedule"}]}})";
}

TEST_F(ViewKindsWatch, RuntimeClassesAreListedAndWatched) {
  api_.serve(kRuntimeClasses, "node.k8s.io/v1", "RuntimeClass");
  api_.put(kRuntimeClasses, runtimeClass("nvidia", "nvidia.com/gpu"));
  auto watcher = start({ClusterKind::RuntimeClass});
  ASSERT_TRUE(watcher->waitFor([](const ClusterWatchState& s) { return s.synced; }, kDeadline));
  const auto view = watcher->view();
  EXPECT_EQ(view->hasRuntimeClass("nvidia"), Presence::Yes);
  EXPECT_EQ(view->hasRuntimeClass("kata"), Presence::No);
  ASSERT_NE(view->runtimeClass("nvidia"), nullptr);
  EXPECT_EQ(view->runtimeClass("nvidia")->nodeSelector.at("pool"), "h100");
  ASSERT_EQ(view->runtimeClass("nvidia")->tolerations.size(), 1u);

  api_.put(kRuntimeClasses, runtimeClass("nvidia", "dedicated"));
  EXPECT_TRUE(watcher->waitFor(
      [&](const auto&) {
        const RuntimeClassRecord* record = watcher->view()->runtimeClass("nvidia");
        return record != nullptr && record->tolerations.at(0).key == "dedicated";
      },
      kDeadline));
}

TEST_F(ViewKindsWatch, AClusterThatServesNoRuntimeClassesIsFailingNotEmpty) {
  auto watcher = start({ClusterKind::RuntimeClass});
  ASSERT_TRUE(watcher->waitFor(
      [](const ClusterWatchState& s) {
        const ResourceState* state = s.resource(ClusterKind::RuntimeClass);
        return state != nullptr && state->failing;
      },
      kDeadline));
  EXPECT_FALSE(watcher->state().synced);
  EXPECT_EQ(watcher->view()->hasRuntimeClass("nvidia"), Presence::Unknown);
}

TEST_F(ViewKindsWatch, APublishKeepsThePartsOfTheKindsThatDidNotChange) {
  constexpr const char* kNodes = "/api/v1/nodes";
  constexpr const char* kPriorityClasses = "/apis/scheduling.k8s.io/v1/priorityclasses";
  api_.serve(kNodes, "v1", "Node");
  api_.serve(kPriorityClasses, "scheduling.k8s.io/v1", "PriorityClass");
  api_.put(kNodes, R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"gpu-a"}})");
  auto watcher = start({ClusterKind::Node, ClusterKind::PriorityClass});
  ASSERT_TRUE(watcher->waitFor([](const ClusterWatchState& s) { return s.synced; }, kDeadline));
  const auto before = watcher->view();
  api_.put(kPriorityClasses, R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass",)"
                             R"("metadata":{"name":"ai-batch"},"value":1000})");
  ASSERT_TRUE(watcher->waitFor(
      [&](const auto&) { return watcher->view()->hasPriorityClass("ai-batch") == Presence::Yes; },
      kDeadline));
  const auto after = watcher->view();
  // The Nodes did not change: the new view holds the old one's Node part.
  EXPECT_TRUE(after->sharesPart(ClusterKind::Node, *before));
  EXPECT_FALSE(after->sharesPart(ClusterKind::PriorityClass, *before));
  EXPECT_EQ(&after->nodes()[0], &before->nodes()[0]) << "no Node was copied";
}

// serve --waiting-metrics watches DeviceTaintRules: listed and watched from
// resource.k8s.io/v1 (1.37), and none on a cluster that serves none.
TEST_F(ViewKindsWatch, DeviceTaintRulesAreListedAndWatchedAndNoneWhereNotServed) {
  constexpr const char* kRules = "/apis/resource.k8s.io/v1/devicetaintrules";
  const auto rule = [](const std::string& effect) {
    return R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceTaintRule",)"
           R"("metadata":{"name":"firmware-upgrade"},"spec":{"deviceSelector":)"
           R"({"driver":"gpu.nvidia.com"},"taint":{"key":"example.com/maintenance",)"
           R"("effect":")" +
           effect + R"("}}})";
  };
  api_.serve(kRules, "resource.k8s.io/v1", "DeviceTaintRule");
  api_.put(kRules, rule("NoSchedule"));
  auto watcher = start({ClusterKind::DeviceTaintRule});
  ASSERT_TRUE(watcher->waitFor([](const ClusterWatchState& s) { return s.synced; }, kDeadline));
  ASSERT_EQ(watcher->view()->deviceTaintRules().size(), 1u);
  EXPECT_TRUE(watcher->view()->deviceTaintRules()[0].appliesTo("gpu.nvidia.com", "a", "gpu-0"));
  api_.put(kRules, rule("None"));
  EXPECT_TRUE(watcher->waitFor(
      [&](const auto&) {
        const auto rules = watcher->view()->deviceTaintRules();
        return rules.size() == 1 && rules[0].taint.effect == "None";
      },
      kDeadline));
}

TEST_F(ViewKindsWatch, AClusterThatServesNoDeviceTaintRulesHasNone) {
  auto watcher = start({ClusterKind::DeviceTaintRule});
  ASSERT_TRUE(watcher->waitFor([](const ClusterWatchState& s) { return s.synced; }, kDeadline));
  EXPECT_TRUE(watcher->view()->knows(ClusterKind::DeviceTaintRule));
  EXPECT_TRUE(watcher->view()->deviceTaintRules().empty());
}

std::string slice(const std::string& apiVersion, bool basic) {
  const std::string device = basic ? R"({"name":"gpu-0","basic":{}},{"name":"gpu-1","basic":{}})"
                                   : R"({"name":"gpu-0"},{"name":"gpu-1"})";
  return R"({"apiVersion":")" + apiVersion +
         R"(","kind":"ResourceSlice","metadata":{"name":"node-a-gpu"},)"
         R"("spec":{"driver":"gpu.nvidia.com","nodeName":"node-a",)"
         R"("pool":{"name":"node-a","generation":1,"resourceSliceCount":1},"devices":[)" +
         device + "]}}";
}

class VersionSkew : public ViewKindsWatch,
                    public ::testing::WithParamInterface<std::pair<std::string, bool>> {};

// A server that serves resource.k8s.io in this version alone, with no
// DeviceTaintRules: 1.32 (v1beta1), 1.33 (v1beta2 beside v1beta1), 1.34 (v1).
TEST_P(VersionSkew, SlicesAreReadInTheServedVersionAndTaintRulesAreNone) {
  const auto& [version, basic] = GetParam();
  const std::string path = "/apis/resource.k8s.io/" + version + "/resourceslices";
  api_.serve(path, "resource.k8s.io/" + version, "ResourceSlice");
  api_.put(path, slice("resource.k8s.io/" + version, basic));
  auto watcher = start({ClusterKind::ResourceSlice, ClusterKind::DeviceTaintRule});
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

// serve --waiting-metrics watches PodGroups: from the first version the
// group serves of v1beta1 (1.37), v1alpha3, v1alpha2 (1.36).
TEST_F(ViewKindsWatch, PodGroupsAreListedAndWatchedInTheVersionServed) {
  constexpr const char* kGroups = "/apis/scheduling.k8s.io/v1alpha2/podgroups";
  const auto group = [](int minCount) {
    return R"({"apiVersion":"scheduling.k8s.io/v1alpha2","kind":"PodGroup",)"
           R"("metadata":{"name":"train","namespace":"ml"},)"
           R"("spec":{"schedulingPolicy":{"gang":{"minCount":)" +
           std::to_string(minCount) + "}}}}";
  };
  api_.serve(kGroups, "scheduling.k8s.io/v1alpha2", "PodGroup");
  api_.put(kGroups, group(4));
  auto watcher = start({ClusterKind::PodGroup});
  ASSERT_TRUE(watcher->waitFor([](const ClusterWatchState& s) { return s.synced; }, kDeadline));
  const PodGroupRecord* train = watcher->view()->podGroup("ml", "train");
  ASSERT_NE(train, nullptr);
  EXPECT_EQ(train->minCount, std::optional<int64_t>(4));
  api_.put(kGroups, group(2));
  EXPECT_TRUE(watcher->waitFor(
      [&](const auto&) {
        const PodGroupRecord* now = watcher->view()->podGroup("ml", "train");
        return now != nullptr && now->minCount == std::optional<int64_t>(2);
      },
      kDeadline));
}

// 1.35 serves scheduling.k8s.io in v1 (and v1alpha1's Workloads) only: no
// PodGroup can be read, so none is known, not "none exist".
TEST_F(ViewKindsWatch, AGroupServedInNoVersionAiadmitReadsLeavesPodGroupsUnknown) {
  api_.serve("/apis/scheduling.k8s.io/v1/priorityclasses", "scheduling.k8s.io/v1", "PriorityClass");
  auto watcher = start({ClusterKind::PodGroup});
  ASSERT_TRUE(watcher->waitFor([](const ClusterWatchState& s) { return s.synced; }, kDeadline));
  EXPECT_FALSE(watcher->view()->knows(ClusterKind::PodGroup));
  const ClusterWatchState state = watcher->state();
  ASSERT_NE(state.resource(ClusterKind::PodGroup), nullptr);
  EXPECT_TRUE(state.resource(ClusterKind::PodGroup)->unserved);
}

}  // namespace
}  // namespace aiadmit
