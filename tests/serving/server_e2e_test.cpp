// The whole request path over TLS: the real server, corpus manifests sent as
// AdmissionReviews, every patch applied by kubectl, every mutated object
// validated against the Kubernetes schema, and sent again for no patch.
#include <gtest/gtest.h>

#include "tests/support/test_support.h"

namespace aiadmit {
namespace {

using namespace testing;

TEST(ServerEndToEnd, HealthAndReadiness) {
  WebhookServer server;
  EXPECT_EQ(server.get("/healthz").status, 200);
  EXPECT_EQ(server.get("/readyz").status, 200);
  const HttpResponse metrics = server.get("/metrics");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("aiadmit_profile_reloads_total"), std::string::npos);
}

TEST(ServerEndToEnd, ReferenceGpuPodGetsTheToleration) {
  WebhookServer server;
  const std::string review = readFile(corpusDir() + "/../bench/gpu-pod-review.json");
  const HttpResponse http = server.post("/mutate", review);
  ASSERT_EQ(http.status, 200) << http.body;
  const ReviewResponse response = parseReviewResponse(http.body);
  EXPECT_EQ(response.uid, "fbeb1f36-14d3-4562-a099-b9c52a1b3b4d");
  EXPECT_TRUE(response.allowed);
  EXPECT_EQ(response.patchType, "JSONPatch");
  EXPECT_NE(response.patch.find(R"("key":"accelerator","operator":"Equal","value":"gpu")"),
            std::string::npos)
      << response.patch;
}

// The paths for requests from identities that control no owner kind: the
// same review, its ReplicaSet owner not believed, is judged as a person's Pod.
TEST(ServerEndToEnd, AppliedPathsJudgeTheObjectAsAPersons) {
  WebhookServer server;
  const std::string review = readFile(corpusDir() + "/../bench/gpu-pod-review.json");
  const ReviewResponse controllers = parseReviewResponse(server.post("/mutate", review).body);
  const HttpResponse http = server.post("/applied/mutate", review);
  ASSERT_EQ(http.status, 200) << http.body;
  const ReviewResponse applied = parseReviewResponse(http.body);
  EXPECT_EQ(applied.uid, "fbeb1f36-14d3-4562-a099-b9c52a1b3b4d");
  EXPECT_TRUE(applied.allowed);
  EXPECT_NE(applied.patch, controllers.patch) << "the owner is not believed";
  EXPECT_NE(applied.patch.find("aiadmit.dev~1class"), std::string::npos) << applied.patch;
  EXPECT_EQ(controllers.patch.find("aiadmit.dev~1class"), std::string::npos) << controllers.patch;
  const HttpResponse validated = server.post("/applied/validate", review);
  ASSERT_EQ(validated.status, 200) << validated.body;
  EXPECT_EQ(parseReviewResponse(validated.body).uid, "fbeb1f36-14d3-4562-a099-b9c52a1b3b4d");
}

TEST(ServerEndToEnd, CorpusThroughMutateIsAppliedValidAndIdempotent) {
  WebhookServer server;
  std::vector<std::string> mutatedObjects;
  int patched = 0;
  for (const CorpusObject& object : corpusObjects()) {
    SCOPED_TRACE(object.file + "#" + std::to_string(object.index) + " " + object.kind);
    const std::string uid = "corpus-" + std::to_string(mutatedObjects.size());
    const HttpResponse http = server.post("/mutate", makeReview(object.json, "CREATE", uid));
    ASSERT_EQ(http.status, 200) << http.body;
    const ReviewResponse response = parseReviewResponse(http.body);
    EXPECT_EQ(response.apiVersion, "admission.k8s.io/v1");
    EXPECT_EQ(response.kind, "AdmissionReview");
    EXPECT_EQ(response.uid, uid);
    EXPECT_TRUE(response.allowed);

    std::string mutated = object.json;
    if (!response.patch.empty()) {
      ++patched;
      EXPECT_EQ(response.patchType, "JSONPatch");
      mutated = applyPatch(object.json, response.patch);
      ASSERT_FALSE(mutated.empty());
      const HttpResponse again =
          server.post("/mutate", makeReview(mutated, "CREATE", uid + "-again"));
      const ReviewResponse second = parseReviewResponse(again.body);
      EXPECT_TRUE(second.patch.empty()) << "not idempotent: " << second.patch;
    }
    // kubernetes-models has the built-in kinds; custom resources are checked
    // against their CRDs in tests/engine/custom_resource_corpus_test.cpp.
    if (object.json.find(R"("apiVersion":"v1")") != std::string::npos ||
        object.json.find(R"("apiVersion":"apps/v1")") != std::string::npos ||
        object.json.find(R"("apiVersion":"batch/v1")") != std::string::npos) {
      mutatedObjects.push_back(mutated);
    }
  }
  EXPECT_GE(patched, 8) << "the GPU workloads of the corpus should be mutated";
  const CommandResult schema = validateSchemas(mutatedObjects);
  EXPECT_EQ(schema.exitCode, 0) << schema.out << schema.err;
}

TEST(ServerEndToEnd, ValidateAnswersEveryCorpusObject) {
  WebhookServer server;
  int index = 0;
  for (const CorpusObject& object : corpusObjects()) {
    SCOPED_TRACE(object.file);
    const std::string uid = "v-" + std::to_string(index++);
    const HttpResponse http = server.post("/validate", makeReview(object.json, "CREATE", uid));
    ASSERT_EQ(http.status, 200) << http.body;
    const ReviewResponse response = parseReviewResponse(http.body);
    EXPECT_EQ(response.uid, uid);
    if (!response.allowed) {
      EXPECT_EQ(response.statusCode, 403);
      EXPECT_EQ(response.message.rfind("[AIA", 0), 0u) << response.message;
    }
  }
}

TEST(ServerEndToEnd, MalformedBodiesGetA400AndTheServerKeepsServing) {
  WebhookServer server;
  for (const std::string& body : {std::string("{bad"), std::string("[]"), std::string(""),
                                  std::string(R"({"kind":"AdmissionReview"})")}) {
    const HttpResponse http = server.post("/mutate", body);
    EXPECT_EQ(http.status, 400) << body;
    const ReviewResponse response = parseReviewResponse(http.body);
    EXPECT_FALSE(response.allowed);
    EXPECT_EQ(response.statusCode, 400);
  }
  const HttpResponse wrongType = server.post("/mutate", "{}", "text/plain");
  EXPECT_EQ(wrongType.status, 400);
  const std::string review = readFile(corpusDir() + "/../bench/gpu-pod-review.json");
  EXPECT_EQ(server.post("/mutate", review).status, 200);
}

TEST(ServerEndToEnd, SigtermExitsCleanly) {
  WebhookServer server;
  EXPECT_EQ(server.get("/healthz").status, 200);
  EXPECT_EQ(server.terminate(), 0);
}

}  // namespace
}  // namespace aiadmit
