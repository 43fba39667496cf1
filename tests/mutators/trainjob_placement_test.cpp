// The TrainJob's placement: the pool's tolerations and node selector in a
// runtimePatches entry of aiadmit's own for the `node` replicated job, which
// Trainer applies to the runtime's JobSet.

#include <gtest/gtest.h>

#include "tests/support/mutator_harness.h"

namespace aiadmit {
namespace {

using namespace testing;

// A TrainJob has one template, its trainer's resourcesPerNode.
MutationRun runOnTrainJob(const std::vector<const MutatorDeclaration*>& mutators,
                          const JsonValue& object, const Profile& profile) {
  const WorkloadType* type = WorkloadTypeTable::builtIn()->findForObject(object);
  EXPECT_TRUE(type != nullptr && resolveTemplates(*type, object).templates.size() == 1u);
  return runOnCustomResource(mutators, object, profile);
}

// The patch applied by kubectl gives the mutated object, and a second run
// changes nothing.
void expectAppliedAndIdempotentOnTrainJob(const std::vector<const MutatorDeclaration*>& mutators,
                                          const MutationRun& run, const Profile& profile) {
  const std::string patch = run.patch();
  ASSERT_EQ(run.changed, !patch.empty()) << patch;
  if (!patch.empty()) {
    const std::string patched = applyPatch(toJson(*run.before), patch);
    ASSERT_FALSE(patched.empty());
    EXPECT_EQ(*parseJson(patched), *run.after) << patch;
  }
  const MutationRun again = runOnTrainJob(mutators, *run.after, profile);
  EXPECT_FALSE(again.changed) << again.patch();
  EXPECT_TRUE(again.changes.empty());
  EXPECT_EQ(again.notices, run.notices);
}

// Kubeflow Trainer's GRPO example (examples/grpo/grpo-trainjob.yaml), trimmed
// of its env; `extra` is appended to its spec.
std::string grpo(const std::string& extra = "") {
  return R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: grpo-example
spec:
  runtimeRef:
    apiGroup: trainer.kubeflow.org
    kind: ClusterTrainingRuntime
    name: grpo-distributed
  initializer:
    dataset:
      storageUri: hf://trl-lib/tldr
    model:
      storageUri: hf://Qwen/Qwen2.5-0.5B-Instruct
  trainer:
    numNodes: 1
    resourcesPerNode:
      requests:
        nvidia.com/gpu: 2
)" + extra;
}

const MutatorDeclaration& kMutator = registeredMutator("trainjob-placement");

constexpr const char* kEntryTime = "    time: \"2026-01-01T00:00:00Z\"\n";

// A runtimePatches entry of `manager` that gives the node job's Pods
// `podSpec` (a flow mapping), with `fields` (lines such as a time) before it.
std::string nodeEntry(const std::string& manager, const std::string& podSpec,
                      const std::string& fields = "") {
  return "  - manager: " + manager + "\n" + fields +
         "    trainingRuntimeSpec:\n      template:\n        spec:\n          replicatedJobs:\n"
         "          - name: node\n            template: {spec: {template: {spec: " +
         podSpec + "}}}\n";
}

// The GRPO TrainJob with these runtimePatches entries.
std::string withEntries(const std::string& entries) {
  return grpo("  runtimePatches:\n" + entries);
}

// The node job's pod spec in entry `index` of a TrainJob's runtimePatches.
const JsonValue* nodePodSpec(const JsonValue& trainJob, int index) {
  const std::string pointer = "/spec/runtimePatches/" + std::to_string(index) +
                              "/trainingRuntimeSpec/template/spec/replicatedJobs/0/template/spec/"
                              "template/spec";
  return at(trainJob, pointer.c_str());
}

TEST(TrainJobPlacement, ThePoolGoesIntoARuntimePatchForTheNodeJob) {
  const MutationRun run = runOnTrainJob({&kMutator}, *manifest(grpo()), training());
  ASSERT_TRUE(run.changed);
  const JsonValue* entry = at(*run.after, "/spec/runtimePatches/0");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(stringMember(entry, "manager"), "aiadmit.dev/webhook");
  EXPECT_EQ(stringMember(at(*entry, "/trainingRuntimeSpec/template/spec/replicatedJobs/0"), "name"),
            "node");
  const JsonValue* podSpec = nodePodSpec(*run.after, 0);
  ASSERT_NE(podSpec, nullptr);
  EXPECT_EQ(toJson(*member(podSpec, "tolerations")),
            R"([{"key":"accelerator","operator":"Equal","value":"gpu","effect":"NoSchedule"}])");
  EXPECT_EQ(toJson(*member(podSpec, "nodeSelector")), R"({"accelerator":"nvidia"})");
  EXPECT_EQ(run.changes,
            (std::vector<std::string>{
                "added toleration accelerator=gpu:NoSchedule to replicated job node through "
                "runtimePatches",
                "added node selector accelerator=nvidia to replicated job node through "
                "runtimePatches"}));
  expectAppliedAndIdempotentOnTrainJob({&kMutator}, run, training());
}

TEST(TrainJobPlacement, TheMutatedTrainJobIsValidAgainstItsCrd) {
  const MutatorDeclaration& limits = registeredMutator("gpu-limits");
  const MutationRun run = runOnTrainJob({&limits, &kMutator}, *manifest(grpo()), training());
  ASSERT_TRUE(run.changed);
  // resourcesPerNode got the limit beside its request, the patch the pool.
  EXPECT_EQ(toJson(*at(*run.after, "/spec/trainer/resourcesPerNode/limits")),
            R"({"nvidia.com/gpu":2})");
  EXPECT_EQ(validateCustomResources({toJson(*run.after)}),
            (std::map<std::string, std::string>{{"TrainJob/grpo-example", "ok"}}));
  expectAppliedAndIdempotentOnTrainJob({&limits, &kMutator}, run, training());
}

TEST(TrainJobPlacement, WhatAnotherManagersPatchGivesTheNodeJobIsNotRepeated) {
  const std::string withPatch = withEntries(nodeEntry(
      "example.io/platform-team", "{tolerations: [{key: accelerator, operator: Exists}]}"));
  const MutationRun run = runOnTrainJob({&kMutator}, *manifest(withPatch), training());
  ASSERT_TRUE(run.changed);
  EXPECT_EQ(stringMember(at(*run.after, "/spec/runtimePatches/0"), "manager"),
            "example.io/platform-team");
  const JsonValue* own = nodePodSpec(*run.after, 1);
  ASSERT_NE(own, nullptr);
  EXPECT_EQ(member(own, "tolerations"), nullptr);
  EXPECT_EQ(toJson(*member(own, "nodeSelector")), R"({"accelerator":"nvidia"})");
  expectAppliedAndIdempotentOnTrainJob({&kMutator}, run, training());
}

// Trainer v2.3 merges each entry as a strategic merge patch, in which a
// PodSpec's tolerations replace the list before them: aiadmit's entry, after
// the platform team's (Trainer's examples/yaml/02-runtime-patches.yaml),
// carries the team's toleration beside the pool's.
TEST(TrainJobPlacement, TheTolerationsOfAnEarlierEntryAreCarriedSinceTrainerReplacesThem) {
  const std::string withPatch = withEntries(
      nodeEntry("example.io/platform-team",
                R"({nodeSelector: {node-type: training}, tolerations: [{key: training-workload, )"
                R"(operator: Equal, value: "true", effect: NoSchedule}]})"));
  const MutationRun run = runOnTrainJob({&kMutator}, *manifest(withPatch), training());
  ASSERT_TRUE(run.changed);
  const JsonValue* own = nodePodSpec(*run.after, 1);
  ASSERT_NE(own, nullptr);
  EXPECT_EQ(
      toJson(*member(own, "tolerations")),
      R"([{"key":"training-workload","operator":"Equal","value":"true","effect":"NoSchedule"},)"
      R"({"key":"accelerator","operator":"Equal","value":"gpu","effect":"NoSchedule"}])");
  EXPECT_EQ(toJson(*member(own, "nodeSelector")), R"({"accelerator":"nvidia"})");
  EXPECT_EQ(run.changes,
            (std::vector<std::string>{
                "added toleration accelerator=gpu:NoSchedule to replicated job node through "
                "runtimePatches",
                "added node selector accelerator=nvidia to replicated job node through "
                "runtimePatches"}));
  ASSERT_EQ(run.notices.size(), 1u);
  EXPECT_NE(run.notices[0].find("repeats the tolerations an earlier entry gives"),
            std::string::npos)
      << run.notices[0];
  expectAppliedAndIdempotentOnTrainJob({&kMutator}, run, training());
}

// An entry after aiadmit's that sets tolerations decides them alone.
TEST(TrainJobPlacement, ALaterEntrysTolerationsAreLeftToIt) {
  const std::string later = withEntries(
      nodeEntry("aiadmit.dev/webhook",
                "{tolerations: [{key: accelerator, operator: Equal, value: gpu, effect: "
                "NoSchedule}], nodeSelector: {accelerator: nvidia}}") +
      nodeEntry("kueue.x-k8s.io/manager", "{tolerations: [{key: flavor, operator: Exists}]}"));
  const MutationRun run = runOnTrainJob({&kMutator}, *manifest(later), training());
  ASSERT_TRUE(run.changed);
  const JsonValue* own = nodePodSpec(*run.after, 0);
  ASSERT_NE(own, nullptr);
  EXPECT_EQ(member(own, "tolerations"), nullptr);
  EXPECT_EQ(toJson(*member(own, "nodeSelector")), R"({"accelerator":"nvidia"})");
  expectAppliedAndIdempotentOnTrainJob({&kMutator}, run, training());
}

TEST(TrainJobPlacement, ItsOwnEntryIsRemovedOnceAnotherPatchPlacesTheNode) {
  const std::string placedTwice = withEntries(
      nodeEntry("aiadmit.dev/webhook", "{nodeSelector: {accelerator: nvidia}}", kEntryTime) +
      nodeEntry("example.io/platform-team",
                "{nodeSelector: {accelerator: nvidia}, tolerations: [{operator: "
                "Exists}]}"));
  const MutationRun run = runOnTrainJob({&kMutator}, *manifest(placedTwice), training());
  ASSERT_TRUE(run.changed);
  const JsonValue* patches = at(*run.after, "/spec/runtimePatches");
  ASSERT_NE(patches, nullptr);
  ASSERT_EQ(patches->Size(), 1u);
  EXPECT_EQ(stringMember(&(*patches)[0], "manager"), "example.io/platform-team");
  expectAppliedAndIdempotentOnTrainJob({&kMutator}, run, training());
}

TEST(TrainJobPlacement, AStaleEntryIsBroughtUpToDateAndKeepsTrainersTime) {
  const std::string stale = withEntries(
      nodeEntry("aiadmit.dev/webhook", "{nodeSelector: {accelerator: amd}}", kEntryTime));
  const MutationRun run = runOnTrainJob({&kMutator}, *manifest(stale), training());
  ASSERT_TRUE(run.changed);
  const JsonValue* entry = at(*run.after, "/spec/runtimePatches/0");
  EXPECT_EQ(stringMember(entry, "time"), "2026-01-01T00:00:00Z");
  EXPECT_EQ(toJson(*member(nodePodSpec(*run.after, 0), "nodeSelector")),
            R"({"accelerator":"nvidia"})");
  expectAppliedAndIdempotentOnTrainJob({&kMutator}, run, training());
}

TEST(TrainJobPlacement, ATrainJobWithoutGpusIsNotAimedAtThePool) {
  std::string cpuOnly = grpo();
  cpuOnly.replace(cpuOnly.find("nvidia.com/gpu: 2"), 17, "cpu: 2");
  const MutationRun run = runOnTrainJob({&kMutator}, *manifest(cpuOnly), training());
  EXPECT_FALSE(run.changed);
  EXPECT_EQ(run.patch(), "");
}

TEST(TrainJobPlacement, AnOlderTrainerApiIsLeftAloneWithANotice) {
  const std::string older = grpo(R"(  podTemplateOverrides:
  - targetJobs: [{name: node}]
    spec: {serviceAccountName: trainer}
)");
  const MutationRun run = runOnTrainJob({&kMutator}, *manifest(older), training());
  EXPECT_FALSE(run.changed);
  ASSERT_EQ(run.notices.size(), 1u);
  EXPECT_NE(run.notices[0].find("runtimePatches"), std::string::npos) << run.notices[0];
}

TEST(TrainJobPlacement, TheSwitchesTurnItsPartsOff) {
  const auto profiles = profilesFromYaml(R"(
apiVersion: aiadmit.dev/v1
kind: Profile
metadata: {name: selector-only}
spec:
  class: training
  placement:
    nodeSelector: {accelerator: nvidia}
    tolerations: [{key: accelerator, operator: Equal, value: gpu, effect: NoSchedule}]
  mutations: {tolerations: false}
---
apiVersion: aiadmit.dev/v1
kind: Profile
metadata: {name: nothing}
spec:
  class: training
  scope: {namespaces: [other]}
  placement:
    nodeSelector: {accelerator: nvidia}
  mutations: {tolerations: false, placement: false}
)");
  const MutationRun selectorOnly =
      runOnTrainJob({&kMutator}, *manifest(grpo()), *profiles->find("selector-only"));
  ASSERT_TRUE(selectorOnly.changed);
  EXPECT_EQ(selectorOnly.changes.size(), 1u);
  EXPECT_NE(selectorOnly.changes[0].find("node selector"), std::string::npos);
  const MutationRun nothing =
      runOnTrainJob({&kMutator}, *manifest(grpo()), *profiles->find("nothing"));
  EXPECT_FALSE(nothing.changed);
}

TEST(TrainJobPlacement, OtherKindsAreNotItsBusiness) {
  // A plain GPU Pod: no TrainJob row, no runtimePatches.
  const MutationRun run = runMutator(kMutator, gpuPodManifest(), training());
  EXPECT_FALSE(run.changed);
  EXPECT_EQ(run.patch(), "");
}

}  // namespace
}  // namespace aiadmit
