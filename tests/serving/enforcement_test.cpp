// A staged rollout through the real server over TLS: `serve --enforcement`
// at audit, warn and deny (the default), a profile's own `audit` action, the
// audit annotations each answer carries, the rule hits /metrics counts, and
// `review` answering byte for byte as the server does.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/test_support.h"
#include "webhook/codec/yaml_json.h"

namespace aiadmit {
namespace {

using namespace testing;

std::string goldenJson(const std::string& name) {
  std::vector<ManifestDocument> documents;
  std::string error;
  const std::string yaml = readFile(sourceDir() + "/tests/golden/denials/" + name);
  EXPECT_TRUE(parseManifests(yaml, documents, &error)) << error;
  EXPECT_EQ(documents.size(), 1u);
  return documents.empty() ? "{}" : toJson(*documents[0].json);
}

// A batch Pod asking for "nvidia.com/gpus": AIA003, which denies by default.
std::string typoReview() {
  return makeReview(goldenJson("aia003-gpus-typo.yaml"), "CREATE", "uid-aia003", "", "ml");
}
// A realtime Deployment without a memory limit: AIA015, which warns by default.
std::string memoryReview() {
  return makeReview(goldenJson("aia015-no-memory-limit-warns.yaml"), "CREATE", "uid-aia015", "",
                    "ml");
}

WebhookServer::Options withEnforcement(const std::string& level) {
  WebhookServer::Options options;
  options.extraArgs = {"--enforcement=" + level};
  return options;
}

bool hasWarningFor(const ReviewResponse& response, const std::string& rule) {
  for (const std::string& warning : response.warnings) {
    if (warning.find("[" + rule + "]") != std::string::npos) return true;
  }
  return false;
}

std::string annotation(const ReviewResponse& response, const std::string& key) {
  const auto at = response.auditAnnotations.find(key);
  return at == response.auditAnnotations.end() ? "<absent>" : at->second;
}

bool metricsHave(const WebhookServer& server, const std::string& line) {
  const HttpResponse metrics = server.get("/metrics");
  EXPECT_EQ(metrics.status, 200);
  return metrics.body.find(line + "\n") != std::string::npos;
}

TEST(Enforcement, DenyIsTheDefault) {
  WebhookServer server;
  const ReviewResponse denied = parseReviewResponse(server.post("/validate", typoReview()).body);
  EXPECT_FALSE(denied.allowed);
  EXPECT_EQ(denied.statusCode, 403);
  EXPECT_NE(denied.message.find("[AIA003]"), std::string::npos);
  EXPECT_EQ(annotation(denied, "class"), "batch");
  EXPECT_EQ(annotation(denied, "profile"), "batch");
  EXPECT_EQ(annotation(denied, "rules"), "AIA003=deny");
  EXPECT_EQ(annotation(denied, "capped"), "<absent>");
  EXPECT_EQ(annotation(denied, "enforcement"), "<absent>");

  const ReviewResponse warned = parseReviewResponse(server.post("/validate", memoryReview()).body);
  EXPECT_TRUE(warned.allowed);
  EXPECT_TRUE(hasWarningFor(warned, "AIA015"));
  EXPECT_EQ(annotation(warned, "rules"), "AIA015=warn");

  EXPECT_TRUE(metricsHave(server, R"(aiadmit_rule_hits_total{rule="AIA003",action="deny"} 1)"));
  EXPECT_TRUE(metricsHave(server, R"(aiadmit_rule_hits_total{rule="AIA015",action="warn"} 1)"));
  EXPECT_TRUE(metricsHave(server, R"(aiadmit_rule_hits_total{rule="AIA003",action="audit"} 0)"));
  EXPECT_TRUE(metricsHave(server, R"(aiadmit_enforcement{level="deny"} 1)"));
  EXPECT_TRUE(metricsHave(server, R"(aiadmit_enforcement{level="audit"} 0)"));
}

TEST(Enforcement, AuditAdmitsWithoutWarningsAndRecordsWhatItWouldHaveDone) {
  WebhookServer server(withEnforcement("audit"));
  const ReviewResponse typo = parseReviewResponse(server.post("/validate", typoReview()).body);
  EXPECT_TRUE(typo.allowed);
  EXPECT_EQ(typo.statusCode, 0);
  EXPECT_TRUE(typo.warnings.empty());
  EXPECT_EQ(annotation(typo, "class"), "batch");
  EXPECT_EQ(annotation(typo, "rules"), "AIA003=audit");
  EXPECT_EQ(annotation(typo, "capped"), "AIA003=deny");
  EXPECT_EQ(annotation(typo, "enforcement"), "audit");

  const ReviewResponse memory = parseReviewResponse(server.post("/validate", memoryReview()).body);
  EXPECT_TRUE(memory.allowed);
  EXPECT_TRUE(memory.warnings.empty());
  EXPECT_EQ(annotation(memory, "rules"), "AIA015=audit");
  EXPECT_EQ(annotation(memory, "capped"), "AIA015=warn");

  EXPECT_TRUE(metricsHave(server, R"(aiadmit_rule_hits_total{rule="AIA003",action="audit"} 1)"));
  EXPECT_TRUE(metricsHave(server, R"(aiadmit_rule_hits_total{rule="AIA015",action="audit"} 1)"));
  EXPECT_TRUE(metricsHave(server, R"(aiadmit_rule_hits_total{rule="AIA003",action="deny"} 0)"));
  EXPECT_TRUE(metricsHave(server, R"(aiadmit_rule_hits_total{rule="AIA015",action="warn"} 0)"));
  EXPECT_TRUE(metricsHave(server, R"(aiadmit_enforcement{level="audit"} 1)"));
}

TEST(Enforcement, WarnTurnsDenialsIntoWarnings) {
  WebhookServer server(withEnforcement("warn"));
  const ReviewResponse typo = parseReviewResponse(server.post("/validate", typoReview()).body);
  EXPECT_TRUE(typo.allowed);
  EXPECT_TRUE(hasWarningFor(typo, "AIA003"));
  EXPECT_EQ(annotation(typo, "rules"), "AIA003=warn");
  EXPECT_EQ(annotation(typo, "capped"), "AIA003=deny");
  EXPECT_EQ(annotation(typo, "enforcement"), "warn");

  // A rule that warns anyway is not capped.
  const ReviewResponse memory = parseReviewResponse(server.post("/validate", memoryReview()).body);
  EXPECT_TRUE(hasWarningFor(memory, "AIA015"));
  EXPECT_EQ(annotation(memory, "rules"), "AIA015=warn");
  EXPECT_EQ(annotation(memory, "capped"), "<absent>");
  EXPECT_EQ(annotation(memory, "enforcement"), "<absent>");

  EXPECT_TRUE(metricsHave(server, R"(aiadmit_rule_hits_total{rule="AIA003",action="warn"} 1)"));
  EXPECT_TRUE(metricsHave(server, R"(aiadmit_rule_hits_total{rule="AIA003",action="deny"} 0)"));
}

TEST(Enforcement, AProfileCanAuditOneRule) {
  TempDir profiles;
  for (const char* name : {"realtime.yaml", "training.yaml"}) {
    writeFile(profiles.file(name), readFile(sourceDir() + "/profiles/" + name));
  }
  std::string batch = readFile(sourceDir() + "/profiles/batch.yaml");
  if (batch.back() != '\n') batch += '\n';
  writeFile(profiles.file("batch.yaml"), batch + "  rules:\n    AIA003: audit\n");
  WebhookServer::Options options;
  options.profilesDir = profiles.path();
  WebhookServer server(options);
  const ReviewResponse typo = parseReviewResponse(server.post("/validate", typoReview()).body);
  EXPECT_TRUE(typo.allowed);
  EXPECT_TRUE(typo.warnings.empty());
  EXPECT_EQ(annotation(typo, "rules"), "AIA003=audit");
  EXPECT_EQ(annotation(typo, "capped"), "<absent>");
  EXPECT_TRUE(metricsHave(server, R"(aiadmit_rule_hits_total{rule="AIA003",action="audit"} 1)"));
}

TEST(Enforcement, MutationIsNotCapped) {
  WebhookServer server(withEnforcement("audit"));
  const std::string pod = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"train",
    "annotations":{"aiadmit.dev/workload":"training"}},"spec":{"restartPolicy":"Never",
    "containers":[{"name":"main","image":"pytorch:2","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})";
  const ReviewResponse mutated =
      parseReviewResponse(server.post("/mutate", makeReview(pod, "CREATE", "uid-m")).body);
  EXPECT_TRUE(mutated.allowed);
  EXPECT_FALSE(mutated.patch.empty());
  EXPECT_EQ(annotation(mutated, "class"), "training");
  EXPECT_EQ(annotation(mutated, "profile"), "training");
  EXPECT_NE(annotation(mutated, "mutated").find("tolerations"), std::string::npos)
      << annotation(mutated, "mutated");
}

TEST(Enforcement, ReviewAnswersAsTheServerDoes) {
  for (const std::string level : {"audit", "warn", "deny"}) {
    WebhookServer server(withEnforcement(level));
    for (const std::string& review : {typoReview(), memoryReview()}) {
      for (const std::string endpoint : {"/mutate", "/validate"}) {
        const HttpResponse served = server.post(endpoint, review);
        std::vector<std::string> argv = {binaryPath(), "review", "--enforcement", level};
        if (endpoint == "/validate") argv.push_back("--validate");
        const CommandResult offline = runCommand(argv, review);
        EXPECT_EQ(offline.exitCode, 0) << offline.err;
        EXPECT_EQ(offline.out, served.body + "\n") << level << " " << endpoint;
      }
    }
  }
}

TEST(Enforcement, RefusesOtherLevels) {
  for (const std::string level : {"off", "Deny", ""}) {
    const CommandResult serve = runCommand(
        {binaryPath(), "serve", "--tls-cert", "x", "--tls-key", "y", "--enforcement=" + level});
    EXPECT_EQ(serve.exitCode, 2) << level;
    EXPECT_NE(serve.err.find("--enforcement"), std::string::npos);
    const CommandResult review =
        runCommand({binaryPath(), "review", "--enforcement=" + level}, typoReview());
    EXPECT_EQ(review.exitCode, 2) << level;
  }
}

}  // namespace
}  // namespace aiadmit
