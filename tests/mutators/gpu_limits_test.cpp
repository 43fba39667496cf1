// GPU limits: requests copied to limits, GPUs asked by annotation or by the
// profile's default count put on the main container.
#include "tests/support/mutator_harness.h"

namespace aiadmit {
namespace {

using namespace testing;

const MutatorDeclaration& kMutator = registeredMutator("gpu-limits");

const char* kJobRequestingGpus = R"(
apiVersion: batch/v1
kind: Job
metadata: {name: finetune}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: trainer:1
        resources:
          requests: {cpu: "8", nvidia.com/gpu: "2"}
          limits: {cpu: "8"}
)";

TEST(GpuLimitsMutator, RequestWithoutLimitGetsAnEqualLimitAsOneAdd) {
  const MutationRun run = runMutator(kMutator, kJobRequestingGpus, training());
  EXPECT_TRUE(run.changed);
  EXPECT_EQ(run.patch(),
            R"([{"op":"add","path":"/spec/template/spec/containers/0/resources/limits/)"
            R"(nvidia.com~1gpu","value":"2"}])");
  ASSERT_EQ(run.changes.size(), 1u);
  EXPECT_EQ(run.changes[0],
            "added limit nvidia.com/gpu=2 to container trainer to match its request");
  expectAppliedAndIdempotent(kMutator, run, training());
}

TEST(GpuLimitsMutator, MissingLimitsSectionIsCreatedWithTheGpuOnly) {
  const MutationRun run = runMutator(kMutator, R"(
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: x
    resources:
      requests: {memory: 1Gi, nvidia.com/gpu: 1}
)",
                                     training());
  EXPECT_EQ(
      run.patch(),
      R"([{"op":"add","path":"/spec/containers/0/resources/limits","value":{"nvidia.com/gpu":1}}])");
  expectAppliedAndIdempotent(kMutator, run, training());
}

TEST(GpuLimitsMutator, InitContainersAndMigSlicesTheProfileAllowsAreCovered) {
  const MutationRun run = runMutator(kMutator, R"(
apiVersion: apps/v1
kind: Deployment
metadata: {name: server}
spec:
  selector: {matchLabels: {app: s}}
  template:
    metadata: {labels: {app: s}}
    spec:
      initContainers:
      - name: warmup
        image: x
        resources: {requests: {nvidia.com/gpu: "1"}}
      containers:
      - name: server
        image: x
        resources: {requests: {nvidia.com/mig-1g.10gb: "1"}}
)",
                                     realtime());
  EXPECT_EQ(stringOf(at(*run.after,
                        "/spec/template/spec/initContainers/0/resources/limits/nvidia.com~1gpu")),
            "1");
  EXPECT_EQ(
      stringOf(at(*run.after,
                  "/spec/template/spec/containers/0/resources/limits/nvidia.com~1mig-1g.10gb")),
      "1");
  EXPECT_EQ(run.changes.size(), 2u);
  expectAppliedAndIdempotent(kMutator, run, realtime());
}

TEST(GpuLimitsMutator, WhatValidationMustJudgeIsLeftAlone) {
  // A limit that differs (AIA005), a fraction (AIA004), a misspelt resource
  // (AIA003) and a resource the profile does not allow.
  const MutationRun run = runMutator(kMutator, R"(
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  restartPolicy: Never
  containers:
  - name: a
    image: x
    resources: {requests: {nvidia.com/gpu: "2"}, limits: {nvidia.com/gpu: "1"}}
  - name: b
    image: x
    resources: {requests: {nvidia.com/gpu: 500m}}
  - name: c
    image: x
    resources: {requests: {nvidia.com/gpus: "1"}}
  - name: d
    image: x
    resources: {requests: {nvidia.com/mig-1g.10gb: "1"}}
)",
                                     training());
  EXPECT_FALSE(run.changed);
  EXPECT_EQ(run.patch(), "");
}

const char* kAnnotatedJob = R"(
apiVersion: batch/v1
kind: Job
metadata:
  name: pretrain
  annotations: {aiadmit.dev/workload: training, aiadmit.dev/gpus: "4"}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: trainer, image: trainer:1}
      - {name: logger, image: logger:1}
)";

TEST(GpuLimitsMutator, AnnotationPutsTheGpusOnTheFirstContainer) {
  const MutationRun run = runMutator(kMutator, kAnnotatedJob, training());
  EXPECT_EQ(run.patch(), R"([{"op":"add","path":"/spec/template/spec/containers/0/resources",)"
                         R"("value":{"limits":{"nvidia.com/gpu":"4"}}}])");
  ASSERT_EQ(run.changes.size(), 1u);
  EXPECT_EQ(run.changes[0],
            "added limit nvidia.com/gpu=4 to container trainer per annotation aiadmit.dev/gpus");
  expectAppliedAndIdempotent(kMutator, run, training());
}

TEST(GpuLimitsMutator, GpuContainerAnnotationOnTheTemplateNamesTheMainContainer) {
  const MutationRun run = runMutator(kMutator, R"(
apiVersion: batch/v1
kind: Job
metadata: {name: pretrain}
spec:
  template:
    metadata:
      annotations: {aiadmit.dev/workload: training, aiadmit.dev/gpus: "2", aiadmit.dev/gpu-container: trainer}
    spec:
      restartPolicy: Never
      containers:
      - {name: logger, image: logger:1, resources: {limits: {cpu: 100m}}}
      - {name: trainer, image: trainer:1, resources: {limits: {cpu: "4"}}}
)",
                                     training());
  EXPECT_EQ(run.patch(),
            R"([{"op":"add","path":"/spec/template/spec/containers/1/resources/limits/)"
            R"(nvidia.com~1gpu","value":"2"}])");
  expectAppliedAndIdempotent(kMutator, run, training());
}

TEST(GpuLimitsMutator, GpuContainerThatDoesNotExistGetsNothing) {
  const MutationRun run = runMutator(kMutator, R"(
apiVersion: v1
kind: Pod
metadata:
  name: p
  annotations: {aiadmit.dev/workload: batch, aiadmit.dev/gpus: "1", aiadmit.dev/gpu-container: missing}
spec:
  restartPolicy: Never
  containers: [{name: main, image: x}]
)",
                                     batch());
  EXPECT_FALSE(run.changed);
}

TEST(GpuLimitsMutator, AnnotationDoesNotOverrideWhatTheContainerAlreadyAsks) {
  for (const char* resources :
       {"{limits: {nvidia.com/gpu: 1}}", "{limits: {nvidia.com/mig-1g.10gb: 1}}",
        "{limits: {nvidia.com/gpus: 1}}"}) {
    SCOPED_TRACE(resources);
    const MutationRun run = runMutator(kMutator,
                                       std::string(R"(
apiVersion: v1
kind: Pod
metadata:
  name: p
  annotations: {aiadmit.dev/workload: realtime, aiadmit.dev/gpus: "2"}
spec:
  containers: [{name: main, image: x, resources: )") +
                                           resources + "}]\n",
                                       realtime());
    EXPECT_FALSE(run.changed) << run.patch();
  }
}

TEST(GpuLimitsMutator, AnnotationThatIsNotAPositiveWholeNumberAsksForNothing) {
  for (const char* value : {"two", "0.5", "500m", "0", "-1"}) {
    SCOPED_TRACE(value);
    const MutationRun run = runMutator(
        kMutator,
        podManifest(
            std::string("{aiadmit.dev/workload: training, aiadmit.dev/gpus: \"") + value + "\"}",
            "{name: main, image: x}"),
        training());
    EXPECT_FALSE(run.changed) << run.patch();
  }
}

const char* kDefaultCountProfile = R"(
apiVersion: aiadmit.dev/v1
kind: Profile
metadata: {name: notebooks}
spec:
  class: realtime
  gpu:
    defaultCount: 1
    allowedNamespaces: [ml-*]
)";

const char* kUnannotatedGpuServer = R"(
apiVersion: apps/v1
kind: Deployment
metadata:
  name: notebook
  annotations: {aiadmit.dev/workload: realtime}
spec:
  selector: {matchLabels: {app: n}}
  template:
    metadata: {labels: {app: n}}
    spec:
      containers: [{name: jupyter, image: jupyter:1, resources: {limits: {memory: 8Gi}}}]
)";

TEST(GpuLimitsMutator, ProfileDefaultCountGoesToTheMainContainer) {
  const auto profiles = profilesFromYaml(kDefaultCountProfile);
  const Profile& profile = *profiles->find("notebooks");
  const MutationRun run = runMutator(kMutator, kUnannotatedGpuServer, profile, "ml-team");
  EXPECT_EQ(run.patch(),
            R"([{"op":"add","path":"/spec/template/spec/containers/0/resources/limits/)"
            R"(nvidia.com~1gpu","value":"1"}])");
  ASSERT_EQ(run.changes.size(), 1u);
  EXPECT_EQ(run.changes[0],
            "added limit nvidia.com/gpu=1 to container jupyter per gpu.defaultCount");
  expectAppliedAndIdempotent(kMutator, run, profile, "ml-team");
}

TEST(GpuLimitsMutator, ProfileDefaultCountIsNotGivenWhereGpusAreNotAllowed) {
  const auto profiles = profilesFromYaml(kDefaultCountProfile);
  const MutationRun run =
      runMutator(kMutator, kUnannotatedGpuServer, *profiles->find("notebooks"), "web");
  EXPECT_FALSE(run.changed) << run.patch();
}

TEST(GpuLimitsMutator, ProfileDefaultCountIsNotAddedToAPodThatAsksForAccelerators) {
  const auto profiles = profilesFromYaml(kDefaultCountProfile);
  const MutationRun run = runMutator(kMutator, R"(
apiVersion: v1
kind: Pod
metadata: {name: p, annotations: {aiadmit.dev/workload: realtime}}
spec:
  containers:
  - {name: proxy, image: x}
  - {name: server, image: x, resources: {limits: {nvidia.com/gpu: 1}}}
)",
                                     *profiles->find("notebooks"), "ml-team");
  EXPECT_FALSE(run.changed) << run.patch();
}

// A GPU count of 0 (how a Helm chart switches its GPU off) is a container
// without GPUs. Given as a limit, the API server defaults the request to it
// and nothing is added: neither a request nor the profile's default count,
// which would turn the 0 into a GPU. Given as a request alone, the API server
// refuses it ("Limit must be set for non overcommitable resources") as it does
// any extended resource: the limit of 0 is added, still no GPU.
TEST(GpuLimitsMutator, AZeroStaysNoGpuAndGetsTheLimitTheApiServerRequires) {
  auto job = [](const std::string& resources) {
    return R"(
apiVersion: batch/v1
kind: Job
metadata: {name: cpu-run, annotations: {aiadmit.dev/workload: training}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: trainer, image: trainer:1, resources: )" +
           resources + "}\n";
  };
  ASSERT_GT(training().gpu.defaultCount, 0);
  const MutationRun untouched =
      runMutator(kMutator, job("{limits: {nvidia.com/gpu: 0}}"), training());
  EXPECT_FALSE(untouched.changed) << untouched.patch();

  const MutationRun run =
      runMutator(kMutator, job(R"({requests: {nvidia.com/gpu: "0"}})"), training());
  EXPECT_EQ(run.patch(),
            R"([{"op":"add","path":"/spec/template/spec/containers/0/resources/limits",)"
            R"("value":{"nvidia.com/gpu":"0"}}])");
  EXPECT_EQ(run.changes, (std::vector<std::string>{"added limit nvidia.com/gpu=0 to container "
                                                   "trainer to match its request"}));
  expectAppliedAndIdempotent(kMutator, run, training());
}

TEST(GpuLimitsMutator, ProfileTurnsItOff) {
  const auto profiles = profilesFromYaml(R"(
apiVersion: aiadmit.dev/v1
kind: Profile
metadata: {name: hands-off}
spec:
  class: training
  gpu: {defaultCount: 1}
  mutations: {gpuLimits: false}
)");
  const Profile& profile = *profiles->find("hands-off");
  EXPECT_FALSE(runMutator(kMutator, kJobRequestingGpus, profile).changed);
  EXPECT_FALSE(runMutator(kMutator, kAnnotatedJob, profile).changed);
}

}  // namespace
}  // namespace aiadmit
