// Shared memory: GPU pods from the profile's minGpus on (the shipped
// training and batch profiles: one; realtime: two) get a memory-backed
// emptyDir at /dev/shm in each GPU container that mounts nothing there,
// sized by the profile and never beyond the containers' memory limits.
#include "tests/support/mutator_harness.h"

namespace aiadmit {
namespace {

using namespace testing;

const MutatorDeclaration& kMutator = registeredMutator("shared-memory");

// A realtime Deployment whose one container "vllm" has `limits`.
std::string realtimeServer(const std::string& limits) {
  return R"(
apiVersion: apps/v1
kind: Deployment
metadata: {name: server}
spec:
  selector: {matchLabels: {app: server}}
  template:
    metadata: {labels: {app: server}}
    spec:
      containers: [{name: vllm, image: vllm, resources: {limits: )" +
         limits + "}}]\n";
}

std::string trainingJob(const std::string& podSpecFields) {
  return R"(
apiVersion: batch/v1
kind: Job
metadata: {name: ddp}
spec:
  template:
    spec:
      restartPolicy: Never
)" + podSpecFields +
         "\n";
}

TEST(SharedMemoryMutator, MultiGpuPodGetsAMemoryBackedDevShm) {
  const MutationRun run = runMutator(kMutator, trainingJob(R"(      containers:
      - name: trainer
        image: x
        resources: {limits: {nvidia.com/gpu: 4}}
        volumeMounts: [{name: data, mountPath: /data}]
      volumes: [{name: data, emptyDir: {}}])"),
                                     training());
  EXPECT_EQ(run.patch(),
            R"([{"op":"add","path":"/spec/template/spec/containers/0/volumeMounts/1","value":)"
            R"({"name":"aiadmit-shm","mountPath":"/dev/shm"}},)"
            R"({"op":"add","path":"/spec/template/spec/volumes/1","value":)"
            R"({"name":"aiadmit-shm","emptyDir":{"medium":"Memory","sizeLimit":"64Gi"}}}])");
  EXPECT_EQ(run.changes, (std::vector<std::string>{
                             "mounted memory-backed /dev/shm (sizeLimit 64Gi) in container "
                             "trainer for 4 GPUs"}));
  expectAppliedAndIdempotent(kMutator, run, training());
}

// A DataLoader's workers need /dev/shm with one GPU as with eight.
TEST(SharedMemoryMutator, OneGpuOfTrainingOrBatchIsEnough) {
  const std::string oneGpu = trainingJob(
      "      containers: [{name: t, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]");
  for (const Profile* profile : {&training(), &batch()}) {
    SCOPED_TRACE(profile->name);
    const MutationRun run = runMutator(kMutator, oneGpu, *profile);
    ASSERT_TRUE(run.changed);
    EXPECT_EQ(stringOf(at(*run.after, "/spec/template/spec/containers/0/volumeMounts/0/mountPath")),
              "/dev/shm");
    EXPECT_EQ(run.changes.at(0).substr(run.changes.at(0).size() - 9), "for 1 GPU");
    expectAppliedAndIdempotent(kMutator, run, *profile);
  }
}

// A server of one GPU has no NCCL peer in its Pod; from two it has.
TEST(SharedMemoryMutator, ServingGetsItFromTwoGpus) {
  const std::string oneGpu = realtimeServer("{nvidia.com/gpu: 1}");
  EXPECT_FALSE(runMutator(kMutator, oneGpu, realtime()).changed);
  const MutationRun run = runMutator(kMutator, realtimeServer("{nvidia.com/gpu: 2}"), realtime());
  EXPECT_EQ(run.changes, (std::vector<std::string>{"mounted memory-backed /dev/shm (sizeLimit "
                                                   "16Gi) in container vllm for 2 GPUs"}));
  expectAppliedAndIdempotent(kMutator, run, realtime());
}

// Slices the profile offers are GPUs of the Pod as whole GPUs are; a GPU
// the profile does not offer (AIA003 refuses it) is not.
TEST(SharedMemoryMutator, SlicesTheProfileOffersCountAndOthersDoNot) {
  const MutationRun slices = runMutator(
      kMutator, realtimeServer("{nvidia.com/mig-1g.10gb: 1, nvidia.com/gpu: 1}"), realtime());
  EXPECT_TRUE(slices.changed);
  expectAppliedAndIdempotent(kMutator, slices, realtime());
  EXPECT_FALSE(runMutator(kMutator, realtimeServer("{amd.com/gpu: 4}"), realtime()).changed);
}

TEST(SharedMemoryMutator, GpusAcrossContainersCountAndOnlyGpuContainersGetTheMount) {
  const MutationRun run = runMutator(kMutator, trainingJob(R"(      containers:
      - {name: a, image: x, resources: {limits: {nvidia.com/gpu: 1}}}
      - {name: logs, image: x}
      - {name: b, image: x, resources: {requests: {nvidia.com/gpu: 1}}})"),
                                     training());
  EXPECT_NE(at(*run.after, "/spec/template/spec/containers/0/volumeMounts/0"), nullptr);
  EXPECT_EQ(at(*run.after, "/spec/template/spec/containers/1/volumeMounts"), nullptr);
  EXPECT_NE(at(*run.after, "/spec/template/spec/containers/2/volumeMounts/0"), nullptr);
  EXPECT_EQ(at(*run.after, "/spec/template/spec/volumes")->Size(), 1u);
  expectAppliedAndIdempotent(kMutator, run, training());
}

TEST(SharedMemoryMutator, AnExistingDevShmIsKeptAndSharedWithOtherGpuContainers) {
  const MutationRun run = runMutator(kMutator, trainingJob(R"(      containers:
      - {name: a, image: x, resources: {limits: {nvidia.com/gpu: 2}}, volumeMounts: [{name: dshm, mountPath: /dev/shm/}]}
      - {name: b, image: x, resources: {limits: {nvidia.com/gpu: 2}}}
      volumes: [{name: dshm, emptyDir: {medium: Memory, sizeLimit: 16Gi}}])"),
                                     training());
  EXPECT_EQ(run.patch(),
            R"([{"op":"add","path":"/spec/template/spec/containers/1/volumeMounts","value":)"
            R"([{"name":"dshm","mountPath":"/dev/shm"}]}])");
  expectAppliedAndIdempotent(kMutator, run, training());

  const MutationRun allMounted = runMutator(kMutator, trainingJob(R"(      containers:
      - {name: a, image: x, resources: {limits: {nvidia.com/gpu: 8}}, volumeMounts: [{name: shm, mountPath: /dev/shm}]}
      volumes: [{name: shm, hostPath: {path: /dev/shm}}])"),
                                            training());
  EXPECT_FALSE(allMounted.changed) << allMounted.patch();
}

// Something else at /dev/shm (the node's own, a volume of the workload's),
// in any container, or the node's IPC namespace: the Pod chose its /dev/shm.
TEST(SharedMemoryMutator, APodWithADevShmOfItsOwnIsLeftAlone) {
  const MutationRun hostPath = runMutator(kMutator, trainingJob(R"(      initContainers:
      - {name: prepare, image: x, volumeMounts: [{name: host-shm, mountPath: /dev/shm}]}
      containers:
      - {name: a, image: x, resources: {limits: {nvidia.com/gpu: 2}}}
      volumes: [{name: host-shm, hostPath: {path: /dev/shm}}])"),
                                          training());
  EXPECT_FALSE(hostPath.changed) << hostPath.patch();
  const MutationRun hostIpc = runMutator(kMutator, trainingJob(R"(      hostIPC: true
      containers:
      - {name: a, image: x, resources: {limits: {nvidia.com/gpu: 2}}})"),
                                         training());
  EXPECT_FALSE(hostIpc.changed) << hostIpc.patch();
}

// The volume counts against the memory limit of the container writing it:
// the profile's size is lowered to the largest limit of the containers
// that mount it, when each has one.
TEST(SharedMemoryMutator, TheSizeNeverExceedsTheContainersMemoryLimits) {
  struct Case {
    std::string containers;
    std::string sizeLimit;
  };
  const std::vector<Case> cases = {
      {"[{name: a, image: x, resources: {limits: {nvidia.com/gpu: 1, memory: 32Gi}}}]", "32Gi"},
      {"[{name: a, image: x, resources: {limits: {nvidia.com/gpu: 1, memory: 512Gi}}}]", "64Gi"},
      {"[{name: a, image: x, resources: {limits: {nvidia.com/gpu: 1, memory: 64Gi}}}]", "64Gi"},
      {"[{name: a, image: x, resources: {limits: {nvidia.com/gpu: 1, memory: 8G}}},"
       " {name: b, image: x, resources: {limits: {nvidia.com/gpu: 1, memory: 16Gi}}}]",
       "16Gi"},
      {"[{name: a, image: x, resources: {limits: {nvidia.com/gpu: 1, memory: 8Gi}}},"
       " {name: b, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]",
       "64Gi"},
      {"[{name: a, image: x, resources: {requests: {memory: 8Gi}, limits: {nvidia.com/gpu: 1}}},"
       " {name: logs, image: x, resources: {limits: {memory: 1Gi}}}]",
       "64Gi"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.containers);
    const MutationRun run =
        runMutator(kMutator, trainingJob("      containers: " + c.containers), training());
    EXPECT_EQ(stringOf(at(*run.after, "/spec/template/spec/volumes/0/emptyDir/sizeLimit")),
              c.sizeLimit);
    expectAppliedAndIdempotent(kMutator, run, training());
  }
}

TEST(SharedMemoryMutator, WithoutAProfileSizeTheMemoryLimitIsTheSize) {
  const auto profiles = profilesFromYaml(R"(
apiVersion: aiadmit.dev/v1
kind: Profile
metadata: {name: unsized}
spec:
  class: training
  sharedMemory: {}
)");
  const Profile& unsized = *profiles->find("unsized");
  const MutationRun limited = runMutator(
      kMutator,
      trainingJob("      containers: [{name: t, image: x, resources: {limits: {nvidia.com/gpu: 1, "
                  "memory: 24Gi}}}]"),
      unsized);
  EXPECT_EQ(toJson(*at(*limited.after, "/spec/template/spec/volumes/0")),
            R"({"name":"aiadmit-shm","emptyDir":{"medium":"Memory","sizeLimit":"24Gi"}})");
  expectAppliedAndIdempotent(kMutator, limited, unsized);
  const MutationRun unlimited = runMutator(
      kMutator,
      trainingJob(
          "      containers: [{name: t, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]"),
      unsized);
  EXPECT_EQ(toJson(*at(*unlimited.after, "/spec/template/spec/volumes/0")),
            R"({"name":"aiadmit-shm","emptyDir":{"medium":"Memory"}})");
  EXPECT_EQ(unlimited.changes,
            (std::vector<std::string>{"mounted memory-backed /dev/shm in container t for 1 GPU"}));
}

// KServe makes predictor.model the Pod's main container: its mount goes on
// the model, the volume on the predictor's PodSpec.
TEST(SharedMemoryMutator, AnInferenceServiceModelGetsItsMountAndThePredictorTheVolume) {
  const std::shared_ptr<JsonDocument> service = manifest(R"(
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: llama}
spec:
  predictor:
    model:
      modelFormat: {name: huggingface}
      resources: {limits: {nvidia.com/gpu: 2, memory: 40Gi}}
    containers:
    - {name: sidecar, image: s}
)");
  const MutationRun run = runOnCustomResource(kMutator, *service, realtime());
  EXPECT_EQ(run.patch(),
            R"([{"op":"add","path":"/spec/predictor/model/volumeMounts","value":)"
            R"([{"name":"aiadmit-shm","mountPath":"/dev/shm"}]},)"
            R"({"op":"add","path":"/spec/predictor/volumes","value":)"
            R"([{"name":"aiadmit-shm","emptyDir":{"medium":"Memory","sizeLimit":"16Gi"}}]}])");
  EXPECT_EQ(run.changes, (std::vector<std::string>{"mounted memory-backed /dev/shm (sizeLimit "
                                                   "16Gi) in container kserve-container for 2 "
                                                   "GPUs"}));
  expectAppliedIdempotentAndValid(kMutator, run, realtime());
}

TEST(SharedMemoryMutator, AVolumeThatTakesItsNameIsKeptAndAFreeNameIsChosen) {
  const MutationRun run = runMutator(kMutator, trainingJob(R"(      containers:
      - {name: a, image: x, resources: {limits: {nvidia.com/gpu: 4}}}
      volumes:
      - {name: aiadmit-shm, persistentVolumeClaim: {claimName: c}}
      - {name: aiadmit-shm-2, configMap: {name: m}})"),
                                     training());
  EXPECT_EQ(run.patch(),
            R"([{"op":"add","path":"/spec/template/spec/containers/0/volumeMounts","value":[)"
            R"({"name":"aiadmit-shm-3","mountPath":"/dev/shm"}]},)"
            R"({"op":"add","path":"/spec/template/spec/volumes/2","value":)"
            R"({"name":"aiadmit-shm-3","emptyDir":{"medium":"Memory","sizeLimit":"64Gi"}}}])");
  EXPECT_EQ(
      stringOf(at(*run.after, "/spec/template/spec/volumes/0/persistentVolumeClaim/claimName")),
      "c");
  expectAppliedAndIdempotent(kMutator, run, training());
}

const char* kProfiles = R"(
apiVersion: aiadmit.dev/v1
kind: Profile
metadata: {name: sized}
spec:
  class: training
  sharedMemory: {minGpus: 4, sizeLimit: 64Gi}
---
apiVersion: aiadmit.dev/v1
kind: Profile
metadata: {name: off}
spec:
  class: training
  scope: {namespaces: [a]}
  sharedMemory: {minGpus: 1}
  mutations: {sharedMemory: false}
---
apiVersion: aiadmit.dev/v1
kind: Profile
metadata: {name: disabled}
spec:
  class: training
  scope: {namespaces: [b]}
  sharedMemory: {enabled: false}
---
apiVersion: aiadmit.dev/v1
kind: Profile
metadata: {name: absent}
spec:
  class: training
  scope: {namespaces: [c]}
)";

TEST(SharedMemoryMutator, ProfileSetsTheThresholdAndSize) {
  const auto profiles = profilesFromYaml(kProfiles);
  const Profile& sized = *profiles->find("sized");
  const std::string twoGpus = trainingJob(
      "      containers: [{name: t, image: x, resources: {limits: {nvidia.com/gpu: 2}}}]");
  EXPECT_FALSE(runMutator(kMutator, twoGpus, sized).changed);
  const MutationRun run = runMutator(
      kMutator,
      trainingJob(
          "      containers: [{name: t, image: x, resources: {limits: {nvidia.com/gpu: 4}}}]"),
      sized);
  EXPECT_EQ(toJson(*at(*run.after, "/spec/template/spec/volumes/0")),
            R"({"name":"aiadmit-shm","emptyDir":{"medium":"Memory","sizeLimit":"64Gi"}})");
  expectAppliedAndIdempotent(kMutator, run, sized);
}

TEST(SharedMemoryMutator, ProfileTurnsItOff) {
  const auto profiles = profilesFromYaml(kProfiles);
  const std::string eightGpus = trainingJob(
      "      containers: [{name: t, image: x, resources: {limits: {nvidia.com/gpu: 8}}}]");
  EXPECT_FALSE(runMutator(kMutator, eightGpus, *profiles->find("off")).changed);
  EXPECT_FALSE(runMutator(kMutator, eightGpus, *profiles->find("disabled")).changed);
  EXPECT_FALSE(runMutator(kMutator, eightGpus, *profiles->find("absent")).changed)
      << "a profile without the section adds none";
}

}  // namespace
}  // namespace aiadmit
