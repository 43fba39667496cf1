// The built-in rows of the workload-type table. Paths, defaults and served
// versions follow the operators' CRDs (../shared/crds, SOURCES.tsv names the
// commits) and their API types: where a CRD has no default for a count, the
// operator's defaulting code is what the row says (MPIJob's Worker: 0).
#include "webhook/model/workload_type_builtin.h"

#include <cctype>

namespace aiadmit {

namespace {

using Factors = std::vector<ReplicaFactor>;

ReplicaFactor count(std::string pointer, int64_t defaultValue) {
  ReplicaFactor factor;
  factor.pointer = std::move(pointer);
  factor.defaultValue = defaultValue;
  return factor;
}

// A count that includes one Pod made from another template (a group's
// leader): `subtract` taken off, only when `whenPresent` exists if given.
ReplicaFactor countLess(std::string pointer, int64_t defaultValue, int64_t subtract,
                        std::string whenPresent) {
  ReplicaFactor factor = count(std::move(pointer), defaultValue);
  factor.subtract = subtract;
  factor.subtractWhenPresent = std::move(whenPresent);
  return factor;
}

// A PodTemplateSpec at `templatePointer`: its spec and metadata.
TemplateSlot podTemplate(std::string role, const std::string& templatePointer,
                         std::optional<Factors> replicas, JobSettingPointers jobSettings = {}) {
  TemplateSlot slot;
  slot.role = std::move(role);
  slot.spec = templatePointer + "/spec";
  slot.metadata = templatePointer + "/metadata";
  slot.replicas = std::move(replicas);
  slot.jobSettings = std::move(jobSettings);
  return slot;
}

// The operator gives these Pods their readiness itself (KubeRay's probes,
// KServe's and Knative's), or they serve no traffic (an LWS group's
// workers: the leader does): aiadmit neither adds probes nor asks for them.
TemplateSlot withoutProbes(TemplateSlot slot) {
  slot.injectable &= ~static_cast<uint32_t>(kInjectProbes);
  return slot;
}

std::vector<TemplateSlot> withoutProbes(std::vector<TemplateSlot> slots) {
  for (TemplateSlot& slot : slots) slot = withoutProbes(std::move(slot));
  return slots;
}

// The operator mounts a memory-backed /dev/shm of its own in the Pods
// (KubeRay, in the Ray container of every head and worker, sized to its
// memory limit): aiadmit adds none beside it.
std::vector<TemplateSlot> withoutSharedMemory(std::vector<TemplateSlot> slots) {
  for (TemplateSlot& slot : slots) slot.injectable &= ~static_cast<uint32_t>(kInjectSharedMemory);
  return slots;
}

WorkloadType row(std::string group, std::string kind, std::vector<std::string> versions,
                 std::string resource, WorkloadClass workloadClass, std::string reason,
                 Lifecycle lifecycle, std::vector<TemplateSlot> templates) {
  WorkloadType type;
  type.group = std::move(group);
  type.kind = std::move(kind);
  type.versions = std::move(versions);
  type.resource = std::move(resource);
  type.workloadClass = workloadClass;
  type.classReason = std::move(reason);
  type.lifecycle = lifecycle;
  type.templates = std::move(templates);
  type.builtIn = true;
  type.source = "built-in";
  return type;
}

// What an UPDATE of the row's kind may change without a rollout, and what it
// may not change (UpdateRules).
WorkloadType withUpdates(WorkloadType type, std::vector<std::string> scale, std::string suspend,
                         std::vector<std::string> immutable = {}) {
  type.updates.scale = std::move(scale);
  type.updates.suspend = std::move(suspend);
  type.updates.immutable = std::move(immutable);
  return type;
}

// A worker group's counts under a RayClusterSpec at `prefix`: the autoscaler
// writes replicas and the workers to delete; people change the bounds.
std::vector<std::string> rayWorkerScale(const std::string& prefix, bool v1) {
  std::vector<std::string> fields;
  for (const char* field : {"replicas", "minReplicas", "maxReplicas", "scaleStrategy"}) {
    fields.push_back(prefix + "/workerGroupSpecs/*/" + field);
  }
  // v1 suspends a worker group on its own.
  if (v1) fields.push_back(prefix + "/workerGroupSpecs/*/suspend");
  return fields;
}

// Where the operator reads the scheduling of the row's kind (SchedulingFields).
WorkloadType withScheduling(WorkloadType type, SchedulingFields scheduling) {
  type.scheduling = std::move(scheduling);
  return type;
}

// JobSet places each child Job alone in one topology domain (a rack, a node
// pool, a TPU slice) when the JobSet, or the replicated job's Job template,
// carries this annotation: the domain is taken whole, not Pod by Pod.
constexpr const char* kExclusiveTopology =
    "annotations/alpha.jobset.sigs.k8s.io~1exclusive-topology";

// The exclusive-topology annotation of a JobSet spec at `prefix` whose own
// metadata is at `metadata`.
std::vector<std::string> exclusiveTopology(const std::string& metadata, const std::string& prefix) {
  return {metadata + "/" + kExclusiveTopology,
          prefix + "/replicatedJobs/*/template/metadata/" + kExclusiveTopology};
}

// Kubeflow's run policy: the PodGroup the operator makes when it runs with a
// gang scheduler takes the policy's queue and priority class (its Pods keep
// their templates' priority). The policy is only written to gang-schedule.
SchedulingFields kubeflowRunPolicy() {
  return {.priorityClassName = "/spec/runPolicy/schedulingPolicy/priorityClass",
          .queue = "/spec/runPolicy/schedulingPolicy/queue",
          .gang = {"/spec/runPolicy/schedulingPolicy"}};
}

// KubeRay's batch-scheduler labels, on a RayCluster and on the RayJob and
// RayService that copy their labels onto the RayCluster they make. With a
// batch scheduler (volcano, yunikorn) KubeRay sets every Pod's scheduler,
// and Volcano's PodGroup takes the queue and the priority class, which the
// Pods then get too; without one the labels do nothing.
SchedulingFields kubeRayLabels() {
  return {.schedulerName = "/metadata/labels/ray.io~1scheduler-name",
          .priorityClassName = "/metadata/labels/ray.io~1priority-class-name",
          .queue = "/metadata/labels/volcano.sh~1queue-name",
          // YuniKorn gang-schedules a RayCluster that carries this label.
          .gang = {"/metadata/labels/ray.io~1gang-scheduling-enabled"}};
}

// Where the three Job settings are; nothing defaults them before admission.
JobSettingPointers jobSettingsAt(std::string backoffLimit, std::string activeDeadlineSeconds,
                                 std::string ttlSecondsAfterFinished) {
  JobSettingPointers settings;
  settings.backoffLimit = std::move(backoffLimit);
  settings.activeDeadlineSeconds = std::move(activeDeadlineSeconds);
  settings.ttlSecondsAfterFinished = std::move(ttlSecondsAfterFinished);
  return settings;
}

JobSettingPointers jobSettingsUnder(const std::string& prefix) {
  return jobSettingsAt(prefix + "/backoffLimit", prefix + "/activeDeadlineSeconds",
                       prefix + "/ttlSecondsAfterFinished");
}

// Kubernetes' own kind (a Pod and its controllers), not an operator's.
WorkloadType kubernetesKind(WorkloadType type) {
  type.customResource = false;
  return type;
}

// The Pods of a JobSpec at `prefix`: `parallelism` of them run at once, at
// most `completions`.
TemplateSlot jobPods(const std::string& prefix, JobSettingPointers settings) {
  TemplateSlot slot = podTemplate("pod", prefix + "/template",
                                  Factors{count(prefix + "/parallelism", 1)}, std::move(settings));
  slot.completions = prefix + "/completions";
  return slot;
}

// A Pod, on its own or from its controller.
WorkloadType podRow() {
  const TemplateSlot pod{
      .role = "pod", .spec = "/spec", .metadata = "/metadata", .replicas = Factors{}};
  WorkloadType type = kubernetesKind(
      row("", "Pod", {"v1"}, "pods", WorkloadClass::Realtime,
          "a Pod with restartPolicy Always that declares a port is a long-running server",
          Lifecycle::Either, {pod}));
  type.objectIsPod = true;
  for (const char* policy : {"OnFailure", "Never"}) {
    type.classConditions.push_back(
        {"/spec/restartPolicy",
         {policy},
         false,
         false,
         WorkloadClass::Batch,
         "a Pod with restartPolicy " + std::string(policy) + " runs to completion"});
  }
  // `kubectl run`, a GPU operator's test Pod, a debug Pod: restartPolicy
  // Always by default, and nothing to serve.
  type.classConditions.push_back(
      {"",
       {},
       false,
       true,
       WorkloadClass::Batch,
       "a Pod whose containers declare no port runs a command, not a server"});
  // A Pod's spec is settled at creation (the few fields that may change are
  // not aiadmit's to write), and so is all aiadmit edits of it.
  type.updates.immutable = {"/spec"};
  type.updates.editedOnUpdate = false;
  return type;
}

void addCoreKinds(std::vector<WorkloadType>& out) {
  out.push_back(podRow());
  for (const char* kind : {"Deployment", "StatefulSet", "ReplicaSet"}) {
    std::string resource = std::string(kind) + "s";
    for (char& c : resource) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out.push_back(kubernetesKind(withUpdates(
        row("apps", kind, {"v1"}, resource, WorkloadClass::Realtime,
            "a " + std::string(kind) + " is a long-running server", Lifecycle::LongRunning,
            {podTemplate("pod", "/spec/template", Factors{count("/spec/replicas", 1)})}),
        {"/spec/replicas"}, "")));
  }
  // A Job's pod template is immutable (but for the scheduling directives a
  // queue controller writes while it is suspended); an indexed Job scales by
  // parallelism and completions together. The API server writes backoffLimit
  // 6 into a Job that leaves it out, unless it sets backoffLimitPerIndex.
  JobSettingPointers jobSettings = jobSettingsUnder("/spec");
  jobSettings.serverBackoffLimit = 6;
  jobSettings.backoffLimitPerIndex = "/spec/backoffLimitPerIndex";
  // Its spec.scheduling (WorkloadWithJob) makes the Job controller create a
  // Workload and a PodGroup for the Pods.
  out.push_back(withScheduling(
      kubernetesKind(withUpdates(
          row("batch", "Job", {"v1"}, "jobs", WorkloadClass::Batch, "a Job runs to completion",
              Lifecycle::RunsToCompletion, {jobPods("/spec", std::move(jobSettings))}),
          {"/spec/parallelism", "/spec/completions"}, "/spec/suspend", {"/spec/template"})),
      {.nativeGang = {"/spec/scheduling/schedulingPolicy/gang"}}));
  // A CronJob's Jobs carry the labels and annotations of its jobTemplate;
  // nothing defaults what the jobTemplate leaves out.
  TemplateSlot cronJobPods =
      jobPods("/spec/jobTemplate/spec", jobSettingsUnder("/spec/jobTemplate/spec"));
  cronJobPods.intermediateMetadata = "/spec/jobTemplate/metadata";
  out.push_back(withScheduling(
      kubernetesKind(withUpdates(row("batch", "CronJob", {"v1"}, "cronjobs", WorkloadClass::Batch,
                                     "a CronJob runs to completion", Lifecycle::RunsToCompletion,
                                     {std::move(cronJobPods)}),
                                 {}, "/spec/suspend")),
      {.nativeGang = {"/spec/jobTemplate/spec/scheduling/schedulingPolicy/gang"}}));
}

// Kubeflow Training Operator v1: a map of replica type to ReplicaSpec, whose
// replicas default to 1; run policy at spec.runPolicy.
void addKubeflowTrainingJobs(std::vector<WorkloadType>& out) {
  const struct {
    const char* kind;
    const char* resource;
    const char* specs;
    bool elastic;  // an elasticPolicy with minReplicas and maxReplicas
  } jobs[] = {{"PyTorchJob", "pytorchjobs", "pytorchReplicaSpecs", true},
              {"TFJob", "tfjobs", "tfReplicaSpecs", false},
              {"XGBoostJob", "xgboostjobs", "xgbReplicaSpecs", false},
              {"PaddleJob", "paddlejobs", "paddleReplicaSpecs", true},
              {"JAXJob", "jaxjobs", "jaxReplicaSpecs", false}};
  for (const auto& job : jobs) {
    std::vector<std::string> scale = {"/spec/" + std::string(job.specs) + "/*/replicas"};
    if (job.elastic) {
      scale.push_back("/spec/elasticPolicy/minReplicas");
      scale.push_back("/spec/elasticPolicy/maxReplicas");
    }
    // Elastic jobs scale a replica type's replicas; Kueue suspends through
    // the run policy.
    out.push_back(withScheduling(
        withUpdates(
            row("kubeflow.org", job.kind, {"v1"}, job.resource, WorkloadClass::Training,
                "a " + std::string(job.kind) + " is a distributed training run",
                Lifecycle::RunsToCompletion,
                {podTemplate("{key}", "/spec/" + std::string(job.specs) + "/*/template",
                             Factors{count("replicas", 1)}, jobSettingsUnder("/spec/runPolicy"))}),
            std::move(scale), "/spec/runPolicy/suspend"),
        kubeflowRunPolicy()));
  }
  // MPI Operator v2beta1 knows two replica types with their own defaults.
  const JobSettingPointers runPolicy = jobSettingsUnder("/spec/runPolicy");
  // The launcher's Job is made once, from the template as it was then:
  // aiadmit does not edit the templates of a running MPIJob.
  out.push_back(withScheduling(
      withUpdates(
          row("kubeflow.org", "MPIJob", {"v2beta1"}, "mpijobs", WorkloadClass::Training,
              "an MPIJob is a distributed training run", Lifecycle::RunsToCompletion,
              {podTemplate("Launcher", "/spec/mpiReplicaSpecs/Launcher/template",
                           Factors{count("/spec/mpiReplicaSpecs/Launcher/replicas", 1)}, runPolicy),
               podTemplate("Worker", "/spec/mpiReplicaSpecs/Worker/template",
                           Factors{count("/spec/mpiReplicaSpecs/Worker/replicas", 0)}, runPolicy)}),
          {"/spec/mpiReplicaSpecs/Worker/replicas"}, "/spec/runPolicy/suspend",
          {"/spec/mpiReplicaSpecs"}),
      kubeflowRunPolicy()));
}

// A JobSet spec at `prefix`: one template per replicated job, replicas ×
// the Job's parallelism Pods.
TemplateSlot replicatedJobs(const std::string& prefix) {
  TemplateSlot slot =
      podTemplate("{.name}", prefix + "/replicatedJobs/*/template/spec/template",
                  Factors{count("replicas", 1), count("template/spec/parallelism", 1)},
                  jobSettingsAt("template/spec/backoffLimit", "template/spec/activeDeadlineSeconds",
                                prefix + "/ttlSecondsAfterFinished"));
  return slot;
}

void addTrainer(std::vector<WorkloadType>& out) {
  TemplateSlot node;
  node.role = "node";
  node.shape = TemplateShape::Resources;
  node.spec = "/spec/trainer/resourcesPerNode";
  // numNodes defaults to the runtime's mlPolicy.numNodes, which the TrainJob
  // does not hold.
  ReplicaFactor numNodes = count("/spec/trainer/numNodes", 0);
  numNodes.defaultValue.reset();
  node.replicas = Factors{numNodes};
  node.jobSettings.activeDeadlineSeconds = "/spec/activeDeadlineSeconds";
  node.injectable = kInjectGpuLimits;
  node.note =
      "no pod template: GPUs per node are trainer.resourcesPerNode; placement, priority and "
      "probes come from the referenced runtime's templates";
  // The CRD fixes runtimeRef and the trainer once created; runtime patches
  // keep their manager.
  out.push_back(withUpdates(
      row("trainer.kubeflow.org", "TrainJob", {"v1alpha1"}, "trainjobs", WorkloadClass::Training,
          "a TrainJob is a training run", Lifecycle::RunsToCompletion, {node}),
      {}, "/spec/suspend", {"/spec/trainer", "/spec/runtimeRef"}));
  for (const auto& [kind, resource] :
       {std::pair{"TrainingRuntime", "trainingruntimes"},
        std::pair{"ClusterTrainingRuntime", "clustertrainingruntimes"}}) {
    // Trainer makes a PodGroup for the runtime's Pods under a pod group
    // policy (coscheduling or volcano).
    SchedulingFields gang;
    gang.gang = exclusiveTopology("/spec/template/metadata", "/spec/template/spec");
    gang.gang.insert(gang.gang.begin(), "/spec/podGroupPolicy");
    out.push_back(withScheduling(
        row("trainer.kubeflow.org", kind, {"v1alpha1"}, resource, WorkloadClass::Training,
            "a " + std::string(kind) + " is the template of training runs", Lifecycle::Either,
            {replicatedJobs("/spec/template/spec")}),
        std::move(gang)));
  }
}

// A RayClusterSpec at `prefix`: the head and one template per worker group
// (replicas kept within minReplicas and maxReplicas, × numOfHosts Pods, as
// KubeRay's GetWorkerGroupDesiredReplicas counts; v1alpha1 has no numOfHosts).
std::vector<TemplateSlot> rayCluster(const std::string& prefix, JobSettingPointers jobSettings,
                                     bool multiHost) {
  ReplicaFactor replicas = count("replicas", 0);
  replicas.atLeast = "minReplicas";
  replicas.atMost = "maxReplicas";
  Factors workers = {replicas};
  if (multiHost) workers.push_back(count("numOfHosts", 1));
  std::vector<TemplateSlot> slots;
  slots.push_back(podTemplate("head", prefix + "/headGroupSpec/template", Factors{}, jobSettings));
  slots.push_back(podTemplate("{.groupName}", prefix + "/workerGroupSpecs/*/template",
                              std::move(workers), jobSettings));
  return withoutSharedMemory(withoutProbes(std::move(slots)));
}

// A RayJobSpec at `prefix`: its cluster and the submitter of K8sJobMode.
// v1alpha1 has no backoffLimit or activeDeadlineSeconds.
std::vector<TemplateSlot> rayJob(const std::string& prefix, bool v1) {
  JobSettingPointers settings = jobSettingsUnder(prefix);
  if (!v1) settings.backoffLimit = settings.activeDeadlineSeconds = "";
  std::vector<TemplateSlot> slots = rayCluster(prefix + "/rayClusterSpec", settings, v1);
  slots.push_back(podTemplate("submitter", prefix + "/submitterPodTemplate", Factors{}, settings));
  return slots;
}

void addKubeRay(std::vector<WorkloadType>& out) {
  for (const bool v1 : {true, false}) {
    const std::vector<std::string> versions = {v1 ? "v1" : "v1alpha1"};
    // A kind whose RayClusterSpec is at `clusterAt`: its workers scale
    // there, and KubeRay's labels name its queue and priority.
    auto add = [&](WorkloadType type, const std::string& clusterAt, const std::string& suspend) {
      out.push_back(withScheduling(
          withUpdates(std::move(type), rayWorkerScale(clusterAt, v1), suspend), kubeRayLabels()));
    };
    add(row("ray.io", "RayCluster", versions, "rayclusters", WorkloadClass::Batch,
            "a RayCluster runs the Ray jobs submitted to it", Lifecycle::Either,
            rayCluster("/spec", {}, v1)),
        "/spec", "/spec/suspend");
    WorkloadType job = row("ray.io", "RayJob", versions, "rayjobs", WorkloadClass::Batch,
                           "a RayJob runs one Ray entrypoint to completion",
                           Lifecycle::RunsToCompletion, rayJob("/spec", v1));
    job.entrypoint = "/spec/entrypoint";
    add(std::move(job), "/spec/rayClusterSpec", "/spec/suspend");
    add(row("ray.io", "RayService", versions, "rayservices", WorkloadClass::Realtime,
            "a RayService is a long-running Ray Serve server", Lifecycle::LongRunning,
            rayCluster("/spec/rayClusterConfig", {}, v1)),
        "/spec/rayClusterConfig", "");
  }
  WorkloadType cron = row("ray.io", "RayCronJob", {"v1"}, "raycronjobs", WorkloadClass::Batch,
                          "a RayCronJob runs RayJobs to completion", Lifecycle::RunsToCompletion,
                          rayJob("/spec/jobTemplate", true));
  cron.entrypoint = "/spec/jobTemplate/entrypoint";
  out.push_back(withUpdates(
      std::move(cron), rayWorkerScale("/spec/jobTemplate/rayClusterSpec", true), "/spec/suspend"));
}

// A LeaderWorkerSetSpec at `prefix`: `groups` leader-worker groups of
// `size` Pods, the leader from leaderTemplate when it is set (else from
// workerTemplate, which then makes all `size`).
// `countPrefix` names the same spec for counts (relative under a wildcard).
std::vector<TemplateSlot> leaderWorkers(const std::string& prefix, const std::string& countPrefix,
                                        const std::string& rolePrefix, const Factors& groups) {
  const std::string lwt = prefix + "leaderWorkerTemplate";
  const std::string counted = countPrefix + "leaderWorkerTemplate";
  Factors workers = groups;
  workers.push_back(countLess(counted + "/size", 1, 1, counted + "/leaderTemplate"));
  return {podTemplate(rolePrefix + "leader", lwt + "/leaderTemplate", groups),
          withoutProbes(podTemplate(rolePrefix + "worker", lwt + "/workerTemplate", workers))};
}

void addLeaderWorkerSets(std::vector<WorkloadType>& out) {
  out.push_back(withUpdates(
      row("leaderworkerset.x-k8s.io", "LeaderWorkerSet", {"v1"}, "leaderworkersets",
          WorkloadClass::Realtime, "a LeaderWorkerSet is a long-running multi-host server",
          Lifecycle::LongRunning,
          leaderWorkers("/spec/", "/spec/", "", Factors{count("/spec/replicas", 1)})),
      {"/spec/replicas"}, ""));
  // Every slice holds each role; a role is a LeaderWorkerSetSpec.
  out.push_back(withUpdates(
      row("disaggregatedset.x-k8s.io", "DisaggregatedSet", {"v1"}, "disaggregatedsets",
          WorkloadClass::Realtime,
          "a DisaggregatedSet is a long-running server split into roles (prefill, decode)",
          Lifecycle::LongRunning,
          leaderWorkers("/spec/roles/*/spec/", "spec/", "{.name}-",
                        Factors{count("/spec/slices", 1), count("spec/replicas", 1)})),
      {"/spec/slices", "/spec/roles/*/spec/replicas"}, ""));
}

void addJobSetAndVolcano(std::vector<WorkloadType>& out) {
  // JobSet's webhook refuses any change to the replicated jobs but the
  // scheduling directives Kueue writes while the JobSet is suspended.
  SchedulingFields jobSetGang;
  jobSetGang.gang = exclusiveTopology("/metadata", "/spec");
  out.push_back(
      withScheduling(withUpdates(row("jobset.x-k8s.io", "JobSet", {"v1alpha2"}, "jobsets",
                                     WorkloadClass::Batch, "a JobSet runs its Jobs to completion",
                                     Lifecycle::RunsToCompletion, {replicatedJobs("/spec")}),
                                 {}, "/spec/suspend", {"/spec/replicatedJobs"}),
                     std::move(jobSetGang)));
  // Volcano retries the whole job (maxRetry) and has no job-level deadline;
  // a task's replicas have no default (Go's zero).
  TemplateSlot task =
      podTemplate("{.name}", "/spec/tasks/*/template", Factors{count("replicas", 0)},
                  jobSettingsAt("/spec/maxRetry", "", "/spec/ttlSecondsAfterFinished"));
  // Volcano's webhook lets an update change only minAvailable and the
  // tasks' replicas and minAvailable.
  // Volcano's controller gives every Pod whose template names none the Job's
  // scheduler and priority class, and makes the PodGroup (minAvailable
  // members, the Job's queue and priority) that Volcano gang-schedules.
  SchedulingFields volcano;
  volcano.schedulerName = "/spec/schedulerName";
  volcano.priorityClassName = "/spec/priorityClassName";
  volcano.queue = "/spec/queue";
  volcano.gang = {"/spec/minAvailable"};
  out.push_back(withScheduling(
      withUpdates(
          row("batch.volcano.sh", "Job", {"v1alpha1"}, "jobs", WorkloadClass::Batch,
              "a Volcano Job runs its tasks to completion", Lifecycle::RunsToCompletion, {task}),
          {"/spec/minAvailable", "/spec/tasks/*/replicas", "/spec/tasks/*/minAvailable"}, "",
          {"/spec/tasks"}),
      std::move(volcano)));
}

// A KServe component: an inline PodSpec with the component's own labels and
// annotations, minReplicas (default 1) Pods.
TemplateSlot kserveComponent(std::string role, const std::string& pointer,
                             std::vector<std::string> containerObjects) {
  TemplateSlot slot;
  slot.role = std::move(role);
  slot.spec = pointer;
  slot.metadata = pointer;
  slot.containerObjects = std::move(containerObjects);
  slot.replicas = Factors{count(pointer + "/minReplicas", 1)};
  return slot;
}

// Multi-node predictors: pipelineParallelSize nodes, the head from the
// predictor and the others from workerSpec (which has no labels of its own).
TemplateSlot kserveWorker(std::string role, const std::string& predictor) {
  TemplateSlot slot;
  slot.role = std::move(role);
  slot.spec = predictor + "/workerSpec";
  slot.metadata = predictor;
  slot.replicas = Factors{count(predictor + "/minReplicas", 1),
                          countLess(predictor + "/workerSpec/pipelineParallelSize", 1, 1, "")};
  return slot;
}

void addKServe(std::vector<WorkloadType>& out) {
  // The predictor's model, or a legacy framework field, becomes its
  // kserve-container.
  const std::vector<std::string> predictorContainers = {
      "model", "sklearn", "xgboost",  "tensorflow", "pytorch",    "triton",
      "onnx",  "pmml",    "lightgbm", "paddle",     "huggingface"};
  std::vector<TemplateSlot> slots = {
      kserveComponent("predictor", "/spec/predictor", predictorContainers),
      kserveWorker("predictor-worker", "/spec/predictor"),
      kserveComponent("transformer", "/spec/transformer", {}),
      kserveComponent("explainer", "/spec/explainer", {"art"}),
      kserveComponent("canary-{key}", "/spec/canary/*/predictor", predictorContainers),
      kserveWorker("canary-{key}-worker", "/spec/canary/*/predictor")};
  // Relative to the canary entry, so that each finds its own minReplicas.
  slots[4].replicas = Factors{count("predictor/minReplicas", 1)};
  slots[5].replicas = Factors{count("predictor/minReplicas", 1),
                              countLess("predictor/workerSpec/pipelineParallelSize", 1, 1, "")};
  // A component's autoscaling bounds and target are its scale.
  std::vector<std::string> scale;
  for (const char* component :
       {"/spec/predictor", "/spec/transformer", "/spec/explainer", "/spec/canary/*/predictor"}) {
    for (const char* field :
         {"minReplicas", "maxReplicas", "scaleTarget", "scaleMetric", "autoScaling"}) {
      scale.push_back(std::string(component) + "/" + field);
    }
  }
  out.push_back(
      withUpdates(row("serving.kserve.io", "InferenceService", {"v1beta1"}, "inferenceservices",
                      WorkloadClass::Realtime, "an InferenceService is a long-running model server",
                      Lifecycle::LongRunning, withoutProbes(std::move(slots))),
                  std::move(scale), ""));

  // LLMInferenceService: PodSpecs directly (spec.template, not
  // spec.template.spec), labels and annotations on the workload spec. A
  // worker's group size follows spec.parallelism, so its count is unknown.
  // Managed DRA (v1alpha2, the version KServe stores and reconciles, so an
  // object applied as v1alpha1 gets it too): the exp-dra-* annotations make
  // KServe claim devices of a DeviceClass for the model server's Pods (the
  // template, the worker and the prefill's), never the router's.
  const AnnotatedClaim managedDra{.deviceClass = "serving.kserve.io/exp-dra-device-class",
                                  .count = "serving.kserve.io/exp-dra-device-count",
                                  .container = "serving.kserve.io/exp-dra-container-name"};
  auto llm = [&managedDra](std::string role, std::string spec, std::string metadata,
                           std::optional<Factors> replicas, bool servesModel = true) {
    return TemplateSlot{.role = std::move(role),
                        .spec = std::move(spec),
                        .metadata = std::move(metadata),
                        .annotatedClaim = servesModel ? managedDra : AnnotatedClaim{},
                        .replicas = std::move(replicas)};
  };
  out.push_back(withUpdates(
      row("serving.kserve.io", "LLMInferenceService", {"v1alpha1", "v1alpha2"},
          "llminferenceservices", WorkloadClass::Realtime,
          "an LLMInferenceService is a long-running LLM server", Lifecycle::LongRunning,
          withoutProbes(
              {llm("main", "/spec/template", "/spec", Factors{count("/spec/replicas", 1)}),
               llm("main-worker", "/spec/worker", "/spec", std::nullopt),
               llm("prefill", "/spec/prefill/template", "/spec/prefill",
                   Factors{count("/spec/prefill/replicas", 1)}),
               llm("prefill-worker", "/spec/prefill/worker", "/spec/prefill", std::nullopt),
               llm("scheduler", "/spec/router/scheduler/template", "/spec/router/scheduler",
                   Factors{count("/spec/router/scheduler/replicas", 1)}, false),
               llm("tokenizer", "/spec/router/scheduler/tokenizer/template", "", std::nullopt,
                   false)})),
      {"/spec/replicas", "/spec/scaling", "/spec/prefill/replicas", "/spec/prefill/scaling",
       "/spec/router/scheduler/replicas"},
      ""));
}

// Knative Serving's Service: a RevisionTemplateSpec at spec.template, whose
// Pods Knative's autoscaler counts from the requests (to zero by default), so
// the object cannot tell how many. Knative's own webhook refuses a template
// with tolerations, a node selector, affinity, a priority class or a
// scheduler unless the cluster's config-features enables each
// (kubernetes.podspec-*, all disabled as Knative ships), and aiadmit cannot
// see that ConfigMap: it injects only what Knative takes as shipped (GPU
// limits, labels and annotations, an emptyDir /dev/shm). Knative gives the
// serving container a readiness probe of its own.
void addKnative(std::vector<WorkloadType>& out) {
  TemplateSlot revision = podTemplate("revision", "/spec/template", std::nullopt);
  revision.injectable = kInjectGpuLimits | kInjectStamps | kInjectSharedMemory;
  revision.note =
      "Pods autoscaled by Knative; placement, priority and scheduler are Knative feature flags "
      "(kubernetes.podspec-*), disabled as Knative ships";
  out.push_back(row("serving.knative.dev", "Service", {"v1"}, "services", WorkloadClass::Realtime,
                    "a Knative Service is a long-running server scaled by its requests",
                    Lifecycle::LongRunning, {std::move(revision)}));
}

// NVIDIA's NIM operator (apps.nvidia.com): no pod template. A NIMService
// gives its NIM container spec.resources and its Pods spec.nodeSelector,
// tolerations, affinity, schedulerName and priorityClassName; its webhook
// refuses only resources.claims there (DRA goes in spec.draResources, which
// aiadmit does not read). aiadmit reads the GPUs of spec.resources as the
// main container's, adds their limits, and writes the profile's scheduler
// and priority class at spec.schedulerName and spec.priorityClassName, which
// the operator gives every Pod. The pool's placement is not injected: the
// slot is a ResourceRequirements. The operator probes its NIM container
// itself (a default readiness probe when spec.readinessProbe has none).
// With spec.multiNode a replica is a LeaderWorkerSet group of
// multiNode.parallelism.pipeline Pods (GetLWSSize).
void addNim(std::vector<WorkloadType>& out) {
  TemplateSlot nim;
  nim.role = "nim";
  nim.shape = TemplateShape::Resources;
  nim.spec = "/spec/resources";
  nim.replicas =
      Factors{count("/spec/replicas", 1), count("/spec/multiNode/parallelism/pipeline", 1)};
  nim.injectable = kInjectGpuLimits | kInjectPriority | kInjectScheduler;
  nim.note =
      "no pod template: the NIM container's GPUs are spec.resources; spec.nodeSelector, "
      "tolerations and affinity are neither read nor injected";
  out.push_back(withScheduling(
      withUpdates(row("apps.nvidia.com", "NIMService", {"v1alpha1"}, "nimservices",
                      WorkloadClass::Realtime, "a NIMService is a long-running model server",
                      Lifecycle::LongRunning, {std::move(nim)}),
                  {"/spec/replicas", "/spec/scale"}, ""),
      {.schedulerName = "/spec/schedulerName", .priorityClassName = "/spec/priorityClassName"}));
}

// A SparkPodSpec of Kubeflow's Spark operator at `pointer` (a driver or the
// executors): no containers of its own. spark-submit makes the Pod, from the
// spec's `template` when it has one, and the operator's Pod webhook gives
// its Spark container `gpu: {name, quantity}` as a limit (addGPU) and the
// Pod the spec's priorityClassName, nodeSelector (merged), tolerations
// (appended) and affinity (replacing the template's). Its labels and
// annotations become the Pods' through spark-submit. Placement is not
// injected: the operator's validator refuses spec.nodeSelector beside a
// driver's or an executor's, and the application's selector reaches the Pods
// through spark-submit, where aiadmit does not read it.
TemplateSlot sparkPod(std::string role, const std::string& pointer, std::optional<Factors> pods) {
  TemplateSlot slot;
  slot.role = std::move(role);
  slot.shape = TemplateShape::SparkPod;
  slot.spec = pointer;
  slot.metadata = pointer;
  slot.replicas = std::move(pods);
  slot.injectable = kSparkPodInjectable;
  slot.note =
      "no pod template: GPUs are gpu {name, quantity}; placement is neither injected nor read "
      "from spec.nodeSelector or the spec's template";
  return slot;
}

// The driver and executors of a SparkApplicationSpec at `spec`. The
// executors number executor.instances; the operator's defaulter writes 1
// when it is absent unless sparkConf or dynamic allocation decide, and
// dynamic allocation (spec.dynamicAllocation, or sparkConf under Spark's key
// or the lower-case one the operator's defaulter reads) sizes them at run
// time: the count is unknown then.
std::vector<TemplateSlot> sparkPods(const std::string& spec) {
  ReplicaFactor executors;
  executors.pointer = spec + "/executor/instances";
  executors.unknownWhen = {spec + "/dynamicAllocation/enabled",
                           spec + "/sparkConf/spark.dynamicAllocation.enabled",
                           spec + "/sparkConf/spark.dynamicallocation.enabled"};
  return {sparkPod("driver", spec + "/driver", Factors{}),
          sparkPod("executor", spec + "/executor", Factors{std::move(executors)})};
}

// Kubeflow's Spark operator (sparkoperator.k8s.io): a SparkApplication runs
// one Spark job; a ScheduledSparkApplication makes one from spec.template
// (a SparkApplicationSpec) on its schedule.
void addSpark(std::vector<WorkloadType>& out) {
  out.push_back(row("sparkoperator.k8s.io", "SparkApplication", {"v1beta2"}, "sparkapplications",
                    WorkloadClass::Batch, "a SparkApplication runs a Spark job to completion",
                    Lifecycle::RunsToCompletion, sparkPods("/spec")));
  out.push_back(row("sparkoperator.k8s.io", "ScheduledSparkApplication", {"v1beta2"},
                    "scheduledsparkapplications", WorkloadClass::Batch,
                    "a ScheduledSparkApplication runs a Spark job to completion on a schedule",
                    Lifecycle::RunsToCompletion, sparkPods("/spec/template")));
}

}  // namespace

std::vector<WorkloadType> builtInWorkloadTypes() {
  std::vector<WorkloadType> types;
  addCoreKinds(types);
  addKubeflowTrainingJobs(types);
  addTrainer(types);
  addKubeRay(types);
  addLeaderWorkerSets(types);
  addJobSetAndVolcano(types);
  addKServe(types);
  addKnative(types);
  addNim(types);
  addSpark(types);
  return types;
}

}  // namespace aiadmit
