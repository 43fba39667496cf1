// Job defaults: backoffLimit, activeDeadlineSeconds and ttlSecondsAfterFinished
// for training and batch Jobs and CronJob job templates, when absent; the
// deadline only on a declared class.
#include "tests/support/mutator_harness.h"

namespace aiadmit {
namespace {

using namespace testing;

const MutatorDeclaration& kMutator = registeredMutator("job-defaults");

constexpr std::string_view kTraining = "{aiadmit.dev/workload: training}";

// A GPU Job with `jobSpecFields` and the object's `annotations`: with none,
// its class is inferred from its kind.
std::string job(const std::string& jobSpecFields, std::string_view annotations = "{}") {
  return R"(
apiVersion: batch/v1
kind: Job
metadata: {name: train, annotations: )" +
         std::string(annotations) + R"(}
spec:
)" + jobSpecFields +
         R"(
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]
)";
}

TEST(JobDefaultsMutator, TrainingJobGetsAllThreeAsSmallAdds) {
  const MutationRun run = runMutator(kMutator, job("  completions: 1", kTraining), training());
  EXPECT_EQ(run.patch(), R"([{"op":"add","path":"/spec/backoffLimit","value":3},)"
                         R"({"op":"add","path":"/spec/activeDeadlineSeconds","value":604800},)"
                         R"({"op":"add","path":"/spec/ttlSecondsAfterFinished","value":86400}])");
  EXPECT_EQ(run.changes, (std::vector<std::string>{"set Job backoffLimit=3",
                                                   "set Job activeDeadlineSeconds=604800",
                                                   "set Job ttlSecondsAfterFinished=86400"}));
  EXPECT_TRUE(run.notices.empty());
  expectAppliedAndIdempotent(kMutator, run, training());
}

TEST(JobDefaultsMutator, AnInferredClassGetsNoDeadline) {
  // A Job of a GPU is batch by its kind: it may be a training run that the
  // kind cannot tell, and a deadline would end it. The other two end nothing
  // that runs.
  for (const Profile* profile : {&batch(), &training()}) {
    SCOPED_TRACE(profile->name);
    const MutationRun run = runMutator(kMutator, job("  completions: 1"), *profile);
    EXPECT_EQ(at(*run.after, "/spec/activeDeadlineSeconds"), nullptr) << run.patch();
    EXPECT_NE(at(*run.after, "/spec/backoffLimit"), nullptr) << run.patch();
    EXPECT_NE(at(*run.after, "/spec/ttlSecondsAfterFinished"), nullptr) << run.patch();
    EXPECT_EQ(
        run.notices,
        (std::vector<std::string>{"left out activeDeadlineSeconds=" +
                                  std::to_string(*profile->jobDefaults.activeDeadlineSeconds) +
                                  ": class inferred; declare it in aiadmit.dev/workload"}));
    // Run again, it changes nothing and says the same.
    expectAppliedAndIdempotent(kMutator, run, *profile);
  }
}

TEST(JobDefaultsMutator, ADeadlineTheJobSetsIsNoNotice) {
  const MutationRun run = runMutator(kMutator, job("  activeDeadlineSeconds: 60"), batch());
  EXPECT_EQ(at(*run.after, "/spec/activeDeadlineSeconds")->GetInt(), 60);
  EXPECT_TRUE(run.notices.empty()) << ::testing::PrintToString(run.notices);
}

TEST(JobDefaultsMutator, ValuesTheJobSetsAreKept) {
  const MutationRun run = runMutator(
      kMutator, job("  backoffLimit: 0\n  activeDeadlineSeconds: 60\n  ttlSecondsAfterFinished: 0"),
      training());
  EXPECT_FALSE(run.changed) << run.patch();
}

TEST(JobDefaultsMutator, TheApiServersDefaultBackoffLimitCountsAsAbsent) {
  // The API server writes backoffLimit: 6 into every Job that leaves it out.
  const MutationRun run = runMutator(
      kMutator, job("  backoffLimit: 6\n  activeDeadlineSeconds: 60\n  ttlSecondsAfterFinished: 0"),
      training());
  EXPECT_EQ(run.patch(), R"([{"op":"replace","path":"/spec/backoffLimit","value":3}])");
  expectAppliedAndIdempotent(kMutator, run, training());

  // With backoffLimitPerIndex, backoffLimit means something else.
  const MutationRun perIndex = runMutator(
      kMutator,
      job("  completionMode: Indexed\n  completions: 2\n  backoffLimitPerIndex: 1\n"
          "  backoffLimit: 6\n  activeDeadlineSeconds: 60\n  ttlSecondsAfterFinished: 0"),
      training());
  EXPECT_FALSE(perIndex.changed) << perIndex.patch();
}

const char* kCronJob = R"(
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly-eval, annotations: {aiadmit.dev/workload: training}}
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      backoffLimit: 6
      template:
        spec:
          restartPolicy: Never
          containers: [{name: eval, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]
)";

TEST(JobDefaultsMutator, CronJobJobTemplateGetsThemAndKeepsWhatItSays) {
  // A jobTemplate is not defaulted by the API server: its 6 was written by someone.
  const MutationRun run = runMutator(kMutator, kCronJob, training());
  EXPECT_EQ(
      run.patch(),
      R"([{"op":"add","path":"/spec/jobTemplate/spec/activeDeadlineSeconds","value":604800},)"
      R"({"op":"add","path":"/spec/jobTemplate/spec/ttlSecondsAfterFinished","value":86400}])");
  expectAppliedAndIdempotent(kMutator, run, training());
}

TEST(JobDefaultsMutator, BatchProfileValuesAreUsedForBatch) {
  const MutationRun run =
      runMutator(kMutator, job("  parallelism: 2", "{aiadmit.dev/workload: batch}"), batch());
  EXPECT_EQ(at(*run.after, "/spec/backoffLimit")->GetInt(), 6);
  EXPECT_EQ(at(*run.after, "/spec/activeDeadlineSeconds")->GetInt(), 86400);
  EXPECT_EQ(at(*run.after, "/spec/ttlSecondsAfterFinished")->GetInt(), 3600);
}

TEST(JobDefaultsMutator, OnlyTrainingAndBatchJobsAreTouched) {
  // A Pod has no Job fields; a realtime Job is refused by validation (AIA002).
  const MutationRun pod = runMutator(kMutator, gpuPodManifest(), training());
  EXPECT_FALSE(pod.changed);
  const std::string realtimeJob = R"(
apiVersion: batch/v1
kind: Job
metadata: {name: j, annotations: {aiadmit.dev/workload: realtime}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: x}]
)";
  EXPECT_FALSE(runMutator(kMutator, realtimeJob, training()).changed);
}

TEST(JobDefaultsMutator, ProfileTurnsItOff) {
  const auto profiles = switchedOffProfiles(
      "  jobDefaults: {backoffLimit: 1, activeDeadlineSeconds: 10, ttlSecondsAfterFinished: 10}\n"
      "  mutations: {jobDefaults: false}\n");
  EXPECT_FALSE(runMutator(kMutator, job("  parallelism: 1"), *profiles->find("off")).changed);
  EXPECT_FALSE(runMutator(kMutator, job("  parallelism: 1"), *profiles->find("none")).changed);
}

}  // namespace
}  // namespace aiadmit
