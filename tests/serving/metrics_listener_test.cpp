// serve --metrics-listen: GET /metrics, /healthz and /readyz over plain HTTP
// on a port of their own, beside the webhook's TLS port, bounded as the
// webhook's transport is (connections, header size and deadlines, no body),
// ready and draining with the webhook, and off unless asked for.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <memory>

#include "tests/support/test_support.h"

namespace aiadmit {
namespace {

using namespace testing;
using Clock = std::chrono::steady_clock;

WebhookServer::Options withArgs(std::vector<std::string> args) {
  WebhookServer::Options options;
  options.extraArgs = std::move(args);
  return options;
}

// The names of the metric families a /metrics text declares, in order.
std::vector<std::string> families(const std::string& text) {
  std::vector<std::string> names;
  for (size_t at = text.find("# TYPE "); at != std::string::npos;
       at = text.find("# TYPE ", at + 1)) {
    const size_t begin = at + 7;
    names.push_back(text.substr(begin, text.find(' ', begin) - begin));
  }
  return names;
}

double limitHits(const WebhookServer& server, const std::string& limit) {
  const std::string text = server.getPlain("/metrics").body;
  const std::string sample = "\naiadmit_http_limit_hits_total{limit=\"" + limit + "\"} ";
  const size_t at = text.find(sample);
  return at == std::string::npos ? -1 : std::stod(text.substr(at + sample.size()));
}

const char* const kGet = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";

TEST(MetricsListener, ServesWhatTheTlsPortServesOverPlainHttp) {
  WebhookServer server(withArgs({"--metrics-listen", "127.0.0.1:0"}));
  ASSERT_GT(server.metricsPort(), 0);
  EXPECT_NE(server.metricsPort(), server.port());
  const HttpResponse plain = server.getPlain("/metrics");
  ASSERT_EQ(plain.status, 200);
  EXPECT_EQ(plain.headers.find("Content-Type")->second, "text/plain; version=0.0.4");
  const HttpResponse tls = server.get("/metrics");
  ASSERT_EQ(tls.status, 200);
  EXPECT_EQ(families(plain.body), families(tls.body));
  EXPECT_NE(plain.body.find("\naiadmit_certificate_expiry_timestamp_seconds "), std::string::npos);
  EXPECT_EQ(server.getPlain("/healthz").status, 200);
  EXPECT_EQ(server.getPlain("/readyz").body, "ok\n");
  // Nothing else: admission stays on the TLS port.
  EXPECT_EQ(server.getPlain("/mutate").status, 404);
  RawConnection plainOnTls(server.port(), false);
  ASSERT_TRUE(plainOnTls.send(kGet));
  EXPECT_EQ(statusOf(plainOnTls.readResponse(3)), 0);
}

TEST(MetricsListener, TakesGetsWithoutBodiesOnly) {
  WebhookServer server(withArgs({"--metrics-listen", "127.0.0.1:0"}));
  RawConnection post(server.metricsPort(), false);
  ASSERT_TRUE(post.connected());
  ASSERT_TRUE(post.send("POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"));
  const std::string refused = post.readResponse(5);
  EXPECT_EQ(statusOf(refused), 405) << refused;
  EXPECT_NE(refused.find("\r\nAllow: GET\r\n"), std::string::npos);
  RawConnection body(server.metricsPort(), false);
  ASSERT_TRUE(body.send("GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"));
  EXPECT_EQ(statusOf(body.readResponse(5)), 413);
  EXPECT_EQ(limitHits(server, "body_bytes"), 1);
}

TEST(MetricsListener, IsBoundedAsTheWebhooksTransportIs) {
  WebhookServer server(withArgs(
      {"--metrics-listen", "127.0.0.1:0", "--header-timeout", "1s", "--max-header-bytes", "2048"}));
  const int port = server.metricsPort();
  // Headers past the webhook's limit: 431.
  RawConnection large(port, false);
  ASSERT_TRUE(large.send("GET /metrics HTTP/1.1\r\nX-Big: " + std::string(4096, 'a') + "\r\n\r\n"));
  EXPECT_EQ(statusOf(large.readResponse(5)), 431);
  // Headers that do not come within the webhook's deadline: 408.
  RawConnection slow(port, false);
  ASSERT_TRUE(slow.send("GET /metrics HTTP/1.1\r\nHo"));
  const auto started = Clock::now();
  EXPECT_EQ(statusOf(slow.readResponse(5)), 408);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - started).count(), 3.0);
  // Past its connection cap the idle ones make room for newcomers.
  std::vector<std::unique_ptr<RawConnection>> idle;
  for (int i = 0; i < 70; ++i) {
    idle.push_back(std::make_unique<RawConnection>(port, false));
    ASSERT_TRUE(idle.back()->connected());
    ASSERT_TRUE(idle.back()->send(kGet));
    EXPECT_EQ(statusOf(idle.back()->readResponse(5)), 200) << "connection " << i;
  }
  EXPECT_TRUE(idle[0]->closedByPeer(5));
  EXPECT_GE(limitHits(server, "connections"), 6);
  // And the webhook's own port is left alone.
  EXPECT_EQ(server.get("/healthz").status, 200);
}

TEST(MetricsListener, ReadinessFailsWithTheWebhooksOnSigterm) {
  WebhookServer server(withArgs({"--metrics-listen", "127.0.0.1:0", "--shutdown-delay", "3"}));
  ASSERT_EQ(server.getPlain("/readyz").status, 200);
  kill(server.pid(), SIGTERM);
  ASSERT_TRUE(server.waitForOutput("\"msg\":\"shutting down\"", 5));
  EXPECT_EQ(server.getPlain("/readyz").status, 503);
  EXPECT_EQ(server.getPlain("/healthz").status, 200);
  EXPECT_EQ(server.terminate(), 0);
}

TEST(MetricsListener, IsOffUnlessAskedForAndRefusesWhatIsNoAddress) {
  WebhookServer server;
  EXPECT_FALSE(server.waitForOutput("\"msg\":\"metrics listening\"", 0.5));
  WebhookServer off(withArgs({"--metrics-listen", "off"}));
  EXPECT_FALSE(off.waitForOutput("\"msg\":\"metrics listening\"", 0.5));
  const std::vector<std::string> serve = {binaryPath(), "serve",
                                          "--tls-cert", devCertificates().file("tls.crt"),
                                          "--tls-key",  devCertificates().file("tls.key"),
                                          "--listen",   "127.0.0.1:0"};
  for (const char* bad : {"8080", "[::]:70000", "localhost:http", ""}) {
    std::vector<std::string> args = serve;
    args.push_back(std::string("--metrics-listen=") + bad);
    const CommandResult refused = runCommand(args);
    EXPECT_EQ(refused.exitCode, 2) << bad;
    EXPECT_NE(refused.err.find("--metrics-listen: HOST:PORT"), std::string::npos) << refused.err;
  }
  // A port in use stops the server, as the webhook's own does.
  std::vector<std::string> args = serve;
  args.push_back("--metrics-listen=127.0.0.1:" + std::to_string(server.port()));
  const CommandResult taken = runCommand(args);
  EXPECT_EQ(taken.exitCode, 1);
  EXPECT_NE(taken.out.find("\"msg\":\"cannot listen\""), std::string::npos) << taken.out;
}

}  // namespace
}  // namespace aiadmit
