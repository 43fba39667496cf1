// Stamp: aiadmit.dev/class and aiadmit.dev/profile on the object and on every
// template below it.
#include "tests/support/mutator_harness.h"

namespace aiadmit {
namespace {

using namespace testing;

const MutatorDeclaration& kMutator = registeredMutator("stamp");

TEST(StampMutator, DeploymentAndItsPodTemplateAreStamped) {
  const MutationRun run = runMutator(kMutator, R"(
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, annotations: {team: a}}
spec:
  selector: {matchLabels: {app: d}}
  template:
    metadata: {labels: {app: d}}
    spec:
      containers: [{name: main, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]
)",
                                     realtime());
  EXPECT_EQ(
      run.patch(),
      R"([{"op":"add","path":"/metadata/annotations/aiadmit.dev~1class","value":"realtime"},)"
      R"({"op":"add","path":"/metadata/annotations/aiadmit.dev~1profile","value":"realtime"},)"
      R"({"op":"add","path":"/spec/template/metadata/annotations","value":)"
      R"({"aiadmit.dev/class":"realtime","aiadmit.dev/profile":"realtime"}}])");
  EXPECT_EQ(
      run.changes,
      (std::vector<std::string>{"stamped aiadmit.dev/class=realtime and aiadmit.dev/profile"}));
  expectAppliedAndIdempotent(kMutator, run, realtime());
}

TEST(StampMutator, CronJobStampsItsJobTemplateForTheJobsItCreates) {
  const MutationRun run =
      runMutator(kMutator, cronJobManifest("c", "@daily", kGpuContainer), batch());
  for (const char* pointer : {"/metadata/annotations", "/spec/jobTemplate/metadata/annotations",
                              "/spec/jobTemplate/spec/template/metadata/annotations"}) {
    SCOPED_TRACE(pointer);
    const JsonValue* annotations = at(*run.after, pointer);
    EXPECT_EQ(stringMember(annotations, "aiadmit.dev/class"), "batch");
    EXPECT_EQ(stringMember(annotations, "aiadmit.dev/profile"), "batch");
  }
  expectAppliedAndIdempotent(kMutator, run, batch());
}

TEST(StampMutator, ABarePodIsStampedOnItsOwnMetadata) {
  const MutationRun run = runMutator(kMutator, podManifest("null", kGpuContainer), batch());
  EXPECT_EQ(run.patch(), R"([{"op":"replace","path":"/metadata/annotations","value":)"
                         R"({"aiadmit.dev/class":"batch","aiadmit.dev/profile":"batch"}}])");
  expectAppliedAndIdempotent(kMutator, run, batch());
}

TEST(StampMutator, AStaleStampIsBroughtUpToDate) {
  // The developer changed the workload's class; the old stamp must follow.
  const MutationRun run = runMutator(kMutator, R"(
apiVersion: batch/v1
kind: Job
metadata:
  name: j
  annotations: {aiadmit.dev/workload: training, aiadmit.dev/class: batch, aiadmit.dev/profile: training}
spec:
  template:
    metadata:
      annotations: {aiadmit.dev/class: training, aiadmit.dev/profile: training}
    spec:
      restartPolicy: Never
      containers: [{name: main, image: x}]
)",
                                     training());
  EXPECT_EQ(
      run.patch(),
      R"([{"op":"replace","path":"/metadata/annotations/aiadmit.dev~1class","value":"training"}])");
  expectAppliedAndIdempotent(kMutator, run, training());
}

TEST(StampMutator, ProfileTurnsItOff) {
  const auto profiles = profilesFromYaml(R"(
apiVersion: aiadmit.dev/v1
kind: Profile
metadata: {name: quiet}
spec:
  class: batch
  mutations: {stamp: false}
)");
  EXPECT_FALSE(runMutator(kMutator, gpuPodManifest(), *profiles->find("quiet")).changed);
}

}  // namespace
}  // namespace aiadmit
