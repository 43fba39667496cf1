// Pool tolerations: added to pods that ask for the profile's GPUs unless an
// existing toleration already tolerates the taint.
#include "tests/support/mutator_harness.h"

namespace aiadmit {
namespace {

using namespace testing;

const MutatorDeclaration& kMutator = registeredMutator("pool-tolerations");

std::string gpuPodWithTolerations(const std::string& tolerations) {
  return gpuPodManifest(tolerations.empty() ? "" : "  tolerations: " + tolerations + "\n");
}

TEST(PoolTolerationsMutator, GpuPodWithoutTolerationsGetsThePoolToleration) {
  const MutationRun run = runMutator(kMutator, gpuPodWithTolerations(""), training());
  EXPECT_EQ(run.patch(), R"([{"op":"add","path":"/spec/tolerations","value":[{"key":"accelerator",)"
                         R"("operator":"Equal","value":"gpu","effect":"NoSchedule"}]}])");
  ASSERT_EQ(run.changes.size(), 1u);
  EXPECT_EQ(run.changes[0], "added toleration accelerator=gpu:NoSchedule");
  expectAppliedAndIdempotent(kMutator, run, training());
}

TEST(PoolTolerationsMutator, OtherTolerationsStayAndThePoolsIsAppended) {
  const MutationRun run = runMutator(
      kMutator,
      gpuPodWithTolerations("[{key: node.kubernetes.io/not-ready, operator: Exists, effect: "
                            "NoExecute, tolerationSeconds: 300}]"),
      training());
  EXPECT_EQ(run.patch(),
            R"([{"op":"add","path":"/spec/tolerations/1","value":{"key":"accelerator",)"
            R"("operator":"Equal","value":"gpu","effect":"NoSchedule"}}])");
  expectAppliedAndIdempotent(kMutator, run, training());
}

TEST(PoolTolerationsMutator, AnExistingTolerationThatToleratesTheTaintCounts) {
  for (const char* tolerations : {
           "[{key: accelerator, operator: Equal, value: gpu, effect: NoSchedule}]",
           "[{key: accelerator, value: gpu, effect: NoSchedule}]",  // Equal is the default
           "[{key: accelerator, operator: Exists, effect: NoSchedule}]",
           "[{key: accelerator, operator: Exists}]",             // every effect
           "[{key: accelerator, operator: Equal, value: gpu}]",  // every effect
           "[{operator: Exists}]",                               // every taint
           "[{operator: Exists, effect: NoSchedule}]",
       }) {
    SCOPED_TRACE(tolerations);
    const MutationRun run = runMutator(kMutator, gpuPodWithTolerations(tolerations), training());
    EXPECT_FALSE(run.changed) << run.patch();
  }
}

TEST(PoolTolerationsMutator, AToleranceOfAnotherValueEffectOrKeyDoesNotCount) {
  for (const char* tolerations : {
           "[{key: accelerator, operator: Equal, value: tpu, effect: NoSchedule}]",
           "[{key: accelerator, operator: Exists, effect: NoExecute}]",
           "[{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]",
           "[{operator: Exists, effect: PreferNoSchedule}]",
       }) {
    SCOPED_TRACE(tolerations);
    const MutationRun run = runMutator(kMutator, gpuPodWithTolerations(tolerations), training());
    EXPECT_TRUE(run.changed);
    EXPECT_NE(run.patch().find(R"("path":"/spec/tolerations/1")"), std::string::npos)
        << run.patch();
    expectAppliedAndIdempotent(kMutator, run, training());
  }
}

TEST(PoolTolerationsMutator, APodWithoutGpusIsNotAimedAtThePool) {
  const MutationRun run = runMutator(kMutator, R"(
apiVersion: batch/v1
kind: Job
metadata: {name: tokenize, annotations: {aiadmit.dev/workload: batch}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: x, resources: {limits: {cpu: "4"}}}]
)",
                                     batch());
  EXPECT_FALSE(run.changed) << run.patch();
}

TEST(PoolTolerationsMutator, ControllersGetItOnTheirPodTemplate) {
  const MutationRun run =
      runMutator(kMutator, cronJobManifest("nightly", "0 2 * * *", kGpuContainer), batch());
  EXPECT_NE(at(*run.after, "/spec/jobTemplate/spec/template/spec/tolerations/0"), nullptr);
  expectAppliedAndIdempotent(kMutator, run, batch());
}

TEST(PoolTolerationsMutator, ProfileTurnsItOff) {
  const auto profiles = switchedOffProfiles(
      "  placement:\n"
      "    tolerations: [{key: accelerator, operator: Exists}]\n"
      "  mutations: {tolerations: false}\n");
  EXPECT_FALSE(runMutator(kMutator, gpuPodWithTolerations(""), *profiles->find("off")).changed);
  EXPECT_FALSE(runMutator(kMutator, gpuPodWithTolerations(""), *profiles->find("none")).changed);
}

}  // namespace
}  // namespace aiadmit
