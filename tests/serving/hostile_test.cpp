// Hostile bodies and clients, each with the bound it may not pass, asserted
// as bytes and counts (the server's peak resident memory from its VmHWM, the
// answers it gave, the gauges of /metrics), never as time: connections that
// declare large bodies and send nothing, a body of numbers, many large
// reviews at once, 40,000 containers, profiles that all tie, long names in
// the request log. Each refusal has its nearby allowed case beside it.
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/test_support.h"

namespace aiadmit {
namespace {

using namespace testing;

constexpr double kMiB = 1024.0 * 1024.0;

const std::string kGpuPod =
    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ml"},"spec":{"containers":[{"name":"c","image":"i","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})";

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

// The server's peak resident memory so far, in bytes (VmHWM).
double peakResidentBytes(const WebhookServer& server) {
  std::ifstream status("/proc/" + std::to_string(server.pid()) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) * 1024;
  }
  return -1;
}

std::string post(const std::string& target, size_t length) {
  return "POST " + target +
         " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(length) + "\r\n\r\n";
}

// A GPU Pod whose containers carry `env` variables each, up to about `bytes`.
std::string podOfSize(size_t bytes, size_t envPerContainer = 200) {
  std::string containers;
  for (size_t i = 0; containers.size() < bytes; ++i) {
    if (i > 0) containers += ",";
    containers += R"({"name":"c)" + std::to_string(i) + R"(","image":"i","env":[)";
    for (size_t e = 0; e < envPerContainer; ++e) {
      if (e > 0) containers += ",";
      containers += R"({"name":"E)" + std::to_string(e) + R"(","value":"v"})";
    }
    containers += R"(],"resources":{"limits":{"nvidia.com/gpu":"1"}}})";
  }
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"big","namespace":"ml"},"spec":{"containers":[)" +
         containers + "]}}";
}

// --- the in-flight budget -----------------------------------------------------------

// Sixteen connections that each declare an 8 MiB body and send one byte
// once took the whole budget (it was reserved from the declared length) and
// every other review got 503 until they closed. Now what arrived is charged:
// they hold 16 bytes, and a review is answered while they hang.
TEST(HostileBudget, DeclaredBodiesThatNeverArriveHoldNoBudget) {
  WebhookServer server(withArgs({"--max-body-bytes", "8388608"}));
  std::vector<std::unique_ptr<RawConnection>> hanging;
  for (int i = 0; i < 16; ++i) {
    hanging.push_back(std::make_unique<RawConnection>(server.port(), true));
    ASSERT_TRUE(hanging.back()->connected());
    ASSERT_TRUE(hanging.back()->send(post("/mutate", 8 * 1024 * 1024) + "{"));
  }
  for (int asked = 0; asked < 2000 && metric(server, "aiadmit_inflight_body_bytes") < 16; ++asked) {
  }
  EXPECT_EQ(metric(server, "aiadmit_inflight_body_bytes"), 16);
  const HttpResponse http = server.post("/mutate", makeReview(kGpuPod, "CREATE", "ordinary"));
  EXPECT_EQ(http.status, 200) << http.body.substr(0, 300);
  EXPECT_EQ(parseReviewResponse(http.body).uid, "ordinary");
  EXPECT_EQ(metric(server, "aiadmit_http_limit_hits_total{limit=\"inflight_body_bytes\"}"), 0);
}

// The default body limit is the API server's own request limit, 3 MiB: a
// body just over it is refused before it is read, one at it is read.
TEST(HostileBudget, TheDefaultBodyLimitIsTheApiServersThreeMebibytes) {
  WebhookServer server;
  RawConnection over(server.port(), true);
  ASSERT_TRUE(over.connected());
  ASSERT_TRUE(over.send(post("/mutate", 3 * 1024 * 1024 + 1)));
  const std::string refused = over.readResponse(10);
  EXPECT_EQ(statusOf(refused), 413) << refused.substr(0, 300);

  const std::string review = makeReview(kGpuPod, "CREATE", "at-limit");
  const std::string atLimit = review + std::string(3 * 1024 * 1024 - review.size(), ' ');
  const HttpResponse http = server.post("/mutate", atLimit);
  EXPECT_EQ(http.status, 200) << http.body.substr(0, 300);
}

// --- what a document may cost ----------------------------------------------------------

// A 3 MiB review of numbers ("[1,1,...]") once cost 43 times its size to
// parse. The document's values are bounded by the body's size: it is refused
// as a bad request (400), having cost at most 16 times its size (13.6
// measured), while a
// review of the same size as Kubernetes writes objects is decided.
TEST(HostileDocument, ABodyOfNumbersIsRefusedAtASmallMultipleOfItsSize) {
  WebhookServer server(withArgs({"--io-threads", "1"}));
  ASSERT_EQ(server.post("/mutate", makeReview(kGpuPod, "CREATE", "warm")).status, 200);
  const double before = peakResidentBytes(server);

  std::string numbers = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"n"},"numbers":[1)";
  while (numbers.size() < 3 * 1024 * 1024 - 1024) numbers += ",1";
  numbers += R"(],"spec":{"containers":[{"name":"c","image":"i"}]}})";
  const std::string body = makeReview(numbers, "CREATE", "numbers");
  ASSERT_LE(body.size(), 3u * 1024 * 1024);
  const HttpResponse refused = server.post("/mutate", body);
  EXPECT_EQ(refused.status, 400) << refused.body.substr(0, 300);
  EXPECT_NE(refused.body.find("values"), std::string::npos) << refused.body.substr(0, 300);
  const double growth = peakResidentBytes(server) - before;
  RecordProperty("growth_bytes", std::to_string(growth));
  RecordProperty("body_bytes", std::to_string(body.size()));
  EXPECT_LE(growth, 16.0 * static_cast<double>(body.size()))
      << growth / kMiB << " MiB for a body of " << body.size() / kMiB << " MiB";

  const std::string ordinary = makeReview(podOfSize(3 * 1024 * 1024 - 4096), "CREATE", "big");
  ASSERT_LE(ordinary.size(), 3u * 1024 * 1024);
  const HttpResponse decided = server.post("/mutate", ordinary);
  EXPECT_EQ(decided.status, 200) << decided.body.substr(0, 300);
  EXPECT_TRUE(parseReviewResponse(decided.body).allowed);
}

// Sixteen reviews of 7.9 MiB at once once took the server to 341 MB against
// the Pod's 256 Mi memory limit. Sixteen of the largest body allowed now (3
// MiB) to /mutate, all at once: every one answered, and the peak stays under
// half the limit, 128 MiB (about 82 MiB measured).
TEST(HostileDocument, SixteenLargestReviewsAtOnceStayWellUnderThePodsMemoryLimit) {
  WebhookServer server;
  const std::string body = makeReview(podOfSize(3 * 1024 * 1024 - 4096), "CREATE", "large");
  ASSERT_LE(body.size(), 3u * 1024 * 1024);
  std::atomic<int> answered{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < 16; ++i) {
    clients.emplace_back([&] {
      if (server.post("/mutate", body).status == 200) ++answered;
    });
  }
  for (std::thread& client : clients) client.join();
  EXPECT_EQ(answered.load(), 16);
  const double peak = peakResidentBytes(server);
  RecordProperty("peak_bytes", std::to_string(peak));
  EXPECT_LE(peak, 128 * kMiB) << peak / kMiB << " MiB";
}

// --- violations ----------------------------------------------------------------------

std::string podOfMisspeltContainers(size_t count) {
  std::string containers;
  for (size_t i = 0; i < count; ++i) {
    if (i > 0) containers += ",";
    containers += R"({"name":"c)" + std::to_string(i) +
                  R"(","image":"i","resources":{"limits":{"nvidia.com/gpus":"1"}}})";
  }
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"many","namespace":"ml","annotations":{"aiadmit.dev/workload":"batch"}},"spec":{"restartPolicy":"Never","containers":[)" +
         containers + "]}}";
}

size_t countOf(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

// 40,000 containers with one misspelt GPU each once took 7.9 s of the only
// I/O thread to de-duplicate their violations, pairwise. Now the denial
// lists 20 of them and says how many more there are, /healthz and /metrics
// are answered while it is decided (on a review worker), and three
// containers are listed one by one, with no such line.
TEST(HostileViolations, FortyThousandViolationsAreCappedAndHealthzAnswersMeanwhile) {
  WebhookServer server(withArgs({"--io-threads", "1"}));
  const std::string body = makeReview(podOfMisspeltContainers(40000), "CREATE", "many");
  HttpResponse denial;
  std::thread client([&] { denial = server.post("/validate", body); });
  // Asked until the review is seen on the workers, or answered.
  double onWorkers = 0;
  int healthy = 0;
  for (int asked = 0; asked < 20000 && onWorkers < 1; ++asked) {
    healthy += server.get("/healthz").status == 200 ? 1 : 0;
    onWorkers = metric(server, "aiadmit_reviews_on_workers");
  }
  client.join();
  EXPECT_EQ(onWorkers, 1) << "the review was never seen being decided off the I/O thread";
  EXPECT_GE(healthy, 1);
  ASSERT_EQ(denial.status, 200) << denial.body.substr(0, 300);
  const ReviewResponse response = parseReviewResponse(denial.body);
  EXPECT_FALSE(response.allowed);
  EXPECT_EQ(countOf(response.message, "[AIA003]"), 21u) << response.message.substr(0, 600);
  EXPECT_NE(response.message.find("39980 more violations of this rule, not listed"),
            std::string::npos)
      << response.message.substr(0, 600);

  const HttpResponse few =
      server.post("/validate", makeReview(podOfMisspeltContainers(3), "CREATE", "few"));
  const ReviewResponse listed = parseReviewResponse(few.body);
  EXPECT_FALSE(listed.allowed);
  EXPECT_EQ(countOf(listed.message, "[AIA003]"), 3u) << listed.message;
  EXPECT_EQ(listed.message.find("more violation"), std::string::npos) << listed.message;
}

// --- the profiles ConfigMap ------------------------------------------------------------

std::string sameScopeProfiles(size_t count) {
  std::string text;
  for (size_t i = 0; i < count; ++i) {
    text += "---\napiVersion: aiadmit.dev/v1\nkind: Profile\nmetadata:\n  name: p" +
            std::to_string(i) +
            "\nspec:\n  class: training\n  gpu:\n    resourceName: nvidia.com/gpu\n";
  }
  return text;
}

std::string profilesReview(const std::string& yaml, const std::string& uid) {
  std::string escaped;
  for (char c : yaml) escaped += c == '\n' ? std::string("\\n") : std::string(1, c);
  const std::string configMap =
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"aiadmit-profiles","namespace":"aiadmit"},"data":{"profiles.yaml":")" +
      escaped + R"("}})";
  return R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":")" +
         uid +
         R"(","kind":{"group":"","version":"v1","kind":"ConfigMap"},"operation":"CREATE","namespace":"aiadmit","name":"aiadmit-profiles","object":)" +
         configMap + "}}";
}

// 1,200 profiles of one scope (about 96 KB) once made 720,000 tie messages
// and took the server to 215 MB. Each profile is now reported once, and at
// most 100 ties: the set is refused at a small cost. Two profiles of
// different classes in one scope do not tie, and load.
TEST(HostileProfiles, ProfilesThatAllTieAreReportedOnceEachAtASmallCost) {
  WebhookServer server;
  ASSERT_EQ(server.post("/mutate", makeReview(kGpuPod, "CREATE", "warm")).status, 200);
  const double before = peakResidentBytes(server);
  const HttpResponse http =
      server.post("/validate-profiles", profilesReview(sameScopeProfiles(1200), "ties"));
  ASSERT_EQ(http.status, 200) << http.body.substr(0, 300);
  const ReviewResponse response = parseReviewResponse(http.body);
  EXPECT_FALSE(response.allowed);
  EXPECT_NE(response.message.find("(101 errors)"), std::string::npos)
      << response.message.substr(0, 300);
  const double growth = peakResidentBytes(server) - before;
  RecordProperty("growth_bytes", std::to_string(growth));
  EXPECT_LE(growth, 64 * kMiB) << growth / kMiB << " MiB";

  const std::string apart =
      "apiVersion: aiadmit.dev/v1\nkind: Profile\nmetadata:\n  name: a\nspec:\n  class: "
      "training\n---\napiVersion: aiadmit.dev/v1\nkind: Profile\nmetadata:\n  name: "
      "b\nspec:\n  class: batch\n";
  const HttpResponse loads = server.post("/validate-profiles", profilesReview(apart, "apart"));
  EXPECT_TRUE(parseReviewResponse(loads.body).allowed) << loads.body.substr(0, 300);
}

// --- the request log -------------------------------------------------------------------

// A name of 10,000 bytes is logged cut to 512, ending in "..."; a name of
// Kubernetes' longest, 253 bytes, is logged whole.
TEST(HostileLog, RequestLogFieldsAreCutAndShortOnesKeptWhole) {
  WebhookServer server;
  const std::string longName(10000, 'n');
  const std::string longest(253, 'k');
  for (const std::string* name : {&longName, &longest}) {
    const std::string pod =
        R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + *name +
        R"(","namespace":"ml"},"spec":{"containers":[{"name":"c","image":"i"}]}})";
    ASSERT_EQ(server.post("/mutate", makeReview(pod, "CREATE", "named")).status, 200);
  }
  ASSERT_TRUE(server.waitForOutput("\"name\":\"" + longest + "\"", 20));
  ASSERT_TRUE(server.waitForOutput("\"name\":\"" + std::string(509, 'n') + "...\"", 20));
  EXPECT_EQ(server.output().find(std::string(510, 'n')), std::string::npos);
}

}  // namespace
}  // namespace aiadmit
