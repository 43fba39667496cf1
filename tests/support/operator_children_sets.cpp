// The set controllers: JobSet (pkg/controllers/jobset_controller.go,
// constructJob and labelAndAnnotateObject), LeaderWorkerSet
// (leaderworkerset_controller.go and pod_controller.go: the leader
// StatefulSet, and per group the worker StatefulSet owned by the leader Pod),
// and Kubeflow Trainer, whose TrainJob becomes a JobSet built from the
// runtime it names with the trainer's settings applied to the node job.
#include "tests/support/operator_children_parts.h"

namespace aiadmit::testing {

using namespace children;

namespace {

int intMember(const JsonValue* object, std::string_view key, int fallback) {
  const JsonValue* value = member(object, key);
  return value != nullptr && value->IsInt() ? value->GetInt() : fallback;
}

Labels jobSetLabels(const JsonValue& jobSet, std::string_view replicatedJob, int replicas,
                    int index, int globalIndex, int globalReplicas) {
  const std::string jobName =
      nameOf(jobSet) + "-" + std::string(replicatedJob) + "-" + std::to_string(index);
  return {{"jobset.sigs.k8s.io/jobset-name", nameOf(jobSet)},
          {"jobset.sigs.k8s.io/replicatedjob-name", std::string(replicatedJob)},
          {"jobset.sigs.k8s.io/restart-attempt", "0"},
          {"jobset.sigs.k8s.io/replicatedjob-replicas", std::to_string(replicas)},
          {"jobset.sigs.k8s.io/global-replicas", std::to_string(globalReplicas)},
          {"jobset.sigs.k8s.io/job-index", std::to_string(index)},
          {"jobset.sigs.k8s.io/job-key", sha1Hex(namespaceOf(jobSet) + "/" + jobName)},
          {"jobset.sigs.k8s.io/job-global-index", std::to_string(globalIndex)}};
}

bool dnsHostnames(const JsonValue& jobSet) {
  // JobSet's defaulting webhook turns enableDNSHostnames on unless set false.
  const JsonValue* enabled =
      member(member(member(&jobSet, "spec"), "network"), "enableDNSHostnames");
  return enabled == nullptr || !enabled->IsBool() || enabled->GetBool();
}

JsonDocument jobOf(const JsonValue& jobSet, const JsonValue& replicatedJob, int index,
                   const Labels& labels) {
  const std::string rjName(stringMember(&replicatedJob, "name"));
  JsonDocument job;
  startObject(job, "batch/v1", "Job", nameOf(jobSet) + "-" + rjName + "-" + std::to_string(index),
              namespaceOf(jobSet));
  auto& alloc = job.GetAllocator();
  const JsonValue* templ = member(&replicatedJob, "template");
  mergeMap(job, "labels", member(member(templ, "metadata"), "labels"), alloc);
  mergeMap(job, "annotations", member(member(templ, "metadata"), "annotations"), alloc);
  putLabels(job, labels, alloc);
  putAnnotations(job, labels, alloc);
  setControllerOf(job, jobSet, alloc);
  JsonValue spec = copyObject(member(templ, "spec"), alloc);
  // JobSet's defaulting webhook: Indexed Jobs, OnFailure Pods.
  if (member(&spec, "completionMode") == nullptr)
    setString(spec, "completionMode", "Indexed", alloc);
  JsonValue& podTemplate = ensureObject(spec, "template", alloc);
  JsonValue& podSpec = ensureObject(podTemplate, "spec", alloc);
  if (member(&podSpec, "restartPolicy") == nullptr)
    setString(podSpec, "restartPolicy", "OnFailure", alloc);
  putLabels(podTemplate, labels, alloc);
  putAnnotations(podTemplate, labels, alloc);
  if (dnsHostnames(jobSet)) {
    const std::string_view subdomain =
        stringMember(member(member(&jobSet, "spec"), "network"), "subdomain");
    setString(podSpec, "subdomain", subdomain.empty() ? nameOf(jobSet) : std::string(subdomain),
              alloc);
  }
  const JsonValue* suspend = member(member(&jobSet, "spec"), "suspend");
  setMember(spec, "suspend",
            JsonValue(suspend != nullptr && suspend->IsBool() && suspend->GetBool()), alloc);
  job.AddMember("spec", spec, alloc);
  defaultJob(job);
  return job;
}

}  // namespace

std::vector<OperatorChild> jobSetChildren(const JsonValue& jobSet) {
  std::vector<OperatorChild> children;
  const JsonValue* replicatedJobs = member(member(&jobSet, "spec"), "replicatedJobs");
  if (!isArray(replicatedJobs)) return children;
  int globalReplicas = 0;
  for (const JsonValue& rj : replicatedJobs->GetArray())
    globalReplicas += intMember(&rj, "replicas", 1);
  int globalIndex = 0;
  for (const JsonValue& rj : replicatedJobs->GetArray()) {
    const int replicas = intMember(&rj, "replicas", 1);
    const std::string rjName(stringMember(&rj, "name"));
    for (int index = 0; index < replicas; ++index, ++globalIndex) {
      // The Jobs of one replicated job differ in their index only: the first
      // stands for them, the second too when there is one (its labels differ).
      if (index > 1) continue;
      const Labels labels =
          jobSetLabels(jobSet, rjName, replicas, index, globalIndex, globalReplicas);
      const JsonDocument job = jobOf(jobSet, rj, index, labels);
      const std::string role = "job-" + rjName + "-" + std::to_string(index);
      children.push_back(childOf(role, job));
      for (OperatorChild& pod : jobPods(job)) {
        pod.role = role + "-" + pod.role;
        children.push_back(std::move(pod));
      }
    }
  }
  return children;
}

namespace {

std::string templateHash(const JsonValue& lws) {
  return sha1Hex(toJson(*member(member(&lws, "spec"), "leaderWorkerTemplate"))).substr(0, 16);
}

JsonDocument leaderStatefulSet(const JsonValue& lws) {
  const JsonValue* spec = member(&lws, "spec");
  const JsonValue* lwt = member(spec, "leaderWorkerTemplate");
  const std::string name = nameOf(lws);
  const std::string hash = templateHash(lws);
  JsonDocument sts;
  startObject(sts, "apps/v1", "StatefulSet", name, namespaceOf(lws));
  auto& alloc = sts.GetAllocator();
  putLabels(sts,
            {{"leaderworkerset.sigs.k8s.io/name", name},
             {"leaderworkerset.sigs.k8s.io/template-revision-hash", hash}},
            alloc);
  putAnnotations(
      sts,
      {{"leaderworkerset.sigs.k8s.io/replicas", std::to_string(intMember(spec, "replicas", 1))}},
      alloc);
  setControllerOf(sts, lws, alloc);
  const JsonValue* leader = member(lwt, "leaderTemplate");
  JsonValue templ = copyObject(isObject(leader) ? leader : member(lwt, "workerTemplate"), alloc);
  putLabels(templ,
            {{"leaderworkerset.sigs.k8s.io/worker-index", "0"},
             {"leaderworkerset.sigs.k8s.io/name", name},
             {"leaderworkerset.sigs.k8s.io/template-revision-hash", hash}},
            alloc);
  putAnnotations(templ,
                 {{"leaderworkerset.sigs.k8s.io/size", std::to_string(intMember(lwt, "size", 1))}},
                 alloc);
  JsonValue stsSpec(rapidjson::kObjectType);
  stsSpec.AddMember("replicas", intMember(spec, "replicas", 1), alloc);
  setString(stsSpec, "serviceName", name, alloc);
  setString(stsSpec, "podManagementPolicy", "Parallel", alloc);
  JsonValue match(rapidjson::kObjectType);
  setString(match, "leaderworkerset.sigs.k8s.io/name", name, alloc);
  setString(match, "leaderworkerset.sigs.k8s.io/worker-index", "0", alloc);
  JsonValue labelSelector(rapidjson::kObjectType);
  labelSelector.AddMember("matchLabels", match, alloc);
  stsSpec.AddMember("selector", labelSelector, alloc);
  stsSpec.AddMember("template", templ, alloc);
  sts.AddMember("spec", stsSpec, alloc);
  defaultStatefulSet(sts);
  return sts;
}

// The StatefulSet controller's Pod, then the LWS Pod webhook's group labels
// and the environment it gives every container.
JsonDocument statefulSetPod(const JsonValue& sts, const JsonValue& lws, int ordinal,
                            const std::string& groupKey) {
  const std::string name = nameOf(sts) + "-" + std::to_string(ordinal);
  JsonDocument pod = podFromTemplate(*member(member(&sts, "spec"), "template"), sts, name);
  auto& alloc = pod.GetAllocator();
  putLabels(pod,
            {{"controller-revision-hash", nameOf(sts) + "-" + templateHash(lws).substr(0, 10)},
             {"statefulset.kubernetes.io/pod-name", name},
             {"apps.kubernetes.io/pod-index", std::to_string(ordinal)},
             {"leaderworkerset.sigs.k8s.io/group-index", "0"},
             {"leaderworkerset.sigs.k8s.io/group-key", groupKey},
             {"leaderworkerset.sigs.k8s.io/worker-index",
              std::to_string(nameOf(sts) == nameOf(lws) ? 0 : ordinal)}},
            alloc);
  JsonValue& spec = pod["spec"];
  setString(spec, "hostname", name, alloc);
  setString(spec, "subdomain", nameOf(lws), alloc);
  const JsonValue* lwt = member(member(&lws, "spec"), "leaderWorkerTemplate");
  if (JsonValue* containers = member(&spec, "containers"); isArray(containers)) {
    for (JsonValue& container : containers->GetArray()) {
      appendEnv(container, "LWS_LEADER_ADDRESS",
                nameOf(lws) + "-0." + nameOf(lws) + "." + namespaceOf(lws), alloc);
      appendEnv(container, "LWS_GROUP_SIZE", std::to_string(intMember(lwt, "size", 1)), alloc);
      appendEnv(container, "LWS_WORKER_INDEX",
                stringMember(member(member(&pod, "metadata"), "labels"),
                             "leaderworkerset.sigs.k8s.io/worker-index"),
                alloc);
    }
  }
  return pod;
}

JsonDocument workerStatefulSet(const JsonValue& lws, const JsonValue& leaderPod,
                               const std::string& groupKey) {
  const JsonValue* lwt = member(member(&lws, "spec"), "leaderWorkerTemplate");
  JsonDocument sts;
  startObject(sts, "apps/v1", "StatefulSet", nameOf(leaderPod), namespaceOf(lws));
  auto& alloc = sts.GetAllocator();
  const Labels labels = {{"leaderworkerset.sigs.k8s.io/group-index", "0"},
                         {"leaderworkerset.sigs.k8s.io/name", nameOf(lws)},
                         {"leaderworkerset.sigs.k8s.io/group-key", groupKey}};
  putLabels(sts, labels, alloc);
  putLabels(sts, {{"leaderworkerset.sigs.k8s.io/template-revision-hash", templateHash(lws)}},
            alloc);
  setControllerOf(sts, leaderPod, alloc);
  JsonValue templ = copyObject(member(lwt, "workerTemplate"), alloc);
  putLabels(templ, labels, alloc);
  putLabels(templ, {{"leaderworkerset.sigs.k8s.io/template-revision-hash", templateHash(lws)}},
            alloc);
  putAnnotations(templ,
                 {{"leaderworkerset.sigs.k8s.io/size", std::to_string(intMember(lwt, "size", 1))},
                  {"leaderworkerset.sigs.k8s.io/leader-name", nameOf(leaderPod)}},
                 alloc);
  JsonValue spec(rapidjson::kObjectType);
  spec.AddMember("replicas", intMember(lwt, "size", 1) - 1, alloc);
  setString(spec, "serviceName", nameOf(lws), alloc);
  setString(spec, "podManagementPolicy", "Parallel", alloc);
  JsonValue ordinals(rapidjson::kObjectType);
  ordinals.AddMember("start", 1, alloc);
  spec.AddMember("ordinals", ordinals, alloc);
  JsonValue match(rapidjson::kObjectType);
  for (const auto& [key, value] : labels) setString(match, key, value, alloc);
  JsonValue selector(rapidjson::kObjectType);
  selector.AddMember("matchLabels", match, alloc);
  spec.AddMember("selector", selector, alloc);
  spec.AddMember("template", templ, alloc);
  sts.AddMember("spec", spec, alloc);
  defaultStatefulSet(sts);
  return sts;
}

}  // namespace

std::vector<OperatorChild> leaderWorkerSetChildren(const JsonValue& lws) {
  std::vector<OperatorChild> children;
  const JsonDocument leaderSts = leaderStatefulSet(lws);
  children.push_back(childOf("leader-statefulset", leaderSts));
  // Group 0 stands for every group: the others differ in their index only.
  const std::string groupKey = sha1Hex(namespaceOf(lws) + "/" + nameOf(lws) + "-0");
  const JsonDocument leader = statefulSetPod(leaderSts, lws, 0, groupKey);
  children.push_back(childOf("leader-pod", leader));
  const JsonValue* lwt = member(member(&lws, "spec"), "leaderWorkerTemplate");
  if (intMember(lwt, "size", 1) < 2) return children;
  const JsonDocument workerSts = workerStatefulSet(lws, leader, groupKey);
  children.push_back(childOf("worker-statefulset", workerSts));
  children.push_back(childOf("worker-pod", statefulSetPod(workerSts, lws, 1, groupKey)));
  return children;
}

namespace {

// Trainer's plugins on the node job (the one the runtime marks as the
// trainer's step): the TrainJob's numNodes, image, command and resources,
// and torch's rendezvous environment.
void applyTrainer(JsonValue& replicatedJob, const JsonValue& trainJob, const JsonValue& runtime,
                  JsonAllocator& alloc) {
  const JsonValue* trainer = member(member(&trainJob, "spec"), "trainer");
  const JsonValue* policy = member(member(&runtime, "spec"), "mlPolicy");
  const int nodes = intMember(trainer, "numNodes", intMember(policy, "numNodes", 1));
  JsonValue& jobSpec = ensureObject(ensureObject(replicatedJob, "template", alloc), "spec", alloc);
  setMember(jobSpec, "parallelism", JsonValue(nodes), alloc);
  setMember(jobSpec, "completions", JsonValue(nodes), alloc);
  JsonValue& podSpec = ensureObject(ensureObject(jobSpec, "template", alloc), "spec", alloc);
  JsonValue* node = containerNamed(podSpec, "node");
  if (node == nullptr) return;
  for (const char* key : {"image", "command", "args", "env"}) {
    if (const JsonValue* value = member(trainer, key); value != nullptr)
      setMember(*node, key, JsonValue(*value, alloc), alloc);
  }
  if (const JsonValue* res = member(trainer, "resourcesPerNode"); isObject(res))
    setMember(*node, "resources", JsonValue(*res, alloc), alloc);
  const std::string name = nameOf(trainJob);
  appendEnv(*node, "PET_NNODES", std::to_string(nodes), alloc);
  appendEnv(*node, "PET_NPROC_PER_NODE", "auto", alloc);
  appendEnv(*node, "PET_MASTER_ADDR", name + "-node-0-0." + name, alloc);
  appendEnv(*node, "PET_MASTER_PORT", "29400", alloc);
  JsonValue port(rapidjson::kObjectType);
  port.AddMember("containerPort", 29400, alloc);
  ensureArray(*node, "ports", alloc).PushBack(port, alloc);
}

bool targets(const JsonValue& override, std::string_view job) {
  return elementWith(member(&override, "targetJobs"), "name", job) != nullptr;
}

// One patch of a replicated job's pod template, as Trainer merges it: node
// selector and labels merged, tolerations appended, affinity replaced.
void mergePodTemplatePatch(JsonValue& templ, const JsonValue* metadata, const JsonValue* spec,
                           JsonAllocator& alloc) {
  JsonValue& podSpec = ensureObject(templ, "spec", alloc);
  mergeMap(templ, "labels", member(metadata, "labels"), alloc);
  mergeMap(templ, "annotations", member(metadata, "annotations"), alloc);
  if (const JsonValue* selector = member(spec, "nodeSelector"); isObject(selector)) {
    JsonValue& own = ensureObject(podSpec, "nodeSelector", alloc);
    for (const auto& entry : selector->GetObject())
      setMember(own, entry.name.GetString(), JsonValue(entry.value, alloc), alloc);
  }
  if (const JsonValue* tolerations = member(spec, "tolerations"); isArray(tolerations)) {
    JsonValue& own = ensureArray(podSpec, "tolerations", alloc);
    for (const JsonValue& toleration : tolerations->GetArray())
      own.PushBack(JsonValue(toleration, alloc), alloc);
  }
  if (const JsonValue* affinity = member(spec, "affinity"); isObject(affinity))
    setMember(podSpec, "affinity", JsonValue(*affinity, alloc), alloc);
}

// spec.podTemplateOverrides (the jobs each targets) and spec.runtimePatches
// (each manager's entry for this replicated job), merged into its pod template.
void applyOverrides(JsonValue& replicatedJob, const JsonValue& trainJob, JsonAllocator& alloc) {
  const std::string_view name = stringMember(&replicatedJob, "name");
  auto templateOf = [&]() -> JsonValue& {
    return ensureObject(ensureObject(ensureObject(replicatedJob, "template", alloc), "spec", alloc),
                        "template", alloc);
  };
  const JsonValue* trainJobSpec = member(&trainJob, "spec");
  if (const JsonValue* overrides = member(trainJobSpec, "podTemplateOverrides");
      isArray(overrides)) {
    for (const JsonValue& override : overrides->GetArray()) {
      if (!targets(override, name)) continue;
      mergePodTemplatePatch(templateOf(), member(&override, "metadata"), member(&override, "spec"),
                            alloc);
    }
  }
  const JsonValue* patches = member(trainJobSpec, "runtimePatches");
  if (!isArray(patches)) return;
  for (const JsonValue& patch : patches->GetArray()) {
    const JsonValue* jobs =
        member(member(member(member(&patch, "trainingRuntimeSpec"), "template"), "spec"),
               "replicatedJobs");
    if (!isArray(jobs)) continue;
    for (const JsonValue& job : jobs->GetArray()) {
      if (stringMember(&job, "name") != name) continue;
      const JsonValue* podTemplate = member(member(member(&job, "template"), "spec"), "template");
      mergePodTemplatePatch(templateOf(), member(podTemplate, "metadata"),
                            member(podTemplate, "spec"), alloc);
    }
  }
}

}  // namespace

std::vector<OperatorChild> trainJobChildren(const JsonValue& trainJob, const JsonValue& runtime) {
  JsonDocument jobSet;
  startObject(jobSet, "jobset.x-k8s.io/v1alpha2", "JobSet", nameOf(trainJob),
              namespaceOf(trainJob));
  auto& alloc = jobSet.GetAllocator();
  const JsonValue* runtimeTemplate = member(member(&runtime, "spec"), "template");
  const JsonValue* tjSpec = member(&trainJob, "spec");
  mergeMap(jobSet, "labels", member(member(runtimeTemplate, "metadata"), "labels"), alloc);
  mergeMap(jobSet, "annotations", member(member(runtimeTemplate, "metadata"), "annotations"),
           alloc);
  mergeMap(jobSet, "labels", member(tjSpec, "labels"), alloc);
  mergeMap(jobSet, "annotations", member(tjSpec, "annotations"), alloc);
  setControllerOf(jobSet, trainJob, alloc);
  JsonValue spec = copyObject(member(runtimeTemplate, "spec"), alloc);
  if (JsonValue* jobs = member(&spec, "replicatedJobs"); isArray(jobs)) {
    for (JsonValue& rj : jobs->GetArray()) {
      const JsonValue* labels = member(member(member(&rj, "template"), "metadata"), "labels");
      if (stringMember(labels, "trainer.kubeflow.org/trainjob-ancestor-step") == "trainer")
        applyTrainer(rj, trainJob, runtime, alloc);
      applyOverrides(rj, trainJob, alloc);
    }
  }
  if (const JsonValue* suspend = member(tjSpec, "suspend"); suspend != nullptr)
    setMember(spec, "suspend", JsonValue(*suspend, alloc), alloc);
  jobSet.AddMember("spec", spec, alloc);
  std::vector<OperatorChild> children;
  children.push_back(childOf("jobset", jobSet));
  for (OperatorChild& job : jobSetChildren(jobSet)) {
    job.role = "jobset-" + job.role;
    children.push_back(std::move(job));
  }
  return children;
}

}  // namespace aiadmit::testing
