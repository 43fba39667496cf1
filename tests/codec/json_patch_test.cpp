// The one diff that turns a mutated copy into a JSON Patch, checked by
// applying each patch with kubectl (the API server's JSON Patch library).
#include <gtest/gtest.h>

#include "tests/support/test_support.h"
#include "webhook/codec/json_patch.h"

namespace aiadmit {
namespace {

using testing::applyPatch;
using testing::parseJson;

std::string diff(const std::string& before, const std::string& after) {
  return diffToJsonPatch(*parseJson(before), *parseJson(after));
}

// The patch applied by kubectl must give exactly `after`.
void expectRoundTrip(const std::string& before, const std::string& after) {
  const std::string patch = diff(before, after);
  ASSERT_FALSE(patch.empty());
  const std::string patched = applyPatch(before, patch);
  ASSERT_FALSE(patched.empty());
  EXPECT_EQ(*parseJson(patched), *parseJson(after)) << patch;
}

TEST(JsonPatch, EqualDocumentsGiveNoPatch) {
  EXPECT_EQ(diff(R"({"a":{"b":[1,2]}})", R"({"a":{"b":[1,2]}})"), "");
}

TEST(JsonPatch, AddingOneKeyIsOneAdd) {
  EXPECT_EQ(diff(R"({"spec":{"a":1}})", R"({"spec":{"a":1,"b":2}})"),
            R"([{"op":"add","path":"/spec/b","value":2}])");
}

TEST(JsonPatch, AppendingToAListAddsAtItsIndex) {
  EXPECT_EQ(diff(R"({"l":[1]})", R"({"l":[1,2,3]})"),
            R"([{"op":"add","path":"/l/1","value":2},{"op":"add","path":"/l/2","value":3}])");
}

TEST(JsonPatch, KeysAreEscapedPerRfc6901) {
  EXPECT_EQ(diff(R"({"limits":{}})", R"({"limits":{"nvidia.com/gpu":"1","a~b":"2"}})"),
            R"([{"op":"add","path":"/limits/nvidia.com~1gpu","value":"1"},)"
            R"({"op":"add","path":"/limits/a~0b","value":"2"}])");
}

TEST(JsonPatch, ChangedScalarIsReplaced) {
  EXPECT_EQ(diff(R"({"a":"x"})", R"({"a":"y"})"), R"([{"op":"replace","path":"/a","value":"y"}])");
}

TEST(JsonPatch, NullBecomingAnObjectIsReplaced) {
  EXPECT_EQ(diff(R"({"annotations":null})", R"({"annotations":{"k":"v"}})"),
            R"([{"op":"replace","path":"/annotations","value":{"k":"v"}}])");
}

TEST(JsonPatch, RemovalsComeFromTheEndOfLists) {
  EXPECT_EQ(diff(R"({"l":[1,2,3],"x":1})", R"({"l":[1]})"),
            R"([{"op":"remove","path":"/x"},{"op":"remove","path":"/l/2"},)"
            R"({"op":"remove","path":"/l/1"}])");
}

TEST(JsonPatch, KubectlAppliesEveryShapeOfPatch) {
  const std::string pod =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":null},)"
      R"("spec":{"containers":[{"name":"a","image":"i","resources":{"requests":{"nvidia.com/gpu":"1"}}}],)"
      R"("tolerations":[{"key":"x","operator":"Exists"}]}})";
  const std::string mutated =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":{"aiadmit.dev/class":"batch"}},)"
      R"("spec":{"containers":[{"name":"a","image":"i","resources":{"requests":{"nvidia.com/gpu":"1"},"limits":{"nvidia.com/gpu":"1"}}}],)"
      R"("tolerations":[{"key":"x","operator":"Exists"},{"key":"accelerator","operator":"Equal","value":"gpu","effect":"NoSchedule"}],)"
      R"("nodeSelector":{"accelerator":"nvidia"}}})";
  expectRoundTrip(pod, mutated);
}

}  // namespace
}  // namespace aiadmit
