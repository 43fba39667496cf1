// Operating the server: shutdown, slow clients, metrics and logs.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <regex>

#include "tests/support/test_support.h"

namespace aiadmit {
namespace {

using namespace testing;

const std::string kGpuPod =
    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ml"},"spec":{"containers":[{"name":"c","image":"i","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})";

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(Shutdown, SigtermFailsReadinessAtOnceAnswersInFlightAndExitsZero) {
  WebhookServer::Options options;
  options.extraArgs = {"--shutdown-delay", "2"};
  WebhookServer server(options);

  // A request in flight: headers and half the body sent before SIGTERM.
  const std::string body = makeReview(kGpuPod, "CREATE", "in-flight");
  RawConnection inFlight(server.port(), true);
  ASSERT_TRUE(inFlight.connected());
  ASSERT_TRUE(
      inFlight.send("POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    "Content-Length: " +
                    std::to_string(body.size()) + "\r\n\r\n" + body.substr(0, body.size() / 2)));

  kill(server.pid(), SIGTERM);
  ASSERT_TRUE(server.waitForOutput("\"msg\":\"shutting down\"", 5));
  EXPECT_EQ(server.get("/readyz").status, 503);
  EXPECT_EQ(server.get("/healthz").status, 200);
  // Still serving during the delay, so the API server's retries land.
  EXPECT_EQ(server.post("/mutate", makeReview(kGpuPod, "CREATE", "late")).status, 200);

  ASSERT_TRUE(inFlight.send(body.substr(body.size() / 2)));
  const std::string response = inFlight.readResponse(5);
  EXPECT_EQ(statusOf(response), 200) << response;
  EXPECT_NE(response.find("\"uid\":\"in-flight\""), std::string::npos);

  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(server.terminate(), 0);
  EXPECT_LT(secondsSince(started), 10.0);
  // The process has exited; its last line may still be on its way through the pipe.
  EXPECT_TRUE(server.waitForOutput("\"msg\":\"stopped\"", 5));
}

TEST(SlowClients, FiveHundredIdleOrSlowConnectionsDoNotDelayANewClient) {
  WebhookServer server;
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 250; ++i) {
    held.push_back(std::make_unique<RawConnection>(server.port(), true));  // idle after handshake
  }
  for (int i = 0; i < 250; ++i) {
    auto slow = std::make_unique<RawConnection>(server.port(), true);
    // A request that never finishes its headers or its body.
    slow->send(i % 2 == 0 ? "POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Ty"
                          : "POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                            "Content-Length: 1000\r\n\r\n{\"a\":");
    held.push_back(std::move(slow));
  }
  size_t connected = 0;
  for (const auto& connection : held) connected += connection->connected() ? 1 : 0;
  EXPECT_EQ(connected, 500u);

  for (int attempt = 0; attempt < 3; ++attempt) {
    const auto started = std::chrono::steady_clock::now();
    const HttpResponse http = server.post("/mutate", makeReview(kGpuPod, "CREATE", "new"));
    EXPECT_EQ(http.status, 200);
    EXPECT_LT(secondsSince(started), 1.0);
  }
}

TEST(Metrics, CountRequestsDecisionsRulesReloadsAndCertificateExpiry) {
  WebhookServer server;
  ASSERT_EQ(server.post("/mutate", makeReview(kGpuPod, "CREATE", "m1")).status, 200);
  const std::string fractional =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"f"},"spec":{"containers":[{"name":"c","image":"i","resources":{"limits":{"nvidia.com/gpu":"0.5"}}}]}})";
  ASSERT_EQ(server.post("/validate", makeReview(fractional, "CREATE", "m2")).status, 200);
  ASSERT_EQ(server.post("/validate", "{broken").status, 400);

  const HttpResponse http = server.get("/metrics");
  ASSERT_EQ(http.status, 200);
  const std::string& text = http.body;
  EXPECT_NE(
      text.find(
          R"(aiadmit_requests_total{endpoint="mutate",kind="Pod",class="batch",decision="patched"} 1)"),
      std::string::npos)
      << text;
  EXPECT_NE(
      text.find(
          R"(aiadmit_requests_total{endpoint="validate",kind="Pod",class="batch",decision="denied"} 1)"),
      std::string::npos);
  EXPECT_NE(
      text.find(
          R"(aiadmit_requests_total{endpoint="validate",kind="Other",class="none",decision="errored"} 1)"),
      std::string::npos);
  EXPECT_NE(text.find(R"(aiadmit_request_duration_seconds_count{endpoint="validate"} 2)"),
            std::string::npos);
  EXPECT_NE(text.find(R"(aiadmit_rule_hits_total{rule="AIA004",action="deny"} 1)"),
            std::string::npos);
  EXPECT_NE(text.find(R"(aiadmit_profile_reloads_total{result="success"} 1)"), std::string::npos);
  std::smatch expiry;
  ASSERT_TRUE(std::regex_search(
      text, expiry, std::regex(R"(aiadmit_certificate_expiry_timestamp_seconds ([0-9.e+]+))")));
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_GT(std::stod(expiry[1]), now);
  // Every sample line is NAME{labels} VALUE or NAME VALUE, as Prometheus parses it.
  const std::regex sample(R"(^[a-z_]+(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? [-+0-9.e]+(Inf)?$)");
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    EXPECT_TRUE(std::regex_match(line, sample)) << line;
  }
}

TEST(Logs, CarryIdentityAndDecisionButNeverObjectContents) {
  WebhookServer server;
  const std::string secretPod =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"leaky","namespace":"ml",)"
      R"("annotations":{"aiadmit.dev/workload":"batch","team.example.com/token":"annotation-s3cr3t-value"}},)"
      R"("spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"registry.example.com/private-image-name:tag-x",)"
      R"("env":[{"name":"HF_TOKEN","value":"hf_env-s3cr3t-value"}],"args":["--api-key=arg-s3cr3t-value"],)"
      R"("resources":{"limits":{"nvidia.com/gpu":"0.5"}}}]}})";
  const std::string configMap =
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg"},"data":{"password":"data-s3cr3t-value"}})";
  ASSERT_EQ(server.post("/mutate", makeReview(secretPod, "CREATE", "log-uid-1")).status, 200);
  ASSERT_EQ(server.post("/validate", makeReview(secretPod, "CREATE", "log-uid-2")).status, 200);
  ASSERT_EQ(server.post("/mutate", makeReview(configMap, "CREATE", "log-uid-3")).status, 200);
  ASSERT_EQ(server.post("/mutate", "{\"password\":\"body-s3cr3t-value\"").status, 400);
  ASSERT_TRUE(server.waitForOutput("\"status\":400", 5));

  const std::string logs = server.output();
  for (const char* secret :
       {"annotation-s3cr3t-value", "hf_env-s3cr3t-value", "arg-s3cr3t-value", "data-s3cr3t-value",
        "body-s3cr3t-value", "private-image-name", "HF_TOKEN"}) {
    EXPECT_EQ(logs.find(secret), std::string::npos) << secret << " leaked into:\n" << logs;
  }
  // One JSON line per request with identity and decision.
  std::istringstream lines(logs);
  int requests = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("\"msg\":\"admission\"") == std::string::npos) continue;
    ++requests;
    const auto doc = parseJson(line);
    for (const char* field : {"uid", "kind", "namespace", "name", "class", "profile", "decision",
                              "rules", "latency_us"}) {
      EXPECT_TRUE(doc->HasMember(field)) << field << " missing in " << line;
    }
  }
  EXPECT_EQ(requests, 4);
  EXPECT_NE(
      logs.find(
          R"("uid":"log-uid-2","operation":"CREATE","kind":"Pod","namespace":"ml","name":"leaky","class":"batch")"),
      std::string::npos)
      << logs;
  EXPECT_NE(logs.find(R"("decision":"denied","rules":["AIA004")"), std::string::npos) << logs;
}

TEST(Logs, LevelFlagSilencesRequestLines) {
  WebhookServer::Options options;
  options.extraArgs = {"--log-level", "warn"};
  WebhookServer server(options);
  ASSERT_EQ(server.post("/mutate", makeReview(kGpuPod, "CREATE", "quiet")).status, 200);
  ASSERT_EQ(server.post("/mutate", "{").status, 400);
  // Errors are warnings: the malformed request is logged, the good one is not.
  ASSERT_TRUE(server.waitForOutput("\"status\":400", 5));
  EXPECT_EQ(server.output().find("\"uid\":\"quiet\""), std::string::npos);
}

}  // namespace
}  // namespace aiadmit
