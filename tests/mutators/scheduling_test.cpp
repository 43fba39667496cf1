// Scheduling: priorityClassName, schedulerName, labels and annotations from
// the profile, only where the workload has not chosen.
#include "mutators/scheduling.h"
#include "tests/support/mutator_harness.h"
#include "webhook/kube/cluster_view.h"

namespace aiadmit {
namespace {

using namespace testing;

const SchedulingMutator kMutator;

const char* kProfiles = R"(
apiVersion: aiadmit.dev/v1
kind: Profile
metadata: {name: gang}
spec:
  class: training
  scheduling:
    priorityClassName: ai-training
    schedulerName: volcano
    labels: {kueue.x-k8s.io/queue-name: team-a}
    annotations: {scheduling.k8s.io/group-name: team-a}
---
apiVersion: aiadmit.dev/v1
kind: Profile
metadata: {name: off}
spec:
  class: training
  scope: {namespaces: [other]}
  scheduling:
    priorityClassName: ai-training
    schedulerName: volcano
    labels: {team: a}
  mutations: {scheduling: false}
)";

const Profile& gang() {
  static const auto profiles = profilesFromYaml(kProfiles);
  return *profiles->find("gang");
}

const char* kJob = R"(
apiVersion: batch/v1
kind: Job
metadata: {name: train, labels: {app: train}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: x, resources: {limits: {nvidia.com/gpu: 8}}}]
)";

TEST(SchedulingMutator, EverythingAbsentIsSetOnSpecObjectAndTemplate) {
  const MutationRun run = runMutator(kMutator, kJob, gang());
  EXPECT_EQ(stringOf(at(*run.after, "/spec/template/spec/priorityClassName")), "ai-training");
  EXPECT_EQ(stringOf(at(*run.after, "/spec/template/spec/schedulerName")), "volcano");
  EXPECT_EQ(stringOf(at(*run.after, "/metadata/labels/kueue.x-k8s.io~1queue-name")), "team-a");
  EXPECT_EQ(stringOf(at(*run.after, "/spec/template/metadata/labels/kueue.x-k8s.io~1queue-name")),
            "team-a");
  EXPECT_EQ(stringOf(at(*run.after, "/metadata/annotations/scheduling.k8s.io~1group-name")),
            "team-a");
  EXPECT_EQ(
      stringOf(at(*run.after, "/spec/template/metadata/annotations/scheduling.k8s.io~1group-name")),
      "team-a");
  EXPECT_EQ(run.changes, (std::vector<std::string>{
                             "set priorityClassName ai-training",
                             "set schedulerName volcano",
                             "added label kueue.x-k8s.io/queue-name=team-a",
                             "added annotation scheduling.k8s.io/group-name=team-a",
                         }));
  // The existing label map gets one key; no map is replaced.
  EXPECT_NE(
      run.patch().find(
          R"({"op":"add","path":"/metadata/labels/kueue.x-k8s.io~1queue-name","value":"team-a"})"),
      std::string::npos)
      << run.patch();
  expectAppliedAndIdempotent(kMutator, run, gang());
}

TEST(SchedulingMutator, WhatTheWorkloadChoseIsKept) {
  const MutationRun run = runMutator(kMutator, R"(
apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
  labels: {kueue.x-k8s.io/queue-name: mine}
  annotations: {scheduling.k8s.io/group-name: mine}
spec:
  selector: {matchLabels: {app: d}}
  template:
    metadata:
      labels: {app: d, kueue.x-k8s.io/queue-name: mine}
      annotations: {scheduling.k8s.io/group-name: mine}
    spec:
      priorityClassName: ai-batch
      schedulerName: my-scheduler
      containers: [{name: main, image: x}]
)",
                                     gang());
  EXPECT_FALSE(run.changed) << run.patch();
}

TEST(SchedulingMutator, AValueTheWorkloadHasAtOneLevelIsNeverContradictedAtAnother) {
  // Kueue reads the queue of a Job on the Job: the one the developer wrote on
  // the template is the workload's choice, carried to the Job, never team-a.
  const MutationRun run = runMutator(kMutator, R"(
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  template:
    metadata:
      labels: {kueue.x-k8s.io/queue-name: team-c}
    spec:
      restartPolicy: Never
      priorityClassName: ai-training
      schedulerName: volcano
      containers: [{name: main, image: x, resources: {limits: {nvidia.com/gpu: 8}}}]
)",
                                     gang());
  EXPECT_EQ(stringOf(at(*run.after, "/metadata/labels/kueue.x-k8s.io~1queue-name")), "team-c");
  EXPECT_EQ(stringOf(at(*run.after, "/spec/template/metadata/labels/kueue.x-k8s.io~1queue-name")),
            "team-c");
  EXPECT_EQ(run.changes, (std::vector<std::string>{
                             "added label kueue.x-k8s.io/queue-name=team-c as the workload has it",
                             "added annotation scheduling.k8s.io/group-name=team-a",
                         }));
  expectAppliedAndIdempotent(kMutator, run, gang());
}

TEST(SchedulingMutator, LevelsThatDisagreeGetNoValueOfTheProfiles) {
  const MutationRun run = runMutator(kMutator, R"(
apiVersion: batch/v1
kind: CronJob
metadata:
  name: nightly
  labels: {kueue.x-k8s.io/queue-name: team-b}
spec:
  schedule: "0 2 * * *"
  jobTemplate:
    spec:
      template:
        metadata:
          labels: {kueue.x-k8s.io/queue-name: team-c}
        spec:
          restartPolicy: Never
          containers: [{name: main, image: x}]
)",
                                     gang());
  EXPECT_EQ(at(*run.after, "/spec/jobTemplate/metadata/labels"), nullptr) << run.patch();
  EXPECT_EQ(run.patch().find("queue-name"), std::string::npos) << run.patch();
  expectAppliedAndIdempotent(kMutator, run, gang());
}

TEST(SchedulingMutator, TheApiServersDefaultSchedulerCountsAsNotChosen) {
  const MutationRun run = runMutator(kMutator, R"(
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: s}
spec:
  selector: {matchLabels: {app: s}}
  template:
    metadata: {labels: {app: s}}
    spec:
      schedulerName: default-scheduler
      priorityClassName: ai-batch
      containers: [{name: main, image: x}]
)",
                                     gang());
  EXPECT_NE(run.patch().find(
                R"({"op":"replace","path":"/spec/template/spec/schedulerName","value":"volcano"})"),
            std::string::npos)
      << run.patch();
  EXPECT_EQ(run.changes[0], "set schedulerName volcano in place of default-scheduler");
  expectAppliedAndIdempotent(kMutator, run, gang());
}

TEST(SchedulingMutator, ABarePodWhosePriorityIsResolvedGetsNoPriorityClass) {
  // The API server's Priority admission resolves spec.priority before
  // webhooks run; a class added now would not change it.
  const MutationRun resolved = runMutator(kMutator, R"(
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  restartPolicy: Never
  priority: 0
  schedulerName: default-scheduler
  containers: [{name: main, image: x}]
)",
                                          gang());
  EXPECT_EQ(at(*resolved.after, "/spec/priorityClassName"), nullptr);
  EXPECT_EQ(stringOf(at(*resolved.after, "/spec/schedulerName")), "volcano");
  expectAppliedAndIdempotent(kMutator, resolved, gang());

  const MutationRun unresolved = runMutator(kMutator, R"(
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  restartPolicy: Never
  containers: [{name: main, image: x}]
)",
                                            gang());
  EXPECT_EQ(stringOf(at(*unresolved.after, "/spec/priorityClassName")), "ai-training");
}

TEST(SchedulingMutator, ACronJobsJobTemplateCarriesTheLabelsToItsJobs) {
  const MutationRun run = runMutator(
      kMutator, cronJobManifest("nightly", "0 2 * * *", "{name: main, image: x}"), gang());
  for (const char* pointer :
       {"/metadata/labels/kueue.x-k8s.io~1queue-name",
        "/spec/jobTemplate/metadata/labels/kueue.x-k8s.io~1queue-name",
        "/spec/jobTemplate/spec/template/metadata/labels/kueue.x-k8s.io~1queue-name"}) {
    EXPECT_EQ(stringOf(at(*run.after, pointer)), "team-a") << pointer;
  }
  EXPECT_EQ(stringOf(at(*run.after, "/spec/jobTemplate/spec/template/spec/priorityClassName")),
            "ai-training");
  expectAppliedAndIdempotent(kMutator, run, gang());
}

TEST(SchedulingMutator, ShippedProfilesSetTheirClassesPriority) {
  for (const char* name : {"training", "batch"}) {
    SCOPED_TRACE(name);
    const MutationRun run = runMutator(kMutator, kJob, shippedProfile(name));
    EXPECT_EQ(stringOf(at(*run.after, "/spec/template/spec/priorityClassName")),
              std::string("ai-") + name);
  }
}

// A cluster view that lists PriorityClasses and holds `names`.
std::shared_ptr<const ClusterView> viewWithPriorityClasses(const std::vector<std::string>& names) {
  ClusterView::Builder builder;
  for (const std::string& name : names) builder.add(PriorityClassRecord{name, 1000, false});
  builder.markListed(ClusterKind::PriorityClass);
  return std::move(builder).build();
}

TEST(SchedulingMutator, AClassTheClusterLacksIsNotSetAndANoticeSaysSo) {
  // The API server would refuse every Pod of the Job for the class.
  const auto view = viewWithPriorityClasses({"ai-batch"});
  const MutationRun run = runMutator(kMutator, kJob, gang(), "default", view.get());
  EXPECT_EQ(at(*run.after, "/spec/template/spec/priorityClassName"), nullptr) << run.patch();
  EXPECT_EQ(
      run.notices,
      (std::vector<std::string>{
          "no PriorityClass ai-training, not set; see manifests/components/priority-classes"}));
  // The rest of the profile's scheduling still applies.
  EXPECT_EQ(run.changes, (std::vector<std::string>{
                             "set schedulerName volcano",
                             "added label kueue.x-k8s.io/queue-name=team-a",
                             "added annotation scheduling.k8s.io/group-name=team-a",
                         }));
  expectAppliedAndIdempotent(kMutator, run, gang(), "default", view.get());
}

TEST(SchedulingMutator, ANoticeAloneIsNoChange) {
  const auto view = viewWithPriorityClasses({});
  const MutationRun run =
      runMutator(kMutator, kJob, shippedProfile("batch"), "default", view.get());
  EXPECT_FALSE(run.changed) << run.patch();
  EXPECT_TRUE(run.changes.empty());
  ASSERT_EQ(run.notices.size(), 1u);
  EXPECT_NE(run.notices[0].find("ai-batch"), std::string::npos) << run.notices[0];
  // "aiadmit: <notice> (profile batch)" fits one warning line.
  EXPECT_LE(run.notices[0].size() + std::string("aiadmit:  (profile batch)").size(),
            kMaxWarningLength);
  expectAppliedAndIdempotent(kMutator, run, shippedProfile("batch"), "default", view.get());
}

TEST(SchedulingMutator, AClassTheClusterHasIsSet) {
  const auto view = viewWithPriorityClasses({"ai-training"});
  const MutationRun run = runMutator(kMutator, kJob, gang(), "default", view.get());
  EXPECT_EQ(stringOf(at(*run.after, "/spec/template/spec/priorityClassName")), "ai-training");
  EXPECT_TRUE(run.notices.empty());
  expectAppliedAndIdempotent(kMutator, run, gang(), "default", view.get());
}

TEST(SchedulingMutator, AViewThatCannotTellKeepsTheProfilesClass) {
  // PriorityClasses not listed (not yet synced, or stale): unknown, not absent.
  ClusterView::Builder builder;
  builder.markListed(ClusterKind::Node);
  const auto unlisted = std::move(builder).build();
  for (const ClusterView* view : {unlisted.get(), static_cast<const ClusterView*>(nullptr)}) {
    const MutationRun run = runMutator(kMutator, kJob, gang(), "default", view);
    EXPECT_EQ(stringOf(at(*run.after, "/spec/template/spec/priorityClassName")), "ai-training");
    EXPECT_TRUE(run.notices.empty());
  }
}

TEST(SchedulingMutator, TheSystemClassesAlwaysExist) {
  const auto profiles = profilesFromYaml(R"(
apiVersion: aiadmit.dev/v1
kind: Profile
metadata: {name: critical}
spec:
  class: training
  scheduling: {priorityClassName: system-node-critical}
)");
  const auto view = viewWithPriorityClasses({"ai-training"});
  const MutationRun run =
      runMutator(kMutator, kJob, *profiles->find("critical"), "default", view.get());
  EXPECT_EQ(stringOf(at(*run.after, "/spec/template/spec/priorityClassName")),
            "system-node-critical");
  EXPECT_TRUE(run.notices.empty());
}

TEST(SchedulingMutator, ProfileTurnsItOff) {
  static const auto profiles = profilesFromYaml(kProfiles);
  EXPECT_FALSE(runMutator(kMutator, kJob, *profiles->find("off")).changed);
}

}  // namespace
}  // namespace aiadmit
