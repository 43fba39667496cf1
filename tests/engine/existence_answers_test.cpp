// AIA017-AIA019 deny only on a definite, lasting "no" (docs/rules.md, "Rules
// on the cluster view"): by default they warn on controllers' objects, which
// Kubernetes accepts and converges, and deny bare Pods; a denial that rests on
// the view's "does not exist" names what the server must confirm with the
// API, and the API's answers decide: found drops the violation, no answer
// makes it a warning, 404 keeps it.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "mutators/mutator.h"
#include "tests/support/test_support.h"
#include "webhook/cluster/cluster_snapshot.h"
#include "webhook/cluster/cluster_view.h"
#include "webhook/engine/engine.h"
#include "webhook/policy/profile_loader.h"

namespace aiadmit {
namespace {

using namespace testing;

// A cluster whose PriorityClasses and LocalQueues are listed: none of the
// shipped profiles' classes, and no queue.
constexpr const char* kCluster = R"(apiVersion: v1
kind: List
items:
- apiVersion: scheduling.k8s.io/v1
  kind: PriorityClass
  metadata: {name: ai-training}
  value: 10000
- apiVersion: kueue.x-k8s.io/v1beta1
  kind: LocalQueue
  metadata: {name: other-queue, namespace: team-a}
  spec: {clusterQueue: gpus}
)";

// A batch GPU Pod naming ai-batch, which the cluster lacks.
const std::string kBarePod =
    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"team-a"},)"
    R"("spec":{"restartPolicy":"Never","priorityClassName":"ai-batch",)"
    R"("nodeSelector":{"accelerator":"nvidia"},"tolerations":[{"key":"accelerator",)"
    R"("operator":"Equal","value":"gpu","effect":"NoSchedule"}],)"
    R"("containers":[{"name":"c","image":"nvcr.io/nvidia/pytorch:24.05-py3",)"
    R"("resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})";

// The same Pod as a Job's template, with a Kueue queue the namespace lacks.
const std::string kJob =
    R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j","namespace":"team-a",)"
    R"("labels":{"kueue.x-k8s.io/queue-name":"gpu-queue"}},"spec":{"template":{"spec":)"
    R"({"restartPolicy":"Never","priorityClassName":"ai-batch",)"
    R"("nodeSelector":{"accelerator":"nvidia"},"tolerations":[{"key":"accelerator",)"
    R"("operator":"Equal","value":"gpu","effect":"NoSchedule"}],)"
    R"("containers":[{"name":"c","image":"nvcr.io/nvidia/pytorch:24.05-py3",)"
    R"("resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}}})";

class ExistenceAnswers : public ::testing::Test {
 protected:
  void SetUp() override {
    const ProfileLoadResult loaded =
        loadProfileDirectory(sourceDir() + "/profiles", mutationSwitches());
    ASSERT_TRUE(loaded.ok());
    const ClusterSnapshot snapshot = readClusterSnapshot(kCluster, "cluster.yaml");
    ASSERT_TRUE(snapshot.error.empty()) << snapshot.error;
    engine_ = std::make_unique<Engine>(loaded.set);
    engine_->replaceClusterView(snapshot.view);
  }
  // The answer, and what it rests on that the server would ask the API for.
  struct Answered {
    std::string body;
    std::vector<ClusterRef> toConfirm;
  };
  Answered answer(Endpoint endpoint, const std::string& body,
                  const ClusterAnswers* answers = nullptr) const {
    const Review review(body);
    EXPECT_NE(review.request(), nullptr);
    Decided decided = engine_->decide({endpoint, true}, *review.request(), answers);
    std::vector<ClusterRef> toConfirm = decided.toConfirm;
    return {review.answer(std::move(decided)).body, std::move(toConfirm)};
  }
  Answered validate(const std::string& object, const ClusterAnswers* answers = nullptr) const {
    return answer(Endpoint::Validate, makeReview(object, "CREATE", "uid"), answers);
  }
  static bool warns(const ReviewResponse& response, const std::string& text) {
    for (const std::string& warning : response.warnings) {
      if (warning.find(text) != std::string::npos) return true;
    }
    return false;
  }
  std::unique_ptr<Engine> engine_;
};

const ClusterRef kAiBatch{ClusterKind::PriorityClass, "", "ai-batch"};

TEST_F(ExistenceAnswers, ABarePodIsRefusedAndTheDenialNamesWhatToConfirm) {
  const Answered answer = validate(kBarePod);
  const ReviewResponse response = parseReviewResponse(answer.body);
  EXPECT_FALSE(response.allowed);
  EXPECT_NE(response.message.find("[AIA017] spec.priorityClassName: PriorityClass \"ai-batch\" "
                                  "does not exist"),
            std::string::npos)
      << response.message;
  ASSERT_EQ(answer.toConfirm.size(), 1u);
  EXPECT_EQ(answer.toConfirm[0], kAiBatch);
  EXPECT_EQ(answer.toConfirm[0].describe(), "PriorityClass ai-batch");
}

TEST_F(ExistenceAnswers, AControllersObjectIsWarnedAndNothingNeedsConfirming) {
  const Answered answer = validate(kJob);
  const ReviewResponse response = parseReviewResponse(answer.body);
  EXPECT_TRUE(response.allowed) << response.message;
  EXPECT_TRUE(warns(response, "[AIA017]")) << ::testing::PrintToString(response.warnings);
  EXPECT_TRUE(warns(response, "[AIA018]")) << ::testing::PrintToString(response.warnings);
  EXPECT_TRUE(answer.toConfirm.empty());
}

TEST_F(ExistenceAnswers, APodAControllerMadeIsTheControllers) {
  std::string pod = kBarePod;
  const std::string metadataEnd = R"("namespace":"team-a"})";
  pod.replace(pod.find(metadataEnd), metadataEnd.size(),
              R"("namespace":"team-a","ownerReferences":[{"apiVersion":"batch/v1","kind":"Job",)"
              R"("name":"j","uid":"u","controller":true}]})");
  const ReviewResponse response = parseReviewResponse(validate(pod).body);
  EXPECT_TRUE(response.allowed) << response.message;
  EXPECT_TRUE(warns(response, "[AIA017]")) << ::testing::PrintToString(response.warnings);
}

TEST_F(ExistenceAnswers, FoundByTheApiIsNoViolation) {
  const ClusterAnswers found{{{kAiBatch, Presence::Yes}}};
  const Answered answer = validate(kBarePod, &found);
  const ReviewResponse response = parseReviewResponse(answer.body);
  EXPECT_TRUE(response.allowed) << response.message;
  EXPECT_FALSE(warns(response, "[AIA017]")) << ::testing::PrintToString(response.warnings);
  EXPECT_TRUE(answer.toConfirm.empty());
}

TEST_F(ExistenceAnswers, NoAnswerFromTheApiWarnsInsteadOfDenying) {
  const ClusterAnswers unknown{{{kAiBatch, Presence::Unknown}}};
  const ReviewResponse response = parseReviewResponse(validate(kBarePod, &unknown).body);
  EXPECT_TRUE(response.allowed) << response.message;
  EXPECT_TRUE(warns(response, "aiadmit: [AIA017] not confirmed by the API: PriorityClass"))
      << ::testing::PrintToString(response.warnings);
}

TEST_F(ExistenceAnswers, A404FromTheApiKeepsTheDenial) {
  const ClusterAnswers absent{{{kAiBatch, Presence::No}}};
  const Answered answer = validate(kBarePod, &absent);
  EXPECT_FALSE(parseReviewResponse(answer.body).allowed);
  EXPECT_TRUE(answer.toConfirm.empty()) << "already asked";
}

TEST_F(ExistenceAnswers, AProfileThatSetsTheRuleDecidesForControllersToo) {
  // The shipped batch profile with AIA017 set to deny.
  const std::string batch =
      readFile(sourceDir() + "/profiles/batch.yaml") + "  rules:\n    AIA017: deny\n";
  const ProfileLoadResult strict = loadProfileText(batch, "batch.yaml", mutationSwitches());
  ASSERT_TRUE(strict.ok()) << (strict.errors.empty() ? "" : strict.errors[0].format());
  engine_->replaceProfiles(strict.set);
  EXPECT_FALSE(parseReviewResponse(validate(kJob).body).allowed);
}

// A DRA Pod whose class comes from its claim template alone, and a template
// the view has not seen yet: what the API had decides, as if the view held it.
TEST_F(ExistenceAnswers, AClaimTemplateTheViewLacksIsAskedForAndDecidesTheClass) {
  const std::string snapshot = std::string(kCluster) + R"(- apiVersion: resource.k8s.io/v1
  kind: DeviceClass
  metadata: {name: gpu.nvidia.com}
  spec:
    selectors: [{cel: {expression: "device.driver == 'gpu.nvidia.com'"}}]
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaimTemplate
  metadata: {name: other, namespace: team-a}
  spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}]}}}
)";
  const ClusterSnapshot view = readClusterSnapshot(snapshot, "cluster.yaml");
  ASSERT_TRUE(view.error.empty()) << view.error;
  engine_->replaceClusterView(view.view);
  const std::string pod =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"dra","namespace":"team-a"},)"
      R"("spec":{"restartPolicy":"Never","resourceClaims":[{"name":"gpu",)"
      R"("resourceClaimTemplateName":"gpu-claim"}],"containers":[{"name":"c",)"
      R"("image":"registry.example/embed:1","resources":{"claims":[{"name":"gpu"}]}}]}})";
  const Answered alone = answer(Endpoint::Mutate, makeReview(pod, "CREATE", "u"));
  EXPECT_TRUE(parseReviewResponse(alone.body).patch.empty()) << "not known to be a GPU Pod";
  const ClusterRef ref{ClusterKind::ResourceClaimTemplate, "team-a", "gpu-claim"};
  ASSERT_EQ(alone.toConfirm, std::vector<ClusterRef>{ref});

  std::string text =
      R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaimTemplate","metadata":)"
      R"({"name":"gpu-claim","namespace":"team-a"},"spec":{"spec":{"devices":{"requests":)"
      R"([{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com"}}]}}}})";
  JsonDocument document;
  ASSERT_TRUE(parseJsonInSitu(text.data(), text.size(), 64, document).empty());
  ClusterAnswers answers;
  answers.presence[ref] = Presence::Yes;
  answers.found.emplace_back();
  std::string error;
  ASSERT_TRUE(readClusterObject(ClusterKind::ResourceClaimTemplate, "resource.k8s.io/v1", document,
                                answers.found.back(), &error))
      << error;
  const Answered asked = answer(Endpoint::Mutate, makeReview(pod, "CREATE", "u"), &answers);
  const std::string patch = parseReviewResponse(asked.body).patch;
  EXPECT_NE(patch.find("accelerator"), std::string::npos) << "aimed at the GPU pool: " << patch;
  EXPECT_TRUE(asked.toConfirm.empty());
}

}  // namespace
}  // namespace aiadmit
