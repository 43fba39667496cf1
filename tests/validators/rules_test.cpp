// Every rule AIA001-AIA015 through the real server over TLS: for each rule,
// manifests that break it and near misses that must pass, each under profiles
// that deny, warn and switch every rule off.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/support/test_support.h"
#include "webhook/engine/admission.h"
#include "webhook/kube/yaml_json.h"
#include "webhook/policy/rules.h"

namespace aiadmit {
namespace {

using namespace testing;

// Profiles beside the shipped ones, scoped by namespace, for the rules that
// the shipped profiles leave switched off.
constexpr const char* kExtraProfiles[][2] = {
    {"training-gang.yaml", R"(apiVersion: aiadmit.dev/v1
kind: Profile
metadata:
  name: training-gang
spec:
  class: training
  scope:
    namespaces: ["gang-*"]
  gpu:
    resourceName: nvidia.com/gpu
    gpusPerNode: 8
  placement:
    nodeSelector: {accelerator: nvidia}
    tolerations: [{key: accelerator, operator: Equal, value: gpu, effect: NoSchedule}]
  scheduling:
    priorityClassName: ai-training
    gangScheduling: {required: true, schedulerName: volcano, queueLabel: kueue.x-k8s.io/queue-name}
)"},
    {"batch-restricted.yaml", R"(apiVersion: aiadmit.dev/v1
kind: Profile
metadata:
  name: batch-restricted
spec:
  class: batch
  scope:
    namespaces: ["restricted-*"]
  gpu:
    resourceName: nvidia.com/gpu
    allowedNamespaces: [restricted-gpu, "restricted-lab-*"]
  placement:
    nodeSelector: {accelerator: nvidia}
    tolerations: [{key: accelerator, operator: Equal, value: gpu, effect: NoSchedule}]
  scheduling:
    priorityClassName: ai-batch
)"},
    {"realtime-noprobes.yaml", R"(apiVersion: aiadmit.dev/v1
kind: Profile
metadata:
  name: realtime-noprobes
spec:
  class: realtime
  scope:
    namespaces: ["noprobe-*"]
  gpu:
    resourceName: nvidia.com/gpu
  placement:
    nodeSelector: {accelerator: nvidia}
    tolerations: [{key: accelerator, operator: Equal, value: gpu, effect: NoSchedule}]
  scheduling:
    priorityClassName: ai-realtime
)"},
};

// A profile directory: the shipped profiles and the extra ones, with every
// rule set to `action` ("" keeps each profile's own actions).
void writeProfiles(const TempDir& dir, const std::string& action) {
  std::vector<std::pair<std::string, std::string>> files;
  for (const char* name : {"batch.yaml", "realtime.yaml", "training.yaml"}) {
    files.emplace_back(name, readFile(sourceDir() + "/profiles/" + name));
  }
  for (const auto& extra : kExtraProfiles) files.emplace_back(extra[0], extra[1]);
  for (auto& [name, text] : files) {
    if (!action.empty()) {
      if (text.back() != '\n') text += '\n';
      text += "  rules:\n";
      for (int rule = kFirstRule; rule <= kLastRule; ++rule) {
        text += "    " + RuleId{rule}.name() + ": " + action + "\n";
      }
    }
    writeFile(dir.file(name), text);
  }
}

// `text` with its one occurrence of `from` replaced by `to`.
std::string replaced(std::string text, std::string_view from, std::string_view to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

std::string yamlToJson(const std::string& yaml) {
  std::vector<ManifestDocument> documents;
  std::string error;
  EXPECT_TRUE(parseManifests(yaml, documents, &error)) << error;
  EXPECT_EQ(documents.size(), 1u) << yaml;
  return documents.empty() ? "{}" : toJson(*documents[0].json);
}

struct RuleCase {
  std::string name;
  std::string namespaceName;
  std::string manifest;  // YAML, as /mutate would hand it on
  // For violations: the field path the message must name; "" for near misses.
  std::string field;
};

struct RuleCases {
  int rule;
  std::vector<RuleCase> cases;
};

// Shared pieces of clean GPU workloads after /mutate.
const std::string kPoolPlacement = R"(
      nodeSelector: {accelerator: nvidia}
      tolerations: [{key: accelerator, operator: Equal, value: gpu, effect: NoSchedule}])";

std::string realtimeDeployment(const std::string& podSpecExtra, const std::string& container,
                               const std::string& annotations = "") {
  return R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: server)" +
         (annotations.empty() ? "" : "\n  annotations: " + annotations) + R"(
spec:
  replicas: 1
  selector: {matchLabels: {app: server}}
  template:
    metadata: {labels: {app: server}}
    spec:)" +
         kPoolPlacement + podSpecExtra + R"(
      containers:
      - )" +
         container + "\n";
}

const std::string kServingContainer =
    R"({name: vllm, image: vllm, ports: [{containerPort: 8000}], readinessProbe: {tcpSocket: {port: 8000}}, resources: {limits: {nvidia.com/gpu: 1, memory: 32Gi}}})";

std::string gpuJob(const std::string& workloadClass, const std::string& jobSpecExtra,
                   const std::string& podSpecExtra, const std::string& containers) {
  return R"(apiVersion: batch/v1
kind: Job
metadata:
  name: run
  annotations: {aiadmit.dev/workload: )" +
         workloadClass + R"(}
spec:)" + jobSpecExtra +
         R"(
  template:
    spec:
      restartPolicy: Never)" +
         kPoolPlacement + podSpecExtra + R"(
      containers:)" +
         containers + "\n";
}

const std::string kOneGpu = R"(
      - {name: train, image: t, resources: {limits: {nvidia.com/gpu: 1}}})";

std::string gpuPod(const std::string& workloadClass, const std::string& podSpec) {
  return R"(apiVersion: v1
kind: Pod
metadata:
  name: pod
  annotations: {aiadmit.dev/workload: )" +
         workloadClass + R"(}
spec:
  nodeSelector: {accelerator: nvidia}
  tolerations: [{key: accelerator, operator: Equal, value: gpu, effect: NoSchedule}])" +
         podSpec + "\n";
}

const std::vector<RuleCases>& allCases() {
  static const std::vector<RuleCases> cases = {
      {1,
       {{"SynonymOfAClass", "default",
         realtimeDeployment("", kServingContainer, "{aiadmit.dev/workload: inference}"),
         "metadata.annotations[aiadmit.dev/workload]"},
        {"TypoOnTheTemplate", "default",
         R"(apiVersion: batch/v1
kind: Job
metadata: {name: run}
spec:
  template:
    metadata: {annotations: {aiadmit.dev/workload: trainig}}
    spec:
      restartPolicy: Never)" +
             kPoolPlacement + "\n      containers:" + kOneGpu + "\n",
         "spec.template.metadata.annotations[aiadmit.dev/workload]"},
        {"KnownClass", "default",
         realtimeDeployment("", kServingContainer, "{aiadmit.dev/workload: realtime}"), ""},
        // The other annotations a developer writes: a value aiadmit cannot
        // use is refused, never ignored.
        {"GpuContainerTypo", "default",
         gpuJob("training, aiadmit.dev/gpu-container: traner", "", "", kOneGpu),
         "metadata.annotations[aiadmit.dev/gpu-container]"},
        {"GpuContainerNamesAContainer", "default",
         gpuJob("training, aiadmit.dev/gpu-container: train", "", "", kOneGpu), ""},
        {"GpuCountInWords", "default",
         replaced(gpuJob("training, aiadmit.dev/gpus: two", "", "",
                         "\n      - {name: train, image: t, resources: {limits: {memory: 1Gi}}}"),
                  kPoolPlacement, ""),
         "metadata.annotations[aiadmit.dev/gpus]"},
        {"GpuCountFraction", "default",
         gpuJob("training, aiadmit.dev/gpus: \"0.5\"", "", "", kOneGpu),
         "metadata.annotations[aiadmit.dev/gpus]"},
        {"GpuCountWhole", "default", gpuJob("training, aiadmit.dev/gpus: \"1\"", "", "", kOneGpu),
         ""},
        {"UnknownProfile", "default",
         gpuJob("training, aiadmit.dev/profile: trainig", "", "", kOneGpu),
         "metadata.annotations[aiadmit.dev/profile]"}}},
      {2,
       {{"TrainingAsDeployment", "default",
         realtimeDeployment("", kServingContainer, "{aiadmit.dev/workload: training}"),
         "metadata.annotations[aiadmit.dev/workload]"},
        {"RealtimeAsJob", "default", gpuJob("realtime", "", "", "\n      - " + kServingContainer),
         "metadata.annotations[aiadmit.dev/workload]"},
        {"TrainingAsJob", "default", gpuJob("training", "", "", kOneGpu), ""}}},
      {3,
       {{"PluralTypo", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {limits: {nvidia.com/gpus: 1}}})"),
         "spec.template.spec.containers[0].resources.limits"},
        {"NoVendorDomain", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {limits: {gpu: 1}}})"),
         "spec.template.spec.containers[0].resources.limits"},
        {"OtherVendorGpuNotOffered", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {limits: {amd.com/gpu: 1}}})"),
         "spec.template.spec.containers[0].resources.limits"},
        {"OrdinaryExtendedResourcesAreLeftAlone", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {limits: {nvidia.com/gpu: 1, nvidia.com/rdma_shared_device_a: 1, example.com/outputs: 2, hugepages-2Mi: 1Gi}}})"),
         ""},
        {"AllowedMigSlice", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {limits: {nvidia.com/mig-2g.20gb: 1}}})"),
         ""}}},
      {4,
       {{"Half", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {limits: {nvidia.com/gpu: "0.5"}, requests: {nvidia.com/gpu: "0.5"}}})"),
         "spec.template.spec.containers[0].resources.limits"},
        {"Millis", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {limits: {nvidia.com/gpu: 500m}}})"),
         "spec.template.spec.containers[0].resources.limits"},
        {"NegativeInInitContainer", "default",
         gpuJob("batch", "", R"(
      initContainers:
      - {name: warm, image: w, resources: {limits: {nvidia.com/gpu: -1}}})",
                kOneGpu),
         "spec.template.spec.initContainers[0].resources.limits"},
        {"Zero", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {limits: {nvidia.com/gpu: 1}}}
      - {name: helper, image: h, resources: {limits: {nvidia.com/gpu: 0}}})"),
         "spec.template.spec.containers[1].resources.limits"},
        {"WholeNumbersInEveryForm", "default",
         gpuJob("batch", "", R"(
      initContainers:
      - {name: warm, image: w, resources: {limits: {nvidia.com/gpu: "1000m"}}})",
                R"(
      - {name: a, image: i, resources: {limits: {nvidia.com/gpu: 1e0}}}
      - {name: b, image: i, resources: {limits: {nvidia.com/gpu: "2"}, requests: {nvidia.com/gpu: 2000m}}})"),
         ""}}},
      {5,
       {{"RequestBelowLimit", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {requests: {nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: 2}}})"),
         "spec.template.spec.containers[0].resources.requests"},
        {"RequestWithoutLimit", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {requests: {nvidia.com/gpu: 1}}})"),
         "spec.template.spec.containers[0].resources.limits"},
        {"SameAmountSpelledDifferently", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {requests: {nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: 1000m}}})"),
         ""}}},
      {6,
       {{"TwoContainersAddUp", "default", gpuJob("batch", "", "", R"(
      - {name: a, image: i, resources: {limits: {nvidia.com/gpu: 5}}}
      - {name: b, image: i, resources: {limits: {nvidia.com/gpu: 5}}})"),
         "spec.template.spec.containers"},
        {"SidecarAddsToContainers", "default",
         gpuJob("batch", "", R"(
      initContainers:
      - {name: sidecar, image: s, restartPolicy: Always, resources: {limits: {nvidia.com/gpu: 1}}})",
                R"(
      - {name: a, image: i, resources: {limits: {nvidia.com/gpu: 8}}})"),
         "spec.template.spec.containers"},
        {"OneContainerTooBig", "default", gpuJob("training", "", "", R"(
      - {name: a, image: i, resources: {limits: {nvidia.com/gpu: 16}}})"),
         "spec.template.spec.containers[0].resources.limits"},
        {"InitContainerRunsAlone", "default",
         gpuJob("batch", "", R"(
      initContainers:
      - {name: warm, image: w, resources: {limits: {nvidia.com/gpu: 8}}})",
                R"(
      - {name: a, image: i, resources: {limits: {nvidia.com/gpu: 8}}})"),
         ""}}},
      {7,
       {{"SelectorWithoutGpu", "default",
         R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelector: {accelerator: nvidia}
      containers: [{name: web, image: nginx}]
)",
         "spec.template.spec.nodeSelector"},
        {"TolerationWithoutGpu", "default",
         R"(apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  tolerations: [{key: accelerator, operator: Exists}]
  containers: [{name: web, image: nginx}]
)",
         "spec.tolerations[0]"},
        {"EveryAffinityTermSelectsThePool", "default",
         R"(apiVersion: batch/v1
kind: Job
metadata: {name: prep}
spec:
  template:
    spec:
      restartPolicy: Never
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions: [{key: accelerator, operator: In, values: [nvidia]}]
            - matchExpressions: [{key: zone, operator: In, values: [a]}, {key: accelerator, operator: In, values: [nvidia]}]
      containers: [{name: prep, image: p}]
)",
         "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
         ".nodeSelectorTerms"},
        {"OneAffinityTermElsewhere", "default",
         R"(apiVersion: batch/v1
kind: Job
metadata: {name: prep}
spec:
  template:
    spec:
      restartPolicy: Never
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions: [{key: accelerator, operator: In, values: [nvidia]}]
            - matchExpressions: [{key: pool, operator: In, values: [cpu]}]
      containers: [{name: prep, image: p}]
)",
         ""},
        {"DaemonSetPodServesTheNode", "default",
         R"(apiVersion: v1
kind: Pod
metadata:
  name: dcgm-exporter-x7k2p
  ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: dcgm-exporter, uid: 2c7d9e4a-1b2c-4d5e-8f90-a1b2c3d4e5f6, controller: true}]
spec:
  nodeSelector: {accelerator: nvidia}
  tolerations: [{key: accelerator, operator: Exists}]
  containers: [{name: exporter, image: dcgm-exporter}]
)",
         ""},
        {"WildcardTolerationAimsNowhere", "default",
         R"(apiVersion: v1
kind: Pod
metadata: {name: agent}
spec:
  tolerations: [{operator: Exists}]
  containers: [{name: agent, image: fluent-bit}]
)",
         ""},
        {"GpuByDynamicResourceAllocation", "default",
         R"(apiVersion: v1
kind: Pod
metadata: {name: dra}
spec:
  nodeSelector: {accelerator: nvidia}
  tolerations: [{key: accelerator, operator: Exists}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: gpu-claim}]
  containers: [{name: main, image: busybox, resources: {claims: [{name: gpu}]}}]
)",
         ""}}},
      {8,
       {{"SelectorForAnotherAccelerator", "default",
         replaced(realtimeDeployment("", kServingContainer), "nodeSelector: {accelerator: nvidia}",
                  "nodeSelector: {accelerator: amd}"),
         "spec.template.spec.nodeSelector"},
        {"AffinityExcludesThePool", "default",
         realtimeDeployment(R"(
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions: [{key: zone, operator: Exists}, {key: accelerator, operator: NotIn, values: [nvidia, amd]}])",
                            kServingContainer),
         "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
         ".nodeSelectorTerms[0].matchExpressions[1]"},
        {"NoTolerationForThePoolTaint", "default",
         replaced(realtimeDeployment("", kServingContainer),
                  "tolerations: [{key: accelerator, operator: Equal, value: gpu, effect: "
                  "NoSchedule}]",
                  "tolerations: [{key: accelerator, operator: Equal, value: tpu}]"),
         "spec.template.spec.tolerations"},
        {"OneAffinityTermReachesThePool", "default",
         realtimeDeployment(R"(
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions: [{key: accelerator, operator: In, values: [amd]}]
            - matchExpressions: [{key: accelerator, operator: In, values: [nvidia, amd]}])",
                            kServingContainer),
         ""},
        {"NarrowerSelectorInsideThePool", "default",
         replaced(realtimeDeployment("", kServingContainer), "nodeSelector: {accelerator: nvidia}",
                  "nodeSelector: {accelerator: nvidia, nvidia.com/gpu.product: H100}"),
         ""}}},
      {9,
       {{"NoPortToProbe", "default",
         realtimeDeployment(
             "",
             R"({name: vllm, image: vllm, resources: {limits: {nvidia.com/gpu: 1, memory: 32Gi}}})"),
         "spec.template.spec.containers[0]"},
        {"ProfileWithoutProbes", "noprobe-team",
         realtimeDeployment(
             "",
             R"({name: vllm, image: vllm, ports: [{containerPort: 8000}], resources: {limits: {nvidia.com/gpu: 1, memory: 32Gi}}})"),
         "spec.template.spec.containers[0]"},
        {"PortLetsAiadmitInjectOne", "default",
         realtimeDeployment(
             "",
             R"({name: vllm, image: vllm, ports: [{containerPort: 8000}], resources: {limits: {nvidia.com/gpu: 1, memory: 32Gi}}})"),
         ""},
        {"OwnProbe", "noprobe-team", realtimeDeployment("", kServingContainer), ""}}},
      {10,
       {{"ParallelJobWithoutGang", "gang-research",
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
        {"SingleWorker", "gang-research", gpuJob("training", "\n  parallelism: 1", "", kOneGpu),
         ""}}},
      {11,
       {{"RealtimePriorityForTraining", "default",
         gpuJob("training", "", "\n      priorityClassName: ai-realtime", kOneGpu),
         "spec.template.spec.priorityClassName"},
        {"AnotherAllowedClass", "default",
         gpuJob("training", "", "\n      priorityClassName: ai-batch", kOneGpu), ""}}},
      {12,
       {{"NamespaceWithoutGpus", "restricted-web", gpuJob("batch", "", "", kOneGpu),
         "metadata.namespace"},
        {"AllowedNamespace", "restricted-gpu", gpuJob("batch", "", "", kOneGpu), ""},
        {"AllowedByPattern", "restricted-lab-7", gpuJob("batch", "", "", kOneGpu), ""}}},
      {13,
       {{"MigSliceForTraining", "default", gpuJob("training", "", "", R"(
      - {name: train, image: t, resources: {limits: {nvidia.com/mig-1g.10gb: 1}}})"),
         "spec.template.spec.containers[0].resources.limits"},
        {"TimeSlicedReplicaForTraining", "default", gpuJob("training", "", "", R"(
      - {name: train, image: t, resources: {limits: {nvidia.com/gpu.shared: 1}}})"),
         "spec.template.spec.containers[0].resources.limits"},
        {"SharingNodeSelectorForTraining", "default",
         replaced(gpuJob("training", "", "", kOneGpu), "nodeSelector: {accelerator: nvidia}",
                  "nodeSelector: {accelerator: nvidia, "
                  "cloud.google.com/gke-gpu-sharing-strategy: time-sharing}"),
         "spec.template.spec.nodeSelector"},
        {"MigSliceForBatch", "default", gpuJob("batch", "", "", R"(
      - {name: infer, image: i, resources: {limits: {nvidia.com/mig-1g.10gb: 1}}})"),
         ""}}},
      {14,
       {{"TrainingPodRestartsAlways", "default", gpuPod("training", R"(
  restartPolicy: Always
  containers: [{name: train, image: t, resources: {limits: {nvidia.com/gpu: 1}}}])"),
         "spec.restartPolicy"},
        {"BatchPodWithTheDefault", "default", gpuPod("batch", R"(
  containers: [{name: infer, image: i, resources: {limits: {nvidia.com/gpu: 1}}}])"),
         "spec.restartPolicy"},
        {"TrainingPodOnFailure", "default", gpuPod("training", R"(
  restartPolicy: OnFailure
  containers: [{name: train, image: t, resources: {limits: {nvidia.com/gpu: 1}}}])"),
         ""}}},
      {15,
       {{"ServerWithoutMemoryLimit", "default",
         realtimeDeployment(
             "",
             R"({name: vllm, image: vllm, ports: [{containerPort: 8000}], readinessProbe: {tcpSocket: {port: 8000}}, resources: {limits: {nvidia.com/gpu: 1}, requests: {memory: 32Gi}}})"),
         "spec.template.spec.containers[0].resources.limits"},
        {"MemoryLimitSet", "default", realtimeDeployment("", kServingContainer), ""}}},
  };
  return cases;
}

// One server per action, shared by the whole suite.
class RuleActionsTest : public ::testing::TestWithParam<int> {
 protected:
  static void SetUpTestSuite() {
    for (const char* action : {"deny", "warn", "off"}) {
      auto dir = std::make_unique<TempDir>();
      writeProfiles(*dir, action);
      WebhookServer::Options options;
      options.profilesDir = dir->path();
      servers_[action] = std::make_unique<WebhookServer>(options);
      dirs_.push_back(std::move(dir));
    }
  }
  static void TearDownTestSuite() {
    servers_.clear();
    dirs_.clear();
  }

  static ReviewResponse validate(const std::string& action, const RuleCase& c) {
    const HttpResponse http = servers_.at(action)->post(
        "/validate",
        makeReview(yamlToJson(c.manifest), "CREATE", "uid-" + c.name, "", c.namespaceName));
    EXPECT_EQ(http.status, 200) << http.body;
    return parseReviewResponse(http.body);
  }

  static inline std::map<std::string, std::unique_ptr<WebhookServer>> servers_;
  static inline std::vector<std::unique_ptr<TempDir>> dirs_;
};

const RuleCases& casesFor(int rule) {
  for (const RuleCases& rc : allCases()) {
    if (rc.rule == rule) return rc;
  }
  static const RuleCases none{0, {}};
  return none;
}

TEST_P(RuleActionsTest, ViolationsFollowTheActionAndNearMissesPass) {
  const RuleId rule{GetParam()};
  std::string tag = "[";
  tag += rule.name();
  tag += "]";
  const RuleCases& rc = casesFor(rule.number);
  ASSERT_FALSE(rc.cases.empty()) << "no cases for " << rule.name();
  bool sawViolation = false, sawNearMiss = false;
  for (const RuleCase& c : rc.cases) {
    SCOPED_TRACE(rule.name() + " " + c.name);
    const bool violates = !c.field.empty();
    (violates ? sawViolation : sawNearMiss) = true;

    const ReviewResponse denied = validate("deny", c);
    if (violates) {
      // The only violation, so rules do not report each other's problems.
      EXPECT_FALSE(denied.allowed);
      EXPECT_EQ(denied.statusCode, 403);
      EXPECT_EQ(denied.statusReason, "Forbidden");
      EXPECT_EQ(denied.message.rfind(tag + " " + c.field + ": ", 0), 0u) << denied.message;
      EXPECT_EQ(denied.message.find('\n'), std::string::npos) << denied.message;
      EXPECT_NE(denied.message.find("; "), std::string::npos) << "no fix: " << denied.message;
    } else {
      EXPECT_TRUE(denied.allowed) << denied.message;
    }
    EXPECT_TRUE(denied.warnings.empty()) << denied.warnings.front();

    const ReviewResponse warned = validate("warn", c);
    EXPECT_TRUE(warned.allowed) << warned.message;
    if (violates) {
      ASSERT_EQ(warned.warnings.size(), 1u);
      EXPECT_EQ(warned.warnings[0].rfind("aiadmit: " + tag + " ", 0), 0u) << warned.warnings[0];
      EXPECT_LE(warned.warnings[0].size(), kMaxWarningLength);
      EXPECT_NE(warned.warnings[0].substr(warned.warnings[0].size() - 3), "...")
          << "cut: " << warned.warnings[0];
    } else {
      EXPECT_TRUE(warned.warnings.empty()) << warned.warnings.front();
    }

    const ReviewResponse off = validate("off", c);
    EXPECT_TRUE(off.allowed) << off.message;
    EXPECT_TRUE(off.warnings.empty()) << off.warnings.front();
  }
  EXPECT_TRUE(sawViolation && sawNearMiss) << "each rule needs a violation and a near miss";
}

// The rules on the cluster view (AIA016 on) need a view, which `serve` does
// not run yet; tests/cli/check_cluster_test.cpp holds them to their actions
// through `check --cluster`.
INSTANTIATE_TEST_SUITE_P(AllRules, RuleActionsTest, ::testing::Range(kFirstRule, AIA016.number),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return RuleId{info.param}.name();
                         });

}  // namespace
}  // namespace aiadmit

namespace aiadmit {
namespace {

// Shapes the API server would refuse or never send still get a well-formed
// decision, and the server keeps answering.
TEST(RuleInputs, OddShapesGetAnAnswer) {
  WebhookServer server;
  const std::vector<std::string> podSpecs = {
      R"({"containers":"x"})",
      R"({"containers":[1,null,{"resources":"x"},{"resources":{"limits":[]}}]})",
      R"({"containers":[{"resources":{"limits":{"nvidia.com/gpu":true,"amd.com/gpu":null,"gpu":{}}}}]})",
      R"({"containers":[{"resources":{"limits":{"nvidia.com/gpu":1e308},"requests":{"nvidia.com/gpu":"99999999999999999999999"}}}]})",
      R"({"initContainers":[{"restartPolicy":"Always","resources":{"limits":{"nvidia.com/gpu":"9223372036854775807"}}}],"containers":[{"resources":{"limits":{"nvidia.com/gpu":"9223372036854775807"}}}]})",
      R"({"nodeSelector":[],"tolerations":{},"affinity":[]})",
      R"({"nodeSelector":{"accelerator":5},"tolerations":[null,1,{"key":1}],"containers":[]})",
      R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[null,1,{"matchExpressions":[null,{"key":5},{"key":"accelerator","operator":"Gt","values":["x"]},{"key":"accelerator","operator":"In","values":[1,null]}]}]}}},"containers":[{"resources":{"limits":{"nvidia.com/gpu":1}}}]})",
      R"({"priorityClassName":7,"restartPolicy":[],"schedulerName":{},"containers":[{"name":3,"ports":"x","readinessProbe":1,"resources":{"limits":{"nvidia.com/gpu":"1"}}}]})",
  };
  int index = 0;
  for (const std::string kind : {"Pod", "Deployment", "Job", "CronJob"}) {
    for (const std::string& spec : podSpecs) {
      std::string object;
      const std::string annotations =
          R"({"aiadmit.dev/workload":"training","aiadmit.dev/gpu-container":"missing"})";
      if (kind == "Pod") {
        object = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":)" +
                 annotations + R"(,"ownerReferences":"x"},"spec":)" + spec + "}";
      } else if (kind == "CronJob") {
        object =
            R"({"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"c"},"spec":{"jobTemplate":{"spec":{"parallelism":"4","completionMode":5,"template":{"metadata":{"annotations":)" +
            annotations + R"(},"spec":)" + spec + "}}}}}";
      } else {
        object =
            R"({"apiVersion":")" + std::string(kind == "Job" ? "batch/v1" : "apps/v1") +
            R"(","kind":")" + kind +
            R"(","metadata":{"name":"x","labels":[]},"spec":{"replicas":-1,"template":{"metadata":{"annotations":)" +
            annotations + R"(,"labels":"y"},"spec":)" + spec + "}}}";
      }
      SCOPED_TRACE(object);
      for (const char* operation : {"CREATE", "UPDATE"}) {
        const std::string uid = "odd-" + std::to_string(index++);
        const HttpResponse http = server.post(
            "/validate",
            makeReview(object, operation, uid, std::string(operation) == "UPDATE" ? object : ""));
        ASSERT_EQ(http.status, 200) << http.body;
        const ReviewResponse response = parseReviewResponse(http.body);
        EXPECT_EQ(response.uid, uid);
        if (!response.allowed) {
          EXPECT_EQ(response.statusCode, 403) << response.message;
        }
      }
    }
  }
  EXPECT_EQ(server.get("/healthz").status, 200);
}

}  // namespace
}  // namespace aiadmit
