// KServe: an InferenceService in RawDeployment mode becomes an apps/v1
// Deployment per component (<isvc>-predictor), its PodSpec the predictor's
// inline fields with the serving runtime's container built from the model
// (kserve-container); an LLMInferenceService becomes the workload Deployment
// (<name>-kserve) from its template merged with KServe's LLM preset, and the
// router's scheduler Deployment (<name>-kserve-router-scheduler).
#include <string_view>

#include "tests/support/operator_children_parts.h"

namespace aiadmit::testing {

using namespace children;

namespace {

// Fields of a KServe component that are not PodSpec fields.
constexpr std::string_view kComponentFields[] = {"minReplicas",
                                                 "maxReplicas",
                                                 "scaleTarget",
                                                 "scaleMetric",
                                                 "scaleMetricType",
                                                 "containerConcurrency",
                                                 "timeout",
                                                 "canaryTrafficPercent",
                                                 "logger",
                                                 "batcher",
                                                 "labels",
                                                 "annotations",
                                                 "deploymentStrategy",
                                                 "workerSpec",
                                                 "autoScaling",
                                                 "storageUris"};

// Model formats and the ClusterServingRuntime image KServe picks for each.
struct Runtime {
  std::string_view field;
  std::string_view image;
};
constexpr Runtime kRuntimes[] = {
    {"pytorch", "pytorch/torchserve-kfs:0.9.0"},
    {"huggingface", "kserve/huggingfaceserver:v0.15.0"},
    {"tensorflow", "tensorflow/serving:2.6.2"},
    {"sklearn", "kserve/sklearnserver:v0.15.0"},
    {"xgboost", "kserve/xgbserver:v0.15.0"},
    {"onnx", "mcr.microsoft.com/onnxruntime/server:v1.0.0"},
    {"triton", "nvcr.io/nvidia/tritonserver:23.05-py3"},
};

std::string_view runtimeImage(std::string_view format) {
  for (const Runtime& runtime : kRuntimes) {
    if (runtime.field == format) return runtime.image;
  }
  return "kserve/huggingfaceserver:v0.15.0";
}

// The model-format object of the predictor (`model`, or a framework field)
// and its format name.
std::pair<const JsonValue*, std::string> modelOf(const JsonValue& predictor) {
  if (const JsonValue* model = member(&predictor, "model"); isObject(model)) {
    return {model, std::string(stringMember(member(model, "modelFormat"), "name"))};
  }
  for (const Runtime& runtime : kRuntimes) {
    if (const JsonValue* model = member(&predictor, runtime.field); isObject(model))
      return {model, std::string(runtime.field)};
  }
  return {nullptr, ""};
}

JsonValue servingContainer(const JsonValue& model, std::string_view format, std::string_view isvc,
                           JsonAllocator& alloc) {
  JsonValue container(rapidjson::kObjectType);
  setString(container, "name", "kserve-container", alloc);
  setString(container, "image", runtimeImage(format), alloc);
  JsonValue args(rapidjson::kArrayType);
  args.PushBack(makeString("--model_name=" + std::string(isvc), alloc), alloc);
  args.PushBack("--model_dir=/mnt/models", alloc);
  args.PushBack("--http_port=8080", alloc);
  container.AddMember("args", args, alloc);
  for (const char* key : {"env", "resources", "volumeMounts", "securityContext"}) {
    if (const JsonValue* value = member(&model, key); value != nullptr)
      container.AddMember(JsonValue(key, alloc), JsonValue(*value, alloc), alloc);
  }
  JsonValue port(rapidjson::kObjectType);
  port.AddMember("containerPort", 8080, alloc);
  setString(port, "protocol", "TCP", alloc);
  JsonValue ports(rapidjson::kArrayType);
  ports.PushBack(port, alloc);
  container.AddMember("ports", ports, alloc);
  return container;
}

JsonValue predictorPodSpec(const JsonValue& predictor, std::string_view isvc,
                           JsonAllocator& alloc) {
  JsonValue spec(predictor, alloc);
  for (std::string_view field : kComponentFields) spec.RemoveMember(JsonValue(field.data(), alloc));
  for (const Runtime& runtime : kRuntimes)
    spec.RemoveMember(JsonValue(runtime.field.data(), alloc));
  spec.RemoveMember("model");
  const auto [model, format] = modelOf(predictor);
  if (model != nullptr) {
    JsonValue containers(rapidjson::kArrayType);
    containers.PushBack(servingContainer(*model, format, isvc, alloc), alloc);
    if (const JsonValue* own = member(&spec, "containers"); isArray(own)) {
      for (const JsonValue& extra : own->GetArray())
        containers.PushBack(JsonValue(extra, alloc), alloc);
    }
    setMember(spec, "containers", std::move(containers), alloc);
  }
  return spec;
}

}  // namespace

std::vector<OperatorChild> inferenceServiceChildren(const JsonValue& isvc) {
  const std::string name = nameOf(isvc);
  const JsonValue* predictor = member(member(&isvc, "spec"), "predictor");
  JsonDocument deployment;
  startObject(deployment, "apps/v1", "Deployment", name + "-predictor", namespaceOf(isvc));
  auto& alloc = deployment.GetAllocator();
  const JsonValue* metadata = member(&isvc, "metadata");
  const Labels own = {{"serving.kserve.io/inferenceservice", name},
                      {"component", "predictor"},
                      {"app", "isvc." + name + "-predictor"}};
  JsonValue meta(rapidjson::kObjectType);
  JsonValue holder(rapidjson::kObjectType);
  mergeMap(holder, "labels", member(metadata, "labels"), alloc);
  mergeMap(holder, "labels", member(predictor, "labels"), alloc);
  putLabels(holder, own, alloc);
  mergeMap(holder, "annotations", member(metadata, "annotations"), alloc);
  mergeMap(holder, "annotations", member(predictor, "annotations"), alloc);
  if (JsonValue* annotations = member(&ensureObject(holder, "metadata", alloc), "annotations");
      isObject(annotations)) {
    annotations->RemoveMember("kubectl.kubernetes.io/last-applied-configuration");
  }
  mergeMap(deployment, "labels", member(&holder["metadata"], "labels"), alloc);
  mergeMap(deployment, "annotations", member(&holder["metadata"], "annotations"), alloc);
  setControllerOf(deployment, isvc, alloc);
  JsonValue templ(rapidjson::kObjectType);
  templ.AddMember("metadata", JsonValue(holder["metadata"], alloc), alloc);
  if (const auto [model, format] = modelOf(*predictor); model != nullptr) {
    putAnnotations(templ,
                   {{"internal.serving.kserve.io/storage-initializer-sourceuri",
                     std::string(stringMember(model, "storageUri"))}},
                   alloc);
  }
  templ.AddMember("spec", predictorPodSpec(*predictor, name, alloc), alloc);
  JsonValue spec(rapidjson::kObjectType);
  const JsonValue* minReplicas = member(predictor, "minReplicas");
  spec.AddMember("replicas", minReplicas != nullptr ? minReplicas->GetInt() : 1, alloc);
  JsonValue match(rapidjson::kObjectType);
  setString(match, "app", "isvc." + name + "-predictor", alloc);
  JsonValue selector(rapidjson::kObjectType);
  selector.AddMember("matchLabels", match, alloc);
  spec.AddMember("selector", selector, alloc);
  spec.AddMember("template", templ, alloc);
  deployment.AddMember("spec", spec, alloc);
  defaultDeployment(deployment);
  return {childOf("predictor-deployment", deployment)};
}

namespace {

JsonValue httpsProbe(int initialDelay, JsonAllocator& alloc) {
  JsonValue get(rapidjson::kObjectType);
  setString(get, "path", "/health", alloc);
  get.AddMember("port", 8000, alloc);
  setString(get, "scheme", "HTTPS", alloc);
  JsonValue probe(rapidjson::kObjectType);
  probe.AddMember("httpGet", get, alloc);
  probe.AddMember("initialDelaySeconds", initialDelay, alloc);
  probe.AddMember("periodSeconds", 10, alloc);
  probe.AddMember("timeoutSeconds", 10, alloc);
  probe.AddMember("failureThreshold", 60, alloc);
  return probe;
}

void addVolume(JsonValue& spec, JsonValue& container, std::string_view name, std::string_view path,
               JsonValue&& source, std::string_view sourceKey, JsonAllocator& alloc) {
  JsonValue volume(rapidjson::kObjectType);
  setString(volume, "name", name, alloc);
  volume.AddMember(makeString(sourceKey, alloc), source, alloc);
  ensureArray(spec, "volumes", alloc).PushBack(volume, alloc);
  JsonValue mount(rapidjson::kObjectType);
  setString(mount, "name", name, alloc);
  setString(mount, "mountPath", path, alloc);
  ensureArray(container, "volumeMounts", alloc).PushBack(mount, alloc);
}

// The `main` container as KServe's LLM template preset completes it: vLLM's
// command, its HTTPS port and probes, and the volumes the preset mounts.
void completeMain(JsonValue& spec, const JsonValue& llmisvc, JsonAllocator& alloc) {
  JsonValue* main = containerNamed(spec, "main");
  if (main == nullptr) return;
  const JsonValue* model = member(member(&llmisvc, "spec"), "model");
  if (member(main, "command") == nullptr) {
    JsonValue command(rapidjson::kArrayType);
    command.PushBack("vllm", alloc).PushBack("serve", alloc).PushBack("/mnt/models", alloc);
    main->AddMember("command", command, alloc);
    JsonValue args(rapidjson::kArrayType);
    args.PushBack(
        makeString("--served-model-name=" + std::string(stringMember(model, "name")), alloc),
        alloc);
    args.PushBack("--port=8000", alloc).PushBack("--ssl-certfile=/etc/ssl/certs/tls.crt", alloc);
    args.PushBack("--ssl-keyfile=/etc/ssl/certs/tls.key", alloc);
    main->AddMember("args", args, alloc);
  }
  JsonValue port(rapidjson::kObjectType);
  setString(port, "name", "https", alloc);
  port.AddMember("containerPort", 8000, alloc);
  setString(port, "protocol", "TCP", alloc);
  ensureArray(*main, "ports", alloc).PushBack(port, alloc);
  if (member(main, "livenessProbe") == nullptr)
    main->AddMember("livenessProbe", httpsProbe(120, alloc), alloc);
  if (member(main, "readinessProbe") == nullptr)
    main->AddMember("readinessProbe", httpsProbe(10, alloc), alloc);
  appendEnv(*main, "HOME", "/home", alloc);
  appendEnv(*main, "VLLM_LOGGING_LEVEL", "INFO", alloc);
  JsonValue shm(rapidjson::kObjectType);
  setString(shm, "medium", "Memory", alloc);
  setString(shm, "sizeLimit", "1Gi", alloc);
  addVolume(spec, *main, "dshm", "/dev/shm", std::move(shm), "emptyDir", alloc);
  addVolume(spec, *main, "home", "/home", JsonValue(rapidjson::kObjectType), "emptyDir", alloc);
  addVolume(spec, *main, "model-cache", "/mnt/models", JsonValue(rapidjson::kObjectType),
            "emptyDir", alloc);
  JsonValue secret(rapidjson::kObjectType);
  setString(secret, "secretName", nameOf(llmisvc) + "-kserve-self-signed-certs", alloc);
  addVolume(spec, *main, "tls-certs", "/etc/ssl/certs", std::move(secret), "secret", alloc);
}

// The storage initializer that downloads the model (hf://, s3://...) into
// /mnt/models before the server starts.
void addStorageInitializer(JsonValue& spec, const JsonValue& llmisvc, JsonAllocator& alloc) {
  const std::string_view uri = stringMember(member(member(&llmisvc, "spec"), "model"), "uri");
  if (uri.empty() || uri.rfind("pvc://", 0) == 0) return;
  JsonValue init(rapidjson::kObjectType);
  setString(init, "name", "storage-initializer", alloc);
  setString(init, "image", "kserve/storage-initializer:v0.15.0", alloc);
  JsonValue args(rapidjson::kArrayType);
  args.PushBack(makeString(uri, alloc), alloc).PushBack("/mnt/models", alloc);
  init.AddMember("args", args, alloc);
  JsonValue mount(rapidjson::kObjectType);
  setString(mount, "name", "model-cache", alloc);
  setString(mount, "mountPath", "/mnt/models", alloc);
  JsonValue mounts(rapidjson::kArrayType);
  mounts.PushBack(mount, alloc);
  init.AddMember("volumeMounts", mounts, alloc);
  ensureArray(spec, "initContainers", alloc).PushBack(init, alloc);
}

JsonDocument llmDeployment(const JsonValue& llmisvc, std::string_view suffix,
                           std::string_view component, JsonValue&& podSpec, int replicas) {
  JsonDocument deployment;
  startObject(deployment, "apps/v1", "Deployment", nameOf(llmisvc) + std::string(suffix),
              namespaceOf(llmisvc));
  auto& alloc = deployment.GetAllocator();
  const Labels labels = {{"app.kubernetes.io/component", std::string(component)},
                         {"app.kubernetes.io/name", nameOf(llmisvc)},
                         {"app.kubernetes.io/part-of", "llminferenceservice"}};
  putLabels(deployment, labels, alloc);
  setControllerOf(deployment, llmisvc, alloc);
  JsonValue templ(rapidjson::kObjectType);
  putLabels(templ, labels, alloc);
  templ.AddMember("spec", JsonValue(podSpec, alloc), alloc);
  JsonValue match(rapidjson::kObjectType);
  for (const auto& [key, value] : labels) setString(match, key, value, alloc);
  JsonValue selector(rapidjson::kObjectType);
  selector.AddMember("matchLabels", match, alloc);
  JsonValue spec(rapidjson::kObjectType);
  spec.AddMember("replicas", replicas, alloc);
  spec.AddMember("selector", selector, alloc);
  spec.AddMember("template", templ, alloc);
  deployment.AddMember("spec", spec, alloc);
  defaultDeployment(deployment);
  return deployment;
}

JsonValue schedulerPodSpec(const JsonValue& llmisvc, JsonAllocator& alloc) {
  JsonValue container(rapidjson::kObjectType);
  setString(container, "name", "main", alloc);
  setString(container, "image", "ghcr.io/llm-d/llm-d-inference-scheduler:v0.2.1", alloc);
  JsonValue args(rapidjson::kArrayType);
  args.PushBack(makeString("--pool-name=" + nameOf(llmisvc) + "-inference-pool", alloc), alloc);
  args.PushBack("--grpc-port=9002", alloc).PushBack("--grpc-health-port=9003", alloc);
  container.AddMember("args", args, alloc);
  JsonValue ports(rapidjson::kArrayType);
  for (const auto& [portName, number] :
       {std::pair{"grpc", 9002}, {"grpc-health", 9003}, {"metrics", 9090}}) {
    JsonValue port(rapidjson::kObjectType);
    setString(port, "name", portName, alloc);
    port.AddMember("containerPort", number, alloc);
    ports.PushBack(port, alloc);
  }
  container.AddMember("ports", ports, alloc);
  for (const char* probe : {"livenessProbe", "readinessProbe"}) {
    JsonValue grpc(rapidjson::kObjectType);
    grpc.AddMember("port", 9003, alloc);
    setString(grpc, "service", "envoy.service.ext_proc.v3.ExternalProcessor", alloc);
    JsonValue value(rapidjson::kObjectType);
    value.AddMember("grpc", grpc, alloc);
    value.AddMember("initialDelaySeconds", 5, alloc);
    value.AddMember("periodSeconds", 10, alloc);
    container.AddMember(JsonValue(probe, alloc), value, alloc);
  }
  JsonValue containers(rapidjson::kArrayType);
  containers.PushBack(container, alloc);
  JsonValue spec(rapidjson::kObjectType);
  spec.AddMember("containers", containers, alloc);
  setString(spec, "serviceAccountName", nameOf(llmisvc) + "-epp-sa", alloc);
  return spec;
}

}  // namespace

std::vector<OperatorChild> llmInferenceServiceChildren(const JsonValue& llmisvc) {
  std::vector<OperatorChild> children;
  const JsonValue* spec = member(&llmisvc, "spec");
  const JsonValue* replicas = member(spec, "replicas");
  {
    JsonDocument scratch;
    auto& alloc = scratch.GetAllocator();
    JsonValue podSpec = copyObject(member(spec, "template"), alloc);
    completeMain(podSpec, llmisvc, alloc);
    addStorageInitializer(podSpec, llmisvc, alloc);
    children.push_back(childOf(
        "workload-deployment",
        llmDeployment(llmisvc, "-kserve", "llminferenceservice-workload", std::move(podSpec),
                      replicas != nullptr && replicas->IsInt() ? replicas->GetInt() : 1)));
  }
  const JsonValue* scheduler = member(member(spec, "router"), "scheduler");
  if (isObject(scheduler) && member(scheduler, "ref") == nullptr) {
    JsonDocument scratch;
    auto& alloc = scratch.GetAllocator();
    const JsonValue* own = member(member(scheduler, "template"), "spec");
    JsonValue podSpec = isObject(own) ? JsonValue(*own, alloc) : schedulerPodSpec(llmisvc, alloc);
    if (const JsonValue* direct = member(scheduler, "template");
        !isObject(own) && isObject(direct) && member(direct, "containers") != nullptr)
      podSpec = JsonValue(*direct, alloc);
    children.push_back(
        childOf("scheduler-deployment",
                llmDeployment(llmisvc, "-kserve-router-scheduler",
                              "llminferenceservice-router-scheduler", std::move(podSpec), 1)));
  }
  return children;
}

}  // namespace aiadmit::testing
