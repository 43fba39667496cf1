// AIA010 through the real server over TLS: Pods that run together without a gang scheduler or
// queue. Manifests that break the rule and near misses that must pass, each under profiles that
// deny, warn and switch every rule off.
#include "tests/support/validator_harness.h"

namespace aiadmit {
namespace {

using namespace testing;

const std::vector<RuleCase> kCases = {
    {"ParallelJobWithoutGang", "gang-research",
     gpuJob("training", "\n  parallelism: 4", "", kOneGpu), "spec.parallelism"},
    {"IndexedJobWithoutGang", "gang-research",
     gpuJob("training", "\n  completions: 4\n  parallelism: 4\n  completionMode: Indexed", "",
            kOneGpu),
     "spec.parallelism"},
    // Only Pods that run at the same time need a gang: an Indexed Job with
    // parallelism 1 runs its indexes one after the other.
    {"IndexedJobOneAtATime", "gang-research",
     gpuJob("training", "\n  completions: 4\n  completionMode: Indexed", "", kOneGpu), ""},
    {"ParallelismAboveCompletions", "gang-research",
     gpuJob("training", "\n  completions: 1\n  parallelism: 4", "", kOneGpu), ""},
    {"Volcano", "gang-research",
     gpuJob("training", "\n  parallelism: 4", "\n      schedulerName: volcano", kOneGpu), ""},
    {"KueueQueue", "gang-research",
     replaced(gpuJob("training", "\n  parallelism: 4", "", kOneGpu), "  name: run\n",
              "  name: run\n  labels: {kueue.x-k8s.io/queue-name: gpus}\n"),
     ""},
    {"SingleWorker", "gang-research", gpuJob("training", "\n  parallelism: 1", "", kOneGpu), ""}};

AIADMIT_RULE_ACTIONS_TEST(AIA010, kCases);

}  // namespace
}  // namespace aiadmit
