// Scheduling: priorityClassName, schedulerName, labels and annotations from
// the profile, only where the workload has not chosen.

#include <algorithm>
#include <map>

#include "tests/support/mutator_harness.h"
#include "webhook/cluster/cluster_view.h"

namespace aiadmit {
namespace {

using namespace testing;

const MutatorDeclaration& kMutator = registeredMutator("scheduling");

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

// The Pods of a PodGroup of Kubernetes' own must have the group's priority:
// the scheduler places none of them otherwise, so their class is the
// group's to give. The same Job outside a group gets the profile's.
TEST(SchedulingMutator, PodsOfANativePodGroupKeepTheGroupsPriority) {
  for (const char* group : {"schedulingGroup: {podGroupName: workers}",
                            "workloadRef: {name: train, podGroup: workers}"}) {
    std::string job = kJob;
    job.insert(job.find("      containers:"), "      " + std::string(group) + "\n");
    const MutationRun run = runMutator(kMutator, job, gang());
    EXPECT_EQ(at(*run.after, "/spec/template/spec/priorityClassName"), nullptr) << group;
    EXPECT_EQ(stringOf(at(*run.after, "/spec/template/spec/schedulerName")), "volcano") << group;
    EXPECT_NE(std::find_if(run.notices.begin(), run.notices.end(),
                           [](const std::string& notice) {
                             return notice.find("priorityClassName left to PodGroup") == 0;
                           }),
              run.notices.end())
        << group;
    expectAppliedAndIdempotent(kMutator, run, gang());
  }
  const MutationRun outside = runMutator(kMutator, kJob, gang());
  EXPECT_EQ(stringOf(at(*outside.after, "/spec/template/spec/priorityClassName")), "ai-training");
}

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

// ---- Custom resources: the operator's own scheduling fields ----

// A Volcano Job: a parameter server without GPUs and GPU workers; `spec` and
// `workerSpec` are added to the Job's spec and to the workers' pod spec.
std::string volcanoJob(const std::string& spec = "", const std::string& workerSpec = "") {
  return R"(
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: mpi}
spec:)" + spec +
         R"(
  minAvailable: 3
  tasks:
  - name: ps
    replicas: 1
    template:
      spec:
        restartPolicy: Never
        containers: [{name: ps, image: x}]
  - name: worker
    replicas: 2
    template:
      spec:
        restartPolicy: Never)" +
         workerSpec + R"(
        containers: [{name: w, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]
)";
}

TEST(SchedulingMutator, AVolcanoJobGetsTheClassAndSchedulerWhereVolcanoReadsThem) {
  // Volcano gives the Job's scheduler and class to every Pod whose template
  // names none, and the class to the PodGroup it ranks the Job by.
  const MutationRun run = runOnCustomResource(kMutator, *manifest(volcanoJob()), gang());
  EXPECT_EQ(stringOf(at(*run.after, "/spec/priorityClassName")), "ai-training");
  EXPECT_EQ(stringOf(at(*run.after, "/spec/schedulerName")), "volcano");
  for (const char* task : {"/spec/tasks/0/template/spec", "/spec/tasks/1/template/spec"}) {
    const JsonValue* spec = at(*run.after, task);
    ASSERT_NE(spec, nullptr);
    EXPECT_EQ(member(spec, "priorityClassName"), nullptr) << task;
    EXPECT_EQ(member(spec, "schedulerName"), nullptr) << task;
  }
  // Once for the workload, naming the field; the labels go to every level.
  EXPECT_EQ(
      std::count(run.changes.begin(), run.changes.end(), "set spec.priorityClassName ai-training"),
      1);
  EXPECT_EQ(std::count(run.changes.begin(), run.changes.end(), "set spec.schedulerName volcano"),
            1);
  expectAppliedIdempotentAndValid(kMutator, run, gang());
}

TEST(SchedulingMutator, AVolcanoJobsOwnChoiceIsKept) {
  const MutationRun chosen = runOnCustomResource(
      kMutator,
      *manifest(volcanoJob("\n  priorityClassName: ai-batch\n  schedulerName: kai-scheduler")),
      gang());
  EXPECT_EQ(stringOf(at(*chosen.after, "/spec/priorityClassName")), "ai-batch");
  EXPECT_EQ(stringOf(at(*chosen.after, "/spec/schedulerName")), "kai-scheduler");
  EXPECT_EQ(chosen.patch().find("priorityClassName"), std::string::npos) << chosen.patch();
  EXPECT_EQ(chosen.patch().find("schedulerName"), std::string::npos) << chosen.patch();
  expectAppliedIdempotentAndValid(kMutator, chosen, gang());

  // A template that names its class keeps the Job-level field unset: the
  // Pods and their group never get different classes.
  const MutationRun templated = runOnCustomResource(
      kMutator, *manifest(volcanoJob("", "\n        priorityClassName: ai-batch")), gang());
  EXPECT_EQ(at(*templated.after, "/spec/priorityClassName"), nullptr) << templated.patch();
  EXPECT_EQ(stringOf(at(*templated.after, "/spec/schedulerName")), "volcano");
  expectAppliedIdempotentAndValid(kMutator, templated, gang());
}

TEST(SchedulingMutator, AVolcanoJobsClassTheClusterLacksIsNoticedOnce) {
  const auto view = viewWithPriorityClasses({"ai-batch"});
  const MutationRun run =
      runOnCustomResource(kMutator, *manifest(volcanoJob()), gang(), view.get());
  EXPECT_EQ(at(*run.after, "/spec/priorityClassName"), nullptr) << run.patch();
  EXPECT_EQ(
      run.notices,
      (std::vector<std::string>{
          "no PriorityClass ai-training, not set; see manifests/components/priority-classes"}));
  expectAppliedIdempotentAndValid(kMutator, run, gang(), view.get());
}

// A RayCluster with `labels` (flow mapping entries) and one GPU worker group.
std::string rayCluster(const std::string& labels) {
  return R"(
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: ray, labels: {)" +
         labels + R"(}}
spec:
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers: [{name: head, image: ray}]
  workerGroupSpecs:
  - groupName: gpu
    replicas: 2
    minReplicas: 2
    maxReplicas: 2
    rayStartParams: {}
    template:
      spec:
        containers: [{name: w, image: ray, resources: {limits: {nvidia.com/gpu: 1}}}]
)";
}

TEST(SchedulingMutator, KubeRaysLabelsAreReadAndTheTemplatesGetTheirClass) {
  // KubeRay reads its labels only when it runs with a batch scheduler, which
  // the webhook cannot see; the templates are read either way.
  const MutationRun plain =
      runOnCustomResource(kMutator, *manifest(rayCluster("app: ray")), gang());
  for (const char* spec :
       {"/spec/headGroupSpec/template/spec", "/spec/workerGroupSpecs/0/template/spec"}) {
    EXPECT_EQ(stringOf(at(*plain.after, (std::string(spec) + "/priorityClassName").c_str())),
              "ai-training");
    EXPECT_EQ(stringOf(at(*plain.after, (std::string(spec) + "/schedulerName").c_str())),
              "volcano");
  }
  EXPECT_EQ(plain.patch().find("ray.io~1"), std::string::npos) << plain.patch();
  expectAppliedIdempotentAndValid(kMutator, plain, gang());

  // The label's class, which the profile allows, and not the profile's own:
  // with Volcano, KubeRay gives the label's class to every Pod anyway.
  const MutationRun labelled =
      runOnCustomResource(kMutator, *manifest(rayCluster("ray.io/priority-class-name: ai-batch")),
                          shippedProfile("training"));
  EXPECT_EQ(
      stringOf(at(*labelled.after, "/spec/workerGroupSpecs/0/template/spec/priorityClassName")),
      "ai-batch");
  EXPECT_NE(std::find(labelled.changes.begin(), labelled.changes.end(),
                      "gpu: set priorityClassName ai-batch as the workload has it"),
            labelled.changes.end())
      << ::testing::PrintToString(labelled.changes);
  expectAppliedIdempotentAndValid(kMutator, labelled, shippedProfile("training"));

  // A class the profile does not allow goes nowhere else (AIA011 refuses it).
  const MutationRun refused = runOnCustomResource(
      kMutator, *manifest(rayCluster("ray.io/priority-class-name: ai-realtime")),
      shippedProfile("training"));
  EXPECT_EQ(refused.patch().find("priorityClassName"), std::string::npos) << refused.patch();
}

// A PyTorchJob of GPU workers; `runPolicy` is its run policy's YAML, or "".
std::string pytorchJob(const std::string& runPolicy) {
  return R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: ddp}
spec:)" + runPolicy +
         R"(
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers: [{name: pytorch, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]
)";
}

TEST(SchedulingMutator, AKubeflowJobsSchedulingPolicyIsNeverCreated) {
  // The policy names only the PodGroup's class, and its presence says the
  // job is gang-scheduled: writing it would make AIA010 hold for nothing.
  const MutationRun run = runOnCustomResource(kMutator, *manifest(pytorchJob("")), gang());
  EXPECT_EQ(at(*run.after, "/spec/runPolicy"), nullptr) << run.patch();
  EXPECT_EQ(
      stringOf(at(*run.after, "/spec/pytorchReplicaSpecs/Worker/template/spec/priorityClassName")),
      "ai-training");
  expectAppliedIdempotentAndValid(kMutator, run, gang());

  const MutationRun policy = runOnCustomResource(
      kMutator,
      *manifest(pytorchJob("\n  runPolicy:\n    schedulingPolicy: {priorityClass: ai-batch}")),
      shippedProfile("training"));
  EXPECT_EQ(stringOf(at(*policy.after,
                        "/spec/pytorchReplicaSpecs/Worker/template/spec/priorityClassName")),
            "ai-batch");
  expectAppliedIdempotentAndValid(kMutator, policy, shippedProfile("training"));
}

TEST(SchedulingMutator, ProfileTurnsItOff) {
  static const auto profiles = profilesFromYaml(kProfiles);
  EXPECT_FALSE(runMutator(kMutator, kJob, *profiles->find("off")).changed);
}

}  // namespace
}  // namespace aiadmit
