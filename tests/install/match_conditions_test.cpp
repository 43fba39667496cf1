// The matchConditions of the webhook configurations, evaluated the way
// kube-apiserver does (rules, selectors, then CEL by tests/schema): every
// object aiadmit acts on is sent, compared with what the real server does
// with it, and what aiadmit has no reason to see is left out; operators'
// kinds are always sent, and an operator's Jobs, StatefulSets and
// Deployments go to the controlled mutating webhook when their operator
// makes them. Who asks decides between the applied and reconciled tiers
// (reconciled_tier_test.cpp) and whether an owner is believed
// (controllers_list_test.cpp).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/install/admission_matching.h"
#include "tests/install/rendered_manifests.h"
#include "webhook/model/workload_type.h"

namespace aiadmit {
namespace {

using namespace install;

// A Pod as a controller makes it from a workload's pod template.
std::string podFromTemplate(const JsonValue& workload, std::string_view ownerApiVersion,
                            std::string_view ownerKind) {
  const JsonValue* spec = member(&workload, "spec");
  const JsonValue* jobTemplate = member(spec, "jobTemplate");
  const JsonValue* podTemplate =
      member(jobTemplate != nullptr ? member(jobTemplate, "spec") : spec, "template");
  const JsonValue* metadata = member(podTemplate, "metadata");
  if (!isObject(member(podTemplate, "spec"))) {
    ADD_FAILURE() << "no pod template in " << toJson(workload).substr(0, 200);
    return "{}";
  }
  std::string pod =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"made","labels":)" +
      (isObject(member(metadata, "labels")) ? toJson(*member(metadata, "labels")) : "{}") +
      R"(,"annotations":)" +
      (isObject(member(metadata, "annotations")) ? toJson(*member(metadata, "annotations"))
                                                 : "{}") +
      R"(,"ownerReferences":[{"apiVersion":)" + jsonString(ownerApiVersion) + R"(,"kind":)" +
      jsonString(ownerKind) + R"(,"name":"owner","uid":"1","controller":true}]},"spec":)" +
      toJson(*member(podTemplate, "spec")) + "}";
  return pod;
}

bool mutateActs(const ReviewResponse& response) {
  return !response.patch.empty() || !response.warnings.empty() || !response.allowed;
}
bool validateActs(const ReviewResponse& response) {
  return !response.allowed || !response.warnings.empty();
}

TEST(MatchConditions, MatchConditionsSendEveryObjectAiadmitActsOn) {
  const Rendered base = render(manifestsDir() + "/base");
  WebhookServer server;
  std::vector<AdmissionCase> cases;
  std::map<std::string, std::pair<bool, bool>> acts;  // id → (mutate acts, validate acts)
  auto addCase = [&](AdmissionCase c) {
    const std::string review = makeReview(c.object, c.operation, c.id, c.oldObject, "team-a");
    // The path its tier calls: the controller's, or the applied one.
    const std::string path = c.id.find(" pod of ") != std::string::npos ? "" : "/applied";
    const HttpResponse mutated = server.post(path + "/mutate", review);
    const HttpResponse validated = server.post(path + "/validate", review);
    ASSERT_EQ(mutated.status, 200) << c.id << mutated.body;
    ASSERT_EQ(validated.status, 200) << c.id << validated.body;
    acts[c.id] = {mutateActs(parseReviewResponse(mutated.body)),
                  validateActs(parseReviewResponse(validated.body))};
    cases.push_back(std::move(c));
  };
  int workloads = 0;
  std::set<std::string> customKinds;
  for (const CorpusObject& object : corpusObjects()) {
    const auto parsed = parseJson(object.json);
    const Resource resource = resourceOf(parsed.get());
    if (resource.resource == "others") continue;
    ++workloads;
    const std::string id = object.file + "#" + std::to_string(object.index);
    addCase({id, object.json});
    if (!isKubernetesKind(resource)) customKinds.insert(resource.group + "/" + object.kind);
    // Its Pods: made by a built-in controller, or by an operator. An
    // operator's own Pods come from templates at its kind's paths.
    if (object.kind == "Pod" || !isKubernetesKind(resource)) continue;
    addCase(by(kTrainingOperator, {id + " pod of an operator",
                                   podFromTemplate(*parsed, "kubeflow.org/v1", "PyTorchJob")}));
    addCase(by(kReplicaSetController,
               {id + " pod of a ReplicaSet", podFromTemplate(*parsed, "apps/v1", "ReplicaSet")}));
  }
  ASSERT_GE(workloads, 10);

  const auto outcomes = evaluateMatching(base, cases);
  int sentToMutate = 0;
  for (const AdmissionCase& c : cases) {
    SCOPED_TRACE(c.id);
    const auto& outcome = outcomes.at(c.id);
    for (const auto& [webhook, result] : outcome) {
      EXPECT_TRUE(result == "call" || result == "skip") << webhook << ": " << result;
    }
    const bool controlled = c.id.find(" pod of ") != std::string::npos;
    const bool builtInOwner = c.id.find(" pod of a ReplicaSet") != std::string::npos;
    const auto [mutates, validates] = acts.at(c.id);
    // An operator's kind is always sent to both applied webhooks.
    if (!isKubernetesKind(resourceOf(parseJson(c.object).get()))) {
      EXPECT_EQ(outcome.at(kAppliedMutate), "call");
      EXPECT_EQ(outcome.at(kAppliedValidate), "call");
    }
    if (mutates) {
      ++sentToMutate;
      EXPECT_EQ(outcome.at(controlled ? kControlledMutate : kAppliedMutate), "call");
    }
    if (validates && !builtInOwner) {
      EXPECT_EQ(outcome.at(controlled ? kControlledValidate : kAppliedValidate), "call");
    }
    // Pods of built-in controllers are never validated again: their template
    // was, when it was applied.
    if (builtInOwner) {
      EXPECT_EQ(outcome.at(kAppliedValidate), "skip");
      EXPECT_EQ(outcome.at(kControlledValidate), "skip");
    }
    // Exactly one webhook of each configuration at most.
    for (const auto& tiers :
         {std::vector<const char*>{kAppliedMutate, kReconciledMutate, kControlledMutate},
          {kAppliedValidate, kReconciledValidate, kControlledValidate}}) {
      int called = 0;
      for (const char* webhook : tiers) called += outcome.at(webhook) == "call" ? 1 : 0;
      EXPECT_LE(called, 1) << tiers[0];
    }
  }
  EXPECT_GE(sentToMutate, 8) << "the GPU workloads of the corpus are acted on";
  for (const char* kind :
       {"kubeflow.org/PyTorchJob", "ray.io/RayJob", "leaderworkerset.x-k8s.io/LeaderWorkerSet",
        "serving.kserve.io/LLMInferenceService"}) {
    EXPECT_TRUE(customKinds.count(kind)) << kind << " is in the corpus";
  }
}

std::string gpuPod(std::string_view metadataExtra = "", std::string_view specExtra = "") {
  return std::string(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p")") +
         std::string(metadataExtra) +
         R"(},"spec":{"containers":[{"name":"main","image":"vllm","resources":{"limits":{"nvidia.com/gpu":"1"}}}])" +
         std::string(specExtra) + "}}";
}

std::string plainPod(std::string_view metadataExtra = "", std::string_view specExtra = "") {
  return std::string(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p")") +
         std::string(metadataExtra) +
         R"(},"spec":{"containers":[{"name":"web","image":"nginx","resources":{"requests":{"cpu":"100m","memory":"64Mi","hugepages-2Mi":"8Mi"}}}],)"
         R"("tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}])" +
         std::string(specExtra) + "}}";
}

std::string gpuDeployment(std::string_view metadataExtra = "", int replicas = 1) {
  return std::string(R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d")") +
         std::string(metadataExtra) + R"(},"spec":{"replicas":)" + std::to_string(replicas) +
         R"(,"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},)"
         R"("spec":{"containers":[{"name":"main","image":"vllm","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}}})";
}

constexpr const char* kReplicaSetOwner =
    R"(,"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"1","controller":true}])";
constexpr const char* kOperatorOwner =
    R"(,"ownerReferences":[{"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","name":"t","uid":"1","controller":true}])";

TEST(MatchConditions, MatchConditionsSkipWhatAiadmitHasNoReasonToSee) {
  const std::string aiPool = R"(,"nodeSelector":{"accelerator":"nvidia"})";
  const std::vector<Expectation>
      expectations =
          {
              {{"gpu pod", gpuPod()}, "CSSCSS"},
              {{"mirror pod",
                gpuPod(
                    R"(,"annotations":{"kubernetes.io/config.mirror":"abc"},"ownerReferences":[{"apiVersion":"v1","kind":"Node","name":"n","uid":"1","controller":true}])")},
               "SSSSSS"},
              {{"mirror pod without owner",
                gpuPod(R"(,"annotations":{"kubernetes.io/config.mirror":"abc"})")},
               "SSSSSS"},
              {{"plain pod", plainPod(R"(,"labels":{"app":"web"})",
                                      R"(,"nodeSelector":{"kubernetes.io/os":"linux"})")},
               "SSSSSS"},
              {{"pod aimed at the GPU pool without a GPU", plainPod("", aiPool)}, "SSSCSS"},
              {{"pod with node affinity", plainPod("", R"(,"affinity":{"nodeAffinity":{}})")},
               "SSSCSS"},
              // Bound by name to a node: AIA007 asks the cluster view whether
              // the node is one of the GPU pool's.
              {{"pod bound to a node by name", plainPod("", R"(,"nodeName":"gpu-node-1")")},
               "SSSCSS"},
              {{"pod with an empty node name", plainPod("", R"(,"nodeName":"")")}, "SSSSSS"},
              {{"pod tolerating every taint",
                plainPod("", R"(,"tolerations":[{"operator":"Exists"}])")},
               "SSSCSS"},
              {{"pod tolerating the GPU taint",
                plainPod(
                    "",
                    R"(,"tolerations":[{"key":"accelerator","operator":"Equal","value":"gpu","effect":"NoSchedule"}])")},
               "SSSCSS"},
              {{"pod asking for a mistyped GPU",
                R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"m","resources":{"requests":{"gpu":"1"}}}]}})"},
               "CSSCSS"},
              {{"pod with a GPU init container",
                R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"initContainers":[{"name":"i","resources":{"limits":{"amd.com/gpu":"1"}}}],"containers":[{"name":"m"}]}})"},
               "CSSCSS"},
              // Whether a DRA claim is a GPU's is for aiadmit to resolve (its
              // template, its device class), so every claim is sent.
              {{"pod claiming DRA devices",
                R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"resourceClaims":[{"name":"gpu","resourceClaimTemplateName":"one-gpu"}],"containers":[{"name":"m","resources":{"claims":[{"name":"gpu"}]}}]}})"},
               "CSSCSS"},
              {{"deployment claiming DRA devices",
                R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},"spec":{"resourceClaims":[{"name":"gpu","resourceClaimTemplateName":"one-gpu"}],"containers":[{"name":"m","resources":{"claims":[{"name":"gpu"}]}}]}}}})"},
               "CSSCSS"},
              {{"cronjob claiming DRA devices",
                R"({"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"c"},"spec":{"schedule":"@daily","jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"Never","resourceClaims":[{"name":"gpu","resourceClaimTemplateName":"one-gpu"}],"containers":[{"name":"m","resources":{"claims":[{"name":"gpu"}]}}]}}}}}})"},
               "CSSCSS"},
              {{"pod with an empty claim list", plainPod("", R"(,"resourceClaims":[])")}, "SSSSSS"},
              {{"pod annotated as a workload",
                plainPod(R"(,"annotations":{"aiadmit.dev/workload":"training"})")},
               "CSSCSS"},
              {{"pod with a non-controlling owner",
                gpuPod(
                    R"(,"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"c","uid":"1"}])")},
               "CSSCSS"},
              {by(kReplicaSetController, {"pod of a ReplicaSet", gpuPod(kReplicaSetOwner)}),
               "SSCSSS"},
              {by(kTrainingOperator, {"pod of an operator", gpuPod(kOperatorOwner)}), "SSCSSC"},
              {by(kTrainingOperator, {"plain pod of an operator", plainPod(kOperatorOwner)}),
               "SSSSSS"},
              {by(kDaemonSetController,
                  {"pod of a DaemonSet aimed at GPU nodes",
                   plainPod(
                       R"(,"ownerReferences":[{"apiVersion":"apps/v1","kind":"DaemonSet","name":"ds","uid":"1","controller":true}])",
                       aiPool)}),
               "SSSSSS"},
              {by(kReplicaSetController, {"pod of a ReplicaSet, updated",
                                          gpuPod(kReplicaSetOwner, R"(,"activeDeadlineSeconds":5)"),
                                          gpuPod(kReplicaSetOwner), "UPDATE"}),
               "SSSSSS"},
              {{"pod spec updated", gpuPod("", R"(,"activeDeadlineSeconds":5)"), gpuPod(),
                "UPDATE"},
               "SSSCSS"},
              {{"pod status written", gpuPod(), gpuPod(), "UPDATE",
                namespaceNamed("team-a", "true"), "status"},
               "SSSSSS"},
              {{"gpu deployment", gpuDeployment()}, "CSSCSS"},
              {by("system:serviceaccount:kube-system:deployment-controller",
                  {"replicaset of a deployment",
                   R"({"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"rs","ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"d","uid":"1","controller":true}]},)"
                   R"("spec":{"template":{"spec":{"containers":[{"name":"m","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}}})"}),
               "SSSSSS"},
              {by("system:serviceaccount:kube-system:cronjob-controller",
                  {"job of a cronjob",
                   R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j","ownerReferences":[{"apiVersion":"batch/v1","kind":"CronJob","name":"c","uid":"1","controller":true}]},)"
                   R"("spec":{"template":{"spec":{"containers":[{"name":"m","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}}})"}),
               "SSSSSS"},
              {by(kKserveController,
                  {"deployment of an operator",
                   R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","ownerReferences":[{"apiVersion":"serving.kserve.io/v1beta1","kind":"InferenceService","name":"i","uid":"1","controller":true}]},)"
                   R"("spec":{"template":{"spec":{"containers":[{"name":"m","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}}})"}),
               "SSCSSC"},
              {{"deployment applied again unchanged", gpuDeployment(), gpuDeployment(), "UPDATE"},
               "SSSSSS"},
              {{"deployment revision written by its controller",
                gpuDeployment(R"(,"annotations":{"deployment.kubernetes.io/revision":"2"})"),
                gpuDeployment(R"(,"annotations":{"deployment.kubernetes.io/revision":"1"})"),
                "UPDATE"},
               "SSSSSS"},
              {{"deployment scaled in its manifest", gpuDeployment("", 3), gpuDeployment("", 1),
                "UPDATE"},
               "CSSCSS"},
              {{"deployment relabelled", gpuDeployment(R"(,"labels":{"team":"b"})"),
                gpuDeployment(R"(,"labels":{"team":"a"})"), "UPDATE"},
               "CSSCSS"},
              {{"deployment given a profile",
                gpuDeployment(R"(,"annotations":{"aiadmit.dev/profile":"x"})"), gpuDeployment(),
                "UPDATE"},
               "CSSCSS"},
              {{"deployment losing its profile", gpuDeployment(),
                gpuDeployment(R"(,"annotations":{"aiadmit.dev/profile":"x"})"), "UPDATE"},
               "CSSCSS"},
              {{"deployment being deleted",
                gpuDeployment(R"(,"deletionTimestamp":"2026-01-01T00:00:00Z","finalizers":[])"),
                gpuDeployment(R"(,"deletionTimestamp":"2026-01-01T00:00:00Z","finalizers":["x"])"),
                "UPDATE"},
               "SSSSSS"},
              {{"deployment asking for GPUs by template annotation",
                R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"template":{"metadata":{"annotations":{"aiadmit.dev/gpus":"2"}},"spec":{"containers":[{"name":"m"}]}}}})"},
               "CSSCSS"},
              {{"deployment without a template",
                R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{}})"},
               "CSSCSS"},
              {{"plain statefulset",
                R"({"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"s"},"spec":{"template":{"metadata":{},"spec":{"containers":[{"name":"db"}]}}}})"},
               "SSSSSS"},
              {{"gpu cronjob",
                R"({"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"c"},"spec":{"schedule":"@daily","jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"m","resources":{"limits":{"nvidia.com/gpu":"8"}}}]}}}}}})"},
               "CSSCSS"},
              {{"cronjob aimed at the GPU pool",
                R"({"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"c"},"spec":{"schedule":"@daily","jobTemplate":{"spec":{"template":{"spec":{"nodeSelector":{"accelerator":"nvidia"},"containers":[{"name":"m"}]}}}}}})"},
               "SSSCSS"},
              {{"cronjob without a job template",
                R"({"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"c"},"spec":{"schedule":"@daily"}})"},
               "CSSCSS"},
              {{"gpu pod in kube-system", gpuPod(), "", "CREATE",
                namespaceNamed("kube-system", "true")},
               "SSSSSS"},
              {{"gpu pod in aiadmit-system", gpuPod(), "", "CREATE",
                namespaceNamed(std::string(kNamespace), "true")},
               "SSSSSS"},
              {{"gpu pod in a namespace not opted in", gpuPod(), "", "CREATE",
                namespaceNamed("team-b", std::nullopt)},
               "SSSSSS"},
              {{"gpu pod in a namespace opted out", gpuPod(), "", "CREATE",
                namespaceNamed("team-c", "false")},
               "SSSSSS"},
          };
  expectOutcomes(expectations);
}

constexpr const char* kGpuContainer =
    R"({"name":"main","image":"vllm","resources":{"limits":{"nvidia.com/gpu":"1"}}})";
constexpr const char* kCpuContainer =
    R"({"name":"main","image":"python","resources":{"requests":{"cpu":"1"}}})";

// A Kubernetes workload (Job, StatefulSet, Deployment) with one container,
// controlled by `owner` ("" for none).
std::string ownedWorkload(std::string_view apiVersion, std::string_view kind,
                          std::string_view owner, std::string_view container) {
  const std::string owners =
      owner.empty() ? ""
                    : R"(,"ownerReferences":[{)" + std::string(owner) +
                          R"(,"name":"o","uid":"1","controller":true,"blockOwnerDeletion":true}])";
  return R"({"apiVersion":")" + std::string(apiVersion) + R"(","kind":")" + std::string(kind) +
         R"(","metadata":{"name":"w")" + owners +
         R"(},"spec":{"template":{"metadata":{"labels":{"app":"w"}},"spec":{"containers":[)" +
         std::string(container) + "]}}}}";
}

std::string rayJob(std::string_view metadataExtra, std::string_view entrypoint,
                   std::string_view status = "") {
  return R"({"apiVersion":"ray.io/v1","kind":"RayJob","metadata":{"name":"r")" +
         std::string(metadataExtra) + R"(},"spec":{"entrypoint":")" + std::string(entrypoint) +
         R"(","rayClusterSpec":{"headGroupSpec":{"rayStartParams":{},"template":{"spec":{"containers":[)" +
         kCpuContainer + R"(]}}}}})" + std::string(status) + "}";
}

constexpr const char* kJobSetOwner = R"("apiVersion":"jobset.x-k8s.io/v1alpha2","kind":"JobSet")";
constexpr const char* kLeaderWorkerSetOwner =
    R"("apiVersion":"leaderworkerset.x-k8s.io/v1","kind":"LeaderWorkerSet")";

TEST(MatchConditions, OperatorsKindsAreSentAndWhatOperatorsMakeIsMutatedBeforeItIsValidated) {
  const std::string runtime =
      R"({"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"ClusterTrainingRuntime","metadata":{"name":"torch")";
  const std::string runtimeSpec =
      R"(},"spec":{"template":{"spec":{"replicatedJobs":[{"name":"node","template":{"spec":{"template":{"spec":{"containers":[)" +
      std::string(kGpuContainer) + "]}}}}}]}}}}";
  const std::vector<Expectation> expectations = {
      // No GPU, no annotation: still sent, aiadmit reads the kind's templates.
      {{"cpu-only rayjob", rayJob("", "python x.py")}, "CSSCSS"},
      {{"pytorchjob without a template",
        R"({"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{"name":"t"},"spec":{}})"},
       "CSSCSS"},
      {{"volcano job",
        R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"v"},"spec":{"tasks":[]}})"},
       "CSSCSS"},
      {{"inferenceservice",
        R"({"apiVersion":"serving.kserve.io/v1beta1","kind":"InferenceService","metadata":{"name":"llama"},)"
        R"("spec":{"predictor":{"model":{"modelFormat":{"name":"huggingface"},"storageUri":"hf://meta-llama/Llama-3.1-8B",)"
        R"("resources":{"limits":{"nvidia.com/gpu":"1","memory":"24Gi"}}}}}})"},
       "CSSCSS"},
      {{"llminferenceservice v1alpha2",
        R"({"apiVersion":"serving.kserve.io/v1alpha2","kind":"LLMInferenceService","metadata":{"name":"l"},"spec":{}})"},
       "CSSCSS"},
      {{"rayjob in a namespace not opted in", rayJob("", "python x.py"), "", "CREATE",
        namespaceNamed("team-b", std::nullopt)},
       "SSSSSS"},
      {{"rayjob applied again unchanged", rayJob("", "python x.py"), rayJob("", "python x.py"),
        "UPDATE"},
       "SSSSSS"},
      {{"rayjob status written without a status subresource",
        rayJob("", "python x.py", R"(,"status":{"jobStatus":"RUNNING"})"),
        rayJob("", "python x.py"), "UPDATE"},
       "SSSSSS"},
      {{"rayjob entrypoint changed", rayJob("", "python y.py"), rayJob("", "python x.py"),
        "UPDATE"},
       "CSSCSS"},
      {{"rayjob given a profile", rayJob(R"(,"annotations":{"aiadmit.dev/profile":"x"})", "p"),
        rayJob("", "p"), "UPDATE"},
       "CSSCSS"},
      {by("system:serviceaccount:default:kuberay-operator",
          {"raycluster of a rayjob",
           R"({"apiVersion":"ray.io/v1","kind":"RayCluster","metadata":{"name":"c","ownerReferences":[{"apiVersion":"ray.io/v1","kind":"RayJob","name":"r","uid":"1","controller":true}]},"spec":{}})"}),
       "SSSSSS"},
      {{"cluster training runtime opted in",
        runtime + R"(,"labels":{"aiadmit.dev/enabled":"true"})" + runtimeSpec,
        "",
        "CREATE",
        {},
        "",
        true},
       "CSSCSS"},
      {{"cluster training runtime not opted in", runtime + runtimeSpec, "", "CREATE", {}, "", true},
       "SSSSSS"},
      {{"cluster training runtime opted out",
        runtime + R"(,"labels":{"aiadmit.dev/enabled":"false"})" + runtimeSpec,
        "",
        "CREATE",
        {},
        "",
        true},
       "SSSSSS"},
      // What operators make: mutated, then validated.
      {by(kJobSetController,
          {"gpu job of a jobset", ownedWorkload("batch/v1", "Job", kJobSetOwner, kGpuContainer)}),
       "SSCSSC"},
      {by(kJobSetController, {"cpu-only job of a jobset",
                              ownedWorkload("batch/v1", "Job", kJobSetOwner, kCpuContainer)}),
       "SSSSSS"},
      {by(kLwsController,
          {"gpu statefulset of a leaderworkerset",
           ownedWorkload("apps/v1", "StatefulSet", kLeaderWorkerSetOwner, kGpuContainer)}),
       "SSCSSC"},
      // A person's edit of what an operator made is a person's update.
      {{"gpu statefulset of a leaderworkerset, updated by a person",
        ownedWorkload("apps/v1", "StatefulSet", kLeaderWorkerSetOwner, kGpuContainer),
        ownedWorkload("apps/v1", "StatefulSet", kLeaderWorkerSetOwner, kCpuContainer), "UPDATE"},
       "CSSCSS"},
      {{"gpu statefulset of a leaderworkerset, updated by its operator",
        ownedWorkload("apps/v1", "StatefulSet", kLeaderWorkerSetOwner, kGpuContainer),
        ownedWorkload("apps/v1", "StatefulSet", kLeaderWorkerSetOwner, kCpuContainer), "UPDATE",
        namespaceNamed("team-a", "true"), "", false, kLwsController},
       "SSSSSS"},
      {by("system:serviceaccount:kube-system:cronjob-controller",
          {"gpu job of a cronjob",
           ownedWorkload("batch/v1", "Job", R"("apiVersion":"batch/v1","kind":"CronJob")",
                         kGpuContainer)}),
       "SSSSSS"},
      {by("system:serviceaccount:kube-system:deployment-controller",
          {"gpu replicaset of a deployment",
           ownedWorkload("apps/v1", "ReplicaSet", R"("apiVersion":"apps/v1","kind":"Deployment")",
                         kGpuContainer)}),
       "SSSSSS"},
      {by("system:serviceaccount:argo-rollouts:argo-rollouts",
          {"gpu replicaset of a rollout controller",
           ownedWorkload("apps/v1", "ReplicaSet",
                         R"("apiVersion":"argoproj.io/v1alpha1","kind":"Rollout")",
                         kGpuContainer)}),
       "SSSSSS"},
      {by(kJobController,
          {"gpu pod of a jobset's job",
           gpuPod(
               R"(,"ownerReferences":[{"apiVersion":"batch/v1","kind":"Job","name":"j","uid":"1","controller":true}])")}),
       "SSCSSS"},
      {{"cpu-only deployment", ownedWorkload("apps/v1", "Deployment", "", kCpuContainer)},
       "SSSSSS"},
  };
  expectOutcomes(expectations);
}

// ResourceClaims and ResourceClaimTemplates a person applies reach
// applied.validate, at every version, even one that names a Pod as its
// owner; a claim the resourceclaim controller makes for a Pod (its
// controlling owner) does not, nor the claim the scheduler makes for the
// Pod's extended resources that a DeviceClass serves (KEP-5004), nor does any
// webhook that mutates.
TEST(MatchConditions, ClaimObjectsAppliedAreSentToValidationOnly) {
  const Rendered base = render(manifestsDir() + "/base");
  const std::string spec = R"({"spec":{"devices":{"requests":[{"name":"gpu","exactly":)"
                           R"({"deviceClassName":"gpu.nvidia.comm","count":2}}]}}})";
  const std::string claimSpec =
      R"({"devices":{"requests":[{"name":"gpu","deviceClassName":"gpu.nvidia.com","count":2}]}})";
  const std::vector<AdmissionCase> cases = {
      {"template v1",
       R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaimTemplate","metadata":)"
       R"({"name":"t","namespace":"team-a"},"spec":)" +
           spec + "}"},
      {"claim v1beta1",
       R"({"apiVersion":"resource.k8s.io/v1beta1","kind":"ResourceClaim","metadata":)"
       R"({"name":"c","namespace":"team-a"},"spec":)" +
           claimSpec + "}"},
      by("system:serviceaccount:kube-system:resource-claim-controller",
         {"claim of a pod",
          R"({"apiVersion":"resource.k8s.io/v1beta2","kind":"ResourceClaim","metadata":)"
          R"({"name":"p-gpu","namespace":"team-a","ownerReferences":[{"apiVersion":"v1",)"
          R"("kind":"Pod","name":"p","uid":"1","controller":true}]},"spec":)" +
              claimSpec + "}"}),
      by("system:kube-scheduler",
         {"extended-resource claim of a pod",
          R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":)"
          R"({"generateName":"p-extended-resources-","namespace":"team-a","annotations":)"
          R"({"resource.kubernetes.io/extended-resource-claim":"true"},"ownerReferences":)"
          R"([{"apiVersion":"v1","kind":"Pod","name":"p","uid":"1","controller":true}]},)"
          R"("spec":{"devices":{"requests":[{"name":"container-0-request-0","exactly":)"
          R"({"deviceClassName":"extended.gpu.nvidia.com","count":2}}]}}})"}),
      // A person's claim that names a Pod as its owner is a person's claim.
      {"claim naming a pod, by a person",
       R"({"apiVersion":"resource.k8s.io/v1beta2","kind":"ResourceClaim","metadata":)"
       R"({"name":"p-gpu","namespace":"team-a","ownerReferences":[{"apiVersion":"v1",)"
       R"("kind":"Pod","name":"p","uid":"1","controller":true}]},"spec":)" +
           claimSpec + "}"},
  };
  const auto outcomes = evaluateMatching(base, cases);
  for (const AdmissionCase& c : cases) {
    SCOPED_TRACE(c.id);
    const auto& outcome = outcomes.at(c.id);
    const bool byItsController =
        c.id == "claim of a pod" || c.id == "extended-resource claim of a pod";
    EXPECT_EQ(outcome.at(kAppliedValidate), byItsController ? "skip" : "call");
    EXPECT_EQ(outcome.at(kAppliedMutate), "skip");
    EXPECT_EQ(outcome.at(kControlledMutate), "skip");
    EXPECT_EQ(outcome.at(kControlledValidate), "skip");
  }
}

}  // namespace
}  // namespace aiadmit
