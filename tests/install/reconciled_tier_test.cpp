// Who may be blocked while aiadmit is down. The Fail tier (applied.*) takes
// every CREATE of an object that is not its controller's, by anyone, and
// every UPDATE but a controller's; an UPDATE by an identity that
// controllers.yaml gives for the object's kind (Kueue toggling a Job's
// spec.suspend, a built-in controller) goes to the reconciled tier instead,
// which fails open and, while aiadmit is up, is called for exactly what
// applied.* would be called for. Any other identity (a GitOps controller,
// an autoscaler in a team's namespace, any service account) is judged as a
// person: a name beginning with system: is no credential. Evaluated as
// kube-apiserver evaluates the matchConditions (admission_matching.h).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/install/admission_matching.h"
#include "tests/install/rendered_manifests.h"

namespace aiadmit {
namespace {

using namespace install;

// `objectJson` with the label `key`=`value` set.
std::string withLabel(const std::string& objectJson, const char* key, const char* value) {
  const auto doc = parseJson(objectJson);
  auto& allocator = doc->GetAllocator();
  JsonValue& metadata = (*doc)["metadata"];
  if (!metadata.HasMember("labels")) {
    metadata.AddMember("labels", JsonValue(rapidjson::kObjectType), allocator);
  }
  JsonValue& labels = metadata["labels"];
  labels.RemoveMember(key);
  labels.AddMember(JsonValue(key, allocator), JsonValue(value, allocator), allocator);
  return toJson(*doc);
}

// Every object of the corpus, created and relabelled, by a person, by a
// controller of its kind and by another service account: the applied
// webhook a person's request reaches is the one a CREATE by anyone and the
// other account's UPDATE reach, and the reconciled one is what the
// controller's UPDATE reaches instead, never both.
TEST(ReconciledTier, AControllersUpdateReachesReconciledExactlyWhereAPersonsReachesApplied) {
  const Rendered base = render(manifestsDir() + "/base");
  const ControllerList controllers = controllerList();
  const std::string gitOps = "system:serviceaccount:argocd:argocd-application-controller";
  std::vector<AdmissionCase> cases;
  std::vector<std::string> ids;
  for (const CorpusObject& object : corpusObjects()) {
    const auto parsed = parseJson(object.json);
    const Resource resource = resourceOf(parsed.get());
    if (resource.resource == "others") continue;
    const auto kind = controllers.find(object.kind);
    if (kind == controllers.end() || !kind->second.count(resource.group)) continue;
    const std::string controller = kind->second.at(resource.group).back();
    const std::string id = object.file + "#" + std::to_string(object.index);
    const std::string relabelled = withLabel(object.json, "team", "b");
    const std::string old = withLabel(object.json, "team", "a");
    ids.push_back(id);
    cases.push_back({id + " created by a person", object.json});
    cases.push_back(by(controller, {id + " created by its controller", object.json}));
    cases.push_back({id + " updated by a person", relabelled, old, "UPDATE"});
    cases.push_back(by(controller, {id + " updated by its controller", relabelled, old, "UPDATE"}));
    cases.push_back(by(gitOps, {id + " updated by another account", relabelled, old, "UPDATE"}));
  }
  ASSERT_GE(ids.size(), 10u);
  const auto outcomes = evaluateMatching(base, cases);
  int updatesSent = 0;
  for (const std::string& id : ids) {
    SCOPED_TRACE(id);
    const auto& personCreates = outcomes.at(id + " created by a person");
    const auto& controllerCreates = outcomes.at(id + " created by its controller");
    const auto& personUpdates = outcomes.at(id + " updated by a person");
    const auto& controllerUpdates = outcomes.at(id + " updated by its controller");
    const auto& otherUpdates = outcomes.at(id + " updated by another account");
    for (const auto& [applied, reconciled] :
         {std::pair{kAppliedMutate, kReconciledMutate}, {kAppliedValidate, kReconciledValidate}}) {
      // A CREATE is the Fail tier's, whoever makes it.
      EXPECT_EQ(controllerCreates.at(applied), personCreates.at(applied)) << applied;
      EXPECT_EQ(personCreates.at(reconciled), "skip");
      EXPECT_EQ(controllerCreates.at(reconciled), "skip");
      // An UPDATE: a person's and another account's in the Fail tier, the
      // controller's out of it.
      EXPECT_EQ(personUpdates.at(reconciled), "skip");
      EXPECT_EQ(otherUpdates, personUpdates);
      EXPECT_EQ(controllerUpdates.at(applied), "skip");
      EXPECT_EQ(controllerUpdates.at(reconciled), personUpdates.at(applied)) << reconciled;
      updatesSent += personUpdates.at(applied) == "call" ? 1 : 0;
    }
  }
  EXPECT_GE(updatesSent, 20) << "relabelling sends the corpus's AI workloads";
}

constexpr const char* kGpuContainer =
    R"({"name":"main","image":"train","resources":{"limits":{"nvidia.com/gpu":"1"}}})";
constexpr const char* kCpuContainer =
    R"({"name":"head","image":"ray","resources":{"requests":{"cpu":"1"}}})";

std::string gpuJob(bool suspend, std::string_view metadataExtra = "") {
  return R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j",)"
         R"("labels":{"kueue.x-k8s.io/queue-name":"gpu"})" +
         std::string(metadataExtra) + R"(},"spec":{"suspend":)" + (suspend ? "true" : "false") +
         R"(,"template":{"spec":{"restartPolicy":"Never","containers":[)" + kGpuContainer + "]}}}}";
}

std::string jobSet(bool suspend) {
  return R"({"apiVersion":"jobset.x-k8s.io/v1alpha2","kind":"JobSet","metadata":{"name":"js"},)"
         R"("spec":{"suspend":)" +
         std::string(suspend ? "true" : "false") +
         R"(,"replicatedJobs":[{"name":"w","replicas":1,"template":{"spec":{"template":{"spec":)"
         R"({"restartPolicy":"Never","containers":[)" +
         kGpuContainer + "]}}}}}]}}";
}

std::string rayCluster(int workers) {
  return R"({"apiVersion":"ray.io/v1","kind":"RayCluster","metadata":{"name":"rc"},"spec":{)"
         R"("headGroupSpec":{"rayStartParams":{},"template":{"spec":{"containers":[)" +
         std::string(kCpuContainer) + R"(]}}},"workerGroupSpecs":[{"groupName":"gpu","replicas":)" +
         std::to_string(workers) +
         R"(,"minReplicas":0,"maxReplicas":8,"rayStartParams":{},"template":{"spec":)"
         R"({"containers":[)" +
         kGpuContainer + "]}}}]}}";
}

std::string gpuDeployment(int replicas) {
  return R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":)" +
         std::to_string(replicas) +
         R"(,"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},)"
         R"("spec":{"containers":[)" +
         kGpuContainer + "]}}}}";
}

std::string gpuPod(std::string_view specExtra = "") {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[)" +
         std::string(kGpuContainer) + "]" + std::string(specExtra) + "}}";
}

// In the order applied.mutate, reconciled.mutate, controlled.mutate,
// applied.validate, reconciled.validate, controlled.validate: C call, S skip.
TEST(ReconciledTier,
     ControllersUpdatesGoToTheIgnoreTierAndEveryoneElsesAndEveryCreateToTheFailTier) {
  const std::string autoscaler = "system:serviceaccount:team-a:rc-autoscaler";
  const std::string argo = "system:serviceaccount:argocd:argocd-application-controller";
  const std::string jobOfJobSet =
      gpuJob(false, R"(,"ownerReferences":[{"apiVersion":"jobset.x-k8s.io/v1alpha2",)"
                    R"("kind":"JobSet","name":"js","uid":"1","controller":true}])");
  const std::vector<Expectation> expectations = {
      // The Fail tier's: a CREATE by anyone, an UPDATE by a person.
      {by(kKueue, {"job created by kueue", gpuJob(true)}), "CSSCSS"},
      {by("system:kube-controller-manager", {"pod created by a component", gpuPod()}), "CSSCSS"},
      {{"job unsuspended by a person", gpuJob(false), gpuJob(true), "UPDATE"}, "CSSCSS"},
      {{"deployment scaled by a person", gpuDeployment(3), gpuDeployment(1), "UPDATE"}, "CSSCSS"},
      {by("", {"update by nobody named", gpuDeployment(3), gpuDeployment(1), "UPDATE"}), "CSSCSS"},
      {by("systemd", {"update by a user named like a system one", gpuDeployment(3),
                      gpuDeployment(1), "UPDATE"}),
       "CSSCSS"},
      {by("System:serviceaccount:a:b",
          {"update by an upper-case name", gpuDeployment(3), gpuDeployment(1), "UPDATE"}),
       "CSSCSS"},
      // A service account or a component is no controller of the kind
      // because of its name: it is judged as a person.
      {by(autoscaler,
          {"raycluster workers scaled by the autoscaler", rayCluster(4), rayCluster(1), "UPDATE"}),
       "CSSCSS"},
      {by(argo, {"deployment synced by a gitops controller", gpuDeployment(3), gpuDeployment(1),
                 "UPDATE"}),
       "CSSCSS"},
      {by("system:serviceaccount:team-a:default",
          {"job unsuspended by a team's account", gpuJob(false), gpuJob(true), "UPDATE"}),
       "CSSCSS"},
      {by("system:serviceaccount:kube-system:job-controller",
          {"deployment scaled by the controller of another kind", gpuDeployment(3),
           gpuDeployment(1), "UPDATE"}),
       "CSSCSS"},
      {by(kKueue,
          {"cronjob updated by kueue, which does not control cronjobs",
           R"({"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"c"},"spec":{"schedule":"@hourly","jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[)" +
               std::string(kGpuContainer) + "]}}}}}}",
           R"({"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"c"},"spec":{"schedule":"@daily","jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[)" +
               std::string(kGpuContainer) + "]}}}}}}",
           "UPDATE"}),
       "CSSCSS"},
      // The reconciled tier's: what controllers and components update.
      {by(kKueue, {"job unsuspended by kueue", gpuJob(false), gpuJob(true), "UPDATE"}), "SCSSCS"},
      {by(kKueue, {"job suspended by kueue", gpuJob(true), gpuJob(false), "UPDATE"}), "SCSSCS"},
      {by(kKueue, {"jobset unsuspended by kueue", jobSet(false), jobSet(true), "UPDATE"}),
       "SCSSCS"},
      {by(kKueue, {"deployment scaled by kueue", gpuDeployment(3), gpuDeployment(1), "UPDATE"}),
       "SCSSCS"},
      {by("system:serviceaccount:kube-system:deployment-controller",
          {"deployment updated by its controller", gpuDeployment(3), gpuDeployment(1), "UPDATE"}),
       "SCSSCS"},
      {by("system:kube-controller-manager",
          {"deployment updated by a component", gpuDeployment(3), gpuDeployment(1), "UPDATE"}),
       "SCSSCS"},
      // A Pod's spec update is validated, never mutated, in either tier.
      {{"pod spec updated by a person", gpuPod(R"(,"activeDeadlineSeconds":5)"), gpuPod(),
        "UPDATE"},
       "SSSCSS"},
      {by("system:node:gpu-node-1", {"pod spec updated by its node",
                                     gpuPod(R"(,"activeDeadlineSeconds":5)"), gpuPod(), "UPDATE"}),
       "SSSCSS"},
      {by(kKueue, {"pod spec updated by kueue", gpuPod(R"(,"activeDeadlineSeconds":5)"), gpuPod(),
                   "UPDATE"}),
       "SSSSCS"},
      // What neither tier has a reason to see, whoever asks.
      {by(kKueue, {"job status-only update by kueue", gpuJob(true), gpuJob(true), "UPDATE"}),
       "SSSSSS"},
      {by(kKueue,
          {"finalizer removed by kueue",
           gpuJob(true, R"(,"deletionTimestamp":"2026-01-01T00:00:00Z","finalizers":[])"),
           gpuJob(true, R"(,"deletionTimestamp":"2026-01-01T00:00:00Z","finalizers":["x"])"),
           "UPDATE"}),
       "SSSSSS"},
      {by(kKueue, {"job of a jobset unsuspended by kueue", jobOfJobSet,
                   gpuJob(true, R"(,"ownerReferences":[{"apiVersion":"jobset.x-k8s.io/v1alpha2",)"
                                R"("kind":"JobSet","name":"js","uid":"1","controller":true}])"),
                   "UPDATE"}),
       "SSSSSS"},
      {by(kKueue, {"job unsuspended by kueue in a namespace not opted in", gpuJob(false),
                   gpuJob(true), "UPDATE", namespaceNamed("team-b", std::nullopt)}),
       "SSSSSS"},
  };
  expectOutcomes(expectations);
}

}  // namespace
}  // namespace aiadmit
