// The cluster view's API client against a stand-in API server that follows
// the list/watch contract (tests/support/api_standin.h) and serves recorded
// Node, ResourceSlice and DeviceClass objects (tests/golden/cluster): paged
// lists, watches from the list's resourceVersion, bookmarks, dropped and
// stalled streams, 410 Expired at watch start and as an ERROR event, a
// rotated token, a CRD that is not installed, and an API that cannot be
// reached. Every wait is on a condition with a deadline, and stop() ends
// every watch.
#include <gtest/gtest.h>

#include <algorithm>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

#include "tests/support/api_standin.h"
#include "tests/support/test_support.h"
#include "webhook/cluster/cluster_watcher.h"
#include "webhook/codec/yaml_json.h"

namespace aiadmit {
namespace {

using namespace testing;
using namespace std::chrono_literals;

constexpr const char* kNodes = "/api/v1/nodes";
constexpr const char* kSlices = "/apis/resource.k8s.io/v1/resourceslices";
constexpr const char* kClasses = "/apis/resource.k8s.io/v1/deviceclasses";
constexpr auto kDeadline = 20s;

std::vector<std::string> goldenObjects(const std::string& name) {
  std::vector<ManifestDocument> documents;
  std::string error;
  EXPECT_TRUE(
      parseManifests(readFile(sourceDir() + "/tests/golden/cluster/" + name), documents, &error))
      << error;
  std::vector<std::string> objects;
  for (const ManifestDocument& document : documents) {
    const JsonValue* items = member(document.json.get(), "items");
    if (isArray(items)) {
      for (const JsonValue& item : items->GetArray()) objects.push_back(toJson(item));
    } else {
      objects.push_back(toJson(*document.json));
    }
  }
  return objects;
}

std::string gpuNode(const std::string& name, int gpus) {
  return R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + name +
         R"("},"status":{"allocatable":{"nvidia.com/gpu":")" + std::to_string(gpus) + R"("}}})";
}

// Fails when `action` has not returned within `bound`, so that a hang shows
// as itself and not as ctest's timeout ten minutes later. The process ends
// there: the stuck thread still uses the test's objects.
void expectReturnsWithin(std::chrono::milliseconds bound, const std::string& what,
                         const std::function<void()>& action) {
  std::promise<void> returned;
  std::future<void> done = returned.get_future();
  std::thread runner([&] {
    action();
    returned.set_value();
  });
  if (done.wait_for(bound) != std::future_status::ready) {
    ADD_FAILURE() << what << " has not returned within " << bound.count() << " ms";
    std::fflush(nullptr);
    std::_Exit(1);
  }
  runner.join();
}

// The most nvidia.com/gpu a Node of the cache has allocatable; -1 while
// Nodes are not known. Read from the Nodes themselves: these tests watch
// Nodes alone, without the DeviceClasses that capacity answers also need.
int64_t largestGpuNode(const ClusterWatcher& watcher) {
  const auto view = watcher.view();
  if (!view->knows(ClusterKind::Node)) return -1;
  int64_t most = 0;
  for (const ClusterNode& node : view->nodes()) {
    const auto gpus = node.allocatable.find("nvidia.com/gpu");
    if (gpus != node.allocatable.end()) most = std::max(most, gpus->second);
  }
  return most;
}

class ClusterWatch : public ::testing::Test {
 protected:
  void SetUp() override {
    api_.serve(kNodes, "v1", "Node");
    api_.serve(kSlices, "resource.k8s.io/v1", "ResourceSlice");
    api_.serve(kClasses, "resource.k8s.io/v1", "DeviceClass");
    for (const char* file :
         {"node-k8s-device-plugin-issue-112.yaml", "node-k8s-device-plugin-issue-58.yaml"}) {
      for (const std::string& node : goldenObjects(file)) api_.put(kNodes, node);
    }
    for (const std::string& slice : goldenObjects("resourceslices-dra-example-driver.yaml")) {
      api_.put(kSlices, slice);
    }
    for (const std::string& deviceClass : goldenObjects("deviceclass-nvidia-gpu.yaml")) {
      api_.put(kClasses, deviceClass);
    }
    writeToken("token-1");
  }

  // The kubelet swaps a projected token in with one rename.
  void writeToken(const std::string& token) {
    writeFile(dir_.file("token.new"), token + "\n");
    ASSERT_EQ(std::rename(dir_.file("token.new").c_str(), dir_.file("token").c_str()), 0);
  }

  ApiServerConfig config() const {
    const ApiServerConfig config = api_.config(dir_.file("token"));
    return config;
  }

  ClusterWatchOptions options(std::vector<ClusterKind> kinds) {
    ClusterWatchOptions options;
    options.kinds = std::move(kinds);
    options.reflector.backoffInitial = 20ms;
    options.reflector.backoffMax = 200ms;
    options.reflector.stallTimeout = 500ms;
    options.reflector.watchTimeout = 3s;  // streams end (and start again) every 3 to 6 s
    options.reflector.absentRecheck = 200ms;
    options.reflector.pageSize = 1;                       // every list takes several pages
    options.client.tokenRefresh = std::chrono::hours(1);  // only a 401 re-reads it
    options.publishInterval = 5ms;
    options.log = [this](std::string_view level, const std::string& message) {
      std::lock_guard<std::mutex> lock(logMutex_);
      log_.push_back(std::string(level) + " " + message);
    };
    return options;
  }

  // `steady`: streams that neither the server ends nor the client drops as
  // stalled during the test, for tests that act on the open watches. The
  // stand-in sends nothing on a quiet watch, so with the 500 ms stall timeout
  // a stream would be replaced by a new one twice a second, and what a test
  // sends to the open watches could reach one the client has just left.
  std::unique_ptr<ClusterWatcher> started(std::vector<ClusterKind> kinds, bool steady = false) {
    ClusterWatchOptions chosen = options(std::move(kinds));
    if (steady) {
      chosen.reflector.watchTimeout = std::chrono::minutes(10);
      chosen.reflector.stallTimeout = std::chrono::minutes(10);
    }
    auto watcher = std::make_unique<ClusterWatcher>(config(), chosen);
    std::string error;
    EXPECT_TRUE(watcher->start(&error)) << error;
    EXPECT_TRUE(watcher->waitFor([](const ClusterWatchState& s) { return s.synced; }, kDeadline))
        << logText();
    return watcher;
  }

  std::string logText() {
    std::lock_guard<std::mutex> lock(logMutex_);
    std::string text;
    for (const std::string& line : log_) text += line + "\n";
    return text;
  }

  std::vector<ApiStandIn::Request> watchRequests(const std::string& path) const {
    std::vector<ApiStandIn::Request> out;
    for (const auto& request : api_.requests()) {
      if (request.path == path && request.params.count("watch") != 0) out.push_back(request);
    }
    return out;
  }

  static ResourceState stateOf(const ClusterWatcher& watcher, ClusterKind kind) {
    const ClusterWatchState state = watcher.state();
    const ResourceState* resource = state.resource(kind);
    return resource ? *resource : ResourceState{};
  }

  ApiStandIn api_;
  TempDir dir_;
  std::mutex logMutex_;
  std::vector<std::string> log_;
};

TEST_F(ClusterWatch, ListsInPagesThenWatchesFromTheListsVersion) {
  const uint64_t listedAt = api_.resourceVersion();
  auto watcher = started({ClusterKind::Node, ClusterKind::ResourceSlice, ClusterKind::DeviceClass,
                          ClusterKind::LocalQueue});
  const auto view = watcher->view();
  EXPECT_TRUE(view->synced());
  EXPECT_EQ(view->nodes().size(), 2u);
  ASSERT_EQ(view->resourceSlices().size(), 1u);
  EXPECT_EQ(view->resourceSlices()[0].devices.size(), 8u);
  EXPECT_EQ(view->deviceClass("gpu.nvidia.com")->extendedResourceName, "nvidia.com/gpu");
  EXPECT_EQ(largestGpuNode(*watcher), 1) << "allocatable, not the 16 of capacity";

  // Kueue is not installed: skipped, unknown, and no reason to stay unsynced.
  const ResourceState queues = stateOf(*watcher, ClusterKind::LocalQueue);
  EXPECT_TRUE(queues.absent);
  EXPECT_FALSE(queues.failing);
  EXPECT_EQ(view->hasLocalQueue("default", "user-queue"), Presence::Unknown);

  bool paged = false;
  for (const auto& request : api_.requests()) {
    if (request.path == kNodes && request.params.count("continue") != 0) {
      paged = request.params.at("continue").find("o=") == 0;  // the token came back intact
    }
  }
  EXPECT_TRUE(paged);
  ASSERT_TRUE(api_.waitForOpenWatches(1, kDeadline, kNodes));
  const auto watches = watchRequests(kNodes);
  ASSERT_FALSE(watches.empty());
  EXPECT_EQ(watches[0].params.at("resourceVersion"), std::to_string(listedAt));
  EXPECT_EQ(watches[0].params.at("allowWatchBookmarks"), "true");
  EXPECT_GT(std::stoi(watches[0].params.at("timeoutSeconds")), 0);
  EXPECT_EQ(watches[0].token, "token-1");

  api_.put(kNodes, gpuNode("gpu-node-8", 8));
  EXPECT_TRUE(
      watcher->waitFor([&](const auto&) { return largestGpuNode(*watcher) == 8; }, kDeadline));
  api_.put(kNodes, gpuNode("gpu-node-8", 4));
  EXPECT_TRUE(
      watcher->waitFor([&](const auto&) { return largestGpuNode(*watcher) == 4; }, kDeadline));
  api_.remove(kNodes, "gpu-node-8");
  EXPECT_TRUE(
      watcher->waitFor([&](const auto&) { return largestGpuNode(*watcher) == 1; }, kDeadline));
  EXPECT_EQ(stateOf(*watcher, ClusterKind::Node).lists, 1u);
  EXPECT_EQ(stateOf(*watcher, ClusterKind::Node).events, 3u);
}

TEST_F(ClusterWatch, ABookmarkMovesTheResourceVersionTheNextWatchStartsFrom) {
  auto watcher = started({ClusterKind::Node}, true);
  ASSERT_TRUE(api_.waitForOpenWatches(1, kDeadline, kNodes));
  for (int i = 0; i < 5; ++i) api_.advance();
  const std::string bookmarked = std::to_string(api_.resourceVersion());
  api_.bookmark(kNodes);
  EXPECT_TRUE(watcher->waitFor(
      [&](const auto&) {
        return stateOf(*watcher, ClusterKind::Node).resourceVersion == bookmarked;
      },
      kDeadline));
  api_.endWatches();  // as timeoutSeconds ends them
  EXPECT_TRUE(
      watcher->waitFor([&](const auto&) { return watchRequests(kNodes).size() >= 2; }, kDeadline));
  EXPECT_EQ(watchRequests(kNodes).back().params.at("resourceVersion"), bookmarked);
  const ResourceState nodes = stateOf(*watcher, ClusterKind::Node);
  EXPECT_GE(nodes.bookmarks, 1u);
  EXPECT_EQ(nodes.relists, 0u) << "an ended watch is resumed, not relisted";
}

TEST_F(ClusterWatch, ADroppedStreamResumesFromTheLastEvent) {
  auto watcher = started({ClusterKind::Node}, true);
  ASSERT_TRUE(api_.waitForOpenWatches(1, kDeadline, kNodes));
  api_.put(kNodes, gpuNode("before", 2));
  EXPECT_TRUE(
      watcher->waitFor([&](const auto&) { return largestGpuNode(*watcher) == 2; }, kDeadline));
  const std::string seen = std::to_string(api_.resourceVersion());
  api_.disconnectWatches();
  api_.put(kNodes, gpuNode("while-away", 3));
  EXPECT_TRUE(
      watcher->waitFor([&](const auto&) { return largestGpuNode(*watcher) == 3; }, kDeadline));
  const auto watches = watchRequests(kNodes);
  ASSERT_EQ(watches.size(), 2u);
  EXPECT_EQ(watches.back().params.at("resourceVersion"), seen);
  EXPECT_EQ(stateOf(*watcher, ClusterKind::Node).lists, 1u);
}

TEST_F(ClusterWatch, ExpiredAtWatchStartListsAgain) {
  auto watcher = started({ClusterKind::Node});
  ASSERT_TRUE(api_.waitForOpenWatches(1, kDeadline, kNodes));
  api_.advance();
  api_.compact();
  api_.disconnectWatches();
  // The watch again from the old version is refused with 410: only a new
  // list can catch up, and it does.
  EXPECT_TRUE(watcher->waitFor(
      [&](const auto&) { return stateOf(*watcher, ClusterKind::Node).relists == 1; }, kDeadline))
      << logText();
  api_.put(kNodes, gpuNode("after-compaction", 6));
  EXPECT_TRUE(
      watcher->waitFor([&](const auto&) { return largestGpuNode(*watcher) == 6; }, kDeadline))
      << logText();
  const ResourceState nodes = stateOf(*watcher, ClusterKind::Node);
  EXPECT_GE(nodes.expired, 1u);
  EXPECT_EQ(nodes.relists, 1u);
  bool refused = false;
  for (const auto& request : watchRequests(kNodes)) refused = refused || request.status == 410;
  EXPECT_TRUE(refused);
  EXPECT_TRUE(watcher->view()->synced());
}

TEST_F(ClusterWatch, AnExpiredErrorEventListsAgain) {
  auto watcher = started({ClusterKind::Node, ClusterKind::ResourceSlice}, true);
  ASSERT_TRUE(api_.waitForOpenWatches(2, kDeadline));
  api_.expireOpenWatches();
  EXPECT_TRUE(watcher->waitFor(
      [&](const auto& state) {
        return state.resource(ClusterKind::Node)->relists >= 1 &&
               state.resource(ClusterKind::ResourceSlice)->relists >= 1;
      },
      kDeadline));
  EXPECT_GE(watcher->state().relists(), 2u);
  EXPECT_GE(stateOf(*watcher, ClusterKind::Node).expired, 1u);
  EXPECT_EQ(watcher->view()->resourceSlices().size(), 1u);
}

TEST_F(ClusterWatch, AStalledStreamIsDroppedAndWatchedAgain) {
  auto watcher = started({ClusterKind::Node});
  ASSERT_TRUE(api_.waitForOpenWatches(1, kDeadline, kNodes));
  api_.stallNextWatches(1);
  api_.endWatches();
  // The next watch answers and then says nothing: not even the next event.
  EXPECT_TRUE(
      watcher->waitFor([&](const auto&) { return watchRequests(kNodes).size() >= 2; }, kDeadline));
  api_.put(kNodes, gpuNode("behind-the-stall", 5));
  EXPECT_TRUE(watcher->waitFor(
      [&](const auto&) {
        return stateOf(*watcher, ClusterKind::Node).stalls >= 1 && largestGpuNode(*watcher) == 5;
      },
      kDeadline))
      << logText();
  EXPECT_EQ(stateOf(*watcher, ClusterKind::Node).lists, 1u)
      << "a stall resumes, it does not relist";
}

TEST_F(ClusterWatch, ARotatedTokenIsReadAgainAfterA401) {
  auto watcher = started({ClusterKind::Node});
  ASSERT_TRUE(api_.waitForOpenWatches(1, kDeadline, kNodes));
  writeToken("token-2");
  api_.acceptTokens({"token-2"});
  api_.endWatches();
  auto answered = [&](const std::string& token, int status) {
    for (const auto& request : api_.requests()) {
      if (request.token == token && request.status == status) return true;
    }
    return false;
  };
  // The next watch goes out with the token read an hour ago, is refused,
  // and goes out again at once with the one on disk.
  EXPECT_TRUE(watcher->waitFor([&](const auto&) { return answered("token-2", 200); }, kDeadline))
      << logText();
  EXPECT_TRUE(answered("token-1", 401));
  api_.put(kNodes, gpuNode("after-rotation", 7));
  EXPECT_TRUE(
      watcher->waitFor([&](const auto&) { return largestGpuNode(*watcher) == 7; }, kDeadline));
  EXPECT_EQ(stateOf(*watcher, ClusterKind::Node).lists, 1u) << "a rotated token needs no relist";
  const ClusterWatchState state = watcher->state();
  EXPECT_GE(state.unauthorized, 1u);
  EXPECT_EQ(state.tokenReads, 2u) << "read at start, and again after the 401 only";
}

TEST_F(ClusterWatch, AnInstalledQueueCrdIsReadInTheVersionItServes) {
  api_.serve("/apis/kueue.x-k8s.io/v1beta1/localqueues", "kueue.x-k8s.io/v1beta1", "LocalQueue");
  api_.put("/apis/kueue.x-k8s.io/v1beta1/localqueues",
           R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"LocalQueue",
               "metadata":{"name":"user-queue","namespace":"team-a"},
               "spec":{"clusterQueue":"cluster-queue"}})");
  auto watcher = started({ClusterKind::LocalQueue, ClusterKind::ResourceClaimTemplate});
  EXPECT_EQ(stateOf(*watcher, ClusterKind::LocalQueue).apiVersion, "kueue.x-k8s.io/v1beta1");
  EXPECT_EQ(watcher->view()->hasLocalQueue("team-a", "user-queue"), Presence::Yes);
  EXPECT_EQ(watcher->view()->hasLocalQueue("team-a", "other"), Presence::No);
  // No version of resourceclaimtemplates is served: DRA is off, so none exist.
  EXPECT_TRUE(stateOf(*watcher, ClusterKind::ResourceClaimTemplate).absent);
  EXPECT_EQ(watcher->view()->hasClaimTemplate("team-a", "gpu"), Presence::No);
}

TEST_F(ClusterWatch, StopEndsWatchesTheServerKeepsOpenSilently) {
  auto watcher = started({ClusterKind::Node, ClusterKind::ResourceSlice}, true);
  ASSERT_TRUE(api_.waitForOpenWatches(1, kDeadline, kNodes));
  ASSERT_TRUE(api_.waitForOpenWatches(1, kDeadline, kSlices));
  // Nothing ends these streams for ten minutes but stop().
  expectReturnsWithin(5000ms, "stop() with silent watches open", [&] { watcher->stop(); });
}

TEST_F(ClusterWatch, StopRightAfterSyncEndsTheWatchesBeingOpened) {
  for (int round = 0; round < 5; ++round) {
    auto watcher = started({ClusterKind::Node, ClusterKind::ResourceSlice}, true);
    expectReturnsWithin(5000ms, "stop() as the watches open", [&] { watcher->stop(); });
  }
}

TEST_F(ClusterWatch, AWaitWhoseConditionNeverHoldsEndsAtItsDeadline) {
  auto watcher = started({ClusterKind::Node}, true);
  expectReturnsWithin(5000ms, "waitFor() past its deadline", [&] {
    EXPECT_FALSE(watcher->waitFor([](const auto&) { return false; }, 100ms));
  });
  watcher->stop();
  expectReturnsWithin(5000ms, "waitFor() on a stopped watcher", [&] {
    EXPECT_FALSE(watcher->waitFor([](const auto&) { return false; }, kDeadline));
  });
}

TEST_F(ClusterWatch, AnExpiredContinueTokenRestartsTheList) {
  api_.expireNextContinue();
  auto watcher = started({ClusterKind::Node});
  EXPECT_EQ(watcher->view()->nodes().size(), 2u);
  EXPECT_GE(stateOf(*watcher, ClusterKind::Node).expired, 1u);
}

TEST_F(ClusterWatch, WhenTheApiRefusesForLongTheViewFallsBack) {
  ClusterWatchOptions fast = options({ClusterKind::Node});
  fast.staleAfter = 300ms;
  ClusterWatcher watcher(config(), fast);
  std::string error;
  ASSERT_TRUE(watcher.start(&error)) << error;
  ASSERT_TRUE(watcher.waitFor([](const auto& state) { return state.synced; }, kDeadline));
  ASSERT_TRUE(watcher.view()->knows(ClusterKind::Node));

  api_.acceptTokens({});
  api_.endWatches();
  EXPECT_TRUE(watcher.waitFor([](const auto& state) { return !state.synced; }, kDeadline));
  EXPECT_FALSE(watcher.view()->synced());
  EXPECT_FALSE(watcher.view()->knows(ClusterKind::Node));
  EXPECT_FALSE(watcher.view()->largestNodeForResource("nvidia.com/gpu", Placement{}));
  const ResourceState refused = stateOf(watcher, ClusterKind::Node);
  EXPECT_TRUE(refused.failing);
  EXPECT_NE(refused.lastError.find("401"), std::string::npos) << refused.lastError;

  api_.acceptTokens({"token-1"});
  EXPECT_TRUE(watcher.waitFor([](const auto& state) { return state.synced; }, kDeadline));
  EXPECT_TRUE(watcher.view()->knows(ClusterKind::Node));
}

TEST(ClusterWatchUnreachable, NoApiMeansNothingIsKnown) {
  // A port that was free a moment ago: nothing listens there.
  int port;
  {
    ApiStandIn gone;
    port = gone.port();
  }
  ApiServerConfig config;
  config.host = "127.0.0.1";
  config.port = port;
  config.token = "token-1";
  config.caPem = readFile(devCertificates().file("ca.crt"));
  ClusterWatchOptions options;
  options.kinds = {ClusterKind::Node, ClusterKind::PriorityClass};
  options.reflector.backoffInitial = 10ms;
  options.reflector.backoffMax = 50ms;
  ClusterWatcher watcher(config, options);
  std::string error;
  ASSERT_TRUE(watcher.start(&error)) << error;
  EXPECT_TRUE(watcher.waitFor(
      [](const ClusterWatchState& state) {
        return state.resource(ClusterKind::Node)->failures >= 3 &&
               state.resource(ClusterKind::PriorityClass)->failures >= 3;
      },
      kDeadline));
  const ClusterWatchState state = watcher.state();
  EXPECT_FALSE(state.synced);
  EXPECT_FALSE(state.resource(ClusterKind::Node)->lastError.empty());
  EXPECT_EQ(state.resource(ClusterKind::Node)->lists, 0u);
  EXPECT_FALSE(watcher.view()->synced());
  EXPECT_EQ(watcher.view()->hasPriorityClass("ai-training"), Presence::Unknown);
}

TEST(ClusterWatchConfig, RefusesCredentialsItCannotUse) {
  ApiServerConfig config;
  config.host = "127.0.0.1";
  config.caPem = "not a certificate";
  ClusterWatcher watcher(config, ClusterWatchOptions{});
  std::string error;
  EXPECT_FALSE(watcher.start(&error));
  EXPECT_NE(error.find("certificate authority"), std::string::npos) << error;
}

}  // namespace
}  // namespace aiadmit
