// An ownerReference is what anyone who may create the object writes: the
// API server checks neither who wrote it nor what it names. On the applied
// paths (/applied/mutate, /applied/validate), which the API server calls for
// every object that is not its controller's (manifests/base/controllers.yaml),
// aiadmit judges the object as a person's whatever owner it names: the same
// patch and the same answer as without the ownerReference. /mutate and
// /validate, which it calls only with the controller's own requests, believe
// the owner, as they always have.
#include <gtest/gtest.h>

#include <string>

#include "tests/support/test_support.h"

namespace aiadmit {
namespace {

using namespace testing;

std::string owner(std::string_view apiVersion, std::string_view kind) {
  return R"(,"ownerReferences":[{"apiVersion":")" + std::string(apiVersion) + R"(","kind":")" +
         std::string(kind) + R"(","name":"o","uid":"1","controller":true}])";
}

std::string pod(std::string_view metadataExtra, std::string_view gpuName,
                std::string_view specExtra = "") {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ml")" +
         std::string(metadataExtra) +
         R"(},"spec":{"restartPolicy":"Never","containers":[{"name":"main","image":"train","resources":{"limits":{")" +
         std::string(gpuName) + R"(":"1"}}}])" + std::string(specExtra) + "}}";
}

std::string deployment(std::string_view metadataExtra, std::string_view gpuName) {
  return R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"ml")" +
         std::string(metadataExtra) +
         R"(},"spec":{"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},)"
         R"("spec":{"containers":[{"name":"main","image":"serve","ports":[{"containerPort":8080}],)"
         R"("resources":{"limits":{")" +
         std::string(gpuName) + R"(":"1","memory":"8Gi"}}}]}}}})";
}

ReviewResponse post(WebhookServer& server, const std::string& path, const std::string& object) {
  const HttpResponse http = server.post(path, makeReview(object, "CREATE", "u", "", "ml"));
  EXPECT_EQ(http.status, 200) << path << ": " << http.body;
  return parseReviewResponse(http.body);
}

// As the API server calls the two webhooks: `prefix`/mutate, its patch
// applied, then `prefix`/validate of the result.
ReviewResponse admit(WebhookServer& server, const std::string& prefix, const std::string& object) {
  const ReviewResponse mutated = post(server, prefix + "/mutate", object);
  EXPECT_TRUE(mutated.allowed) << mutated.message;
  const std::string patched = mutated.patch.empty() ? object : applyPatch(object, mutated.patch);
  return post(server, prefix + "/validate", patched);
}

// A bare Pod "owned" by a ReplicaSet, a Job or an operator's kind: on the
// applied paths, the bare Pod's patch and the bare Pod's refusal of a
// misspelt GPU; the same Pod spelt right, beside it, is admitted.
TEST(ForgedOwners, ABarePodOwnedOnPaperIsJudgedAsTheBarePodOnTheAppliedPaths) {
  WebhookServer server;
  const ReviewResponse bareMutated = post(server, "/applied/mutate", pod("", "nvidia.com/gpu"));
  ASSERT_TRUE(bareMutated.allowed);
  ASSERT_FALSE(bareMutated.patch.empty());
  for (const auto& [apiVersion, kind] : {std::pair{"apps/v1", "ReplicaSet"},
                                         {"batch/v1", "Job"},
                                         {"kubeflow.org/v1", "PyTorchJob"}}) {
    SCOPED_TRACE(kind);
    const std::string owned = owner(apiVersion, kind);
    const ReviewResponse mutated = post(server, "/applied/mutate", pod(owned, "nvidia.com/gpu"));
    EXPECT_TRUE(mutated.allowed);
    EXPECT_EQ(mutated.patch, bareMutated.patch);
    EXPECT_TRUE(admit(server, "/applied", pod(owned, "nvidia.com/gpu")).allowed);
    const ReviewResponse misspelt = admit(server, "/applied", pod(owned, "nvidia.com/gpus"));
    EXPECT_FALSE(misspelt.allowed);
    EXPECT_NE(misspelt.message.find("AIA003"), std::string::npos) << misspelt.message;
  }
  // On the controller's path, a ReplicaSet's Pod that carries no stamp of
  // aiadmit's is one it never judged (made before the namespace opted in):
  // admitted as it comes. That is why no one else's request reaches it.
  EXPECT_TRUE(admit(server, "", pod(owner("apps/v1", "ReplicaSet"), "nvidia.com/gpus")).allowed);
}

// A person's Deployment "owned" by an operator's kind is refused on the
// applied path where the Deployment without it is, and admitted where it is.
TEST(ForgedOwners, ADeploymentOwnedOnPaperIsJudgedAsTheDeploymentOnTheAppliedPaths) {
  WebhookServer server;
  const std::string owned = owner("serving.kserve.io/v1beta1", "InferenceService");
  for (const char* gpuName : {"nvidia.com/gpu", "nvidia.com/gpus"}) {
    SCOPED_TRACE(gpuName);
    const ReviewResponse without = admit(server, "/applied", deployment("", gpuName));
    const ReviewResponse with = admit(server, "/applied", deployment(owned, gpuName));
    EXPECT_EQ(with.allowed, without.allowed);
    EXPECT_EQ(with.message, without.message);
    EXPECT_EQ(post(server, "/applied/mutate", deployment(owned, gpuName)).patch,
              post(server, "/applied/mutate", deployment("", gpuName)).patch);
  }
  EXPECT_FALSE(admit(server, "/applied", deployment(owned, "nvidia.com/gpus")).allowed);
  EXPECT_TRUE(admit(server, "/applied", deployment(owned, "nvidia.com/gpu")).allowed);
}

// A DaemonSet's Pod serves its node (a device plugin, an exporter) and may
// aim at the GPU pool without a GPU (AIA007), when its DaemonSet made it; a
// person's Pod that names one is refused as any Pod aimed at the pool.
TEST(ForgedOwners, OnlyTheDaemonSetControllersPodServesTheNodeWithoutAGpu) {
  WebhookServer server;
  const std::string aimed =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"agent","namespace":"ml")" +
      owner("apps/v1", "DaemonSet") +
      R"(},"spec":{"nodeSelector":{"accelerator":"nvidia"},"containers":[{"name":"agent","image":"dcgm"}]}})";
  const ReviewResponse applied = post(server, "/applied/validate", aimed);
  EXPECT_FALSE(applied.allowed);
  EXPECT_NE(applied.message.find("AIA007"), std::string::npos) << applied.message;
  EXPECT_TRUE(post(server, "/validate", aimed).allowed);
}

// Both path families answer the same review; no other path is an admission's.
TEST(ForgedOwners, TheAppliedPathsAreAdmissionPathsAndOthersAreNot) {
  WebhookServer server;
  const std::string review = makeReview(pod("", "nvidia.com/gpu"), "CREATE", "u", "", "ml");
  for (const char* path : {"/mutate", "/validate", "/applied/mutate", "/applied/validate"}) {
    EXPECT_EQ(server.post(path, review).status, 200) << path;
  }
  for (const char* path : {"/applied", "/applied/", "/applied/validate-profiles", "/x/mutate"}) {
    EXPECT_EQ(server.post(path, review).status, 404) << path;
  }
}

}  // namespace
}  // namespace aiadmit
