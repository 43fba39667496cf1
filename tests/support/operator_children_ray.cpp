// KubeRay (ray-operator/controllers/ray): a RayJob or a RayService makes a
// RayCluster from its cluster spec; a RayCluster makes one head Pod and the
// Pods of each worker group (common/pod.go: DefaultHeadPodTemplate,
// DefaultWorkerPodTemplate, BuildPod); a RayJob in K8sJobMode also makes the
// submitter Job named after it.
#include <algorithm>

#include "tests/support/operator_children_parts.h"

namespace aiadmit::testing {

using namespace children;

namespace {

constexpr int kGcsPort = 6379;
constexpr std::string_view kClusterSuffix = "x7k2p";  // utils.GenerateRayClusterName's random part

std::string headServiceHost(const JsonValue& cluster) {
  return nameOf(cluster) + "-head-svc." + namespaceOf(cluster) + ".svc.cluster.local";
}

void appendFieldEnv(JsonValue& container, std::string_view name, std::string_view fieldPath,
                    JsonAllocator& alloc) {
  JsonValue fieldRef(rapidjson::kObjectType);
  setString(fieldRef, "fieldPath", fieldPath, alloc);
  JsonValue from(rapidjson::kObjectType);
  from.AddMember("fieldRef", fieldRef, alloc);
  JsonValue variable(rapidjson::kObjectType);
  setString(variable, "name", name, alloc);
  variable.AddMember("valueFrom", from, alloc);
  ensureArray(container, "env", alloc).PushBack(variable, alloc);
}

JsonValue resources(std::string_view cpu, std::string_view memory, JsonAllocator& alloc) {
  JsonValue result(rapidjson::kObjectType);
  for (const char* key : {"limits", "requests"}) {
    JsonValue list(rapidjson::kObjectType);
    setString(list, "cpu", cpu, alloc);
    setString(list, "memory", memory, alloc);
    result.AddMember(JsonValue(key, alloc), list, alloc);
  }
  return result;
}

// labelPod: KubeRay's labels, then the template's except the three it owns.
void labelRayPod(JsonValue& templ, const JsonValue& cluster, std::string_view nodeType,
                 std::string_view group, JsonAllocator& alloc) {
  const std::string clusterName = nameOf(cluster);
  JsonValue labels(rapidjson::kObjectType);
  if (const JsonValue* own = member(member(&templ, "metadata"), "labels"); isObject(own)) {
    for (const auto& entry : own->GetObject()) {
      const std::string_view key = entry.name.GetString();
      if (key == "ray.io/node-type" || key == "ray.io/group" || key == "ray.io/cluster") continue;
      labels.AddMember(JsonValue(entry.name, alloc), JsonValue(entry.value, alloc), alloc);
    }
  }
  setMember(ensureObject(templ, "metadata", alloc), "labels", std::move(labels), alloc);
  putLabels(templ,
            {{"ray.io/is-ray-node", "yes"},
             {"ray.io/cluster", clusterName},
             {"ray.io/node-type", std::string(nodeType)},
             {"ray.io/group", std::string(group)},
             {"ray.io/identifier", clusterName + "-" + std::string(nodeType)},
             {"app.kubernetes.io/name", "kuberay"},
             {"app.kubernetes.io/created-by", "kuberay-operator"}},
            alloc);
  if (stringMember(member(member(&cluster, "metadata"), "labels"), "ray.io/originated-from-crd") ==
      "RayService") {
    putLabels(templ, {{"ray.io/serve", nodeType == "head" ? "false" : "true"}}, alloc);
  }
}

JsonValue execProbe(bool head, bool liveness, JsonAllocator& alloc) {
  std::string command =
      "wget --tries 1 -T 2 -q -O- http://localhost:52365/api/local_raylet_healthz | grep success";
  if (head) {
    command +=
        " && wget --tries 1 -T 10 -q -O- http://localhost:8265/api/gcs_healthz | grep success";
  }
  JsonValue argv(rapidjson::kArrayType);
  for (const std::string& word : {std::string("bash"), std::string("-c"), command}) {
    argv.PushBack(makeString(word, alloc), alloc);
  }
  JsonValue exec(rapidjson::kObjectType);
  exec.AddMember("command", argv, alloc);
  JsonValue probe(rapidjson::kObjectType);
  probe.AddMember("exec", exec, alloc);
  probe.AddMember("initialDelaySeconds", liveness ? 30 : 10, alloc);
  probe.AddMember("timeoutSeconds", head ? 5 : 1, alloc);
  probe.AddMember("periodSeconds", 5, alloc);
  probe.AddMember("successThreshold", 1, alloc);
  probe.AddMember("failureThreshold", liveness ? 120 : 10, alloc);
  return probe;
}

// The memory-backed /dev/shm for the object store, sized like the Ray
// container's memory, unless something is mounted there already.
void addSharedMemory(JsonValue& spec, JsonValue& container, JsonAllocator& alloc) {
  if (const JsonValue* mounts = member(&container, "volumeMounts"); isArray(mounts)) {
    for (const JsonValue& mount : mounts->GetArray()) {
      if (stringMember(&mount, "mountPath") == "/dev/shm") return;
    }
  }
  JsonValue emptyDir(rapidjson::kObjectType);
  setString(emptyDir, "medium", "Memory", alloc);
  const JsonValue* res = member(&container, "resources");
  std::string_view memory = stringMember(member(res, "limits"), "memory");
  if (memory.empty()) memory = stringMember(member(res, "requests"), "memory");
  if (!memory.empty()) setString(emptyDir, "sizeLimit", memory, alloc);
  JsonValue volume(rapidjson::kObjectType);
  setString(volume, "name", "shared-mem", alloc);
  volume.AddMember("emptyDir", emptyDir, alloc);
  ensureArray(spec, "volumes", alloc).PushBack(volume, alloc);
  JsonValue mount(rapidjson::kObjectType);
  setString(mount, "mountPath", "/dev/shm", alloc);
  setString(mount, "name", "shared-mem", alloc);
  ensureArray(container, "volumeMounts", alloc).PushBack(mount, alloc);
}

void addMetricsPort(JsonValue& container, JsonAllocator& alloc) {
  JsonValue& ports = ensureArray(container, "ports", alloc);
  for (const JsonValue& port : ports.GetArray()) {
    if (stringMember(&port, "name") == "metrics") return;
  }
  JsonValue port(rapidjson::kObjectType);
  setString(port, "name", "metrics", alloc);
  port.AddMember("containerPort", 8080, alloc);
  ports.PushBack(port, alloc);
}

// BuildPod: the generated `ray start` command, KubeRay's environment, the
// shared memory volume and the probes it injects where the user set none.
void buildRayContainer(JsonValue& spec, const JsonValue& cluster, bool head, JsonAllocator& alloc) {
  JsonValue* container = containerNamed(spec, "");
  if (container == nullptr) return;
  addMetricsPort(*container, alloc);
  addSharedMemory(spec, *container, alloc);
  const std::string start = head ? "ray start --head --block --dashboard-host=0.0.0.0"
                                   " --metrics-export-port=8080"
                                 : "ray start --block --address=" + headServiceHost(cluster) +
                                       ":6379 --metrics-export-port=8080";
  JsonValue command(rapidjson::kArrayType);
  for (const char* word : {"/bin/bash", "-c", "--"})
    command.PushBack(JsonValue(word, alloc), alloc);
  setMember(*container, "command", std::move(command), alloc);
  JsonValue args(rapidjson::kArrayType);
  args.PushBack(makeString("ulimit -n 65536; " + start, alloc), alloc);
  setMember(*container, "args", std::move(args), alloc);
  if (!head) {
    appendEnv(*container, "FQ_RAY_IP", headServiceHost(cluster), alloc);
    appendEnv(*container, "RAY_IP", nameOf(cluster) + "-head-svc", alloc);
  }
  appendFieldEnv(*container, "RAY_CLUSTER_NAME", "metadata.labels['ray.io/cluster']", alloc);
  appendFieldEnv(*container, "RAY_CLOUD_INSTANCE_ID", "metadata.name", alloc);
  appendFieldEnv(*container, "RAY_NODE_TYPE_NAME", "metadata.labels['ray.io/group']", alloc);
  appendEnv(*container, "KUBERAY_GEN_RAY_START_CMD", start, alloc);
  appendEnv(*container, "RAY_PORT", std::to_string(kGcsPort), alloc);
  appendEnv(*container, "RAY_ADDRESS",
            (head ? std::string("127.0.0.1") : headServiceHost(cluster)) + ":6379", alloc);
  appendEnv(*container, "RAY_USAGE_STATS_KUBERAY_IN_USE", "1", alloc);
  appendEnv(*container, "RAY_DASHBOARD_ENABLE_K8S_DISK_USAGE", "1", alloc);
  if (member(container, "livenessProbe") == nullptr)
    setMember(*container, "livenessProbe", execProbe(head, true, alloc), alloc);
  if (member(container, "readinessProbe") == nullptr)
    setMember(*container, "readinessProbe", execProbe(head, false, alloc), alloc);
}

bool autoscaling(const JsonValue& cluster) {
  const JsonValue* enabled = member(member(&cluster, "spec"), "enableInTreeAutoscaling");
  return enabled != nullptr && enabled->IsBool() && enabled->GetBool();
}

bool autoscalerV2(const JsonValue& cluster) {
  const JsonValue* options = member(member(&cluster, "spec"), "autoscalerOptions");
  return autoscaling(cluster) && stringMember(options, "version") == "v2";
}

void addAutoscaler(JsonValue& spec, const JsonValue& cluster, JsonAllocator& alloc) {
  const JsonValue* ray = containerNamed(spec, "");
  JsonValue container(rapidjson::kObjectType);
  setString(container, "name", "autoscaler", alloc);
  setString(container, "image", stringMember(ray, "image"), alloc);
  setString(container, "imagePullPolicy", "IfNotPresent", alloc);
  JsonValue args(rapidjson::kArrayType);
  args.PushBack(JsonValue("ray kuberay-autoscaler --cluster-name $(RAY_CLUSTER_NAME)"
                          " --cluster-namespace $(RAY_CLUSTER_NAMESPACE)",
                          alloc),
                alloc);
  container.AddMember("args", args, alloc);
  container.AddMember("resources", resources("500m", "512Mi", alloc), alloc);
  ensureArray(spec, "containers", alloc).PushBack(container, alloc);
  setString(spec, "serviceAccountName", nameOf(cluster), alloc);
}

OperatorChild headPod(const JsonValue& cluster) {
  const JsonValue* head = member(member(&cluster, "spec"), "headGroupSpec");
  JsonDocument templ;
  auto& alloc = templ.GetAllocator();
  templ.CopyFrom(*member(head, "template"), alloc);
  labelRayPod(templ, cluster, "head", "headgroup", alloc);
  putAnnotations(templ, {{"ray.io/ft-enabled", "false"}}, alloc);
  JsonValue& spec = ensureObject(templ, "spec", alloc);
  if (autoscaling(cluster)) addAutoscaler(spec, cluster, alloc);
  if (autoscalerV2(cluster)) setString(spec, "restartPolicy", "Never", alloc);
  buildRayContainer(spec, cluster, true, alloc);
  JsonDocument pod = podFromTemplate(templ, cluster, nameOf(cluster) + "-head-", true);
  return childOf("head", pod);
}

void addWaitForGcs(JsonValue& spec, const JsonValue& cluster, JsonAllocator& alloc) {
  const JsonValue* ray = containerNamed(spec, "");
  JsonValue init(rapidjson::kObjectType);
  setString(init, "name", "wait-gcs-ready", alloc);
  setString(init, "image", stringMember(ray, "image"), alloc);
  JsonValue command(rapidjson::kArrayType);
  for (const char* word : {"/bin/bash", "-c", "--"})
    command.PushBack(JsonValue(word, alloc), alloc);
  init.AddMember("command", command, alloc);
  JsonValue args(rapidjson::kArrayType);
  args.PushBack(makeString("until ray health-check --address " + headServiceHost(cluster) +
                               ":6379 > /dev/null 2>&1; do sleep 5; done",
                           alloc),
                alloc);
  init.AddMember("args", args, alloc);
  init.AddMember("resources", resources("200m", "256Mi", alloc), alloc);
  appendEnv(init, "FQ_RAY_IP", headServiceHost(cluster), alloc);
  appendEnv(init, "RAY_IP", nameOf(cluster) + "-head-svc", alloc);
  ensureArray(spec, "initContainers", alloc).PushBack(init, alloc);
}

OperatorChild workerPod(const JsonValue& cluster, const JsonValue& group) {
  const std::string groupName(stringMember(&group, "groupName"));
  JsonDocument templ;
  auto& alloc = templ.GetAllocator();
  templ.CopyFrom(*member(&group, "template"), alloc);
  labelRayPod(templ, cluster, "worker", groupName, alloc);
  JsonValue& spec = ensureObject(templ, "spec", alloc);
  addWaitForGcs(spec, cluster, alloc);
  if (autoscalerV2(cluster)) setString(spec, "restartPolicy", "Never", alloc);
  buildRayContainer(spec, cluster, false, alloc);
  JsonDocument pod =
      podFromTemplate(templ, cluster, nameOf(cluster) + "-" + groupName + "-worker-", true);
  return childOf("worker-" + groupName, pod);
}

// The RayCluster a RayJob or RayService owns: its labels and annotations
// with KubeRay's origin labels, the cluster spec copied as it is.
JsonDocument ownedCluster(const JsonValue& owner, std::string_view specKey, std::string name) {
  JsonDocument cluster;
  startObject(cluster, stringMember(&owner, "apiVersion"), "RayCluster", name, namespaceOf(owner));
  auto& alloc = cluster.GetAllocator();
  const JsonValue* metadata = member(&owner, "metadata");
  mergeMap(cluster, "labels", member(metadata, "labels"), alloc);
  mergeMap(cluster, "annotations", member(metadata, "annotations"), alloc);
  putLabels(cluster,
            {{"ray.io/originated-from-cr-name", nameOf(owner)},
             {"ray.io/originated-from-crd", std::string(stringMember(&owner, "kind"))}},
            alloc);
  setControllerOf(cluster, owner, alloc);
  cluster.AddMember("spec", copyObject(member(member(&owner, "spec"), specKey), alloc), alloc);
  return cluster;
}

OperatorChild submitterJob(const JsonValue& rayJob, const JsonValue& cluster) {
  JsonDocument job;
  startObject(job, "batch/v1", "Job", nameOf(rayJob), namespaceOf(rayJob));
  auto& alloc = job.GetAllocator();
  putLabels(job,
            {{"ray.io/originated-from-cr-name", nameOf(rayJob)},
             {"ray.io/originated-from-crd", "RayJob"},
             {"app.kubernetes.io/created-by", "kuberay-operator"}},
            alloc);
  setControllerOf(job, rayJob, alloc);
  const JsonValue* spec = member(&rayJob, "spec");
  const JsonValue* backoff = member(member(spec, "submitterConfig"), "backoffLimit");
  JsonValue jobSpec(rapidjson::kObjectType);
  jobSpec.AddMember("backoffLimit", backoff != nullptr ? backoff->GetInt() : 2, alloc);
  JsonValue templ(rapidjson::kObjectType);
  if (const JsonValue* own = member(spec, "submitterPodTemplate"); isObject(own)) {
    templ.CopyFrom(*own, alloc);
  } else {
    const JsonValue* headSpec =
        member(member(member(&cluster, "spec"), "headGroupSpec"), "template");
    JsonValue container(rapidjson::kObjectType);
    setString(container, "name", "ray-job-submitter", alloc);
    const JsonValue* headContainers = member(member(headSpec, "spec"), "containers");
    const JsonValue* ray =
        isArray(headContainers) && !headContainers->Empty() ? &(*headContainers)[0] : nullptr;
    setString(container, "image", stringMember(ray, "image"), alloc);
    JsonValue res = resources("1", "1Gi", alloc);
    setString(res["requests"], "cpu", "500m", alloc);
    setString(res["requests"], "memory", "200Mi", alloc);
    container.AddMember("resources", res, alloc);
    JsonValue containers(rapidjson::kArrayType);
    containers.PushBack(container, alloc);
    JsonValue podSpec(rapidjson::kObjectType);
    podSpec.AddMember("containers", containers, alloc);
    setString(podSpec, "restartPolicy", "Never", alloc);
    templ.AddMember("spec", podSpec, alloc);
  }
  if (JsonValue* container = containerNamed(ensureObject(templ, "spec", alloc), ""); container) {
    appendEnv(*container, "RAY_DASHBOARD_ADDRESS", headServiceHost(cluster) + ":8265", alloc);
    appendEnv(*container, "RAY_JOB_SUBMISSION_ID", nameOf(rayJob) + "-q8r2t", alloc);
  }
  jobSpec.AddMember("template", templ, alloc);
  job.AddMember("spec", jobSpec, alloc);
  defaultJob(job);
  return childOf("submitter-job", job);
}

}  // namespace

std::vector<OperatorChild> rayClusterChildren(const JsonValue& rayCluster) {
  std::vector<OperatorChild> pods;
  pods.push_back(headPod(rayCluster));
  const JsonValue* groups = member(member(&rayCluster, "spec"), "workerGroupSpecs");
  if (isArray(groups)) {
    // One Pod per group: the group's Pods differ only in their generated names.
    for (const JsonValue& group : groups->GetArray()) pods.push_back(workerPod(rayCluster, group));
  }
  return pods;
}

std::vector<OperatorChild> rayJobChildren(const JsonValue& rayJob) {
  std::vector<OperatorChild> children;
  JsonDocument cluster =
      ownedCluster(rayJob, "rayClusterSpec", nameOf(rayJob) + "-" + std::string(kClusterSuffix));
  children.push_back(childOf("raycluster", cluster));
  for (OperatorChild& pod : rayClusterChildren(cluster)) {
    pod.role = "raycluster-" + pod.role;
    children.push_back(std::move(pod));
  }
  const std::string_view mode = stringMember(member(&rayJob, "spec"), "submissionMode");
  if (mode.empty() || mode == "K8sJobMode") {
    OperatorChild job = submitterJob(rayJob, cluster);
    JsonDocument parsed;
    parsed.Parse(job.json.c_str());
    children.push_back(std::move(job));
    for (OperatorChild& pod : jobPods(parsed)) {
      pod.role = "submitter-" + pod.role;
      children.push_back(std::move(pod));
    }
  }
  return children;
}

std::vector<OperatorChild> rayServiceChildren(const JsonValue& rayService) {
  std::vector<OperatorChild> children;
  JsonDocument cluster =
      ownedCluster(rayService, "rayClusterConfig",
                   nameOf(rayService) + "-raycluster-" + std::string(kClusterSuffix));
  const JsonValue* groups = member(member(&cluster, "spec"), "workerGroupSpecs");
  putAnnotations(
      cluster,
      {{"ray.io/num-worker-groups", std::to_string(isArray(groups) ? groups->Size() : 0)},
       {"ray.io/kuberay-version", "v1.4.2"},
       {"ray.io/hash-without-replicas-and-workers-to-delete",
        sha1Hex(toJson(*member(&cluster, "spec"))).substr(0, 32)}},
      cluster.GetAllocator());
  children.push_back(childOf("raycluster", cluster));
  for (OperatorChild& pod : rayClusterChildren(cluster)) {
    pod.role = "raycluster-" + pod.role;
    children.push_back(std::move(pod));
  }
  return children;
}

}  // namespace aiadmit::testing
