// AIA011 through the engine's /validate path: priority classes the profile does not allow, in a
// template or in the operator's own priority field. Manifests that break the rule and near
// misses that must pass, each under profiles that deny, warn and switch every rule off.
#include "tests/support/validator_harness.h"

namespace aiadmit {
namespace {

using namespace testing;

const std::string kGpuTask = R"(
    template:
      spec:
        restartPolicy: Never
        nodeSelector: {accelerator: nvidia}
        tolerations: [{key: accelerator, operator: Equal, value: gpu, effect: NoSchedule}]
        containers: [{name: w, image: i, resources: {limits: {nvidia.com/gpu: 1}}}]
)";

// A one-task training Volcano Job; `spec` is added to its spec.
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
    replicas: 1)" +
         kGpuTask;
}

// A training RayCluster with one GPU worker and `labels`.
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
    replicas: 1
    rayStartParams: {})" +
         kGpuTask;
}

// A one-worker PyTorchJob whose run policy's scheduling policy is `policy`.
std::string pytorchJob(const std::string& policy) {
  return R"(apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: ddp}
spec:
  runPolicy:
    schedulingPolicy: )" +
         policy + R"(
  pytorchReplicaSpecs:
    Worker:
      replicas: 1
      template:
        spec:
          restartPolicy: Never
          nodeSelector: {accelerator: nvidia}
          tolerations: [{key: accelerator, operator: Equal, value: gpu, effect: NoSchedule}]
          containers: [{name: w, image: i, resources: {limits: {nvidia.com/gpu: 1}}}]
)";
}

const std::vector<RuleCase> kCases = {
    {"RealtimePriorityForTraining", "default",
     gpuJob("training", "", "\n      priorityClassName: ai-realtime", kOneGpu),
     "spec.template.spec.priorityClassName"},
    {"AnotherAllowedClass", "default",
     gpuJob("training", "", "\n      priorityClassName: ai-batch", kOneGpu), ""},
    // Volcano gives the Job's class to its Pods and its PodGroup.
    {"VolcanoJobsOwnClass", "default", volcanoJob("\n  priorityClassName: ai-realtime"),
     "spec.priorityClassName"},
    {"VolcanoJobsOwnAllowedClass", "default", volcanoJob("\n  priorityClassName: ai-batch"), ""},
    {"KubeRaysPriorityLabel", "default", rayCluster("ray.io/priority-class-name: ai-realtime"),
     "metadata.labels[ray.io/priority-class-name]"},
    {"KubeRaysAllowedPriorityLabel", "default", rayCluster("ray.io/priority-class-name: ai-batch"),
     ""},
    {"KubeflowSchedulingPolicysClass", "default", pytorchJob("{priorityClass: ai-realtime}"),
     "spec.runPolicy.schedulingPolicy.priorityClass"},
    {"KubeflowSchedulingPolicyWithoutClass", "default", pytorchJob("{queue: team-a}"), ""}};

AIADMIT_RULE_ACTIONS_TEST(AIA011, kCases);

}  // namespace
}  // namespace aiadmit
