// ApiLookup: one GET per object the view lacks, in the version the view
// watches, against the stand-in API server over TLS; 404s remembered for a
// moment; an API that does not answer, a kind not served, or more questions
// than the bound answer Unknown, never No.
#include "webhook/cluster/api_lookup.h"

#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <set>

#include "tests/support/api_standin.h"
#include "tests/support/test_support.h"

namespace aiadmit {
namespace {

using namespace std::chrono_literals;

constexpr const char* kClasses = "/apis/scheduling.k8s.io/v1/priorityclasses";
constexpr const char* kQueues = "/apis/kueue.x-k8s.io/v1beta1/localqueues";

const ClusterRef kAiBatch{ClusterKind::PriorityClass, "", "ai-batch"};
const ClusterRef kMissing{ClusterKind::PriorityClass, "", "ai-missing"};
const ClusterRef kQueue{ClusterKind::LocalQueue, "team-a", "gpu-queue"};
constexpr const char* kAllTemplates = "/apis/resource.k8s.io/v1/resourceclaimtemplates";
constexpr const char* kTemplates =
    "/apis/resource.k8s.io/v1/namespaces/team-a/resourceclaimtemplates";

class Lookup : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::writeFile(dir_.file("token"), "token-1");
    api_.serve(kClasses, "scheduling.k8s.io/v1", "PriorityClass");
    api_.serve(kQueues, "kueue.x-k8s.io/v1beta1", "LocalQueue");
    api_.put(kClasses, R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass",)"
                       R"("metadata":{"name":"ai-batch"},"value":1000})");
    api_.put(kQueues, R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"LocalQueue",)"
                      R"("metadata":{"name":"gpu-queue","namespace":"team-a"},)"
                      R"("spec":{"clusterQueue":"gpus"}})");
  }
  ApiServerConfig config(int port) const {
    ApiServerConfig config;
    config.host = "127.0.0.1";
    config.port = port;
    config.caPem = api_.caPem();
    config.tokenFile = dir_.file("token");
    config.source = "test";
    return config;
  }
  static std::string served(ClusterKind kind) {
    if (kind == ClusterKind::PriorityClass) return "scheduling.k8s.io/v1";
    if (kind == ClusterKind::LocalQueue) return "kueue.x-k8s.io/v1beta1";
    return "";
  }
  // confirm(), answered later.
  static std::future<ClusterAnswers> confirmLater(
      ApiLookup& lookup, std::vector<ClusterRef> refs,
      std::chrono::milliseconds patience = std::chrono::milliseconds(0)) {
    auto answered = std::make_shared<std::promise<ClusterAnswers>>();
    std::future<ClusterAnswers> answers = answered->get_future();
    lookup.confirm(
        std::move(refs), [answered](ClusterAnswers got) { answered->set_value(std::move(got)); },
        patience);
    return answers;
  }
  // confirm(), waited for with a bound.
  static ClusterAnswers ask(ApiLookup& lookup, std::vector<ClusterRef> refs) {
    std::future<ClusterAnswers> answers = confirmLater(lookup, std::move(refs));
    EXPECT_EQ(answers.wait_for(10s), std::future_status::ready);
    return answers.get();
  }
  // Serves ResourceClaimTemplates; a lookup with servedWithTemplates asks for them.
  void serveClaimTemplates() {
    api_.serve(kAllTemplates, "resource.k8s.io/v1", "ResourceClaimTemplate");
  }
  static std::string servedWithTemplates(ClusterKind kind) {
    return kind == ClusterKind::ResourceClaimTemplate ? std::string("resource.k8s.io/v1")
                                                      : served(kind);
  }
  size_t requestsTo(const std::string& path) const {
    size_t count = 0;
    for (const auto& request : api_.requests()) count += request.path == path ? 1 : 0;
    return count;
  }

  testing::ApiStandIn api_;
  testing::TempDir dir_;
};

TEST_F(Lookup, PathsAreTheObjectsInTheServedVersion) {
  EXPECT_EQ(ApiLookup::pathOf(kAiBatch, "scheduling.k8s.io/v1"),
            "/apis/scheduling.k8s.io/v1/priorityclasses/ai-batch");
  EXPECT_EQ(ApiLookup::pathOf(kQueue, "kueue.x-k8s.io/v1beta2"),
            "/apis/kueue.x-k8s.io/v1beta2/namespaces/team-a/localqueues/gpu-queue");
  EXPECT_EQ(ApiLookup::pathOf({ClusterKind::PriorityClass, "", "a/../b"}, "scheduling.k8s.io/v1"),
            "")
      << "not a name the API accepts";
}

TEST_F(Lookup, FoundAbsentAndNamespacedAnswersComeFromTheApi) {
  ApiLookup lookup(config(api_.port()), served);
  const ClusterAnswers answers = ask(lookup, {kAiBatch, kMissing, kQueue});
  EXPECT_EQ(answers.presence.at(kAiBatch), Presence::Yes);
  EXPECT_EQ(answers.presence.at(kMissing), Presence::No);
  EXPECT_EQ(answers.presence.at(kQueue), Presence::Yes);
  // What it had comes back as the view reads it.
  ASSERT_EQ(answers.found.size(), 2u);
  std::set<std::string> keys;
  for (const ClusterObject& object : answers.found) keys.insert(keyOf(object));
  EXPECT_EQ(keys, (std::set<std::string>{"ai-batch", "team-a/gpu-queue"}));
  const ApiLookupCounts counts = lookup.counts();
  EXPECT_EQ(counts.found, 2u);
  EXPECT_EQ(counts.absent, 1u);
}

TEST_F(Lookup, AnAbsenceIsRememberedForAMoment) {
  ApiLookupOptions options;
  options.absentFor = 10min;
  ApiLookup lookup(config(api_.port()), served, options);
  EXPECT_EQ(ask(lookup, {kMissing}).presence.at(kMissing), Presence::No);
  EXPECT_EQ(ask(lookup, {kMissing}).presence.at(kMissing), Presence::No);
  EXPECT_EQ(requestsTo(std::string(kClasses) + "/ai-missing"), 1u);
}

// A claim template the view lacks decides what the workload naming it is;
// the one a Deployment names is often created right after it, and the Pods
// its controller makes a moment later must find it: never remembered absent.
TEST_F(Lookup, AClaimTemplatesAbsenceIsAskedEveryTime) {
  serveClaimTemplates();
  ApiLookupOptions options;
  options.absentFor = 10min;
  ApiLookup lookup(config(api_.port()), servedWithTemplates, options);
  const ClusterRef later{ClusterKind::ResourceClaimTemplate, "team-a", "later-gpu"};
  EXPECT_EQ(ask(lookup, {later}).presence.at(later), Presence::No);
  EXPECT_EQ(ask(lookup, {later}).presence.at(later), Presence::No);
  EXPECT_EQ(requestsTo(std::string(kTemplates) + "/later-gpu"), 2u);
}

// A controller's Pod asks with patience: a claim template the API does not
// have yet is asked for again until it is there or the patience is over, so
// one created a moment after its workload (Helm's order) is found. Other
// kinds are asked once.
TEST_F(Lookup, WithPatienceAClaimTemplateIsAskedForAgainUntilItIsThere) {
  serveClaimTemplates();
  ApiLookup lookup(config(api_.port()), servedWithTemplates);

  const ClusterRef never{ClusterKind::ResourceClaimTemplate, "team-a", "never-gpu"};
  std::future<ClusterAnswers> gaveUp = confirmLater(lookup, {never, kMissing}, 2s);
  ASSERT_EQ(gaveUp.wait_for(10s), std::future_status::ready);
  const ClusterAnswers absent = gaveUp.get();
  EXPECT_EQ(absent.presence.at(never), Presence::No);
  EXPECT_EQ(absent.presence.at(kMissing), Presence::No);
  EXPECT_GE(requestsTo(std::string(kTemplates) + "/never-gpu"), 2u);
  EXPECT_EQ(requestsTo(std::string(kClasses) + "/ai-missing"), 1u);

  const ClusterRef soon{ClusterKind::ResourceClaimTemplate, "team-a", "soon-gpu"};
  std::future<ClusterAnswers> waited = confirmLater(lookup, {soon}, 10s);
  api_.put(kAllTemplates, R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaimTemplate",)"
                          R"("metadata":{"name":"soon-gpu","namespace":"team-a"},)"
                          R"("spec":{"spec":{"devices":{"requests":[{"name":"gpu","exactly":)"
                          R"({"deviceClassName":"gpu.nvidia.com"}}]}}}})");
  ASSERT_EQ(waited.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(waited.get().presence.at(soon), Presence::Yes);
}

TEST_F(Lookup, NoAnswerAnUnservedKindAndTooManyQuestionsAreUnknown) {
  // A port that was free a moment ago: nothing listens there.
  int port;
  {
    testing::ApiStandIn gone;
    port = gone.port();
  }
  ApiLookupOptions quick;
  quick.timeout = 300ms;
  ApiLookup unreachable(config(port), served, quick);
  EXPECT_EQ(ask(unreachable, {kAiBatch}).presence.at(kAiBatch), Presence::Unknown);

  ApiLookup lookup(config(api_.port()), served);
  const ClusterRef template_{ClusterKind::ResourceClaimTemplate, "team-a", "gpus"};
  EXPECT_EQ(ask(lookup, {template_}).presence.at(template_), Presence::Unknown)
      << "no served version";

  ApiLookupOptions bounded;
  bounded.maxPending = 0;
  ApiLookup full(config(api_.port()), served, bounded);
  EXPECT_EQ(ask(full, {kAiBatch}).presence.at(kAiBatch), Presence::Unknown);
  EXPECT_EQ(full.counts().unknown, 1u);
}

TEST_F(Lookup, NothingToAskAnswersAtOnceAndStopAnswersWhatIsLeft) {
  ApiLookup lookup(config(api_.port()), served);
  EXPECT_TRUE(ask(lookup, {}).presence.empty());
  lookup.stop();
  EXPECT_EQ(ask(lookup, {kAiBatch}).presence.at(kAiBatch), Presence::Unknown);
}

}  // namespace
}  // namespace aiadmit
