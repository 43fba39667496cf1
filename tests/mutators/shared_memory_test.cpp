// Shared memory: multi-GPU pods get a memory-backed emptyDir at /dev/shm in
// each GPU container that mounts nothing there.
#include "mutators/shared_memory.h"
#include "tests/support/mutator_harness.h"

namespace aiadmit {
namespace {

using namespace testing;

const SharedMemoryMutator kMutator;

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
            R"({"name":"aiadmit-shm","emptyDir":{"medium":"Memory"}}}])");
  EXPECT_EQ(run.changes, (std::vector<std::string>{
                             "mounted memory-backed emptyDir at /dev/shm in container trainer "
                             "for 4 GPUs"}));
  expectAppliedAndIdempotent(kMutator, run, training());
}

TEST(SharedMemoryMutator, OneGpuIsNotEnough) {
  const MutationRun run = runMutator(
      kMutator,
      trainingJob(
          "      containers: [{name: t, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]"),
      training());
  EXPECT_FALSE(run.changed) << run.patch();
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
            R"({"name":"aiadmit-shm-3","emptyDir":{"medium":"Memory"}}}])");
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
  EXPECT_FALSE(runMutator(kMutator, eightGpus, batch()).changed);
}

}  // namespace
}  // namespace aiadmit
