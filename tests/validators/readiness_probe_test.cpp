// AIA009 through the real server over TLS: GPU servers with no readiness probe and no port to give
// them one. Manifests that break the rule and near misses that must pass, each under profiles that
// deny, warn and switch every rule off.
#include "tests/support/validator_harness.h"

namespace aiadmit {
namespace {

using namespace testing;

const std::vector<RuleCase> kCases = {
    {"NoPortToProbe", "default",
     realtimeDeployment(
         "",
         R"({name: vllm, image: vllm, resources: {limits: {nvidia.com/gpu: 1, memory: 32Gi}}})",
         kDeclaredRealtime),
     "spec.template.spec.containers[0]"},
    {"ProfileWithoutProbes", "noprobe-team",
     realtimeDeployment(
         "",
         R"({name: vllm, image: vllm, ports: [{containerPort: 8000}], resources: {limits: {nvidia.com/gpu: 1, memory: 32Gi}}})",
         kDeclaredRealtime),
     "spec.template.spec.containers[0]"},
    {"PortLetsAiadmitInjectOne", "default",
     realtimeDeployment(
         "",
         R"({name: vllm, image: vllm, ports: [{containerPort: 8000}], resources: {limits: {nvidia.com/gpu: 1, memory: 32Gi}}})",
         kDeclaredRealtime),
     ""},
    {"OwnProbe", "noprobe-team", realtimeDeployment("", kServingContainer, kDeclaredRealtime), ""}};

AIADMIT_RULE_ACTIONS_TEST(AIA009, kCases);

}  // namespace
}  // namespace aiadmit
