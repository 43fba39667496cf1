// Who counts as a controller: controllers.yaml's list, copied into the
// webhooks' conditions. An ownerReference anyone may write (the API server
// checks neither who writes it nor what it names): an object is a
// controller's (controlled.*, failurePolicy Ignore) only when the request
// comes from an identity the list gives for its owner's kind; with anyone
// else's request it reaches exactly the webhooks it reaches without the
// ownerReference, the Fail tier's. Evaluated as kube-apiserver evaluates the
// matchConditions (admission_matching.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/install/admission_matching.h"
#include "tests/install/rendered_manifests.h"

namespace aiadmit {
namespace {

using namespace install;

int occurrencesIn(const std::string& haystack, const std::string& text) {
  int count = 0;
  for (size_t at = haystack.find(text); at != std::string::npos; at = haystack.find(text, at + 1)) {
    ++count;
  }
  return count;
}

// How often `text` occurs in the rendered objects.
int occurrences(const Rendered& rendered, const std::string& text) {
  int count = 0;
  for (const std::string& object : rendered.jsons()) count += occurrencesIn(object, text);
  return count;
}

constexpr const char* kTeamAccount = "system:serviceaccount:team-a:default";

// `objectJson` with a controlling ownerReference to `apiVersion`/`kind`.
std::string ownedBy(const std::string& objectJson, const char* apiVersion, const char* kind) {
  const auto doc = parseJson(objectJson);
  auto& allocator = doc->GetAllocator();
  JsonValue owner(rapidjson::kObjectType);
  owner.AddMember("apiVersion", JsonValue(apiVersion, allocator), allocator);
  owner.AddMember("kind", JsonValue(kind, allocator), allocator);
  owner.AddMember("name", "owner", allocator);
  owner.AddMember("uid", "1", allocator);
  owner.AddMember("controller", true, allocator);
  JsonValue owners(rapidjson::kArrayType);
  owners.PushBack(owner, allocator);
  JsonValue& metadata = (*doc)["metadata"];
  metadata.RemoveMember("ownerReferences");
  metadata.AddMember("ownerReferences", owners, allocator);
  return toJson(*doc);
}

// Every object of the corpus, made "owned" by a ReplicaSet and by an
// operator's kind, by a person and by a team's service account: it reaches
// exactly the webhooks it reaches without the ownerReference.
TEST(ControllersList, EveryCorpusObjectWithAForgedOwnerReachesWhatItReachesWithout) {
  const Rendered base = render(manifestsDir() + "/base");
  const std::vector<std::pair<const char*, const char*>> owners = {
      {"apps/v1", "ReplicaSet"}, {"batch/v1", "Job"}, {"kubeflow.org/v1", "PyTorchJob"}};
  std::vector<AdmissionCase> cases;
  std::vector<std::string> ids;
  for (const CorpusObject& object : corpusObjects()) {
    if (resourceOf(parseJson(object.json).get()).resource == "others") continue;
    const std::string id = object.file + "#" + std::to_string(object.index);
    ids.push_back(id);
    cases.push_back({id, object.json});
    for (const auto& [apiVersion, kind] : owners) {
      const std::string forged = ownedBy(object.json, apiVersion, kind);
      cases.push_back({id + " owned by a " + kind, forged});
      cases.push_back(by(kTeamAccount, {id + " owned by a " + kind + ", by an account", forged}));
    }
  }
  ASSERT_GE(ids.size(), 10u);
  const auto outcomes = evaluateMatching(base, cases);
  int sent = 0;
  for (const std::string& id : ids) {
    SCOPED_TRACE(id);
    const auto& unowned = outcomes.at(id);
    sent += unowned.at(kAppliedMutate) == "call" ? 1 : 0;
    for (const auto& [apiVersion, kind] : owners) {
      EXPECT_EQ(outcomes.at(id + " owned by a " + kind), unowned) << kind;
      EXPECT_EQ(outcomes.at(id + " owned by a " + kind + ", by an account"), unowned) << kind;
    }
  }
  EXPECT_GE(sent, 8) << "the corpus's AI workloads reach the Fail tier";
}

std::string gpuPod(std::string_view metadataExtra = "", std::string_view specExtra = "") {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p")" + std::string(metadataExtra) +
         R"(},"spec":{"containers":[{"name":"main","image":"vllm","resources":{"limits":{"nvidia.com/gpu":"1"}}}])" +
         std::string(specExtra) + "}}";
}

std::string gpuDeployment(std::string_view metadataExtra = "") {
  return R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d")" +
         std::string(metadataExtra) +
         R"(},"spec":{"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},)"
         R"("spec":{"containers":[{"name":"main","image":"vllm","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}}})";
}

std::string gpuJob(bool suspend, std::string_view metadataExtra = "") {
  return R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j")" +
         std::string(metadataExtra) + R"(},"spec":{"suspend":)" + (suspend ? "true" : "false") +
         R"(,"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"main","image":"t","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}}})";
}

std::string owner(std::string_view apiVersion, std::string_view kind) {
  return R"(,"ownerReferences":[{"apiVersion":")" + std::string(apiVersion) + R"(","kind":")" +
         std::string(kind) + R"(","name":"o","uid":"1","controller":true}])";
}

// In the order applied.mutate, reconciled.mutate, controlled.mutate,
// applied.validate, reconciled.validate, controlled.validate: C call, S skip.
TEST(ControllersList, AnOwnerIsBelievedOnlyFromAnIdentityTheListGivesForItsKind) {
  const std::string aiPool = R"(,"nodeSelector":{"accelerator":"nvidia"})";
  const std::string daemonSetPod =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p")" + owner("apps/v1", "DaemonSet") +
      R"(},"spec":{"containers":[{"name":"agent","image":"dcgm"}])" + aiPool + "}}";
  const std::string rsPod = gpuPod(owner("apps/v1", "ReplicaSet"));
  const std::vector<Expectation> expectations = {
      // Forged: a person's or a team account's object, whatever it names.
      {{"bare pod owned by a replicaset", rsPod}, "CSSCSS"},
      {by(kTeamAccount, {"pod owned by a replicaset, by a team account", rsPod}), "CSSCSS"},
      {{"bare pod owned by a job", gpuPod(owner("batch/v1", "Job"))}, "CSSCSS"},
      {{"bare pod owned by a pytorchjob", gpuPod(owner("kubeflow.org/v1", "PyTorchJob"))},
       "CSSCSS"},
      {{"deployment owned by an inferenceservice",
        gpuDeployment(owner("serving.kserve.io/v1beta1", "InferenceService"))},
       "CSSCSS"},
      {{"deployment owned by a configmap", gpuDeployment(owner("v1", "ConfigMap"))}, "CSSCSS"},
      {{"job owned by a jobset", gpuJob(false, owner("jobset.x-k8s.io/v1alpha2", "JobSet"))},
       "CSSCSS"},
      {{"pod owned by a daemonset aimed at the gpu pool", daemonSetPod}, "SSSCSS"},
      // A controller of another kind, or the right kind of another group.
      {by(kJobController, {"pod owned by a replicaset, by the job controller", rsPod}), "CSSCSS"},
      {by(kReplicaSetController, {"pod owned by a volcano job, by the replicaset controller",
                                  gpuPod(owner("batch.volcano.sh/v1alpha1", "Job"))}),
       "CSSCSS"},
      {by(kTrainingOperator, {"pod owned by a pytorchjob of another group, by its operator",
                              gpuPod(owner("example.com/v1", "PyTorchJob"))}),
       "CSSCSS"},
      // Beside each: the controller's own request.
      {by(kReplicaSetController, {"pod of a replicaset", rsPod}), "SSCSSS"},
      {by("system:kube-controller-manager",
          {"pod of a replicaset, by kube-controller-manager", rsPod}),
       "SSCSSS"},
      {by(kJobController, {"pod of a job", gpuPod(owner("batch/v1", "Job"))}), "SSCSSS"},
      {by(kTrainingOperator,
          {"pod of a pytorchjob", gpuPod(owner("kubeflow.org/v1", "PyTorchJob"))}),
       "SSCSSC"},
      {by(kKserveController,
          {"deployment of an inferenceservice",
           gpuDeployment(owner("serving.kserve.io/v1beta1", "InferenceService"))}),
       "SSCSSC"},
      {by(kJobSetController,
          {"job of a jobset", gpuJob(false, owner("jobset.x-k8s.io/v1alpha2", "JobSet"))}),
       "SSCSSC"},
      {by(kDaemonSetController, {"pod of a daemonset aimed at the gpu pool", daemonSetPod}),
       "SSSSSS"},
      {by(kLwsController,
          {"statefulset of a leader pod",
           R"({"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"w")" +
               owner("v1", "Pod") +
               R"(},"spec":{"template":{"spec":{"containers":[{"name":"main","image":"vllm","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}}})"}),
       "SSCSSC"},
      // Updates: a person's edit of what a controller made is a person's;
      // its controller's is no webhook's, as before.
      {{"pod of a replicaset relabelled by a person",
        gpuPod(R"(,"labels":{"a":"b"})" + owner("apps/v1", "ReplicaSet")), rsPod, "UPDATE"},
       "SSSCSS"},
      {by(kReplicaSetController,
          {"pod of a replicaset relabelled by its controller",
           gpuPod(R"(,"labels":{"a":"b"})" + owner("apps/v1", "ReplicaSet")), rsPod, "UPDATE"}),
       "SSSSSS"},
      {{"job of a jobset unsuspended by a person",
        gpuJob(false, owner("jobset.x-k8s.io/v1alpha2", "JobSet")),
        gpuJob(true, owner("jobset.x-k8s.io/v1alpha2", "JobSet")), "UPDATE"},
       "CSSCSS"},
      {by(kJobSetController, {"job of a jobset unsuspended by its controller",
                              gpuJob(false, owner("jobset.x-k8s.io/v1alpha2", "JobSet")),
                              gpuJob(true, owner("jobset.x-k8s.io/v1alpha2", "JobSet")), "UPDATE"}),
       "SSSSSS"},
      // Kueue controls Jobs, not CronJobs: its unsuspending of a CronJob's
      // Job is a controller's update of a Job (the fail-open tier, where
      // aiadmit never refuses a suspend).
      {by(kKueue,
          {"job of a cronjob unsuspended by kueue", gpuJob(false, owner("batch/v1", "CronJob")),
           gpuJob(true, owner("batch/v1", "CronJob")), "UPDATE"}),
       "SCSSCS"},
  };
  expectOutcomes(expectations);
}

// The list reaches every condition that decides by it (no placeholder is
// left in the rendered webhooks), names a controller for every kind of the
// workload-type table that makes Pods or workloads, and the built-in
// controllers under both names kube-controller-manager may use.
TEST(ControllersList, ListIsCopiedIntoEveryConditionAndNamesTheTablesControllers) {
  const Rendered base = render(manifestsDir() + "/base");
  EXPECT_EQ(base.find("ConfigMap", "aiadmit-controllers"), nullptr) << "local-config: not applied";
  int copies = 0;
  for (const char* kind : {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}) {
    for (const JsonValue* configuration : base.ofKind(kind)) {
      for (const JsonValue& webhook : member(configuration, "webhooks")->GetArray()) {
        const JsonValue* conditions = member(&webhook, "matchConditions");
        if (!isArray(conditions)) continue;
        for (const JsonValue& condition : conditions->GetArray()) {
          const std::string expression(stringMember(&condition, "expression"));
          if (expression.find("controllers.yaml") == std::string::npos) continue;
          ++copies;
          SCOPED_TRACE(std::string(stringMember(&webhook, "name")) + " " +
                       std::string(stringMember(&condition, "name")));
          // Both maps, each between its two comment lines: the shipped one
          // filled in.
          EXPECT_EQ(occurrencesIn(expression, "// the controllers of each kind"), 4);
          EXPECT_NE(expression.find(kKueue), std::string::npos);
        }
      }
    }
  }
  // Two conditions in each applied and reconciled webhook, one in each
  // controlled one.
  EXPECT_EQ(copies, 10);

  const ControllerList list = controllerList();
  for (const auto& [kind, group] :
       std::vector<std::pair<std::string, std::string>>{{"ReplicaSet", "apps"},
                                                        {"Deployment", "apps"},
                                                        {"StatefulSet", "apps"},
                                                        {"DaemonSet", "apps"},
                                                        {"Job", "batch"},
                                                        {"CronJob", "batch"}}) {
    SCOPED_TRACE(kind);
    ASSERT_TRUE(list.count(kind) && list.at(kind).count(group));
    const std::vector<std::string>& identities = list.at(kind).at(group);
    EXPECT_NE(std::find(identities.begin(), identities.end(), "system:kube-controller-manager"),
              identities.end());
    EXPECT_TRUE(std::any_of(identities.begin(), identities.end(), [](const std::string& id) {
      return id.starts_with("system:serviceaccount:kube-system:") && id.ends_with("-controller");
    }));
  }
  for (const WorkloadType& type : WorkloadTypeTable::builtIn()->types()) {
    // A runtime is a template others read; nothing is made from it.
    if (!type.customResource || type.kind.ends_with("TrainingRuntime")) continue;
    SCOPED_TRACE(type.kind + "." + type.group);
    EXPECT_TRUE(list.count(type.kind) && list.at(type.kind).count(type.group));
  }
  // Kueue's updates of what people apply, for the kinds it queues.
  for (const auto& [kind, group] : std::vector<std::pair<std::string, std::string>>{
           {"Job", "batch"},
           {"JobSet", "jobset.x-k8s.io"},
           {"RayJob", "ray.io"},
           {"PyTorchJob", "kubeflow.org"},
           {"LeaderWorkerSet", "leaderworkerset.x-k8s.io"}}) {
    const std::vector<std::string>& identities = list.at(kind).at(group);
    EXPECT_NE(std::find(identities.begin(), identities.end(), kKueue), identities.end()) << kind;
  }
}

// The overlay docs/install.md shows: its operators' list adds to what
// aiadmit ships, in every condition, and their children are theirs.
TEST(ControllersList, DocumentedOverlayAddsItsOperatorsToTheShippedList) {
  namespace fs = std::filesystem;
  const std::string component = documentedYaml("in a component of your overlay");
  std::string overlay = documentedYaml("and list it, then the component");
  ASSERT_NE(component.find("kind: Component"), std::string::npos);
  ASSERT_NE(overlay.find("components:"), std::string::npos);
  TempDir dir;
  fs::create_directories(dir.file("my-aiadmit/operators"));
  writeFile(dir.file("my-aiadmit/operators/kustomization.yaml"), component);
  fs::create_directories(dir.file("aiadmit"));
  fs::copy(sourceDir() + "/manifests", dir.file("aiadmit/manifests"), fs::copy_options::recursive);
  fs::copy(sourceDir() + "/profiles", dir.file("aiadmit/profiles"), fs::copy_options::recursive);
  writeFile(dir.file("my-aiadmit/kustomization.yaml"), overlay);
  const Rendered rendered = render(dir.file("my-aiadmit"));
  const std::string notebooks =
      "system:serviceaccount:kubeflow:notebook-controller-service-account";
  EXPECT_EQ(occurrences(rendered, notebooks), 10) << "in each condition that decides by the list";
  EXPECT_EQ(occurrences(rendered, kKueue), occurrences(render(manifestsDir() + "/base"), kKueue))
      << "the shipped list is kept";

  const std::string server = gpuPod(owner("kubeflow.org/v1", "Notebook"));
  const auto outcomes = evaluateMatching(
      rendered,
      {by(notebooks, {"server by its operator", server}),
       {"server by a person", server},
       by(kReplicaSetController, {"pod of a replicaset", gpuPod(owner("apps/v1", "ReplicaSet"))})});
  EXPECT_EQ(outcomes.at("server by its operator").at(kControlledMutate), "call");
  EXPECT_EQ(outcomes.at("server by its operator").at(kAppliedMutate), "skip");
  EXPECT_EQ(outcomes.at("server by a person").at(kAppliedMutate), "call");
  EXPECT_EQ(outcomes.at("server by a person").at(kControlledMutate), "skip");
  EXPECT_EQ(outcomes.at("pod of a replicaset").at(kControlledMutate), "call");
}

}  // namespace
}  // namespace aiadmit
