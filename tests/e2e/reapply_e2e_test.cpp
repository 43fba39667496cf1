// A second `kubectl apply` of an unchanged file, what a GitOps tool does on
// every sync, for every kind of the workload-type table, running and
// suspended (spec.suspend, or held by Kueue), client-side (a strategic merge
// patch for Kubernetes' own kinds, a JSON merge patch that replaces a custom
// resource's lists whole) and server-side: it ends as it ends where aiadmit
// is not called, draws no refusal of aiadmit's, and the stored object keeps
// the pool's toleration and node selector aiadmit wrote at creation.
//
// Each manifest has a toleration of its own, as GPU manifests do, so that
// every form of apply sends the file's list without aiadmit's toleration.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "tests/e2e/support/e2e_cluster.h"
#include "tests/e2e/support/workloads.h"
#include "webhook/codec/json_pointer.h"
#include "webhook/codec/yaml_json.h"
#include "webhook/model/workload_type.h"

namespace aiadmit::e2e {
namespace {

// ------------------------------------------------------------- the kinds

constexpr const char* kOwnToleration =
    "{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}";

std::string podSpec(const std::string& restartPolicy, const std::string& container) {
  return "{restartPolicy: " + restartPolicy + ", tolerations: [" + kOwnToleration +
         "], containers: [" + container + "]}";
}

const std::string kWorker =
    "{name: main, image: registry.example/work:1, resources: {limits: {nvidia.com/gpu: 1, "
    "memory: 8Gi}}}";
const std::string kServer =
    "{name: server, image: registry.example/server:1, ports: [{name: http, containerPort: 8000}], "
    "resources: {limits: {nvidia.com/gpu: 1, memory: 16Gi}}}";

// The Spark operator's spark-pi example as a SparkApplicationSpec, with an
// executor GPU each and a toleration of their own: a SparkPodSpec has no
// placement aiadmit writes.
std::string sparkApplicationSpec() {
  return "{type: Scala, mode: cluster, image: 'docker.io/library/spark:4.0.1', "
         "mainClass: org.apache.spark.examples.SparkPi, "
         "mainApplicationFile: 'local:///opt/spark/examples/jars/spark-examples.jar', "
         "sparkVersion: 4.0.1, driver: {cores: 1, memory: 512m}, "
         "executor: {instances: 2, cores: 1, memory: 512m, "
         "gpu: {name: nvidia.com/gpu, quantity: 1}, tolerations: [" +
         std::string(kOwnToleration) + "]}}";
}

std::string kubeflowJob(const std::string& kind, const std::string& specs,
                        const std::string& container) {
  return "apiVersion: kubeflow.org/v1\nkind: " + kind + "\nmetadata: {name: train}\nspec:\n  " +
         specs + ":\n    Worker: {replicas: 1, template: {spec: " +
         podSpec("OnFailure", "{name: " + container +
                                  ", image: registry.example/train:1, resources: {limits: "
                                  "{nvidia.com/gpu: 1, memory: 8Gi}}}") +
         "}}\n";
}

// A RayClusterSpec: a head without GPUs and a GPU worker group.
const std::string kRayCluster =
    "{headGroupSpec: {rayStartParams: {}, template: {spec: {containers: [{name: ray-head, "
    "image: 'rayproject/ray:2.41.0', resources: {limits: {cpu: '1', memory: 2Gi}}}]}}}, "
    "workerGroupSpecs: [{groupName: gpu, replicas: 1, minReplicas: 0, maxReplicas: 2, "
    "rayStartParams: {}, template: {spec: {tolerations: [" +
    std::string(kOwnToleration) +
    "], containers: [{name: ray-worker, image: 'rayproject/ray:2.41.0', resources: {limits: "
    "{nvidia.com/gpu: 1, memory: 8Gi}}}]}}}]}";

const std::string kLeaderWorkerTemplate = "{size: 2, workerTemplate: {spec: {tolerations: [" +
                                          std::string(kOwnToleration) + "], containers: [" +
                                          kServer + "]}}}";

// A replicated job as JobSet's examples write one (JobSet's webhook, which
// runs on CREATE only, defaults its completion mode).
std::string replicatedJob(const std::string& completionMode) {
  return "{name: workers, replicas: 1, template: {spec: {" + completionMode +
         "parallelism: 1, completions: 1, backoffLimit: 0, template: {spec: " +
         podSpec("Never", kWorker) + "}}}}";
}

// A TrainingRuntime (or ClusterTrainingRuntime) of one replicated job.
std::string trainingRuntime(const std::string& kind, const std::string& name) {
  return "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: " + kind + "\nmetadata: {name: " + name +
         "}\nspec:\n  mlPolicy: {numNodes: 1}\n  template: {spec: {replicatedJobs: [{name: " +
         "node, replicas: 1, template: {spec: {template: {spec: " + podSpec("Never", kWorker) +
         "}}}}]}}\n";
}

// One object of a kind of the table, as its documentation writes it.
struct KindManifest {
  std::string name;  // the test's name
  std::string yaml;
  // Applied first, in both namespaces: what the object needs to be stored
  // (a TrainJob's runtime, which Kueue's TrainJob webhook looks up).
  std::string prerequisite;
};

std::vector<KindManifest> kindManifests() {
  std::vector<KindManifest> kinds = {
      {"Pod",
       "apiVersion: v1\nkind: Pod\nmetadata: {name: smi}\nspec: {restartPolicy: Never, "
       "containers: [" +
           kWorker + "]}\n",
       ""},
      {"Job",
       "apiVersion: batch/v1\nkind: Job\nmetadata: {name: batch}\nspec: {template: {spec: " +
           podSpec("Never", kWorker) + "}}\n",
       ""},
      {"CronJob",
       "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly}\nspec: {schedule: '0 3 * "
       "* *', jobTemplate: {spec: {template: {spec: " +
           podSpec("Never", kWorker) + "}}}}\n",
       ""},
      {"MPIJob",
       "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: train}\nspec:\n  "
       "slotsPerWorker: 1\n  mpiReplicaSpecs:\n    Launcher: {replicas: 1, template: {spec: "
       "{containers: [{name: launcher, image: registry.example/mpi:1}]}}}\n    Worker: "
       "{replicas: 1, template: {spec: " +
           podSpec("Never", kWorker) + "}}\n",
       ""},
      {"TrainJob",
       "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: train}\n"
       "spec:\n  runtimeRef: {name: torch, kind: TrainingRuntime}\n  trainer: {numNodes: 1, "
       "resourcesPerNode: {limits: {nvidia.com/gpu: 1}}}\n",
       trainingRuntime("TrainingRuntime", "torch")},
      {"TrainingRuntime", trainingRuntime("TrainingRuntime", "torch-runtime"), ""},
      {"ClusterTrainingRuntime", trainingRuntime("ClusterTrainingRuntime", "torch-cluster"), ""},
      {"RayCluster",
       "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {name: ray}\nspec: " + kRayCluster +
           "\n",
       ""},
      {"RayJob",
       "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: ray}\nspec: {entrypoint: 'python "
       "-c print(1)', shutdownAfterJobFinishes: true, rayClusterSpec: " +
           kRayCluster + "}\n",
       ""},
      {"RayService",
       "apiVersion: ray.io/v1\nkind: RayService\nmetadata: {name: ray}\nspec: {serveConfigV2: "
       "'applications: []', rayClusterConfig: " +
           kRayCluster + "}\n",
       ""},
      {"RayCronJob",
       "apiVersion: ray.io/v1\nkind: RayCronJob\nmetadata: {name: ray}\nspec: {schedule: '0 3 * "
       "* *', jobTemplate: {entrypoint: 'python -c print(1)', shutdownAfterJobFinishes: true, "
       "rayClusterSpec: " +
           kRayCluster + "}}\n",
       ""},
      {"LeaderWorkerSet",
       "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {name: vllm}\n"
       "spec: {replicas: 1, leaderWorkerTemplate: " +
           kLeaderWorkerTemplate + "}\n",
       ""},
      {"DisaggregatedSet",
       "apiVersion: disaggregatedset.x-k8s.io/v1\nkind: DisaggregatedSet\nmetadata: {name: vllm}\n"
       "spec: {roles: [{name: prefill, spec: {replicas: 1, leaderWorkerTemplate: " +
           kLeaderWorkerTemplate + "}}, {name: decode, spec: {replicas: 1, leaderWorkerTemplate: " +
           kLeaderWorkerTemplate + "}}]}\n",
       ""},
      {"JobSet",
       "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: train}\nspec: "
       "{replicatedJobs: [" +
           replicatedJob("completionMode: Indexed, ") + "]}\n",
       ""},
      {"VolcanoJob",
       "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: train}\nspec: "
       "{minAvailable: 1, schedulerName: volcano, tasks: [{name: worker, replicas: 1, template: "
       "{spec: " +
           podSpec("Never", kWorker) + "}}]}\n",
       ""},
      {"InferenceService",
       "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: llm}\n"
       "spec: {predictor: {minReplicas: 1, tolerations: [" +
           std::string(kOwnToleration) +
           "], model: {modelFormat: {name: huggingface}, resources: {limits: {nvidia.com/gpu: 1, "
           "memory: 16Gi}}}}}\n",
       ""},
      {"LLMInferenceService",
       "apiVersion: serving.kserve.io/v1alpha1\nkind: LLMInferenceService\nmetadata: {name: llm}\n"
       "spec: {model: {uri: 'hf://Qwen/Qwen2.5-0.5B-Instruct'}, replicas: 1, template: "
       "{tolerations: [" +
           std::string(kOwnToleration) + "], containers: [" + kServer + "]}}\n",
       ""},
      // As a cluster that enables Knative's kubernetes.podspec-tolerations
      // writes a GPU Service.
      {"KnativeService",
       "apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata: {name: llm}\n"
       "spec: {template: {spec: {tolerations: [" +
           std::string(kOwnToleration) + "], containers: [" + kServer + "]}}}\n",
       ""},
      {"NIMService",
       "apiVersion: apps.nvidia.com/v1alpha1\nkind: NIMService\nmetadata: {name: llm}\n"
       "spec: {image: {repository: nvcr.io/nim/meta/llama-3.2-1b-instruct, tag: '1.12.0'}, "
       "authSecret: ngc-api-secret, replicas: 1, tolerations: [" +
           std::string(kOwnToleration) +
           "], resources: {limits: {nvidia.com/gpu: 1, memory: 16Gi}}, "
           "expose: {service: {type: ClusterIP, port: 8000}}}\n",
       ""},
      {"SparkApplication",
       "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: pi}\n"
       "spec: " +
           sparkApplicationSpec() + "\n",
       ""},
      {"ScheduledSparkApplication",
       "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: ScheduledSparkApplication\n"
       "metadata: {name: pi}\nspec: {schedule: '@every 1h', template: " +
           sparkApplicationSpec() + "}\n",
       ""},
  };
  for (const char* kind : {"Deployment", "StatefulSet", "ReplicaSet"}) {
    kinds.push_back({kind,
                     "apiVersion: apps/v1\nkind: " + std::string(kind) +
                         "\nmetadata: {name: server}\nspec: {replicas: 1, serviceName: server, "
                         "selector: {matchLabels: {app: server}}, template: {metadata: {labels: "
                         "{app: server}}, spec: " +
                         podSpec("Always", kServer) + "}}\n",
                     ""});
  }
  // A Deployment or a ReplicaSet has no serviceName.
  for (KindManifest& kind : kinds) {
    if (kind.name == "Deployment" || kind.name == "ReplicaSet") {
      kind.yaml.replace(kind.yaml.find(" serviceName: server,"), 21, "");
    }
  }
  for (const auto& [kind, specs, container] :
       {std::tuple{"PyTorchJob", "pytorchReplicaSpecs", "pytorch"},
        std::tuple{"TFJob", "tfReplicaSpecs", "tensorflow"},
        std::tuple{"XGBoostJob", "xgbReplicaSpecs", "xgboost"},
        std::tuple{"PaddleJob", "paddleReplicaSpecs", "paddle"},
        std::tuple{"JAXJob", "jaxReplicaSpecs", "jax"}}) {
    kinds.push_back({kind, kubeflowJob(kind, specs, container), ""});
  }
  return kinds;
}

json objectOf(const std::string& yaml) {
  std::vector<ManifestDocument> documents;
  std::string error;
  EXPECT_TRUE(parseManifests(yaml, documents, &error)) << error << "\n" << yaml;
  return documents.size() == 1 ? json::parse(toJson(*documents[0].json)) : json();
}

// The row of the table the object is read through.
const WorkloadType* rowOf(const json& object) {
  std::vector<ManifestDocument> documents;
  std::string error;
  if (!parseManifests(object.dump(), documents, &error) || documents.size() != 1) return nullptr;
  return WorkloadTypeTable::builtIn()->findForObject(*documents[0].json);
}

// ------------------------------------------------------------- the cases

// How the workload stands when it is applied again.
enum class Standing {
  Running,
  Suspended,      // its row's suspend flag set in the file
  HeldByKueue,    // a LocalQueue whose ClusterQueue holds its workloads
  StartedByKueue  // admitted by Kueue, which unsuspended it with its flavor's placement
};

struct ReapplyCase {
  std::string name;
  KindManifest kind;
  Standing standing = Standing::Running;
};

void PrintTo(const ReapplyCase& param, std::ostream* out) {
  *out << param.name;
}

std::vector<ReapplyCase> reapplyCases() {
  std::vector<ReapplyCase> cases;
  for (const KindManifest& kind : kindManifests()) {
    cases.push_back({kind.name, kind, Standing::Running});
    const WorkloadType* row = rowOf(objectOf(kind.yaml));
    if (row != nullptr && !row->updates.suspend.empty()) {
      cases.push_back({kind.name + "Suspended", kind, Standing::Suspended});
    }
    if (kind.name == "Job" || kind.name == "JobSet") {
      cases.push_back({kind.name + "HeldByKueue", kind, Standing::HeldByKueue});
      cases.push_back({kind.name + "StartedByKueue", kind, Standing::StartedByKueue});
    }
  }
  // As JobSet's examples write it: JobSet's webhook wrote the completion
  // mode at creation, and a client-side reapply that drops it is refused by
  // JobSet itself, with or without aiadmit.
  cases.push_back({"JobSetAsItsExamplesWriteIt",
                   {"JobSet",
                    "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: "
                    "example}\nspec: {replicatedJobs: [" +
                        replicatedJob("") + "]}\n",
                    ""},
                   Standing::Running});
  return cases;
}

// The file of the case, as applied in `namespaceName`: named for the form of
// apply, queued or suspended as the case says; a cluster-scoped object opts
// in with the label a namespace would carry.
json fileOf(const ReapplyCase& param, const std::string& suffix, const Namespace& ns,
            bool optedIn) {
  json object = objectOf(param.kind.yaml);
  const WorkloadType* row = rowOf(object);
  json& metadata = object["metadata"];
  metadata["name"] = metadata.value("name", "") + "-" + suffix;
  if (row != nullptr && row->kind == "ClusterTrainingRuntime") {
    metadata["name"] = metadata.value("name", "") + "-" + ns.name();
    if (optedIn) metadata["labels"]["aiadmit.dev/enabled"] = "true";
  }
  if (param.standing == Standing::Suspended && row != nullptr) {
    object[json::json_pointer(row->updates.suspend)] = true;
  }
  if (param.standing == Standing::HeldByKueue) {
    metadata["labels"]["kueue.x-k8s.io/queue-name"] = "held";
  }
  if (param.standing == Standing::StartedByKueue) {
    metadata["labels"]["kueue.x-k8s.io/queue-name"] = "open";
  }
  return object;
}

// --------------------------------------------------------- Kueue's queues

// LocalQueues `held` (a ClusterQueue that holds what is queued to it) and
// `open` (the suite's ClusterQueue `gpus`, with GPU quota and a flavor
// that selects the GPU nodes) in each namespace; the held ClusterQueue goes
// at exit.
class Queues {
 public:
  Queues(const std::vector<const Namespace*>& namespaces, const std::string& id)
      : held_("reapply-held-" + id) {
    json items = json::array();
    items.push_back(json::parse(R"({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
      "metadata": {}, "spec": {"stopPolicy": "Hold", "namespaceSelector": {},
        "resourceGroups": [{"coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
          "flavors": [{"name": "gpu-nodes", "resources": [{"name": "cpu", "nominalQuota": "8"},
            {"name": "memory", "nominalQuota": "64Gi"},
            {"name": "nvidia.com/gpu", "nominalQuota": "8"}]}]}]}})"));
    items[0]["metadata"]["name"] = held_;
    for (const Namespace* ns : namespaces) {
      for (const auto& [queue, clusterQueue] : {std::pair{"held", held_}, {"open", "gpus"}}) {
        items.push_back({{"apiVersion", "kueue.x-k8s.io/v1beta2"},
                         {"kind", "LocalQueue"},
                         {"metadata", {{"name", queue}, {"namespace", ns->name()}}},
                         {"spec", {{"clusterQueue", clusterQueue}}}});
      }
    }
    const CommandResult applied = kubectl(
        {"apply", "-f", "-"}, toText({{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}}));
    EXPECT_EQ(applied.exitCode, 0) << applied.err;
  }
  ~Queues() { kubectl({"delete", "clusterqueue", held_, "--wait=false"}); }
  Queues(const Queues&) = delete;
  Queues& operator=(const Queues&) = delete;

 private:
  std::string held_;
};

// ------------------------------------------------------------- applying

enum class Apply { ClientSide, ServerSide, ServerSideForcingConflicts };

std::vector<std::string> applyArgs(Apply apply, const std::string& namespaceName) {
  std::vector<std::string> args = {"apply", "-f", "-"};
  if (!namespaceName.empty()) args.insert(args.end(), {"-n", namespaceName});
  if (apply != Apply::ClientSide) args.push_back("--server-side");
  if (apply == Apply::ServerSideForcingConflicts) args.push_back("--force-conflicts");
  return args;
}

// One object applied twice in one namespace ("" for a cluster-scoped one).
struct TwoApplies {
  std::string namespaceName;
  std::string name;  // kubectl's KIND.GROUP/NAME
  CommandResult first;
  CommandResult again;
  json before;  // stored before the second apply
  json after;
};

json storedAs(const std::string& name, const std::string& namespaceName) {
  std::vector<std::string> args = {"get", name};
  if (!namespaceName.empty()) args.insert(args.end(), {"-n", namespaceName});
  return kubectlJson(args);
}

// Whether the workload stands as the case needs before the second apply:
// Kueue started it; an operator that writes the object after its creation
// (KubeRay, a RayJob's cluster spec, with its finalizer) has done so.
bool standsAsTheCaseSays(const ReapplyCase& param, const json& object) {
  if (!object.is_object()) return false;
  if (param.standing == Standing::StartedByKueue) {
    return object["spec"].value("suspend", true) == false;
  }
  if (object.value("kind", "") == "RayJob") {
    return !object["metadata"].value("finalizers", json::array()).empty();
  }
  return true;
}

TwoApplies applyTwice(const ReapplyCase& param, const json& file, const std::string& namespaceName,
                      Apply apply) {
  TwoApplies applied;
  applied.namespaceName = namespaceName;
  applied.name = kubectlName(file);
  applied.first = kubectl(applyArgs(apply, namespaceName), toText(file));
  if (applied.first.exitCode != 0) return applied;
  EXPECT_TRUE(
      waitUntil([&] { return standsAsTheCaseSays(param, storedAs(applied.name, namespaceName)); },
                std::chrono::seconds(90)))
      << applied.name << " in " << namespaceName << ":\n"
      << kubectl({"get", applied.name, "-n", namespaceName, "-o", "yaml"}).out;
  applied.before = storedAs(applied.name, namespaceName);
  applied.again = kubectl(applyArgs(apply, namespaceName), toText(file));
  applied.after = storedAs(applied.name, namespaceName);
  return applied;
}

// What a refusal says, without what differs from one namespace or one
// object to the next: the webhook or the manager that refused, and the
// field and reason, not the value (an object with aiadmit's toleration has
// another value than one without). An admission webhook's refusal names it;
// one it makes as a Kubernetes validation error (JobSet's since v0.12) reads
// as the API server's own, `The KIND "NAME" is invalid: ...`, after the
// warnings kubectl printed.
std::string cause(const std::string& err) {
  const auto lineAt = [&](size_t start) {
    return err.substr(start, err.find('\n', start) - start);
  };
  std::string line;
  const size_t webhook = err.find("admission webhook \"");
  const size_t conflict = err.find("Apply failed with");
  if (webhook != std::string::npos) {
    line = lineAt(webhook);
  } else if (conflict != std::string::npos) {
    return lineAt(conflict);
  } else {
    std::istringstream lines(err);
    while (std::getline(lines, line) && line.rfind("Warning: ", 0) == 0) {
    }
  }
  const size_t value = line.find(": Invalid value");
  if (value == std::string::npos) return line;
  return line.substr(0, value) + line.substr(line.rfind(": "));
}

// ---------------------------------------------------- what must hold

const json kPoolToleration = {
    {"key", "accelerator"}, {"operator", "Equal"}, {"value", "gpu"}, {"effect", "NoSchedule"}};

// Where the object holds the pool's placement as aiadmit writes it: each
// list with the pool's toleration, each node selector for the pool.
void collectPlacement(const json& value, const std::string& at, std::set<std::string>& out) {
  if (value.is_array()) {
    if (std::find(value.begin(), value.end(), kPoolToleration) != value.end()) out.insert(at);
    for (size_t i = 0; i < value.size(); ++i) {
      collectPlacement(value[i], at + "/" + std::to_string(i), out);
    }
  } else if (value.is_object()) {
    for (const auto& [key, child] : value.items()) {
      std::string token = key;
      for (size_t i = 0; (i = token.find('~', i)) != std::string::npos; i += 2)
        token.insert(i + 1, "0");
      for (size_t i = 0; (i = token.find('/', i)) != std::string::npos; i += 2)
        token.replace(i, 1, "~1");
      const std::string path = at + "/" + token;
      if (key == "nodeSelector" && child.value("accelerator", "") == "nvidia") out.insert(path);
      collectPlacement(child, path, out);
    }
  }
}

std::set<std::string> placementOf(const json& object) {
  std::set<std::string> places;
  if (object.is_object()) collectPlacement(object["spec"], "/spec", places);
  return places;
}

// aiadmit refused none of the object's patches (its validating webhooks'
// audit annotation `rules` records each rule it applied, with the action it
// took).
void expectNoRefusalOfAiadmits(const TwoApplies& applied, const std::string& resource) {
  const std::string name = applied.after.is_object() ? applied.after["metadata"].value("name", "")
                                                     : applied.before["metadata"].value("name", "");
  for (const json& event : auditEvents(resource, applied.namespaceName, name, "patch")) {
    const json annotations = event.value("annotations", json::object());
    for (const auto& [key, value] : annotations.items()) {
      const std::string rules = "validate.aiadmit.dev/rules";
      if (key.size() < rules.size() ||
          key.compare(key.size() - rules.size(), rules.size(), rules) != 0 || !value.is_string()) {
        continue;
      }
      EXPECT_EQ(value.get<std::string>().find("=deny"), std::string::npos)
          << applied.name << ": " << key << ": " << value;
    }
  }
}

// Every change the second apply made to the object where aiadmit is called
// is one it made where aiadmit is not (kubectl's merge of a custom
// resource's lists drops what an operator's webhook wrote at creation, an
// empty metadata, and brings back the file's spelling of a quantity).
void expectNoOtherChange(const TwoApplies& optedIn, const TwoApplies& plain) {
  const json changed =
      json::diff(withoutServerFields(optedIn.before), withoutServerFields(optedIn.after));
  const json changedWithout =
      json::diff(withoutServerFields(plain.before), withoutServerFields(plain.after));
  for (const json& change : changed) {
    EXPECT_NE(std::find(changedWithout.begin(), changedWithout.end(), change), changedWithout.end())
        << optedIn.name << ": the second apply changed " << change.dump()
        << "\nwhere aiadmit is not called it changed: " << changedWithout.dump();
  }
}

// Whether aiadmit writes the pool's placement for the row's kind: into a
// template, or for a TrainJob's resources through runtimePatches. A Knative
// Service's row keeps it out (Knative refuses it as it ships), a
// NIMService's resources have no placement beside them, and a
// SparkApplication's pod specs get none (the operator's validator refuses a
// node selector on the application and its pod specs at once).
bool rowPlaces(const WorkloadType* row) {
  if (row == nullptr) return true;
  return std::any_of(row->templates.begin(), row->templates.end(), [row](const TemplateSlot& slot) {
    return (slot.injectable & kInjectPlacement) != 0 ||
           (slot.shape == TemplateShape::Resources && row->kind == "TrainJob");
  });
}

// The second apply ends where aiadmit is called as it ends where it is not,
// and the object keeps the placement aiadmit wrote at creation.
void expectAsWithoutAiadmit(const TwoApplies& optedIn, const TwoApplies& plain,
                            const std::string& resource) {
  ASSERT_EQ(optedIn.first.exitCode, 0) << optedIn.first.err;
  ASSERT_EQ(plain.first.exitCode, 0) << plain.first.err;
  if (plain.again.exitCode == 0) {
    EXPECT_EQ(optedIn.again.exitCode, 0) << optedIn.name << ":\n" << optedIn.again.err;
  } else {
    EXPECT_NE(optedIn.again.exitCode, 0) << optedIn.name << " was stored, but not without aiadmit";
    EXPECT_EQ(cause(optedIn.again.err), cause(plain.again.err))
        << optedIn.again.err << "\nwithout aiadmit:\n"
        << plain.again.err;
  }
  EXPECT_EQ(optedIn.again.err.find("aiadmit.dev\" denied"), std::string::npos) << optedIn.again.err;
  expectNoRefusalOfAiadmits(optedIn, resource);
  const std::set<std::string> placed = placementOf(optedIn.before);
  if (rowPlaces(rowOf(optedIn.before))) {
    EXPECT_FALSE(placed.empty()) << optedIn.name << ": aiadmit placed nothing at creation:\n"
                                 << optedIn.before.dump(1);
  }
  const std::set<std::string> kept = placementOf(optedIn.after);
  for (const std::string& place : placed) {
    EXPECT_TRUE(kept.count(place)) << optedIn.name << " lost aiadmit's " << place << ":\n"
                                   << optedIn.after.dump(1);
  }
  expectNoOtherChange(optedIn, plain);
}

class E2eReapply : public ::testing::TestWithParam<ReapplyCase> {};

TEST_P(E2eReapply, EndsAsWithoutAiadmitAndKeepsWhatAiadmitWrote) {
  const ReapplyCase& param = GetParam();
  const Namespace optedIn("reapply");
  const Namespace plain("reapply-plain", /*optedIn=*/false);
  std::optional<Queues> queues;
  if (param.standing == Standing::HeldByKueue || param.standing == Standing::StartedByKueue) {
    queues.emplace(std::vector<const Namespace*>{&optedIn, &plain}, optedIn.name());
  }
  const WorkloadType* row = rowOf(objectOf(param.kind.yaml));
  ASSERT_NE(row, nullptr) << param.kind.yaml;
  const bool clusterScoped = row->kind == "ClusterTrainingRuntime";
  std::vector<std::string> clusterObjects;

  for (const Namespace* ns : {&optedIn, &plain}) {
    if (param.kind.prerequisite.empty()) continue;
    const CommandResult made =
        kubectl({"apply", "-n", ns->name(), "-f", "-"}, toText(objectOf(param.kind.prerequisite)));
    ASSERT_EQ(made.exitCode, 0) << made.err;
  }
  for (const auto& [apply, suffix] :
       {std::pair{Apply::ClientSide, "csa"}, std::pair{Apply::ServerSide, "ssa"}}) {
    SCOPED_TRACE(suffix);
    const json optedInFile = fileOf(param, suffix, optedIn, true);
    const json plainFile = fileOf(param, suffix, plain, false);
    const std::string optedInNs = clusterScoped ? "" : optedIn.name();
    const std::string plainNs = clusterScoped ? "" : plain.name();
    if (clusterScoped) {
      clusterObjects.push_back(kubectlName(optedInFile));
      clusterObjects.push_back(kubectlName(plainFile));
    }
    TwoApplies withAiadmit = applyTwice(param, optedInFile, optedInNs, apply);
    TwoApplies without = applyTwice(param, plainFile, plainNs, apply);
    // A conflict with a field an operator took over (KubeRay's worker
    // groups of a RayJob) is server-side apply's own, with or without
    // aiadmit; a GitOps tool then forces it.
    if (apply == Apply::ServerSide && without.again.exitCode != 0 &&
        without.again.err.find("conflict") != std::string::npos) {
      expectAsWithoutAiadmit(withAiadmit, without, row->resource);
      withAiadmit = applyTwice(param, optedInFile, optedInNs, Apply::ServerSideForcingConflicts);
      without = applyTwice(param, plainFile, plainNs, Apply::ServerSideForcingConflicts);
    }
    expectAsWithoutAiadmit(withAiadmit, without, row->resource);
  }
  for (const std::string& name : clusterObjects) kubectl({"delete", name, "--wait=false"});
}

INSTANTIATE_TEST_SUITE_P(EveryKind, E2eReapply, ::testing::ValuesIn(reapplyCases()),
                         [](const ::testing::TestParamInfo<ReapplyCase>& info) {
                           return info.param.name;
                         });

// Every kind of the table has its case, so that a kind added to the table
// is applied twice here too.
TEST(E2eReapplyCases, CoverEveryKindOfTheTable) {
  std::set<std::string> covered;
  for (const ReapplyCase& param : reapplyCases()) {
    const WorkloadType* row = rowOf(objectOf(param.kind.yaml));
    ASSERT_NE(row, nullptr) << param.name;
    covered.insert(row->qualifiedKind());
  }
  for (const WorkloadType& type : WorkloadTypeTable::builtIn()->types()) {
    EXPECT_TRUE(covered.count(type.qualifiedKind())) << type.qualifiedKind() << " has no case";
  }
}

}  // namespace
}  // namespace aiadmit::e2e
