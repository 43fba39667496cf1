// AIA005 through the real server over TLS: GPU requests that differ from their limits, compared by
// value. Manifests that break the rule and near misses that must pass, each under profiles that
// deny, warn and switch every rule off.
#include "tests/support/validator_harness.h"

namespace aiadmit {
namespace {

using namespace testing;

const std::vector<RuleCase> kCases = {
    {"RequestBelowLimit", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {requests: {nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: 2}}})"),
     "spec.template.spec.containers[0].resources.requests"},
    {"RequestWithoutLimit", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {requests: {nvidia.com/gpu: 1}}})"),
     "spec.template.spec.containers[0].resources.limits"},
    {"SameAmountSpelledDifferently", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {requests: {nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: 1000m}}})"),
     ""}};

AIADMIT_RULE_ACTIONS_TEST(AIA005, kCases);

}  // namespace
}  // namespace aiadmit
