// The AdmissionReview codec: every malformed input gets a well-formed answer.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mutators/mutator.h"
#include "tests/support/test_support.h"
#include "webhook/codec/base64.h"
#include "webhook/engine/admission.h"
#include "webhook/engine/engine.h"
#include "webhook/policy/profile_loader.h"

namespace aiadmit {
namespace {

using testing::parseReviewResponse;

const char* kPodReview = R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",
  "request":{"uid":"u-1","kind":{"group":"","version":"v1","kind":"Pod"},"operation":"CREATE",
  "namespace":"ml","name":"p","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
  "spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":1}}}]}}}})";

TEST(DecodeAdmissionReview, ReadsTheRequestFields) {
  AdmissionRequest request;
  DecodeError error;
  ASSERT_TRUE(decodeAdmissionReview(kPodReview, request, error)) << error.message;
  EXPECT_EQ(request.uid, "u-1");
  EXPECT_EQ(request.subject.group, "");
  EXPECT_EQ(request.subject.kindName, "Pod");
  EXPECT_EQ(request.subject.operation, Operation::Create);
  EXPECT_EQ(request.subject.namespaceName, "ml");
  EXPECT_EQ(request.name, "p");
  ASSERT_NE(request.subject.object, nullptr);
  EXPECT_EQ(request.subject.oldObject, nullptr);
}

// An UPDATE as the API server sends it, its objects' managedFields holding `fields`.
std::string updateReview(const std::string& fields) {
  const std::string metadata =
      R"({"name":"p","managedFields":)" + fields + R"(,"labels":{"a":"b"}})";
  return R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-2",)"
         R"("kind":{"group":"","version":"v1","kind":"Pod"},"operation":"UPDATE","namespace":"ml",)"
         R"("name":"p","object":{"apiVersion":"v1","kind":"Pod","metadata":)" +
         metadata + R"(,"spec":{}},"oldObject":{"apiVersion":"v1","kind":"Pod","metadata":)" +
         metadata + R"(,"spec":{}}}})";
}

std::vector<std::string> memberNames(const JsonValue* object) {
  std::vector<std::string> names;
  for (const auto& entry : object->GetObject()) names.emplace_back(entry.name.GetString());
  return names;
}

TEST(DecodeAdmissionReview, TheObjectsGoWithoutTheirManagedFieldsAndKeepTheRest) {
  const std::vector<std::string> kept = {"name", "labels"};
  // The short reader's path, and RapidJSON's (which a byte outside ASCII takes).
  for (const std::string& fields :
       {std::string(R"([{"manager":"kubectl","fieldsV1":{"f:metadata":{"f:labels":{}}}}])"),
        std::string("[{\"manager\":\"caf\xc3\xa9\",\"operation\":\"Update\"}]")}) {
    AdmissionRequest request;
    DecodeError error;
    ASSERT_TRUE(decodeAdmissionReview(updateReview(fields), request, error)) << error.message;
    ASSERT_NE(request.subject.oldObject, nullptr);
    for (const JsonValue* object : {request.subject.object, request.subject.oldObject}) {
      EXPECT_EQ(memberNames(member(object, "metadata")), kept) << fields;
      EXPECT_NE(member(object, "spec"), nullptr);
    }
  }
  // Left out, and still read as strictly as the rest.
  AdmissionRequest request;
  DecodeError error;
  EXPECT_FALSE(decodeAdmissionReview(updateReview(R"([{"manager" "kubectl"}])"), request, error));
  EXPECT_NE(error.message.find("malformed JSON"), std::string::npos) << error.message;
  EXPECT_EQ(error.uid, "");
}

// A CREATE with every member the API server sends in a request.
std::string fullReview(const std::string& username) {
  return R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-3",)"
         R"("kind":{"group":"","version":"v1","kind":"Pod"},)"
         R"("resource":{"group":"","version":"v1","resource":"pods"},)"
         R"("requestKind":{"group":"","version":"v1","kind":"Pod"},)"
         R"("requestResource":{"group":"","version":"v1","resource":"pods"},)"
         R"("name":"p","namespace":"ml","operation":"CREATE","userInfo":{"username":)" +
         username +
         R"(,"groups":["system:authenticated"]},"object":{"apiVersion":"v1","kind":"Pod",)"
         R"("metadata":{"name":"p"},"spec":{}},"oldObject":null,"dryRun":false,)"
         R"("options":{"kind":"CreateOptions","apiVersion":"meta.k8s.io/v1"}}})";
}

// Only the objects' managedFields are left out: a rule that reads who asked
// (userInfo) or the options finds them.
TEST(DecodeAdmissionReview, TheRequestKeepsEveryOtherMember) {
  const std::vector<std::string> kept = {
      "uid",       "kind",     "resource", "requestKind", "requestResource", "name",   "namespace",
      "operation", "userInfo", "object",   "oldObject",   "dryRun",          "options"};
  // The short reader's path, and RapidJSON's (which a byte outside ASCII takes).
  for (const std::string& username : {std::string(R"("alice")"), std::string("\"z\xc3\xa9\"")}) {
    AdmissionRequest request;
    DecodeError error;
    ASSERT_TRUE(decodeAdmissionReview(fullReview(username), request, error)) << error.message;
    const JsonValue* fields = member(&request.document, "request");
    EXPECT_EQ(memberNames(fields), kept) << username;
    EXPECT_EQ("\"" + std::string(stringMember(member(fields, "userInfo"), "username")) + "\"",
              username);
    EXPECT_EQ(request.uid, "u-3");
    EXPECT_EQ(request.subject.kindName, "Pod");
    EXPECT_FALSE(request.dryRun);
  }
  AdmissionRequest request;
  DecodeError error;
  EXPECT_FALSE(decodeAdmissionReview(fullReview(R"({"a" 1})"), request, error));
  EXPECT_NE(error.message.find("malformed JSON"), std::string::npos) << error.message;
}

struct MalformedCase {
  const char* name;
  std::string body;
  const char* messagePart;
};

class MalformedReview : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(MalformedReview, IsRefusedWithAReason) {
  AdmissionRequest request;
  DecodeError error;
  EXPECT_FALSE(decodeAdmissionReview(GetParam().body, request, error));
  EXPECT_NE(error.message.find(GetParam().messagePart), std::string::npos) << error.message;
}

std::string nested(size_t depth) {
  return R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"x":)" +
         std::string(depth, '[') + std::string(depth, ']') + "}}";
}

INSTANTIATE_TEST_SUITE_P(
    Inputs, MalformedReview,
    ::testing::Values(
        MalformedCase{"Empty", "", "empty body"},
        MalformedCase{"NotJson", "{bad", "malformed JSON"},
        MalformedCase{"Truncated", std::string(kPodReview).substr(0, 80), "malformed JSON"},
        MalformedCase{"TrailingGarbage", std::string(kPodReview) + "}", "malformed JSON"},
        MalformedCase{"Array", "[]", "not a JSON object"},
        MalformedCase{"Number", "42", "not a JSON object"},
        MalformedCase{"OtherKind", R"({"apiVersion":"v1","kind":"Pod"})",
                      "kind must be AdmissionReview"},
        MalformedCase{
            "V1beta1",
            R"({"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"a"}})",
            "apiVersion must be admission.k8s.io/v1"},
        MalformedCase{"NoRequest",
                      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"})",
                      "request is missing"},
        MalformedCase{
            "RequestNotObject",
            R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":"x"})",
            "request is missing or not an object"},
        MalformedCase{
            "NoUid",
            R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"kind":{"kind":"Pod"}}})",
            "uid is missing"},
        MalformedCase{
            "EmptyUid",
            R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":""}})",
            "uid is missing"},
        MalformedCase{
            "UidNotString",
            R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":7}})",
            "uid is missing"},
        MalformedCase{
            "NoKind",
            R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"a","operation":"CREATE"}})",
            "request.kind"},
        MalformedCase{
            "UnknownOperation",
            R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"a","kind":{"kind":"Pod"},"operation":"PATCH"}})",
            "is not CREATE"},
        MalformedCase{
            "CreateWithoutObject",
            R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"a","kind":{"kind":"Pod"},"operation":"CREATE"}})",
            "object is missing"},
        MalformedCase{
            "ObjectIsString",
            R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"a","kind":{"kind":"Pod"},"operation":"CREATE","object":"pod"}})",
            "object is not a JSON object"},
        MalformedCase{
            "OldObjectIsArray",
            R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"a","kind":{"kind":"Pod"},"operation":"UPDATE","object":{},"oldObject":[]}})",
            "oldObject is not a JSON object"},
        MalformedCase{"InvalidUtf8",
                      "{\"apiVersion\":\"admission.k8s.io/"
                      "v1\",\"kind\":\"AdmissionReview\",\"x\":\"\xff\xfe\"}",
                      "malformed JSON"},
        MalformedCase{"DeeplyNested", nested(100000), "nested deeper"}),
    [](const ::testing::TestParamInfo<MalformedCase>& info) { return info.param.name; });

class AnswerReview : public ::testing::Test {
 protected:
  AnswerReview() {
    auto loaded = loadProfileDirectory(testing::sourceDir() + "/profiles", mutationSwitches());
    EXPECT_TRUE(loaded.ok());
    engine_ = std::make_unique<Engine>(loaded.set);
  }
  std::unique_ptr<Engine> engine_;
};

TEST_F(AnswerReview, BadInputIsA400ReviewThatKeepsTheUidWhenThereIsOne) {
  const ReviewAnswer answer = answerReview(
      *engine_, Endpoint::Mutate,
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"abc","kind":{"kind":"Pod"},"operation":"CREATE","object":7}})");
  EXPECT_EQ(answer.httpStatus, 400);
  EXPECT_EQ(answer.decision, Decision::Errored);
  const auto response = parseReviewResponse(answer.body);
  EXPECT_EQ(response.uid, "abc");
  EXPECT_FALSE(response.allowed);
  EXPECT_EQ(response.statusCode, 400);
  EXPECT_EQ(response.statusReason, "BadRequest");
}

TEST_F(AnswerReview, NullBytesAndControlCharactersInStringsAreCarriedSafely) {
  const std::string body =
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"n\u0000l","kind":{"kind":"ConfigMap"},"operation":"CREATE","object":{"data":{"k":"\u0000\u0001"}}}})";
  const ReviewAnswer answer = answerReview(*engine_, Endpoint::Mutate, body);
  EXPECT_EQ(answer.httpStatus, 200);
  const auto response = parseReviewResponse(answer.body);
  EXPECT_EQ(response.uid, std::string("n\0l", 3));
  EXPECT_TRUE(response.allowed);
}

TEST_F(AnswerReview, DeleteAndConnectAreAllowedWithoutPatch) {
  for (const char* operation : {"DELETE", "CONNECT"}) {
    const std::string body =
        std::string(
            R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"d","kind":{"kind":"Pod"},"operation":")") +
        operation + R"(","oldObject":{"spec":{}}}})";
    const ReviewAnswer answer = answerReview(*engine_, Endpoint::Mutate, body);
    EXPECT_EQ(answer.httpStatus, 200) << operation;
    const auto response = parseReviewResponse(answer.body);
    EXPECT_TRUE(response.allowed);
    EXPECT_TRUE(response.patch.empty());
  }
}

TEST(EncodeAdmissionResponse, PatchedCarriesBase64PatchAndType) {
  const auto outcome = AdmissionOutcome::patched(R"([{"op":"add","path":"/a","value":1}])", {"w"});
  const auto response = parseReviewResponse(encodeAdmissionResponse("u", outcome));
  EXPECT_EQ(response.apiVersion, "admission.k8s.io/v1");
  EXPECT_EQ(response.kind, "AdmissionReview");
  EXPECT_EQ(response.uid, "u");
  EXPECT_TRUE(response.allowed);
  EXPECT_EQ(response.patchType, "JSONPatch");
  EXPECT_EQ(response.patch, R"([{"op":"add","path":"/a","value":1}])");
  EXPECT_EQ(response.warnings, std::vector<std::string>{"w"});
  EXPECT_EQ(response.statusCode, 0);
}

TEST(EncodeAdmissionResponse, AnEmptyPatchIsAPlainAllow) {
  const auto outcome = AdmissionOutcome::patched("", {});
  EXPECT_EQ(outcome.decision(), Decision::Allowed);
  const auto response = parseReviewResponse(encodeAdmissionResponse("u", outcome));
  EXPECT_TRUE(response.patchType.empty());
  EXPECT_TRUE(response.patch.empty());
}

TEST(EncodeAdmissionResponse, DeniedIs403Forbidden) {
  const auto response = parseReviewResponse(
      encodeAdmissionResponse("u", AdmissionOutcome::denied("[AIA004] x: y; z")));
  EXPECT_FALSE(response.allowed);
  EXPECT_EQ(response.statusCode, 403);
  EXPECT_EQ(response.statusReason, "Forbidden");
  EXPECT_EQ(response.message, "[AIA004] x: y; z");
}

TEST(EncodeAdmissionResponse, InternalErrorIsHttp500SoFailurePolicyApplies) {
  const auto outcome = AdmissionOutcome::internalError("boom");
  EXPECT_EQ(outcome.httpStatus(), 500);
  const auto response = parseReviewResponse(encodeAdmissionResponse("u", outcome));
  EXPECT_EQ(response.statusCode, 500);
  EXPECT_EQ(response.statusReason, "InternalError");
}

TEST(EncodeAdmissionResponse, ATransportRefusalCarriesItsOwnStatusCode) {
  const std::pair<int, const char*> cases[] = {{408, "Timeout"},
                                               {413, "RequestEntityTooLarge"},
                                               {414, "BadRequest"},
                                               {431, "BadRequest"},
                                               {503, "ServiceUnavailable"}};
  for (const auto& [code, reason] : cases) {
    const auto outcome = AdmissionOutcome::refusedByTransport(code, "refused");
    EXPECT_EQ(outcome.httpStatus(), code);
    const auto response = parseReviewResponse(encodeAdmissionResponse("", outcome));
    EXPECT_FALSE(response.allowed);
    EXPECT_EQ(response.statusCode, code);
    EXPECT_EQ(response.statusReason, reason) << code;
  }
  EXPECT_EQ(AdmissionOutcome::refusedByTransport(200, "x").httpStatus(), 400)
      << "a refusal is never a success";
}

TEST(FitWarnings, TrimsEachLineAndTheTotalToTheApiServerBudget) {
  std::vector<std::string> many(200, std::string(300, 'x'));
  const auto fitted = fitWarnings(many);
  size_t total = 0;
  for (const std::string& line : fitted) {
    EXPECT_LE(line.size(), kMaxWarningLength);
    total += line.size();
  }
  EXPECT_LT(total, kMaxWarningsTotal);
  EXPECT_NE(fitted.back().find("more warnings not shown"), std::string::npos);
}

TEST(FitWarnings, EachEndpointKeepsToItsShareWithTheSummaryLineIncluded) {
  const std::vector<std::string> many(40, std::string(100, 'x'));
  for (size_t budget : {kWarningsBudgetPerEndpoint, size_t{1000}, size_t{300}}) {
    SCOPED_TRACE(budget);
    const auto fitted = fitWarnings(many, budget);
    size_t total = 0;
    for (const std::string& line : fitted) total += line.size();
    EXPECT_LE(total, budget);
    ASSERT_FALSE(fitted.empty());
    EXPECT_EQ(fitted.back(), "aiadmit: " + std::to_string(many.size() - (fitted.size() - 1)) +
                                 " more warnings not shown");
  }
  EXPECT_LE(2 * kWarningsBudgetPerEndpoint, kMaxWarningsTotal);
  // What fits whole needs no summary.
  const std::vector<std::string> exact(3, std::string(100, 'y'));
  EXPECT_EQ(fitWarnings(exact, 300), exact);
}

TEST(FitWarnings, NeverCutsInsideAUtf8Character) {
  std::string line(118, 'a');
  line += "\xC3\xA9\xC3\xA9\xC3\xA9";  // é é é
  const auto fitted = fitWarnings({line});
  ASSERT_EQ(fitted.size(), 1u);
  const std::string& cut = fitted[0];
  EXPECT_LE(cut.size(), kMaxWarningLength);
  const size_t beforeDots = cut.size() - 3;
  EXPECT_NE(static_cast<unsigned char>(cut[beforeDots]) & 0xC0, 0x80);
}

TEST(Base64, MatchesRfc4648Vectors) {
  EXPECT_EQ(base64Encode(""), "");
  EXPECT_EQ(base64Encode("f"), "Zg==");
  EXPECT_EQ(base64Encode("fo"), "Zm8=");
  EXPECT_EQ(base64Encode("foo"), "Zm9v");
  EXPECT_EQ(base64Encode("foob"), "Zm9vYg==");
  EXPECT_EQ(base64Encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(base64Encode("foobar"), "Zm9vYmFy");
}

}  // namespace
}  // namespace aiadmit
