// Every limit and deadline of the transport, hit over real TLS connections:
// the right status, the connection ended where it must be, the server still
// serving the next client, and the hit counted in /metrics.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <regex>

#include "tests/support/test_support.h"

namespace aiadmit {
namespace {

using namespace testing;
using Clock = std::chrono::steady_clock;

const std::string kGpuPod =
    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ml"},"spec":{"containers":[{"name":"c","image":"i","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})";

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

WebhookServer::Options withArgs(std::vector<std::string> args) {
  WebhookServer::Options options;
  options.extraArgs = std::move(args);
  return options;
}

// A sample of /metrics, -1 when absent.
double metric(const WebhookServer& server, const std::string& sample) {
  const std::string text = server.get("/metrics").body;
  const size_t at = text.find("\n" + sample + " ");
  return at == std::string::npos ? -1 : std::stod(text.substr(at + sample.size() + 2));
}

double limitHits(const WebhookServer& server, const std::string& limit) {
  return metric(server, "aiadmit_http_limit_hits_total{limit=\"" + limit + "\"}");
}

void expectStillServing(const WebhookServer& server) {
  const HttpResponse http = server.post("/mutate", makeReview(kGpuPod, "CREATE", "after"));
  EXPECT_EQ(http.status, 200);
  EXPECT_EQ(parseReviewResponse(http.body).uid, "after");
}

std::string post(const std::string& target, const std::string& extraHeaders, size_t length) {
  return "POST " + target + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
         extraHeaders + "Content-Length: " + std::to_string(length) + "\r\n\r\n";
}

bool closesConnection(const std::string& response) {
  return response.find("\r\nConnection: close\r\n") != std::string::npos;
}

TEST(Limits, HeadersOverTheLimitAre431AndCounted) {
  WebhookServer server(withArgs({"--max-header-bytes", "2048"}));
  RawConnection connection(server.port(), true);
  ASSERT_TRUE(connection.connected());
  // Many small headers, as a hostile client would trickle them.
  std::string headers;
  for (int i = 0; i < 200; ++i) headers += "X-H" + std::to_string(i) + ": v\r\n";
  ASSERT_TRUE(connection.send(post("/mutate", headers, 2) + "{}"));
  const std::string response = connection.readResponse(5);
  EXPECT_EQ(statusOf(response), 431) << response;
  EXPECT_TRUE(closesConnection(response)) << response;
  EXPECT_TRUE(connection.closedByPeer(5));
  EXPECT_EQ(limitHits(server, "header_bytes"), 1);
  expectStillServing(server);
}

TEST(Limits, HeadersJustUnderTheLimitAreServed) {
  WebhookServer server(withArgs({"--max-header-bytes", "2048"}));
  RawConnection connection(server.port(), true);
  ASSERT_TRUE(connection.connected());
  const std::string body = makeReview(kGpuPod, "CREATE", "big-headers");
  ASSERT_TRUE(connection.send(
      post("/mutate", "X-Pad: " + std::string(1800, 'p') + "\r\n", body.size()) + body));
  EXPECT_EQ(statusOf(connection.readResponse(5)), 200);
}

TEST(Limits, RequestLineOverTheLimitIs414EvenBeforeItEnds) {
  WebhookServer server(withArgs({"--max-request-line-bytes", "512"}));
  RawConnection connection(server.port(), true);
  ASSERT_TRUE(connection.connected());
  // No newline yet: the line is refused as soon as it is longer than allowed.
  ASSERT_TRUE(connection.send("POST /mutate?x=" + std::string(2000, 'a')));
  const std::string response = connection.readResponse(5);
  EXPECT_EQ(statusOf(response), 414) << response;
  EXPECT_NE(response.find("longer than 512 bytes"), std::string::npos) << response;
  EXPECT_EQ(limitHits(server, "request_line_bytes"), 1);
  expectStillServing(server);
}

TEST(Limits, BodyOverTheLimitIs413BeforeItIsReadAndTheAnswerSurvivesTheRestOfTheBody) {
  WebhookServer server(withArgs({"--max-body-bytes", "4096"}));
  RawConnection connection(server.port(), true);
  ASSERT_TRUE(connection.connected());
  // The body follows at once, as Go clients send it: the 413 must not be
  // lost to a reset when the server closes with the body unread.
  ASSERT_TRUE(connection.send(post("/mutate", "", 200000) + std::string(200000, ' ')));
  const std::string response = connection.readResponse(5);
  EXPECT_EQ(statusOf(response), 413) << response;
  EXPECT_NE(response.find("larger than 4096 bytes"), std::string::npos) << response;
  EXPECT_TRUE(closesConnection(response));
  EXPECT_EQ(limitHits(server, "body_bytes"), 1);
  expectStillServing(server);
}

TEST(Limits, ChunkedBodyOverTheLimitIs413) {
  WebhookServer server(withArgs({"--max-body-bytes", "4096"}));
  RawConnection connection(server.port(), true);
  ASSERT_TRUE(connection.connected());
  std::string chunks;
  for (int i = 0; i < 10; ++i) chunks += "400\r\n" + std::string(1024, ' ') + "\r\n";
  ASSERT_TRUE(
      connection.send("POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      "Transfer-Encoding: chunked\r\n\r\n" +
                      chunks));
  EXPECT_EQ(statusOf(connection.readResponse(5)), 413);
  EXPECT_EQ(limitHits(server, "body_bytes"), 1);
}

// The budget is charged as the bytes arrive: four connections hold 23,000
// bytes each of a 100,000-byte budget. A body that would pass it waits,
// unread: answered 503 at its deadline, or served once one of the four is
// answered and gives its bytes back.
TEST(Limits, ABodyOverTheBudgetWaitsForRoomAndIs503OnlyAtItsDeadline) {
  WebhookServer server(withArgs({"--max-inflight-body-bytes", "100000"}));
  const std::string head = makeReview(kGpuPod, "CREATE", "held");
  const std::string body = head + std::string(24000 - head.size(), ' ');
  constexpr size_t kSent = 23000;
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 4; ++i) {
    held.push_back(std::make_unique<RawConnection>(server.port(), true));
    ASSERT_TRUE(held.back()->connected());
    ASSERT_TRUE(held.back()->send(post("/mutate", "", body.size()) + body.substr(0, kSent)));
  }
  // Every held byte is in (the metric counts what arrived) before the next body.
  for (int asked = 0; asked < 2000 && metric(server, "aiadmit_inflight_body_bytes") < 4 * kSent;
       ++asked) {
  }
  ASSERT_EQ(metric(server, "aiadmit_inflight_body_bytes"), 4.0 * kSent);

  RawConnection late(server.port(), true);
  ASSERT_TRUE(late.connected());
  ASSERT_TRUE(late.send(post("/mutate?timeout=1s", "", body.size()) + body));
  const std::string refused = late.readResponse(10);
  EXPECT_EQ(statusOf(refused), 503) << refused;
  EXPECT_NE(refused.find("too many request bodies in flight"), std::string::npos) << refused;
  EXPECT_EQ(limitHits(server, "inflight_body_bytes"), 1);
  EXPECT_EQ(metric(server, "aiadmit_inflight_body_bytes"), 4.0 * kSent);

  RawConnection waiting(server.port(), true);
  ASSERT_TRUE(waiting.connected());
  ASSERT_TRUE(waiting.send(post("/mutate", "", body.size()) + body));
  ASSERT_TRUE(held.front()->send(body.substr(kSent)));
  EXPECT_EQ(statusOf(held.front()->readResponse(5)), 200);
  EXPECT_EQ(statusOf(waiting.readResponse(5)), 200);
  EXPECT_EQ(limitHits(server, "inflight_body_bytes"), 1);
  EXPECT_EQ(metric(server, "aiadmit_inflight_body_bytes"), 3.0 * kSent);
}

// No connection holds more than a quarter of the budget: past it the body is
// refused before it is read, as one over --max-body-bytes; a body of exactly
// that share is served.
TEST(Limits, ABodyOverItsConnectionsShareIs413AndOneAtTheShareIsServed) {
  WebhookServer server(withArgs({"--max-inflight-body-bytes", "100000"}));
  const std::string head = makeReview(kGpuPod, "CREATE", "share");
  const std::string atShare = head + std::string(25000 - head.size(), ' ');
  const HttpResponse served = server.post("/mutate", atShare);
  EXPECT_EQ(served.status, 200) << served.body.substr(0, 300);

  RawConnection over(server.port(), true);
  ASSERT_TRUE(over.connected());
  ASSERT_TRUE(over.send(post("/mutate", "", atShare.size() + 1)));
  const std::string refused = over.readResponse(5);
  EXPECT_EQ(statusOf(refused), 413) << refused;
  EXPECT_NE(refused.find("larger than 25000 bytes"), std::string::npos) << refused;
  EXPECT_EQ(limitHits(server, "body_bytes"), 1);
  expectStillServing(server);
}

TEST(Limits, DuplicateOrMalformedContentLengthIs400) {
  WebhookServer server;
  const std::string body = makeReview(kGpuPod, "CREATE", "dup");
  const std::string length = std::to_string(body.size());
  for (const std::string& headers :
       {"Content-Length: " + length + "\r\nContent-Length: " + length + "\r\n",
        "Content-Length: " + length + ", " + length + "\r\n",
        "Content-Length: " + length + "\r\nContent-Length: 5\r\n",
        std::string("Content-Length: 12a\r\n"), std::string("Content-Length: -1\r\n"),
        std::string("Content-Length: 99999999999999999999999\r\n")}) {
    SCOPED_TRACE(headers);
    RawConnection connection(server.port(), true);
    ASSERT_TRUE(connection.connected());
    ASSERT_TRUE(
        connection.send("POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
                        headers + "\r\n" + body));
    const std::string response = connection.readResponse(5);
    EXPECT_EQ(statusOf(response), 400) << response;
    EXPECT_TRUE(closesConnection(response));
  }
  EXPECT_EQ(metric(server, "aiadmit_http_malformed_requests_total"), 6);
  expectStillServing(server);
}

TEST(Deadlines, AStalledHandshakeIsClosedAtTheHandshakeDeadline) {
  WebhookServer server(withArgs({"--handshake-timeout", "500ms"}));
  RawConnection silent(server.port(), false);
  RawConnection trickling(server.port(), false);
  ASSERT_TRUE(silent.connected());
  ASSERT_TRUE(trickling.connected());
  const auto started = Clock::now();
  ASSERT_TRUE(trickling.send("\x16\x03"));  // the first bytes of a ClientHello, and no more
  EXPECT_TRUE(silent.closedByPeer(5));
  EXPECT_TRUE(trickling.closedByPeer(5));
  EXPECT_GT(secondsSince(started), 0.4);
  EXPECT_EQ(limitHits(server, "handshake_timeout"), 2);
  expectStillServing(server);
}

TEST(Deadlines, HeadersThatDoNotArriveInTimeAre408) {
  WebhookServer server(withArgs({"--header-timeout", "1s"}));
  RawConnection connection(server.port(), true);
  ASSERT_TRUE(connection.connected());
  const auto started = Clock::now();
  ASSERT_TRUE(connection.send("POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Ty"));
  // Trickled: each byte is progress, but only the deadline counts.
  std::string response;
  for (int i = 0; i < 40 && response.empty(); ++i) {
    connection.send("p");
    response = connection.readResponse(0.1);
  }
  response += connection.readResponse(2);
  EXPECT_EQ(statusOf(response), 408) << response;
  EXPECT_GT(secondsSince(started), 0.9);
  EXPECT_LT(secondsSince(started), 3.0);
  EXPECT_EQ(limitHits(server, "header_timeout"), 1);
  expectStillServing(server);
}

TEST(Deadlines, AHugeTimeoutParameterIsCappedWithoutOverflow) {
  WebhookServer server(withArgs({"--max-request-timeout", "1s", "--body-timeout", "1500ms"}));
  for (const char* timeout : {"99999999999999999999999999h", "1e400s", "-5s", "10x"}) {
    SCOPED_TRACE(timeout);
    RawConnection connection(server.port(), true);
    ASSERT_TRUE(connection.connected());
    const auto started = Clock::now();
    ASSERT_TRUE(connection.send(post(std::string("/mutate?timeout=") + timeout, "", 1000) + "{"));
    const std::string response = connection.readResponse(10);
    EXPECT_EQ(statusOf(response), 408) << response;
    EXPECT_GT(secondsSince(started), 0.9);
    EXPECT_LT(secondsSince(started), 5.0);
  }
  EXPECT_EQ(limitHits(server, "body_timeout"), 4);
}

TEST(Deadlines, AnIdleKeepAliveConnectionIsClosedAtTheIdleTimeout) {
  WebhookServer server(withArgs({"--idle-timeout", "1s"}));
  RawConnection connection(server.port(), true);
  ASSERT_TRUE(connection.connected());
  const std::string body = makeReview(kGpuPod, "CREATE", "idle");
  ASSERT_TRUE(connection.send(post("/mutate", "", body.size()) + body));
  const std::string response = connection.readResponse(5);
  ASSERT_EQ(statusOf(response), 200);
  EXPECT_FALSE(closesConnection(response));
  const auto idleFrom = Clock::now();
  EXPECT_TRUE(connection.closedByPeer(5));
  EXPECT_GT(secondsSince(idleFrom), 0.8);
  EXPECT_EQ(limitHits(server, "idle_timeout"), 1);
}

TEST(Deadlines, AClientThatDoesNotReadItsAnswersIsClosedAtTheWriteDeadline) {
  WebhookServer server(withArgs({"--write-timeout", "1s"}));
  RawConnection connection(server.port(), true);
  ASSERT_TRUE(connection.connected());
  // Thousands of pipelined requests whose answers are never read: the
  // answers fill the socket buffers and the server's write stalls.
  std::string requests;
  for (int i = 0; i < 3000; ++i) requests += "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_TRUE(connection.send(requests));
  double hits = 0;
  for (const auto started = Clock::now(); hits < 1 && secondsSince(started) < 10;) {
    hits = limitHits(server, "write_timeout");
  }
  EXPECT_EQ(hits, 1);
  expectStillServing(server);
}

TEST(ConnectionCap, ANewClientIsServedAndTheLongestIdleConnectionIsClosed) {
  WebhookServer server(withArgs({"--max-connections", "4", "--io-threads", "1"}));
  std::vector<std::unique_ptr<RawConnection>> idle;
  for (int i = 0; i < 4; ++i) {
    idle.push_back(std::make_unique<RawConnection>(server.port(), true));
    ASSERT_TRUE(idle.back()->connected());
    ASSERT_TRUE(idle.back()->send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
    ASSERT_EQ(statusOf(idle.back()->readResponse(5)), 200);
  }
  // Each new client pushes out the connection that has been idle longest.
  expectStillServing(server);
  EXPECT_TRUE(idle[0]->closedByPeer(5));
  EXPECT_GE(limitHits(server, "connections"), 1);
  ASSERT_TRUE(idle[3]->send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_EQ(statusOf(idle[3]->readResponse(5)), 200);
}

TEST(ConnectionCap, NewClientsAreServedWhicheverThreadHoldsTheIdleConnections) {
  WebhookServer server(withArgs({"--max-connections", "4", "--io-threads", "2"}));
  std::vector<std::unique_ptr<RawConnection>> idle;
  for (int i = 0; i < 4; ++i) {
    idle.push_back(std::make_unique<RawConnection>(server.port(), true));
    ASSERT_TRUE(idle.back()->connected());
  }
  // Newcomers that stay: each one pushes out the connection idle longest,
  // on whichever thread it is.
  std::vector<std::unique_ptr<RawConnection>> newcomers;
  for (int i = 0; i < 8; ++i) {
    newcomers.push_back(std::make_unique<RawConnection>(server.port(), true));
    ASSERT_TRUE(newcomers.back()->connected());
    ASSERT_TRUE(newcomers.back()->send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
    EXPECT_EQ(statusOf(newcomers.back()->readResponse(5)), 200) << "newcomer " << i;
  }
  for (const auto& connection : idle) EXPECT_TRUE(connection->closedByPeer(5));
  EXPECT_GE(limitHits(server, "connections"), 8);
}

TEST(Listening, APortInUseIsAClearErrorAndExitOne) {
  WebhookServer first;
  const CommandResult second =
      runCommand({binaryPath(), "serve", "--profiles", sourceDir() + "/profiles", "--tls-cert",
                  devCertificates().file("tls.crt"), "--tls-key", devCertificates().file("tls.key"),
                  "--listen", "127.0.0.1:" + std::to_string(first.port())});
  EXPECT_EQ(second.exitCode, 1);
  EXPECT_NE((second.out + second.err).find("\"msg\":\"cannot listen\""), std::string::npos)
      << second.out << second.err;
  EXPECT_NE((second.out + second.err).find("in use"), std::string::npos) << second.out;
  expectStillServing(first);
}

TEST(Listening, ABurstOfConnectsIsAcceptedWithoutWaiting) {
  WebhookServer server;
  std::vector<std::unique_ptr<RawConnection>> burst;
  const auto started = Clock::now();
  for (int i = 0; i < 200; ++i)
    burst.push_back(std::make_unique<RawConnection>(server.port(), true));
  for (const auto& connection : burst) EXPECT_TRUE(connection->connected());
  // A backlog of 5 made some of these wait for SYN retransmits (1 s and more).
  EXPECT_LT(secondsSince(started), 5.0);
  expectStillServing(server);
}

TEST(Signals, UserSignalsAndAlarmsDoNotStopTheServer) {
  WebhookServer server;
  for (int signal : {SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM}) {
    ASSERT_EQ(kill(server.pid(), signal), 0);
  }
  ASSERT_TRUE(server.waitForOutput("\"signal\":\"SIGVTALRM\"", 5)) << server.output();
  expectStillServing(server);
  EXPECT_EQ(server.get("/readyz").status, 200);
}

TEST(Signals, SigquitDrainsLikeSigterm) {
  WebhookServer server;
  ASSERT_EQ(kill(server.pid(), SIGQUIT), 0);
  ASSERT_TRUE(server.waitForOutput("\"msg\":\"stopped\"", 10)) << server.output();
  EXPECT_NE(server.output().find("\"signal\":\"SIGQUIT\""), std::string::npos);
  EXPECT_EQ(server.terminate(), 0);
}

TEST(Signals, SighupReloadsProfilesAndCertificateAtOnce) {
  WebhookServer server(withArgs({}));
  ASSERT_EQ(kill(server.pid(), SIGHUP), 0);
  ASSERT_TRUE(server.waitForOutput("\"msg\":\"certificate reloaded\"", 5)) << server.output();
  EXPECT_NE(server.output().find("\"msg\":\"profiles reloaded\""), std::string::npos);
  EXPECT_EQ(metric(server, "aiadmit_profile_reloads_total{result=\"success\"}"), 2);
  expectStillServing(server);
}

TEST(Drain, AnswersDuringTheShutdownDelayCloseTheirConnection) {
  WebhookServer server(withArgs({"--shutdown-delay", "3s"}));
  RawConnection kept(server.port(), true);
  ASSERT_TRUE(kept.connected());
  const std::string body = makeReview(kGpuPod, "CREATE", "before");
  ASSERT_TRUE(kept.send(post("/mutate", "", body.size()) + body));
  ASSERT_FALSE(closesConnection(kept.readResponse(5)));

  ASSERT_EQ(kill(server.pid(), SIGTERM), 0);
  ASSERT_TRUE(server.waitForOutput("\"msg\":\"shutting down\"", 5));
  // The next request on the kept connection is answered, and told to go elsewhere.
  ASSERT_TRUE(kept.send(post("/mutate", "", body.size()) + body));
  const std::string response = kept.readResponse(5);
  EXPECT_EQ(statusOf(response), 200) << response;
  EXPECT_TRUE(closesConnection(response)) << response;
  EXPECT_TRUE(kept.closedByPeer(5));
  EXPECT_EQ(server.terminate(), 0);
}

TEST(Http, PipelinedRequestsAreAnsweredInOrder) {
  WebhookServer server;
  RawConnection connection(server.port(), true);
  ASSERT_TRUE(connection.connected());
  std::string requests;
  for (const char* uid : {"pipe-1", "pipe-2", "pipe-3"}) {
    const std::string body = makeReview(kGpuPod, "CREATE", uid);
    requests += post("/mutate", "", body.size()) + body;
  }
  ASSERT_TRUE(connection.send(requests));
  for (const char* uid : {"pipe-1", "pipe-2", "pipe-3"}) {
    const std::string response = connection.readResponse(5);
    EXPECT_EQ(statusOf(response), 200) << response;
    EXPECT_NE(response.find(std::string("\"uid\":\"") + uid + "\""), std::string::npos)
        << uid << " in " << response;
  }
}

TEST(Http, ExpectContinueGetsA100ThenTheAnswer) {
  WebhookServer server;
  RawConnection connection(server.port(), true);
  ASSERT_TRUE(connection.connected());
  const std::string body = makeReview(kGpuPod, "CREATE", "continued");
  ASSERT_TRUE(connection.send(post("/mutate", "Expect: 100-continue\r\n", body.size())));
  const std::string interim = connection.readResponse(5);
  EXPECT_EQ(statusOf(interim), 100) << interim;
  ASSERT_TRUE(connection.send(body));
  const std::string response = connection.readResponse(5);
  EXPECT_EQ(statusOf(response), 200) << response;
  EXPECT_NE(response.find("\"uid\":\"continued\""), std::string::npos);
}

TEST(Flags, EveryLimitIsAFlagWithItsDefaultAndBadValuesAreRefused) {
  const CommandResult help = runCommand({binaryPath(), "serve", "--help"});
  EXPECT_EQ(help.exitCode, 0);
  for (const char* flag :
       {"--max-connections N", "(default 4096)", "--max-header-bytes N", "(default 16 KiB)",
        "--max-request-line-bytes N", "--max-body-bytes N", "(default 3 MiB)",
        "--max-inflight-body-bytes N", "--io-threads N", "--handshake-timeout DUR",
        "--header-timeout DUR", "--body-timeout DUR", "--max-request-timeout DUR", "(default 30s)",
        "--write-timeout DUR", "--idle-timeout DUR", "(default 90s)", "--shutdown-delay DUR"}) {
    EXPECT_NE(help.out.find(flag), std::string::npos) << flag << " in\n" << help.out;
  }
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"--max-body-bytes", "8MiB"},
                                              {"--max-connections=2"},
                                              {"--idle-timeout", "forever"},
                                              {"--header-timeout", "-1s"},
                                              {"--body-timeout"}}) {
    std::vector<std::string> argv = {binaryPath(), "serve", "--tls-cert", "x", "--tls-key", "y"};
    argv.insert(argv.end(), bad.begin(), bad.end());
    const CommandResult result = runCommand(argv);
    EXPECT_EQ(result.exitCode, 2) << bad[0];
    EXPECT_NE(result.err.find(bad[0].substr(0, bad[0].find('='))), std::string::npos) << result.err;
  }
}

}  // namespace
}  // namespace aiadmit
