// The batch training operators: Kubeflow's Training Operator (v1: PyTorchJob,
// TFJob, PaddleJob make one Pod per replica, named <job>-<type>-<index>),
// mpi-operator v2beta1 (a launcher batch/v1 Job and worker Pods, all owned by
// the MPIJob) and Volcano (a Pod per task replica owned by the
// batch.volcano.sh Job, with the svc, ssh and env plugins' additions).
#include <algorithm>
#include <cctype>

#include "tests/support/operator_children_parts.h"

namespace aiadmit::testing {

using namespace children;

namespace {

std::string lower(std::string_view text) {
  std::string result(text);
  std::transform(result.begin(), result.end(), result.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return result;
}

int intMember(const JsonValue* object, std::string_view key, int fallback) {
  const JsonValue* value = member(object, key);
  return value != nullptr && value->IsInt() ? value->GetInt() : fallback;
}

struct Framework {
  std::string_view kind;
  std::string_view specsKey;
  std::string_view container;  // the default container the operator configures
  std::string_view portName;
  int port;
  std::string_view defaultRestart;  // the defaulting webhook's replica restartPolicy
};

const Framework* frameworkOf(std::string_view kind) {
  static const Framework frameworks[] = {
      {"PyTorchJob", "pytorchReplicaSpecs", "pytorch", "pytorchjob-port", 23456, "OnFailure"},
      {"TFJob", "tfReplicaSpecs", "tensorflow", "tfjob-port", 2222, "Never"},
      {"PaddleJob", "paddleReplicaSpecs", "paddle", "paddlejob-port", 36543, "Never"},
  };
  for (const Framework& framework : frameworks) {
    if (framework.kind == kind) return &framework;
  }
  return nullptr;
}

bool isMasterRole(std::string_view kind, std::string_view type) {
  return type == "Master" || (kind == "TFJob" && type == "Chief");
}

void addPortIfAbsent(JsonValue& container, std::string_view name, int number,
                     JsonAllocator& alloc) {
  JsonValue& ports = ensureArray(container, "ports", alloc);
  for (const JsonValue& port : ports.GetArray()) {
    if (stringMember(&port, "name") == name) return;
  }
  JsonValue port(rapidjson::kObjectType);
  setString(port, "name", name, alloc);
  port.AddMember("containerPort", number, alloc);
  ports.PushBack(port, alloc);
}

void frameworkEnv(JsonValue& container, const Framework& fw, const JsonValue& job,
                  std::string_view type, int index, int worldSize, JsonAllocator& alloc) {
  const std::string name = nameOf(job);
  if (fw.kind == "PyTorchJob") {
    appendEnv(container, "MASTER_PORT", std::to_string(fw.port), alloc);
    appendEnv(container, "MASTER_ADDR", name + "-master-0", alloc);
    appendEnv(container, "WORLD_SIZE", std::to_string(worldSize), alloc);
    appendEnv(container, "RANK", std::to_string(type == "Master" ? 0 : index + 1), alloc);
    appendEnv(container, "PYTHONUNBUFFERED", "1", alloc);
  } else if (fw.kind == "TFJob") {
    appendEnv(container, "TF_CONFIG",
              R"({"cluster":{},"task":{"type":")" + lower(type) + R"(","index":)" +
                  std::to_string(index) + "}}",
              alloc);
  } else {
    appendEnv(container, "PADDLE_MASTER", name + "-master-0:" + std::to_string(fw.port), alloc);
    appendEnv(container, "PADDLE_NNODES", std::to_string(worldSize), alloc);
    appendEnv(container, "PADDLE_JOB_ID", name, alloc);
  }
}

// A PyTorchJob's workers wait for the master's DNS name in an init container.
void addInitPyTorch(JsonValue& spec, const JsonValue& job, JsonAllocator& alloc) {
  JsonValue init(rapidjson::kObjectType);
  setString(init, "name", "init-pytorch", alloc);
  setString(init, "image", "alpine:3.10", alloc);
  JsonValue command(rapidjson::kArrayType);
  command.PushBack("sh", alloc).PushBack("-c", alloc);
  command.PushBack(makeString("err=1;for i in $(seq 100); do if nslookup " + nameOf(job) +
                                  "-master-0; then err=0 && break; fi;echo waiting for master; "
                                  "sleep 2; done; exit $err",
                              alloc),
                   alloc);
  init.AddMember("command", command, alloc);
  JsonValue limits(rapidjson::kObjectType);
  setString(limits, "cpu", "100m", alloc);
  setString(limits, "memory", "20Mi", alloc);
  JsonValue resources(rapidjson::kObjectType);
  resources.AddMember("limits", JsonValue(limits, alloc), alloc);
  resources.AddMember("requests", limits, alloc);
  init.AddMember("resources", resources, alloc);
  ensureArray(spec, "initContainers", alloc).PushBack(init, alloc);
}

OperatorChild replicaPod(const JsonValue& job, const Framework& fw, std::string_view type,
                         const JsonValue& replicaSpec, int worldSize, bool hasMaster) {
  const std::string rtype = lower(type);
  JsonDocument templ;
  auto& alloc = templ.GetAllocator();
  templ.CopyFrom(*member(&replicaSpec, "template"), alloc);
  putLabels(templ,
            {{"training.kubeflow.org/operator-name", lower(fw.kind) + "-controller"},
             {"training.kubeflow.org/job-name", nameOf(job)},
             {"training.kubeflow.org/replica-type", rtype},
             {"training.kubeflow.org/replica-index", "0"}},
            alloc);
  if (isMasterRole(fw.kind, type))
    putLabels(templ, {{"training.kubeflow.org/job-role", "master"}}, alloc);
  JsonValue& spec = ensureObject(templ, "spec", alloc);
  std::string_view restart = stringMember(&replicaSpec, "restartPolicy");
  if (restart.empty()) restart = fw.defaultRestart;
  setString(spec, "restartPolicy", restart == "ExitCode" ? "Never" : restart, alloc);
  if (JsonValue* container = containerNamed(spec, fw.container); container != nullptr) {
    addPortIfAbsent(*container, fw.portName, fw.port, alloc);
    frameworkEnv(*container, fw, job, type, 0, worldSize, alloc);
  }
  if (fw.kind == "PyTorchJob" && type == "Worker" && hasMaster) addInitPyTorch(spec, job, alloc);
  JsonDocument pod = podFromTemplate(templ, job, nameOf(job) + "-" + rtype + "-0");
  return childOf(rtype + "-0", pod);
}

}  // namespace

std::vector<OperatorChild> trainingOperatorChildren(const JsonValue& job) {
  std::vector<OperatorChild> pods;
  const Framework* fw = frameworkOf(stringMember(&job, "kind"));
  if (fw == nullptr) return pods;
  const JsonValue* specs = member(member(&job, "spec"), fw->specsKey);
  if (!isObject(specs)) return pods;
  int worldSize = 0;
  for (const auto& entry : specs->GetObject()) worldSize += intMember(&entry.value, "replicas", 1);
  const bool hasMaster = member(specs, "Master") != nullptr;
  for (const auto& entry : specs->GetObject()) {
    if (intMember(&entry.value, "replicas", 1) < 1) continue;
    pods.push_back(replicaPod(job, *fw, entry.name.GetString(), entry.value, worldSize, hasMaster));
  }
  return pods;
}

namespace {

void addSshVolume(JsonValue& spec, JsonValue& container, const JsonValue& mpiJob,
                  JsonAllocator& alloc) {
  JsonValue secret(rapidjson::kObjectType);
  setString(secret, "secretName", nameOf(mpiJob) + "-ssh", alloc);
  JsonValue volume(rapidjson::kObjectType);
  setString(volume, "name", "ssh-auth", alloc);
  volume.AddMember("secret", secret, alloc);
  ensureArray(spec, "volumes", alloc).PushBack(volume, alloc);
  JsonValue mount(rapidjson::kObjectType);
  setString(mount, "name", "ssh-auth", alloc);
  const std::string_view path = stringMember(member(&mpiJob, "spec"), "sshAuthMountPath");
  setString(mount, "mountPath", path.empty() ? "/root/.ssh" : path, alloc);
  ensureArray(container, "volumeMounts", alloc).PushBack(mount, alloc);
}

JsonValue mpiTemplate(const JsonValue& mpiJob, std::string_view type, std::string_view role,
                      std::string_view defaultRestart, JsonAllocator& alloc) {
  const JsonValue* replica = member(member(member(&mpiJob, "spec"), "mpiReplicaSpecs"), type);
  JsonValue templ = copyObject(member(replica, "template"), alloc);
  putLabels(templ,
            {{"training.kubeflow.org/operator-name", "mpi-operator"},
             {"training.kubeflow.org/job-name", nameOf(mpiJob)},
             {"training.kubeflow.org/job-role", std::string(role)}},
            alloc);
  JsonValue& spec = ensureObject(templ, "spec", alloc);
  setString(spec, "subdomain", nameOf(mpiJob), alloc);
  std::string_view restart = stringMember(replica, "restartPolicy");
  if (restart.empty()) restart = defaultRestart;
  setString(spec, "restartPolicy", restart == "ExitCode" ? "Never" : restart, alloc);
  return templ;
}

OperatorChild launcherJob(const JsonValue& mpiJob) {
  JsonDocument job;
  const std::string name = nameOf(mpiJob) + "-launcher";
  startObject(job, "batch/v1", "Job", name, namespaceOf(mpiJob));
  auto& alloc = job.GetAllocator();
  putLabels(job, {{"app", nameOf(mpiJob)}}, alloc);
  setControllerOf(job, mpiJob, alloc);
  const JsonValue* runPolicy = member(member(&mpiJob, "spec"), "runPolicy");
  JsonValue spec(rapidjson::kObjectType);
  for (const char* key : {"ttlSecondsAfterFinished", "activeDeadlineSeconds", "backoffLimit"}) {
    if (const JsonValue* value = member(runPolicy, key); value != nullptr)
      spec.AddMember(JsonValue(key, alloc), JsonValue(*value, alloc), alloc);
  }
  if (const JsonValue* suspend = member(runPolicy, "suspend"); suspend && suspend->IsTrue())
    spec.AddMember("suspend", true, alloc);
  JsonValue templ = mpiTemplate(mpiJob, "Launcher", "launcher", "OnFailure", alloc);
  JsonValue& podSpec = templ["spec"];
  setString(podSpec, "hostname", name, alloc);
  if (JsonValue* container = containerNamed(podSpec, ""); container != nullptr) {
    appendEnv(*container, "K_MPI_JOB_ROLE", "launcher", alloc);
    appendEnv(*container, "OMPI_MCA_orte_keep_fqdn_hostnames", "true", alloc);
    appendEnv(*container, "OMPI_MCA_orte_default_hostfile", "/etc/mpi/hostfile", alloc);
    appendEnv(*container, "OMPI_MCA_plm_rsh_args", "-o ConnectionAttempts=10", alloc);
    appendEnv(*container, "OMPI_MCA_orte_set_default_slots",
              std::to_string(intMember(member(&mpiJob, "spec"), "slotsPerWorker", 1)), alloc);
    // The launcher must not see the node's GPUs unless it runs as a worker.
    appendEnv(*container, "NVIDIA_VISIBLE_DEVICES", "", alloc);
    appendEnv(*container, "NVIDIA_DRIVER_CAPABILITIES", "", alloc);
    addSshVolume(podSpec, *container, mpiJob, alloc);
    JsonValue configMap(rapidjson::kObjectType);
    setString(configMap, "name", nameOf(mpiJob) + "-config", alloc);
    JsonValue volume(rapidjson::kObjectType);
    setString(volume, "name", "mpi-job-config", alloc);
    volume.AddMember("configMap", configMap, alloc);
    ensureArray(podSpec, "volumes", alloc).PushBack(volume, alloc);
    JsonValue mount(rapidjson::kObjectType);
    setString(mount, "name", "mpi-job-config", alloc);
    setString(mount, "mountPath", "/etc/mpi", alloc);
    ensureArray(*container, "volumeMounts", alloc).PushBack(mount, alloc);
  }
  spec.AddMember("template", templ, alloc);
  job.AddMember("spec", spec, alloc);
  defaultJob(job);
  return childOf("launcher-job", job);
}

OperatorChild mpiWorker(const JsonValue& mpiJob) {
  JsonDocument templ;
  auto& alloc = templ.GetAllocator();
  JsonValue value = mpiTemplate(mpiJob, "Worker", "worker", "Never", alloc);
  templ.CopyFrom(value, alloc);
  const std::string name = nameOf(mpiJob) + "-worker-0";
  putLabels(templ, {{"training.kubeflow.org/replica-index", "0"}}, alloc);
  JsonValue& spec = templ["spec"];
  setString(spec, "hostname", name, alloc);
  JsonValue searches(rapidjson::kArrayType);
  searches.PushBack(
      makeString(nameOf(mpiJob) + "." + namespaceOf(mpiJob) + ".svc.cluster.local", alloc), alloc);
  JsonValue dnsConfig(rapidjson::kObjectType);
  dnsConfig.AddMember("searches", searches, alloc);
  setMember(spec, "dnsConfig", std::move(dnsConfig), alloc);
  if (JsonValue* container = containerNamed(spec, ""); container != nullptr) {
    if (member(container, "command") == nullptr && member(container, "args") == nullptr) {
      JsonValue command(rapidjson::kArrayType);
      command.PushBack("/usr/sbin/sshd", alloc).PushBack("-De", alloc);
      container->AddMember("command", command, alloc);
    }
    appendEnv(*container, "K_MPI_JOB_ROLE", "worker", alloc);
    addSshVolume(spec, *container, mpiJob, alloc);
  }
  return childOf("worker-0", podFromTemplate(templ, mpiJob, name));
}

}  // namespace

std::vector<OperatorChild> mpiJobChildren(const JsonValue& mpiJob) {
  std::vector<OperatorChild> children;
  OperatorChild launcher = launcherJob(mpiJob);
  JsonDocument job;
  job.Parse(launcher.json.c_str());
  children.push_back(std::move(launcher));
  for (OperatorChild& pod : jobPods(job)) {
    pod.role = "launcher-" + pod.role;
    children.push_back(std::move(pod));
  }
  const JsonValue* worker = member(member(member(&mpiJob, "spec"), "mpiReplicaSpecs"), "Worker");
  if (intMember(worker, "replicas", 0) > 0) children.push_back(mpiWorker(mpiJob));
  return children;
}

namespace {

bool hasPlugin(const JsonValue& job, std::string_view plugin) {
  return member(member(member(&job, "spec"), "plugins"), plugin) != nullptr;
}

void volcanoPlugins(JsonValue& spec, const JsonValue& job, const std::string& podName,
                    JsonAllocator& alloc) {
  JsonValue* container = containerNamed(spec, "");
  auto mountVolume = [&](std::string_view volumeName, std::string_view source, std::string_view key,
                         std::string_view path) {
    JsonValue ref(rapidjson::kObjectType);
    setString(ref, key == "secret" ? "secretName" : "name", source, alloc);
    JsonValue volume(rapidjson::kObjectType);
    setString(volume, "name", volumeName, alloc);
    volume.AddMember(JsonValue(key.data(), static_cast<rapidjson::SizeType>(key.size()), alloc),
                     ref, alloc);
    ensureArray(spec, "volumes", alloc).PushBack(volume, alloc);
    if (container == nullptr) return;
    JsonValue mount(rapidjson::kObjectType);
    setString(mount, "name", volumeName, alloc);
    setString(mount, "mountPath", path, alloc);
    ensureArray(*container, "volumeMounts", alloc).PushBack(mount, alloc);
  };
  if (hasPlugin(job, "svc")) {
    setString(spec, "hostname", podName, alloc);
    setString(spec, "subdomain", nameOf(job), alloc);
    mountVolume(nameOf(job) + "-svc", nameOf(job) + "-svc", "configMap", "/etc/volcano");
  }
  if (hasPlugin(job, "ssh"))
    mountVolume(nameOf(job) + "-ssh", nameOf(job) + "-ssh", "secret", "/root/.ssh");
  if (hasPlugin(job, "env") && container != nullptr) {
    appendEnv(*container, "VK_TASK_INDEX", "0", alloc);
    appendEnv(*container, "VC_TASK_INDEX", "0", alloc);
  }
}

OperatorChild volcanoPod(const JsonValue& job, const JsonValue& task) {
  const JsonValue* spec = member(&job, "spec");
  const std::string taskName(stringMember(&task, "name"));
  const std::string podName = nameOf(job) + "-" + taskName + "-0";
  std::string queue(stringMember(spec, "queue"));
  if (queue.empty()) queue = "default";  // Volcano's defaulting webhook
  JsonDocument templ;
  auto& alloc = templ.GetAllocator();
  templ.CopyFrom(*member(&task, "template"), alloc);
  JsonValue& podSpec = ensureObject(templ, "spec", alloc);
  std::string_view scheduler = stringMember(spec, "schedulerName");
  if (member(&podSpec, "schedulerName") == nullptr)
    setString(podSpec, "schedulerName", scheduler.empty() ? "volcano" : scheduler, alloc);
  if (std::string_view pc = stringMember(spec, "priorityClassName");
      !pc.empty() && member(&podSpec, "priorityClassName") == nullptr)
    setString(podSpec, "priorityClassName", pc, alloc);
  volcanoPlugins(podSpec, job, podName, alloc);
  putAnnotations(templ,
                 {{"volcano.sh/task-spec", taskName},
                  {"scheduling.k8s.io/group-name", nameOf(job) + "-" + uidOf(job)},
                  {"volcano.sh/job-name", nameOf(job)},
                  {"volcano.sh/queue-name", queue},
                  {"volcano.sh/job-version", "0"},
                  {"volcano.sh/template-uid", nameOf(job) + "-" + taskName},
                  {"volcano.sh/job-retry-count", "0"},
                  {"volcano.sh/task-index", "0"}},
                 alloc);
  putLabels(templ,
            {{"volcano.sh/task-index", "0"},
             {"volcano.sh/job-name", nameOf(job)},
             {"volcano.sh/task-spec", taskName},
             {"volcano.sh/job-namespace", namespaceOf(job)},
             {"volcano.sh/queue-name", queue}},
            alloc);
  return childOf(taskName + "-0", podFromTemplate(templ, job, podName));
}

}  // namespace

std::vector<OperatorChild> volcanoJobChildren(const JsonValue& job) {
  std::vector<OperatorChild> pods;
  const JsonValue* tasks = member(member(&job, "spec"), "tasks");
  if (!isArray(tasks)) return pods;
  for (const JsonValue& task : tasks->GetArray()) {
    if (intMember(&task, "replicas", 0) > 0) pods.push_back(volcanoPod(job, task));
  }
  return pods;
}

}  // namespace aiadmit::testing
