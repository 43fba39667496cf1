// AIA002 through the engine's /validate path: a workload class on a kind that cannot carry it:
// training or batch on a controller that serves forever, realtime on a Job. Manifests that break
// the rule and near misses that must pass, each under profiles that deny, warn and switch every
// rule off.
#include "tests/support/validator_harness.h"

namespace aiadmit {
namespace {

using namespace testing;

const std::vector<RuleCase> kCases = {
    {"TrainingAsDeployment", "default",
     realtimeDeployment("", kServingContainer, "{aiadmit.dev/workload: training}"),
     "metadata.annotations[aiadmit.dev/workload]"},
    {"RealtimeAsJob", "default", gpuJob("realtime", "", "", "\n      - " + kServingContainer),
     "metadata.annotations[aiadmit.dev/workload]"},
    {"TrainingAsJob", "default", gpuJob("training", "", "", kOneGpu), ""}};

AIADMIT_RULE_ACTIONS_TEST(AIA002, kCases);

}  // namespace
}  // namespace aiadmit
