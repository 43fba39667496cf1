// AIA010 through the engine's /validate path: Pods that run together without a gang scheduler or
// queue, and the operators that gang-schedule their Pods themselves. Manifests that break the
// rule and near misses that must pass, each under profiles that deny, warn and switch every rule
// off.
#include "tests/support/validator_harness.h"

namespace aiadmit {
namespace {

using namespace testing;

// A GPU pod spec on the pool, indented for a template at `indent` spaces.
std::string gpuPodSpec(const std::string& indent) {
  return indent + "spec:\n" + indent + "  restartPolicy: Never\n" + indent +
         "  nodeSelector: {accelerator: nvidia}\n" + indent +
         "  tolerations: [{key: accelerator, operator: Equal, value: gpu, effect: NoSchedule}]\n" +
         indent + "  containers: [{name: w, image: i, resources: {limits: {nvidia.com/gpu: 1}}}]\n";
}

// A training RayCluster with `labels` (a flow mapping's entries) and 4 GPU workers.
std::string rayCluster(const std::string& labels) {
  return R"(apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: ray
  annotations: {aiadmit.dev/workload: training}
  labels: {)" +
         labels + R"(}
spec:
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers: [{name: head, image: ray}]
  workerGroupSpecs:
  - groupName: gpu
    replicas: 4
    rayStartParams: {}
    template:
)" + gpuPodSpec("      ");
}

// A PyTorchJob of 4 GPU workers with `runPolicy` (YAML under spec, or "").
std::string pytorchJob(const std::string& runPolicy) {
  return R"(apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: ddp}
spec:)" + runPolicy +
         R"(
  pytorchReplicaSpecs:
    Worker:
      replicas: 4
      template:
)" + gpuPodSpec("        ");
}

// A training Volcano Job of 4 GPU workers; `spec` is added to its spec.
std::string volcanoJob(const std::string& spec) {
  return R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: mpi
  annotations: {aiadmit.dev/workload: training}
spec:)" + spec +
         R"(
  tasks:
  - name: worker
    replicas: 4
    template:
)" + gpuPodSpec("      ");
}

// A training JobSet of one replicated job of 4 parallel GPU Pods; `annotations`
// go on the replicated job's Job template.
std::string jobSet(const std::string& annotations) {
  return R"(apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: js
  annotations: {aiadmit.dev/workload: training}
spec:
  replicatedJobs:
  - name: workers
    template:
      metadata: {annotations: {)" +
         annotations + R"(}}
      spec:
        parallelism: 4
        template:
)" + gpuPodSpec("          ");
}

// A training Job of 4 parallel GPU Pods; `spec` is added to its spec and
// `podSpec` to its pod template's.
std::string parallelJob(const std::string& spec, const std::string& podSpec) {
  return gpuJob("training", "\n  parallelism: 4" + spec, podSpec, kOneGpu);
}

const std::string kInPodGroup = "\n      schedulingGroup: {podGroupName: workers}";
const std::string kAsksForGang = "\n  scheduling:\n    schedulingPolicy: {gang: {minCount: 4}}";

const std::vector<RuleCase> kCases = {
    {"ParallelJobWithoutGang", "gang-research",
     gpuJob("training", "\n  parallelism: 4", "", kOneGpu), "spec.parallelism"},
    {"IndexedJobWithoutGang", "gang-research",
     gpuJob("training", "\n  completions: 4\n  parallelism: 4\n  completionMode: Indexed", "",
            kOneGpu),
     "spec.parallelism"},
    // Only Pods that run at the same time need a gang: an Indexed Job with
    // parallelism 1 runs its indexes one after the other.
    {"IndexedJobOneAtATime", "gang-research",
     gpuJob("training", "\n  completions: 4\n  completionMode: Indexed", "", kOneGpu), ""},
    {"ParallelismAboveCompletions", "gang-research",
     gpuJob("training", "\n  completions: 1\n  parallelism: 4", "", kOneGpu), ""},
    {"Volcano", "gang-research",
     gpuJob("training", "\n  parallelism: 4", "\n      schedulerName: volcano", kOneGpu), ""},
    {"KueueQueue", "gang-research",
     replaced(gpuJob("training", "\n  parallelism: 4", "", kOneGpu), "  name: run\n",
              "  name: run\n  labels: {kueue.x-k8s.io/queue-name: gpus}\n"),
     ""},
    {"SingleWorker", "gang-research", gpuJob("training", "\n  parallelism: 1", "", kOneGpu), ""},
    // KubeRay's batch-scheduler integration makes a Volcano PodGroup of the cluster.
    {"RayClusterOnVolcano", "gang-research", rayCluster("ray.io/scheduler-name: volcano"), ""},
    // YuniKorn gang-schedules a RayCluster that asks for it.
    {"RayClusterGangOnYuniKorn", "gang-research",
     rayCluster("ray.io/scheduler-name: yunikorn, ray.io/gang-scheduling-enabled: \"true\""), ""},
    {"RayClusterWithoutBatchScheduler", "gang-research", rayCluster(""),
     "spec.workerGroupSpecs[0].template.spec"},
    {"RayClusterOnAnotherScheduler", "gang-research", rayCluster("ray.io/scheduler-name: yunikorn"),
     "spec.workerGroupSpecs[0].template.spec"},
    // A Volcano queue names no scheduler: alone it is no gang.
    {"RayClusterWithOnlyAQueue", "gang-research", rayCluster("volcano.sh/queue-name: q"),
     "spec.workerGroupSpecs[0].template.spec"},
    // The Training Operator makes a PodGroup of a job whose run policy asks for one.
    {"PyTorchJobWithSchedulingPolicy", "gang-research",
     pytorchJob("\n  runPolicy:\n    schedulingPolicy: {minAvailable: 4}"), ""},
    {"PyTorchJobWithoutSchedulingPolicy", "gang-research",
     pytorchJob("\n  runPolicy: {cleanPodPolicy: None}"),
     "spec.pytorchReplicaSpecs.Worker.template.spec"},
    {"VolcanoJobWithMinAvailable", "gang-research", volcanoJob("\n  minAvailable: 4"), ""},
    {"VolcanoJobOnVolcano", "gang-research", volcanoJob("\n  schedulerName: volcano"), ""},
    {"VolcanoJobOnTheDefaultScheduler", "gang-research",
     volcanoJob("\n  schedulerName: default-scheduler\n  queue: default"),
     "spec.tasks[0].template.spec"},
    {"JobSetWithExclusiveTopology", "gang-research",
     jobSet("alpha.jobset.sigs.k8s.io/exclusive-topology: cloud.google.com/gke-nodepool"), ""},
    {"JobSetWithoutExclusiveTopology", "gang-research", jobSet("team: a"),
     "spec.replicatedJobs[0].template.spec.template.spec"},
    // Kubernetes' own gang: Pods in a PodGroup (1.36+), a Workload's pod
    // group (1.35), a Job that asks its controller for a gang (WorkloadWithJob).
    {"PodsInANativePodGroup", "gang-research", parallelJob("", kInPodGroup), ""},
    {"PodsInA135WorkloadPodGroup", "gang-research",
     parallelJob("", "\n      workloadRef: {name: train, podGroup: workers}"), ""},
    {"JobAsksForANativeGang", "gang-research", parallelJob(kAsksForGang, ""), ""},
    {"JobAsksForBasicScheduling", "gang-research",
     parallelJob("\n  scheduling:\n    schedulingPolicy: {basic: {}}", ""), "spec.parallelism"},
    {"JobSetPodsInANativePodGroup", "gang-research",
     replaced(
         jobSet("team: a"), "        template:\n          spec:\n",
         "        template:\n          spec:\n            schedulingGroup: {podGroupName: js}\n"),
     ""},
    // A profile may insist on its own scheduler: the PodGroup is no gang it counts.
    {"NativeGangWhereTheProfileWantsItsScheduler", "own-gang-team",
     parallelJob(kAsksForGang, kInPodGroup), "spec.parallelism"},
    {"ItsSchedulerWhereTheProfileWantsIt", "own-gang-team",
     parallelJob("", "\n      schedulerName: volcano"), ""},
    // A profile that recognises Kubernetes' own gang alone says how to ask for one.
    {"NoGangWhereOnlyTheNativeOneCounts", "native-gang-team", parallelJob("", ""),
     "spec.parallelism",
     "[AIA010] spec.parallelism: "
     "4 GPU workers (parallelism 4) without gang scheduling can start in part and hold GPUs "
     "idle; set spec.scheduling.schedulingPolicy.gang.minCount (Kubernetes 1.36+, "
     "WorkloadWithJob)"},
    {"NativeGangWhereOnlyTheNativeOneCounts", "native-gang-team", parallelJob(kAsksForGang, ""),
     ""}};

AIADMIT_RULE_ACTIONS_TEST(AIA010, kCases);

}  // namespace
}  // namespace aiadmit
