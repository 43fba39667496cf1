// Anything the API server or a person can send gets a well-formed answer, and
// the server goes on serving: each case is followed by a good request.
#include <gtest/gtest.h>

#include "tests/support/test_support.h"

namespace aiadmit {
namespace {

using namespace testing;

const std::string kEnvelope = R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",)";

std::string review(const std::string& request) {
  return kEnvelope + R"("request":)" + request + "}";
}

std::string podRequest(const std::string& operation, const std::string& object,
                       const std::string& extra = "") {
  return R"({"uid":"bad-1","kind":{"group":"","version":"v1","kind":"Pod"},"operation":")" +
         operation + R"(","namespace":"ml")" + extra + R"(,"object":)" + object + "}";
}

const std::string kGpuPod =
    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})";

std::string containers(size_t count) {
  std::string list;
  for (size_t i = 0; i < count; ++i) {
    if (i > 0) list += ",";
    list += R"({"name":"c)" + std::to_string(i) + R"(","image":"i"})";
  }
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"many"},"spec":{"containers":[)" +
         list + "]}}";
}

struct BadInput {
  std::string name;
  std::string path;
  std::string body;
  std::string contentType;
  int status;         // expected HTTP status
  bool reviewAnswer;  // the body is an AdmissionReview
  bool allowed;       // when it is: its allowed
};

void PrintTo(const BadInput& input, std::ostream* out) {
  *out << input.name;
}

class BadInputTest : public ::testing::TestWithParam<BadInput> {};

TEST_P(BadInputTest, GetsAWellFormedAnswerAndTheServerKeepsServing) {
  const BadInput& input = GetParam();
  WebhookServer server;
  const HttpResponse http = server.post(input.path, input.body, input.contentType);
  EXPECT_EQ(http.status, input.status) << http.body.substr(0, 300);
  if (input.reviewAnswer) {
    const ReviewResponse response = parseReviewResponse(http.body);
    EXPECT_EQ(response.apiVersion, "admission.k8s.io/v1");
    EXPECT_EQ(response.allowed, input.allowed) << http.body.substr(0, 300);
    if (!response.allowed) {
      // A refused body is an error with the HTTP status; a policy denial is 403 in a 200.
      EXPECT_EQ(response.statusCode, input.status == 200 ? 403 : input.status);
      EXPECT_FALSE(response.message.empty());
    }
  }
  const HttpResponse good = server.post("/mutate", makeReview(kGpuPod, "CREATE", "after"));
  ASSERT_EQ(good.status, 200);
  EXPECT_EQ(parseReviewResponse(good.body).uid, "after");
}

const std::string json = "application/json";

INSTANTIATE_TEST_SUITE_P(
    Bodies, BadInputTest,
    ::testing::Values(
        BadInput{"MalformedJson", "/mutate", "{\"apiVersion\":", json, 400, true, false},
        BadInput{"NotJsonAtAll", "/mutate", "hello", json, 400, true, false},
        BadInput{"EmptyBody", "/mutate", "", json, 400, true, false},
        BadInput{"JsonArray", "/mutate", "[1,2,3]", json, 400, true, false},
        BadInput{"JsonString", "/validate", "\"review\"", json, 400, true, false},
        BadInput{"ObjectNotAReview", "/mutate", R"({"apiVersion":"v1","kind":"Pod"})", json, 400,
                 true, false},
        BadInput{
            "V1beta1", "/mutate",
            R"({"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"x"}})",
            json, 400, true, false},
        BadInput{
            "UnknownApiVersion", "/mutate",
            R"({"apiVersion":"admission.k8s.io/v2","kind":"AdmissionReview","request":{"uid":"x"}})",
            json, 400, true, false},
        BadInput{"MissingRequest", "/mutate", kEnvelope + R"("x":1})", json, 400, true, false},
        BadInput{"MissingUid", "/mutate",
                 review(R"({"kind":{"kind":"Pod"},"operation":"CREATE","object":{}})"), json, 400,
                 true, false},
        BadInput{"EmptyUid", "/mutate",
                 review(R"({"uid":"","kind":{"kind":"Pod"},"operation":"CREATE","object":{}})"),
                 json, 400, true, false},
        BadInput{"UidIsANumber", "/validate",
                 review(R"({"uid":42,"kind":{"kind":"Pod"},"operation":"CREATE","object":{}})"),
                 json, 400, true, false},
        BadInput{"MissingObject", "/mutate",
                 review(R"({"uid":"u","kind":{"kind":"Pod"},"operation":"CREATE"})"), json, 400,
                 true, false},
        BadInput{"ObjectIsAString", "/mutate", review(podRequest("CREATE", "\"pod\"")), json, 400,
                 true, false},
        BadInput{"ObjectIsAnArray", "/validate", review(podRequest("CREATE", "[]")), json, 400,
                 true, false},
        BadInput{"ObjectIsNullOnUpdate", "/validate", review(podRequest("UPDATE", "null")), json,
                 400, true, false},
        BadInput{"UnknownOperation", "/mutate", review(podRequest("PATCH", kGpuPod)), json, 400,
                 true, false},
        BadInput{
            "UnknownKind", "/mutate",
            review(
                R"({"uid":"u","kind":{"group":"","version":"v1","kind":"ConfigMap"},"operation":"CREATE","object":{"data":{"a":"b"}}})"),
            json, 200, true, true},
        BadInput{
            "UnknownAppsKind", "/validate",
            review(
                R"({"uid":"u","kind":{"group":"apps","version":"v1","kind":"DaemonSet"},"operation":"CREATE","object":{"spec":{}}})"),
            json, 200, true, true},
        BadInput{"StatusSubresource", "/mutate",
                 review(podRequest("UPDATE", kGpuPod, R"(,"subResource":"status","oldObject":{})")),
                 json, 200, true, true},
        BadInput{
            "Delete", "/validate",
            review(
                R"({"uid":"u","kind":{"kind":"Pod"},"operation":"DELETE","oldObject":{"spec":{}}})"),
            json, 200, true, true},
        BadInput{"Connect", "/mutate",
                 review(R"({"uid":"u","kind":{"kind":"Pod"},"operation":"CONNECT","object":{}})"),
                 json, 200, true, true},
        BadInput{"NestedTooDeep", "/mutate",
                 review(podRequest("CREATE", std::string(100000, '[') + std::string(100000, ']'))),
                 json, 400, true, false},
        BadInput{"InvalidUtf8", "/mutate", review(podRequest("CREATE", "{\"a\":\"\xc3\x28\"}")),
                 json, 400, true, false},
        BadInput{"RawNulByte", "/mutate",
                 review(podRequest("CREATE", std::string("{\"a\":\"x\0y\"}", 12))), json, 400, true,
                 false},
        BadInput{
            "EscapedNulAndControlCharacters", "/mutate",
            review(podRequest("CREATE", R"({"metadata":{"name":"a\u0000b\u0001"},"spec":{}})")),
            json, 200, true, true},
        BadInput{"NumberTooBig", "/mutate", review(podRequest("CREATE", R"({"spec":{"x":1e400}})")),
                 json, 400, true, false},
        BadInput{"ByteOrderMark", "/mutate", "\xEF\xBB\xBF" + review(podRequest("CREATE", kGpuPod)),
                 json, 400, true, false},
        BadInput{"DuplicateKeys", "/mutate",
                 review(podRequest("CREATE", kGpuPod, R"(,"uid":"dup")")), json, 200, true, true},
        BadInput{
            "GpuQuantityOutOfRange", "/validate",
            review(podRequest(
                "CREATE",
                R"({"spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"1e999999"}}}]}})")),
            json, 200, true, false},
        BadInput{
            "GpuQuantityHugeFraction", "/validate",
            review(podRequest(
                "CREATE",
                R"({"spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"99999999999999999999.5"}}}]}})")),
            json, 200, true, false},
        BadInput{"TenThousandContainers", "/mutate",
                 review(podRequest("CREATE", containers(10000))), json, 200, true, true},
        BadInput{
            "SpecIsAString", "/mutate",
            review(podRequest(
                "CREATE",
                R"({"metadata":{"annotations":{"aiadmit.dev/workload":"batch"}},"spec":"x"})")),
            json, 200, true, true},
        BadInput{"ContainersIsAnObject", "/validate",
                 review(podRequest("CREATE", R"({"spec":{"containers":{"name":"c"}}})")), json, 200,
                 true, true},
        BadInput{"WrongContentType", "/mutate", review(podRequest("CREATE", kGpuPod)), "text/plain",
                 400, true, false},
        BadInput{"FormContentType", "/validate", review(podRequest("CREATE", kGpuPod)),
                 "application/x-www-form-urlencoded", 400, true, false},
        BadInput{"UnknownPath", "/admit", review(podRequest("CREATE", kGpuPod)), json, 404, false,
                 false},
        BadInput{"PostToHealthz", "/healthz", "{}", json, 404, false, false}),
    [](const ::testing::TestParamInfo<BadInput>& info) { return info.param.name; });

TEST(BadMethods, GetOnMutateIs405WithAllow) {
  WebhookServer server;
  const HttpResponse http = server.get("/mutate");
  EXPECT_EQ(http.status, 405);
  const auto allow = http.headers.find("Allow");
  ASSERT_NE(allow, http.headers.end());
  EXPECT_EQ(allow->second, "POST");
  EXPECT_EQ(server.get("/validate").status, 405);
}

TEST(BadConnections, OversizedBodyIsRefusedBeforeItIsSent) {
  WebhookServer server;
  RawConnection connection(server.port(), true);
  ASSERT_TRUE(connection.connected());
  // Only the headers go out: the answer must come without the 1 GiB body.
  ASSERT_TRUE(
      connection.send("POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      "Content-Length: 1073741824\r\n\r\n"));
  const std::string response = connection.readResponse(5);
  EXPECT_EQ(statusOf(response), 413) << response;
  EXPECT_EQ(server.post("/mutate", makeReview(kGpuPod, "CREATE", "ok")).status, 200);
}

TEST(BadConnections, ContentLengthLongerThanTheBodyIsAnswered408AtTheBodyDeadline) {
  WebhookServer::Options options;
  options.extraArgs = {"--body-timeout", "2s"};
  WebhookServer server(options);
  RawConnection connection(server.port(), true);
  ASSERT_TRUE(connection.connected());
  ASSERT_TRUE(
      connection.send("POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      "Content-Length: 500\r\n\r\n{\"apiVersion\":"));
  const std::string response = connection.readResponse(10);
  EXPECT_EQ(statusOf(response), 408) << response;
  EXPECT_NE(response.find("incomplete: 14 of 500 bytes"), std::string::npos) << response;
  EXPECT_EQ(server.post("/mutate", makeReview(kGpuPod, "CREATE", "ok")).status, 200);
}

TEST(BadConnections, ContentLengthShorterThanTheBodyLeavesGarbageThatIsRefused) {
  WebhookServer server;
  RawConnection connection(server.port(), true);
  ASSERT_TRUE(connection.connected());
  const std::string body = makeReview(kGpuPod, "CREATE", "short");
  ASSERT_TRUE(
      connection.send("POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      "Content-Length: 10\r\n\r\n" +
                      body));
  const std::string first = connection.readResponse(5);
  EXPECT_EQ(statusOf(first), 400) << first;
  EXPECT_EQ(server.post("/mutate", makeReview(kGpuPod, "CREATE", "ok")).status, 200);
}

TEST(BadConnections, ApiServerTimeoutBoundsAStalledBody) {
  WebhookServer server;
  RawConnection connection(server.port(), true);
  ASSERT_TRUE(connection.connected());
  const auto started = std::chrono::steady_clock::now();
  ASSERT_TRUE(
      connection.send("POST /mutate?timeout=1s HTTP/1.1\r\nHost: x\r\n"
                      "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"));
  // Keep trickling so that no single read times out: only the deadline can stop it.
  std::string response;
  for (int i = 0; i < 40 && response.empty(); ++i) {
    connection.send(" ");
    response = connection.readResponse(0.1);
  }
  response += connection.readResponse(2);
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(statusOf(response), 408) << response;
  EXPECT_NE(response.find("deadline"), std::string::npos) << response;
  EXPECT_GT(elapsed, 0.9);
  EXPECT_LT(elapsed, 3.5);
}

TEST(BadConnections, PlainHttpOnTheTlsPortIsDroppedAndTheServerKeepsServing) {
  WebhookServer server;
  RawConnection plain(server.port(), false);
  ASSERT_TRUE(plain.connected());
  ASSERT_TRUE(plain.send("POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"));
  EXPECT_TRUE(plain.closedByPeer(5));
  EXPECT_EQ(server.post("/mutate", makeReview(kGpuPod, "CREATE", "ok")).status, 200);
}

TEST(BadConnections, HalfOpenAndIdleConnectionsDoNotBlockOthers) {
  WebhookServer server;
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 20; ++i)
    held.push_back(std::make_unique<RawConnection>(server.port(), false));
  for (int i = 0; i < 20; ++i) held.push_back(std::make_unique<RawConnection>(server.port(), true));
  for (const auto& connection : held) ASSERT_TRUE(connection->connected());
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(server.post("/mutate", makeReview(kGpuPod, "CREATE", "ok")).status, 200);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), 1.0);
}

TEST(BadConnections, HugeHeaderIsRefused) {
  WebhookServer server;
  RawConnection connection(server.port(), true);
  ASSERT_TRUE(connection.connected());
  connection.send("POST /mutate HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(100000, 'a') +
                  "\r\nContent-Length: 2\r\n\r\n{}");
  const std::string response = connection.readResponse(5);
  EXPECT_EQ(statusOf(response), 431) << response.substr(0, 200);
  EXPECT_EQ(server.post("/mutate", makeReview(kGpuPod, "CREATE", "ok")).status, 200);
}

TEST(BadConnections, ChunkedBodyIsAccepted) {
  WebhookServer server;
  RawConnection connection(server.port(), true);
  ASSERT_TRUE(connection.connected());
  const std::string body = makeReview(kGpuPod, "CREATE", "chunked");
  char size[32];
  std::snprintf(size, sizeof size, "%zx", body.size());
  ASSERT_TRUE(
      connection.send("POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      "Transfer-Encoding: chunked\r\n\r\n" +
                      std::string(size) + "\r\n" + body + "\r\n0\r\n\r\n"));
  const std::string response = connection.readResponse(5);
  EXPECT_EQ(statusOf(response), 200) << response;
  EXPECT_NE(response.find("\"uid\":\"chunked\""), std::string::npos);
}

}  // namespace
}  // namespace aiadmit
