// What the cluster view does when the API cannot give it a current answer:
// ERROR events other than 410 (a CRD's conversion webhook failing, an etcd
// restored to an earlier revision) make the kind unknown at once and list it
// again with a backoff that grows across reconnects; a group served only in
// versions aiadmit does not read is unknown; Retry-After is waited; the first
// list comes from the watch cache; and the pages of one list share one TLS
// connection. Against the stand-in API server (tests/support/api_standin.h);
// every wait is on a condition with a deadline, and time is measured between
// the requests the stand-in saw.
#include <gtest/gtest.h>

#include <algorithm>

#include <mutex>
#include <set>

#include "tests/support/api_standin.h"
#include "tests/support/test_support.h"
#include "webhook/cluster/cluster_watcher.h"
#include "webhook/serving/cluster_view_metrics.h"

namespace aiadmit {
namespace {

using namespace testing;
using namespace std::chrono_literals;

constexpr const char* kNodes = "/api/v1/nodes";
constexpr const char* kTemplatesV1 = "/apis/resource.k8s.io/v1/resourceclaimtemplates";
constexpr const char* kTemplatesV1alpha3 = "/apis/resource.k8s.io/v1alpha3/resourceclaimtemplates";
constexpr const char* kConversionFailed =
    "conversion webhook for example.com/v1, Kind=Widget failed: connection refused";
constexpr auto kDeadline = 20s;

std::string gpuNode(const std::string& name, int gpus) {
  return R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + name +
         R"("},"status":{"allocatable":{"nvidia.com/gpu":")" + std::to_string(gpus) + R"("}}})";
}

std::string claimTemplate(const std::string& apiVersion) {
  return R"({"apiVersion":")" + apiVersion +
         R"(","kind":"ResourceClaimTemplate","metadata":{"name":"gpu","namespace":"team-a"},)"
         R"("spec":{"spec":{"devices":{"requests":[{"name":"gpu","exactly":)"
         R"({"deviceClassName":"gpu.nvidia.com","count":1}}]}}}})";
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

std::chrono::milliseconds between(const ApiStandIn::Request& first,
                                  const ApiStandIn::Request& second) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(second.at - first.at);
}

class ClusterWatchErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    api_.serve(kNodes, "v1", "Node");
    for (int i = 0; i < 6; ++i) api_.put(kNodes, gpuNode("node-" + std::to_string(i), 1));
    writeFile(dir_.file("token"), "token-1\n");
  }

  ClusterWatchOptions options(std::vector<ClusterKind> kinds) {
    ClusterWatchOptions options;
    options.kinds = std::move(kinds);
    options.reflector.backoffInitial = 20ms;
    options.reflector.backoffMax = 200ms;
    // Nothing but the test ends a stream: what it sends reaches the watch it means.
    options.reflector.watchTimeout = std::chrono::minutes(10);
    options.reflector.stallTimeout = std::chrono::minutes(10);
    options.reflector.absentRecheck = 200ms;
    options.reflector.pageSize = 1;
    options.publishInterval = 5ms;
    options.log = [this](std::string_view level, const std::string& message) {
      std::lock_guard<std::mutex> lock(logMutex_);
      log_.push_back(std::string(level) + " " + message);
    };
    return options;
  }

  std::unique_ptr<ClusterWatcher> start(const ClusterWatchOptions& chosen) {
    const ApiServerConfig config = api_.config(dir_.file("token"));
    auto watcher = std::make_unique<ClusterWatcher>(config, chosen);
    std::string error;
    EXPECT_TRUE(watcher->start(&error)) << error;
    return watcher;
  }

  std::unique_ptr<ClusterWatcher> started(std::vector<ClusterKind> kinds) {
    auto watcher = start(options(std::move(kinds)));
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

  size_t logLines(const std::string& startingWith) {
    std::lock_guard<std::mutex> lock(logMutex_);
    size_t count = 0;
    for (const std::string& line : log_) count += line.rfind(startingWith, 0) == 0;
    return count;
  }

  std::vector<ApiStandIn::Request> requestsOf(const std::string& path, bool watches) const {
    std::vector<ApiStandIn::Request> out;
    for (const auto& request : api_.requests()) {
      if (request.path == path && (request.params.count("watch") != 0) == watches) {
        out.push_back(request);
      }
    }
    return out;
  }

  static ResourceState stateOf(const ClusterWatcher& watcher, ClusterKind kind) {
    const ClusterWatchState state = watcher.state();
    const ResourceState* resource = state.resource(kind);
    return resource ? *resource : ResourceState{};
  }

  static std::string metrics(const ClusterWatcher& watcher) {
    std::string out;
    const ClusterWatchState state = watcher.state();
    renderClusterViewMetrics(&state, out);
    return out;
  }

  ApiStandIn api_;
  TempDir dir_;
  std::mutex logMutex_;
  std::vector<std::string> log_;
};

TEST_F(ClusterWatchErrors, AnErrorEventMakesTheKindUnknownAtOnce) {
  auto watcher = started({ClusterKind::Node});
  ASSERT_TRUE(api_.waitForOpenWatches(1, kDeadline, kNodes));
  ASSERT_TRUE(watcher->view()->knows(ClusterKind::Node));
  // The conversion webhook goes away: watches and lists fail alike.
  api_.refuseNextLists(kNodes, -1, 500, "InternalError", kConversionFailed);
  api_.errorNextWatches(kNodes, -1, 500, "InternalError", kConversionFailed);
  api_.sendErrorToOpenWatches(500, "InternalError", kConversionFailed);

  // Unknown now, although staleAfter (2 minutes) is far off.
  EXPECT_TRUE(watcher->waitFor(
      [&](const auto&) { return !watcher->view()->knows(ClusterKind::Node); }, kDeadline))
      << logText();
  EXPECT_FALSE(watcher->view()->largestNodeForResource("nvidia.com/gpu", Placement{}));
  EXPECT_TRUE(watcher->waitFor(
      [](const ClusterWatchState& s) { return s.resource(ClusterKind::Node)->failures >= 4; },
      kDeadline));
  const ResourceState nodes = stateOf(*watcher, ClusterKind::Node);
  EXPECT_EQ(nodes.errorEvents, 1u);
  EXPECT_TRUE(nodes.failing);
  EXPECT_FALSE(nodes.synced);
  EXPECT_FALSE(watcher->state().synced);
  EXPECT_EQ(logLines("warn Node: watch ERROR event: HTTP 500 InternalError: conversion webhook"),
            1u)
      << logText();
  EXPECT_EQ(logLines("warn Node: list: HTTP 500 InternalError"), 1u) << "once, not per retry:\n"
                                                                     << logText();
  const std::string text = metrics(*watcher);
  EXPECT_NE(text.find("aiadmit_cluster_view_watch_errors_total{resource=\"nodes\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("aiadmit_cluster_view_resource_synced{resource=\"nodes\"} 0\n"),
            std::string::npos);

  // Fixed: listed again, and known once the new watch holds (its bookmark).
  api_.repair(kNodes);
  ASSERT_TRUE(api_.waitForOpenWatches(1, kDeadline, kNodes)) << logText();
  EXPECT_FALSE(watcher->state().synced);
  api_.bookmark(kNodes);
  EXPECT_TRUE(watcher->waitFor(
      [&](const ClusterWatchState& s) { return s.synced && largestGpuNode(*watcher) == 1; },
      kDeadline))
      << logText();
}

TEST_F(ClusterWatchErrors, ErrorEventsOnEveryWatchListAgainWithABackoffThatGrows) {
  constexpr int kErrors = 5;
  ClusterWatchOptions chosen = options({ClusterKind::Node});
  chosen.reflector.backoffMax = 2s;  // no cap within the five
  // Each watch the server takes sends an ERROR at once: reconnecting works,
  // watching does not.
  api_.errorNextWatches(kNodes, kErrors, 500, "InternalError", kConversionFailed);
  auto watcher = start(chosen);
  EXPECT_TRUE(watcher->waitFor(
      [](const ClusterWatchState& s) {
        const ResourceState* nodes = s.resource(ClusterKind::Node);
        return nodes->errorEvents == kErrors && nodes->lists == kErrors + 1;
      },
      kDeadline))
      << logText();
  ASSERT_TRUE(api_.waitForOpenWatches(1, kDeadline, kNodes));
  // Listed, but unknown until a watch holds: each one so far failed at once.
  EXPECT_FALSE(stateOf(*watcher, ClusterKind::Node).synced);
  EXPECT_TRUE(watcher->waitFor(
      [&](const auto&) { return !watcher->view()->knows(ClusterKind::Node); }, kDeadline));
  api_.bookmark(kNodes);
  EXPECT_TRUE(watcher->waitFor([](const ClusterWatchState& s) { return s.synced; }, kDeadline));

  const auto lists = requestsOf(kNodes, false);
  const auto watches = requestsOf(kNodes, true);
  ASSERT_GE(watches.size(), static_cast<size_t>(kErrors));
  std::vector<std::chrono::milliseconds> gaps;
  for (int i = 0; i < kErrors; ++i) {
    // The first page of the list after the i-th failed watch.
    for (const auto& list : lists) {
      if (list.at > watches[i].at && list.params.count("continue") == 0) {
        gaps.push_back(between(watches[i], list));
        break;
      }
    }
  }
  ASSERT_EQ(gaps.size(), static_cast<size_t>(kErrors));
  for (int i = 0; i < kErrors; ++i) {
    // Doubling from 20 ms, each wait at least half its step: 10, 20, 40, 80, 160 ms.
    EXPECT_GE(gaps[i].count(), 10 << i) << "after ERROR " << i + 1;
  }
  EXPECT_GT(gaps.back(), gaps.front());
  const ResourceState nodes = stateOf(*watcher, ClusterKind::Node);
  EXPECT_EQ(nodes.relists, static_cast<uint64_t>(kErrors));
  EXPECT_EQ(logLines("warn Node: watch ERROR event"), 1u) << logText();
  // Not once per cycle: out of date once, and synced (at start, if the first
  // publish came before the first ERROR) and once a watch held.
  EXPECT_LE(logLines("warn cluster view: out of date"), 1u) << logText();
  EXPECT_LE(logLines("info cluster view: synced"), 2u) << logText();
}

TEST_F(ClusterWatchErrors, AnEtcdRestoreIsListedAgainFromEtcd) {
  auto watcher = started({ClusterKind::Node});
  ASSERT_TRUE(api_.waitForOpenWatches(1, kDeadline, kNodes));
  const uint64_t seen = api_.resourceVersion();
  // Back to a backup taken three writes ago: every version the watcher knows
  // is ahead of the server, and the watch cache says so.
  api_.restore(seen - 3);
  EXPECT_TRUE(watcher->waitFor(
      [](const ClusterWatchState& s) {
        const ResourceState* nodes = s.resource(ClusterKind::Node);
        return nodes->consistentLists == 1 && nodes->lists == 2;
      },
      kDeadline))
      << logText();
  ASSERT_TRUE(api_.waitForOpenWatches(1, kDeadline, kNodes));
  api_.put(kNodes, gpuNode("after-restore", 6));
  EXPECT_TRUE(watcher->waitFor(
      [&](const auto& s) { return s.synced && largestGpuNode(*watcher) == 6; }, kDeadline))
      << logText();

  // The relist asked for the version it had seen, was told it is too large,
  // and listed from etcd (no resourceVersion) instead.
  const auto lists = requestsOf(kNodes, false);
  bool tooLarge = false;
  bool fromEtcd = false;
  for (const auto& list : lists) {
    const auto version = list.params.find("resourceVersion");
    if (version != list.params.end() && version->second == std::to_string(seen)) {
      tooLarge = tooLarge || list.status == 504;
    }
    fromEtcd = fromEtcd || (tooLarge && version == list.params.end() && list.status == 200);
  }
  EXPECT_TRUE(tooLarge);
  EXPECT_TRUE(fromEtcd);
  EXPECT_EQ(stateOf(*watcher, ClusterKind::Node).errorEvents, 1u);
  EXPECT_EQ(stateOf(*watcher, ClusterKind::Node).resourceVersion,
            std::to_string(api_.resourceVersion()));
}

TEST_F(ClusterWatchErrors, AGroupServedOnlyInAVersionAiadmitCannotReadIsUnknown) {
  // A 1.31 cluster: DRA is there, in v1alpha3 alone.
  api_.serve(kTemplatesV1alpha3, "resource.k8s.io/v1alpha3", "ResourceClaimTemplate");
  api_.put(kTemplatesV1alpha3, claimTemplate("resource.k8s.io/v1alpha3"));
  auto watcher = start(options({ClusterKind::Node, ClusterKind::ResourceClaimTemplate}));
  auto discoveries = [&] { return requestsOf("/apis/resource.k8s.io", false).size(); };
  // Looked at again every absentRecheck, and said once.
  EXPECT_TRUE(watcher->waitFor(
      [&](const ClusterWatchState& s) {
        return s.resource(ClusterKind::ResourceClaimTemplate)->unserved && discoveries() >= 3;
      },
      kDeadline))
      << logText();
  const ResourceState templates = stateOf(*watcher, ClusterKind::ResourceClaimTemplate);
  EXPECT_EQ(templates.servedVersions, "v1alpha3");
  EXPECT_FALSE(templates.failing);
  EXPECT_FALSE(templates.absent);
  EXPECT_EQ(watcher->view()->hasClaimTemplate("team-a", "gpu"), Presence::Unknown);
  EXPECT_EQ(watcher->view()->hasClaimTemplate("team-a", "other"), Presence::Unknown)
      << "not \"listed, none\"";
  EXPECT_TRUE(watcher->view()->knows(ClusterKind::Node));
  EXPECT_TRUE(watcher->waitFor([](const ClusterWatchState& s) { return s.synced; }, kDeadline))
      << "nothing to wait for: the view is as synced as it can be";
  EXPECT_TRUE(watcher->view()->synced());
  EXPECT_EQ(logLines("warn ResourceClaimTemplate: resource.k8s.io is served in v1alpha3 only"), 1u)
      << logText();
  for (const auto& request : api_.requests()) {
    EXPECT_EQ(request.path.find("/apis/resource.k8s.io/v1"), std::string::npos)
        << "discovery, not a 404 per version: " << request.path;
  }
  EXPECT_NE(metrics(*watcher).find(
                "aiadmit_cluster_view_resource_unserved{resource=\"resourceclaimtemplates\"} 1\n"),
            std::string::npos);

  // The cluster is upgraded: v1 is found at the next look.
  api_.serve(kTemplatesV1, "resource.k8s.io/v1", "ResourceClaimTemplate");
  api_.put(kTemplatesV1, claimTemplate("resource.k8s.io/v1"));
  EXPECT_TRUE(watcher->waitFor(
      [&](const ClusterWatchState& s) {
        return s.synced && watcher->view()->hasClaimTemplate("team-a", "gpu") == Presence::Yes;
      },
      kDeadline))
      << logText();
  EXPECT_EQ(stateOf(*watcher, ClusterKind::ResourceClaimTemplate).apiVersion, "resource.k8s.io/v1");
  EXPECT_EQ(watcher->view()->hasClaimTemplate("team-a", "other"), Presence::No);
}

TEST_F(ClusterWatchErrors, RetryAfterIsWaitedBeforeThePageIsAskedForAgain) {
  ClusterWatchOptions chosen = options({ClusterKind::Node});
  chosen.reflector.backoffMax = 5s;
  api_.refuseNextLists(kNodes, 1, 429, "TooManyRequests", "too many requests, please try again", 1);
  auto watcher = start(chosen);
  ASSERT_TRUE(watcher->waitFor([](const ClusterWatchState& s) { return s.synced; }, kDeadline))
      << logText();
  const auto lists = requestsOf(kNodes, false);
  ASSERT_GE(lists.size(), 2u);
  EXPECT_EQ(lists[0].status, 429);
  const auto gap = between(lists[0], lists[1]);
  EXPECT_GE(gap.count(), 1000) << "Retry-After: 1, not the 20 ms backoff";
  EXPECT_LT(gap.count(), 4000);
  EXPECT_EQ(stateOf(*watcher, ClusterKind::Node).throttled, 1u);
}

TEST_F(ClusterWatchErrors, RetryAfterIsBoundedByTheLongestBackoff) {
  ClusterWatchOptions chosen = options({ClusterKind::Node});
  chosen.reflector.backoffMax = 1500ms;
  api_.refuseNextLists(kNodes, 1, 503, "ServiceUnavailable", "the server is starting", 60);
  auto watcher = start(chosen);
  ASSERT_TRUE(watcher->waitFor([](const ClusterWatchState& s) { return s.synced; }, kDeadline))
      << logText();
  const auto lists = requestsOf(kNodes, false);
  ASSERT_GE(lists.size(), 2u);
  const auto gap = between(lists[0], lists[1]);
  EXPECT_GE(gap.count(), 1500);
  EXPECT_LT(gap.count(), 10000) << "60 s was asked; backoffMax is 1.5 s";
}

TEST_F(ClusterWatchErrors, TheFirstListIsServedByTheWatchCacheWithOrWithoutPages) {
  for (const bool ignoresLimit : {false, true}) {
    SCOPED_TRACE(ignoresLimit ? "a watch cache that ignores limit" : "one that pages");
    ApiStandIn api;
    api.serve(kNodes, "v1", "Node");
    for (int i = 0; i < 6; ++i) api.put(kNodes, gpuNode("node-" + std::to_string(i), 1));
    api.ignoreLimitAtVersionZero(ignoresLimit);
    const ApiServerConfig config = api.config(dir_.file("token"));
    ClusterWatcher watcher(config, options({ClusterKind::Node}));
    std::string error;
    ASSERT_TRUE(watcher.start(&error)) << error;
    ASSERT_TRUE(watcher.waitFor([](const ClusterWatchState& s) { return s.synced; }, kDeadline));
    EXPECT_EQ(watcher.view()->nodes().size(), 6u);
    std::vector<ApiStandIn::Request> lists;
    for (const auto& request : api.requests()) {
      if (request.path == kNodes && request.params.count("watch") == 0) lists.push_back(request);
    }
    ASSERT_FALSE(lists.empty());
    EXPECT_EQ(lists[0].params.at("resourceVersion"), "0");
    EXPECT_EQ(lists[0].params.at("limit"), "1");
    EXPECT_EQ(lists.size(), ignoresLimit ? 1u : 6u);
    for (size_t i = 1; i < lists.size(); ++i) {
      EXPECT_EQ(lists[i].params.count("resourceVersion"), 0u) << "a continue page names none";
      EXPECT_EQ(lists[i].status, 200);
    }
  }
}

TEST_F(ClusterWatchErrors, ThePagesOfOneListShareOneConnection) {
  ASSERT_EQ(api_.tlsHandshakes(), 0u);
  auto watcher = started({ClusterKind::Node});
  ASSERT_TRUE(api_.waitForOpenWatches(1, kDeadline, kNodes));
  const auto lists = requestsOf(kNodes, false);
  ASSERT_EQ(lists.size(), 6u) << "one node a page";
  std::set<int> connections;
  for (const auto& list : lists) connections.insert(list.connection);
  EXPECT_EQ(connections.size(), 1u);
  EXPECT_EQ(api_.tlsHandshakes(), 2u) << "one for the list's six pages, one for the watch";
}

}  // namespace
}  // namespace aiadmit
