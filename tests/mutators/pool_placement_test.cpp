// Pool placement: nodeSelector merged key by key, required node affinity
// added to every term; a different value is never overwritten.
#include "tests/support/mutator_harness.h"

namespace aiadmit {
namespace {

using namespace testing;

const MutatorDeclaration& kMutator = registeredMutator("pool-placement");

TEST(PoolPlacementMutator, NodeSelectorIsAddedWhenAbsent) {
  const MutationRun run = runMutator(kMutator, gpuPodManifest(), training());
  EXPECT_EQ(run.patch(),
            R"([{"op":"add","path":"/spec/nodeSelector","value":{"accelerator":"nvidia"}}])");
  ASSERT_EQ(run.changes.size(), 1u);
  EXPECT_EQ(run.changes[0], "added node selector accelerator=nvidia");
  expectAppliedAndIdempotent(kMutator, run, training());
}

TEST(PoolPlacementMutator, NodeSelectorIsMergedKeyByKey) {
  const MutationRun run = runMutator(
      kMutator, gpuPodManifest("  nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}\n"),
      training());
  EXPECT_EQ(run.patch(),
            R"([{"op":"add","path":"/spec/nodeSelector/accelerator","value":"nvidia"}])");
  expectAppliedAndIdempotent(kMutator, run, training());
}

TEST(PoolPlacementMutator, ADifferentValueIsLeftForValidation) {
  const MutationRun run =
      runMutator(kMutator, gpuPodManifest("  nodeSelector: {accelerator: amd}\n"), training());
  EXPECT_FALSE(run.changed) << run.patch();
}

TEST(PoolPlacementMutator, APodWithoutGpusIsNotAimedAtThePool) {
  const MutationRun run = runMutator(
      kMutator, podManifest("{aiadmit.dev/workload: training}", "{name: main, image: x}"),
      training());
  EXPECT_FALSE(run.changed) << run.patch();
}

const char* kAffinityProfiles = R"(
apiVersion: aiadmit.dev/v1
kind: Profile
metadata: {name: h100}
spec:
  class: training
  placement:
    requiredNodeAffinity:
    - {key: gpu.nvidia.com/class, operator: In, values: [H100, H200]}
    - {key: pool, operator: Exists}
---
apiVersion: aiadmit.dev/v1
kind: Profile
metadata: {name: off}
spec:
  class: training
  scope: {namespaces: [other]}
  placement:
    nodeSelector: {accelerator: nvidia}
    requiredNodeAffinity: [{key: pool, operator: Exists}]
  mutations: {placement: false}
)";

TEST(PoolPlacementMutator, RequiredAffinityBecomesATermWhenThePodHasNone) {
  const auto profiles = profilesFromYaml(kAffinityProfiles);
  const Profile& profile = *profiles->find("h100");
  const MutationRun run =
      runMutator(kMutator,
                 gpuPodManifest("  affinity:\n    podAntiAffinity:\n      "
                                "preferredDuringSchedulingIgnoredDuringExecution: []\n"),
                 profile);
  EXPECT_EQ(run.patch(),
            R"([{"op":"add","path":"/spec/affinity/nodeAffinity","value":)"
            R"({"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[)"
            R"({"matchExpressions":[{"key":"gpu.nvidia.com/class","operator":"In",)"
            R"("values":["H100","H200"]},{"key":"pool","operator":"Exists"}]}]}}}])");
  ASSERT_EQ(run.changes.size(), 2u);
  EXPECT_EQ(run.changes[0], "added required node affinity gpu.nvidia.com/class In (H100, H200)");
  EXPECT_EQ(run.changes[1], "added required node affinity pool Exists");
  expectAppliedAndIdempotent(kMutator, run, profile);
}

TEST(PoolPlacementMutator, RequiredAffinityIsAddedToEveryAlternativeTerm) {
  const auto profiles = profilesFromYaml(kAffinityProfiles);
  const Profile& profile = *profiles->find("h100");
  const MutationRun run = runMutator(kMutator, gpuPodManifest(R"(  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [a]}]
        - matchFields: [{key: metadata.name, operator: In, values: [node-7]}]
        - matchExpressions: [{key: gpu.nvidia.com/class, operator: In, values: [A100]}]
        - {}
)"),
                                     profile);
  const JsonValue* terms = at(*run.after,
                              "/spec/affinity/nodeAffinity/"
                              "requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms");
  ASSERT_TRUE(isArray(terms));
  ASSERT_EQ(terms->Size(), 4u);
  // Both requirements joined the zone term; the matchFields term got them as
  // matchExpressions; the term that already names the class keeps its own
  // value (validation judges it) and gets only the other; the empty term,
  // which matches no node, stays empty.
  EXPECT_EQ(at(*terms, "/0/matchExpressions")->Size(), 3u);
  EXPECT_EQ(at(*terms, "/1/matchExpressions")->Size(), 2u);
  EXPECT_EQ(at(*terms, "/2/matchExpressions")->Size(), 2u);
  EXPECT_EQ(stringOf(at(*terms, "/2/matchExpressions/0/values/0")), "A100");
  EXPECT_TRUE((*terms)[3].ObjectEmpty());
  ASSERT_EQ(run.changes.size(), 2u);
  EXPECT_EQ(run.changes[0],
            "added required node affinity gpu.nvidia.com/class In (H100, H200) to 2 terms");
  EXPECT_EQ(run.changes[1], "added required node affinity pool Exists to 3 terms");
  expectAppliedAndIdempotent(kMutator, run, profile);
}

TEST(PoolPlacementMutator, ATermThatNamesThePoolsKeyIsNarrowedToTheIntersection) {
  const auto profiles = profilesFromYaml(kAffinityProfiles);
  const Profile& profile = *profiles->find("h100");
  const MutationRun run = runMutator(kMutator, gpuPodManifest(R"(  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions: [{key: gpu.nvidia.com/class, operator: In, values: [A100, H100]}]
)"),
                                     profile);
  // A100 nodes are not of the pool: only H100 is left.
  const JsonValue* term = at(*run.after,
                             "/spec/affinity/nodeAffinity/"
                             "requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms/0");
  ASSERT_NE(term, nullptr);
  EXPECT_EQ(toJson(*term), R"({"matchExpressions":[{"key":"gpu.nvidia.com/class","operator":"In",)"
                           R"("values":["H100"]},{"key":"pool","operator":"Exists"}]})");
  ASSERT_EQ(run.changes.size(), 2u);
  EXPECT_EQ(run.changes[0],
            "narrowed required node affinity gpu.nvidia.com/class In (A100, H100) to (H100)");
  expectAppliedAndIdempotent(kMutator, run, profile);
}

TEST(PoolPlacementMutator, ATermOutsideThePoolOrNotAnInIsLeftToValidation) {
  const auto profiles = profilesFromYaml(kAffinityProfiles);
  const Profile& profile = *profiles->find("h100");
  for (const char* expression : {"{key: gpu.nvidia.com/class, operator: In, values: [A100]}",
                                 "{key: gpu.nvidia.com/class, operator: NotIn, values: [A100]}",
                                 "{key: gpu.nvidia.com/class, operator: Exists}"}) {
    SCOPED_TRACE(expression);
    const MutationRun run = runMutator(kMutator,
                                       gpuPodManifest(R"(  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions: [)" + std::string(expression) +
                                                      R"(, {key: pool, operator: Exists}]
)"),
                                       profile);
    EXPECT_FALSE(run.changed) << run.patch();
  }
}

TEST(PoolPlacementMutator, ProfileTurnsItOff) {
  const auto profiles = profilesFromYaml(kAffinityProfiles);
  EXPECT_FALSE(runMutator(kMutator, gpuPodManifest(), *profiles->find("off")).changed);
}

}  // namespace
}  // namespace aiadmit
