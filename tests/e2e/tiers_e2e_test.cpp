// Who waits on aiadmit, under the real API server. With aiadmit stopped, the
// Fail tier (applied.*) still refuses every CREATE of an object that is not
// its controller's and every UPDATE but a controller's, while the updates
// that controllers of the object's kind (manifests/base/controllers.yaml)
// make of what people created (Kueue toggling spec.suspend or setting
// replicas) go to reconciled.*, which fails open; started again,
// reconciled.* mutates and validates them as before. Another service
// account (an autoscaler in the team's namespace) is judged as a person.
// An ownerReference a person writes makes nothing a controller's: the
// object is refused where the same object without it is. And an operator's
// update of an object it made reaches no webhook at all.
// Serial where it stops aiadmit: every other test needs it as `up` started it.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/e2e/support/e2e_cluster.h"
#include "tests/e2e/support/workloads.h"

namespace aiadmit::e2e {
namespace {

constexpr const char* kKueue = "system:serviceaccount:kueue-system:kueue-controller-manager";

const json kGpuContainer = {{"name", "main"},
                            {"image", "registry.example/train:1"},
                            {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}};

json gpuJob(const std::string& name, bool suspend) {
  return {
      {"apiVersion", "batch/v1"},
      {"kind", "Job"},
      {"metadata", {{"name", name}}},
      {"spec",
       {{"suspend", suspend},
        {"template",
         {{"spec", {{"restartPolicy", "Never"}, {"containers", json::array({kGpuContainer})}}}}}}}};
}

json gpuDeployment(const std::string& name, int replicas) {
  json container = kGpuContainer;
  container["ports"] = json::array({{{"containerPort", 8080}}});
  container["resources"]["limits"]["memory"] = "8Gi";
  return {{"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"replicas", replicas},
            {"selector", {{"matchLabels", {{"app", name}}}}},
            {"template",
             {{"metadata", {{"labels", {{"app", name}}}}},
              {"spec", {{"containers", json::array({container})}}}}}}}};
}

json jobSet(const std::string& name) {
  return {{"apiVersion", "jobset.x-k8s.io/v1alpha2"},
          {"kind", "JobSet"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"suspend", true},
            {"replicatedJobs",
             json::array({{{"name", "workers"},
                           {"replicas", 1},
                           {"template",
                            {{"spec",
                              {{"template",
                                {{"spec",
                                  {{"restartPolicy", "Never"},
                                   {"containers", json::array({kGpuContainer})}}}}}}}}}}})}}}};
}

json rayCluster(const std::string& name) {
  const json head = {{"name", "ray-head"},
                     {"image", "rayproject/ray:2.9.0"},
                     {"resources", {{"requests", {{"cpu", "1"}}}}}};
  return {{"apiVersion", "ray.io/v1"},
          {"kind", "RayCluster"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"headGroupSpec",
             {{"rayStartParams", json::object()},
              {"template", {{"spec", {{"containers", json::array({head})}}}}}}},
            {"workerGroupSpecs",
             json::array(
                 {{{"groupName", "gpu"},
                   {"replicas", 1},
                   {"minReplicas", 0},
                   {"maxReplicas", 4},
                   {"rayStartParams", json::object()},
                   {"template", {{"spec", {{"containers", json::array({kGpuContainer})}}}}}}})}}}};
}

// Kueue's and an autoscaler's rights on the test's workloads, as their
// charts grant them, bound to their service accounts in the namespace.
void grantControllers(const Namespace& ns, const std::vector<std::string>& accounts) {
  json subjects = json::array();
  for (const std::string& account : accounts) {
    const size_t colon = account.rfind(':');
    const std::string prefix = "system:serviceaccount:";
    subjects.push_back({{"kind", "ServiceAccount"},
                        {"namespace", account.substr(prefix.size(), colon - prefix.size())},
                        {"name", account.substr(colon + 1)}});
  }
  const json role = {
      {"apiVersion", "rbac.authorization.k8s.io/v1"},
      {"kind", "Role"},
      {"metadata", {{"name", "controllers"}}},
      {"rules", json::array({{{"apiGroups", {"batch", "apps", "jobset.x-k8s.io", "ray.io"}},
                              {"resources", {"jobs", "deployments", "jobsets", "rayclusters"}},
                              {"verbs", {"get", "create", "update", "patch"}}}})}};
  const json binding = {
      {"apiVersion", "rbac.authorization.k8s.io/v1"},
      {"kind", "RoleBinding"},
      {"metadata", {{"name", "controllers"}}},
      {"roleRef",
       {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", "controllers"}}},
      {"subjects", subjects}};
  for (const json& object : {role, binding}) {
    const CommandResult created = kubectl({"create", "-n", ns.name(), "-f", "-"}, toText(object));
    ASSERT_EQ(created.exitCode, 0) << created.err;
  }
  // The authorizer reads RBAC from its informers: wait until it has it.
  for (const std::string& account : accounts) {
    EXPECT_TRUE(waitUntil(
        [&] {
          return kubectl({"auth", "can-i", "patch", "rayclusters.ray.io", "-n", ns.name(),
                          "--as=" + account})
                     .out == "yes\n";
        },
        std::chrono::seconds(30)))
        << account;
  }
}

// kubectl patch KIND/NAME with a merge patch (or a JSON patch when `type` is
// "json"), as `as` when given.
CommandResult patch(const Namespace& ns, const std::string& object, const std::string& body,
                    const std::string& as = "", const std::string& type = "merge") {
  std::vector<std::string> args = {"patch", object, "-n", ns.name(), "--type=" + type, "-p", body};
  if (!as.empty()) args.push_back("--as=" + as);
  return kubectl(args);
}

// The webhooks the API server could not call and admitted without, for the
// requests of `events` (its failed-open.*.webhook.admission.k8s.io
// annotations).
std::set<std::string> failedOpen(const std::vector<json>& events) {
  std::set<std::string> webhooks;
  for (const json& event : events) {
    if (!event.contains("annotations")) continue;
    for (const auto& [key, value] : event["annotations"].items()) {
      if (key.rfind("failed-open.", 0) == 0 && value.is_string()) webhooks.insert(value);
    }
  }
  return webhooks;
}

const std::set<std::string> kReconciled = {"reconciled.mutate.aiadmit.dev",
                                           "reconciled.validate.aiadmit.dev"};

constexpr const char* kDownError = "failed calling webhook \"applied.mutate.aiadmit.dev\"";

TEST(E2eTiersSerial, WithAiadmitDownControllersUpdatesPassAndCreatesAndPeoplesUpdatesDoNot) {
  Namespace ns("tiers");
  const std::string autoscaler = "system:serviceaccount:" + ns.name() + ":ray-autoscaler";
  grantControllers(ns, {kKueue, autoscaler});
  for (const json& object :
       {gpuJob("train", true), gpuDeployment("server", 0), jobSet("sweep"), rayCluster("ray")}) {
    const CommandResult applied = kubectl({"create", "-n", ns.name(), "-f", "-"}, toText(object));
    ASSERT_EQ(applied.exitCode, 0) << kubectlName(object) << ": " << applied.err;
  }
  {
    AiadmitRestoredAtExit restore;
    const CommandResult stopped = e2eCluster("aiadmit", {"stop"});
    ASSERT_EQ(stopped.exitCode, 0) << stopped.err;

    // What controllers update passes, through the reconciled tier.
    struct ControllerUpdate {
      std::string resource, name, as, type, body;
    };
    const std::vector<ControllerUpdate> updates = {
        {"jobs", "train", kKueue, "merge", R"({"spec":{"suspend":false}})"},
        {"jobs", "train", kKueue, "merge", R"({"spec":{"suspend":true}})"},
        {"jobsets", "sweep", kKueue, "merge", R"({"spec":{"suspend":false}})"},
        {"rayclusters", "ray", kKueue, "json",
         R"([{"op":"replace","path":"/spec/workerGroupSpecs/0/replicas","value":3}])"},
        {"deployments", "server", kKueue, "merge", R"({"spec":{"replicas":1}})"},
    };
    for (const ControllerUpdate& u : updates) {
      SCOPED_TRACE(u.resource + "/" + u.name + " " + u.body);
      const CommandResult patched = patch(ns, u.resource + "/" + u.name, u.body, u.as, u.type);
      EXPECT_EQ(patched.exitCode, 0) << patched.err;
      // Sent to the Ignore tier, not left out by a condition: the API server
      // records that it went on without it.
      EXPECT_EQ(failedOpen(auditEvents(u.resource, ns.name(), u.name, "patch")), kReconciled);
    }
    const json ray = kubectlJson({"get", "raycluster", "ray", "-n", ns.name()});
    ASSERT_TRUE(ray.is_object());
    EXPECT_EQ(ray["spec"]["workerGroupSpecs"][0]["replicas"], 3);
    const json job = kubectlJson({"get", "job", "train", "-n", ns.name()});
    ASSERT_TRUE(job.is_object());
    EXPECT_EQ(job["spec"]["suspend"], true);

    // A person's update is still refused, of a built-in kind and of a custom one.
    for (const auto& [object, body] : std::vector<std::pair<std::string, std::string>>{
             {"deployment/server", R"({"spec":{"replicas":2}})"},
             {"raycluster/ray", R"({"metadata":{"labels":{"team":"b"}}})"}}) {
      const CommandResult refused = patch(ns, object, body);
      EXPECT_NE(refused.exitCode, 0) << object;
      EXPECT_NE(refused.err.find(kDownError), std::string::npos) << object << ": " << refused.err;
    }
    // And so is another service account's, which no system: name makes a
    // controller: the autoscaler in the team's namespace.
    const CommandResult unscaled =
        patch(ns, "raycluster/ray",
              R"([{"op":"replace","path":"/spec/workerGroupSpecs/0/replicas","value":2}])",
              autoscaler, "json");
    EXPECT_NE(unscaled.exitCode, 0);
    EXPECT_NE(unscaled.err.find(kDownError), std::string::npos) << unscaled.err;
    // Any CREATE still is, by a person or by a service account.
    for (const auto& [name, as] : std::vector<std::pair<std::string, std::string>>{
             {"by-a-person", ""}, {"by-kueue", kKueue}}) {
      std::vector<std::string> args = {"create", "-n", ns.name(), "-f", "-"};
      if (!as.empty()) args.push_back("--as=" + as);
      const CommandResult refused = kubectl(args, toText(gpuJob(name, false)));
      EXPECT_NE(refused.exitCode, 0) << name;
      EXPECT_NE(refused.err.find(kDownError), std::string::npos) << name << ": " << refused.err;
    }
  }
  // Started again (the restore waited until aiadmit answers), a controller's
  // update is mutated and validated as a person's: the API server records
  // reconciled.mutate's answer, and reconciled.validate refuses a mistake.
  const size_t before = auditEvents("deployments", ns.name(), "server", "patch").size();
  const CommandResult scaled = patch(ns, "deployment/server", R"({"spec":{"replicas":2}})", kKueue);
  EXPECT_EQ(scaled.exitCode, 0) << scaled.err;
  std::vector<json> events;
  EXPECT_TRUE(waitUntil(
      [&] {
        events = auditEvents("deployments", ns.name(), "server", "patch");
        return events.size() > before;
      },
      std::chrono::seconds(10)));
  const std::vector<json> after(events.begin() + std::min(before, events.size()), events.end());
  EXPECT_EQ(mutatingWebhooksCalled(after), std::set<std::string>{"reconciled.mutate.aiadmit.dev"});
  EXPECT_TRUE(failedOpen(after).empty());
  const CommandResult typo = patch(
      ns, "deployment/server",
      R"([{"op":"add","path":"/spec/template/spec/containers/0/resources/limits/nvidia.com~1gpus","value":"1"}])",
      kKueue, "json");
  EXPECT_NE(typo.exitCode, 0);
  EXPECT_NE(typo.err.find("admission webhook \"reconciled.validate.aiadmit.dev\" denied the "
                          "request: [AIA003]"),
            std::string::npos)
      << typo.err;
}

// The audit events of the object's create, once the log has them.
std::vector<json> createEvents(const std::string& resource, const Namespace& ns,
                               const std::string& name) {
  std::vector<json> events;
  EXPECT_TRUE(waitUntil(
      [&] {
        events = auditEvents(resource, ns.name(), name, "create");
        return !events.empty();
      },
      std::chrono::seconds(10)))
      << resource << "/" << name;
  return events;
}

constexpr const char* kLws = "system:serviceaccount:lws-system:lws-controller-manager";

// `as`'s rights to create, update and read `resources` (of `groups`) in the
// namespace, as an operator's install grants them, once the authorizer has them.
void grant(const Namespace& ns, const std::string& as, const std::vector<std::string>& groups,
           const std::vector<std::string>& resources) {
  const std::string prefix = "system:serviceaccount:";
  const size_t colon = as.rfind(':');
  const std::string name = "grant-" + std::to_string(std::hash<std::string>{}(as) % 100000);
  const json role = {{"apiVersion", "rbac.authorization.k8s.io/v1"},
                     {"kind", "Role"},
                     {"metadata", {{"name", name}}},
                     {"rules", json::array({{{"apiGroups", groups},
                                             {"resources", resources},
                                             {"verbs", {"get", "create", "update", "patch"}}}})}};
  const json binding = {
      {"apiVersion", "rbac.authorization.k8s.io/v1"},
      {"kind", "RoleBinding"},
      {"metadata", {{"name", name}}},
      {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", name}}},
      {"subjects", json::array({{{"kind", "ServiceAccount"},
                                 {"namespace", as.substr(prefix.size(), colon - prefix.size())},
                                 {"name", as.substr(colon + 1)}}})}};
  for (const json& object : {role, binding}) {
    const CommandResult created = kubectl({"create", "-n", ns.name(), "-f", "-"}, toText(object));
    ASSERT_EQ(created.exitCode, 0) << created.err;
  }
  EXPECT_TRUE(waitUntil(
      [&] {
        return kubectl(
                   {"auth", "can-i", "create", resources.front(), "-n", ns.name(), "--as=" + as})
                   .out == "yes\n";
      },
      std::chrono::seconds(30)))
      << as;
}

json ownerReference(const std::string& apiVersion, const std::string& kind, const std::string& name,
                    const std::string& uid) {
  return json::array({{{"apiVersion", apiVersion},
                       {"kind", kind},
                       {"name", name},
                       {"uid", uid},
                       {"controller", true}}});
}

// A Pod that stands for a leader: the owner LeaderWorkerSet gives its
// worker StatefulSets. Returns its uid.
std::string leaderPod(const Namespace& ns) {
  const json leader = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", "leader"}}},
      {"spec", {{"containers", json::array({{{"name", "c"}, {"image", "pause"}}})}}}};
  const CommandResult created = kubectl(
      {"create", "-n", ns.name(), "-f", "-", "-o", "jsonpath={.metadata.uid}"}, toText(leader));
  EXPECT_EQ(created.exitCode, 0) << created.err;
  return created.out;
}

json gpuStatefulSet(const std::string& name) {
  json set = gpuDeployment(name, 0);
  set["kind"] = "StatefulSet";
  set["spec"]["serviceName"] = name;
  return set;
}

// A worker StatefulSet as LeaderWorkerSet makes it: its template carries the
// stamps aiadmit wrote on the LeaderWorkerSet's template.
json stampedWorkers(const std::string& name) {
  json set = gpuStatefulSet(name);
  set["spec"]["template"]["metadata"]["annotations"] = {{"aiadmit.dev/class", "realtime"},
                                                        {"aiadmit.dev/profile", "realtime"}};
  return set;
}

// LeaderWorkerSet, as its ServiceAccount, creates a GPU StatefulSet owned
// by a leader Pod (its worker group), which controlled.mutate places on the
// GPU pool; the operator then rolls out its desired spec, which lacks the
// toleration and node selector it never wrote. No webhook of aiadmit's is
// called for that update, so nothing aiadmit injected can refuse it.
TEST(E2eTiers, AnOperatorsUpdateOfWhatItMadeReachesNoWebhookOfAiadmits) {
  Namespace ns("operator");
  grant(ns, kLws, {"apps"}, {"statefulsets"});
  json desired = stampedWorkers("workers");
  desired["metadata"]["ownerReferences"] = ownerReference("v1", "Pod", "leader", leaderPod(ns));
  const CommandResult created =
      kubectl({"create", "-n", ns.name(), "-f", "-", "--as=" + std::string(kLws)}, toText(desired));
  ASSERT_EQ(created.exitCode, 0) << created.err;
  const json placed = kubectlJson({"get", "statefulset", "workers", "-n", ns.name()});
  ASSERT_TRUE(placed.is_object());
  ASSERT_TRUE(placed["spec"]["template"]["spec"].contains("tolerations"))
      << "controlled.mutate placed it at creation: " << placed.dump();
  EXPECT_EQ(mutatingWebhooksCalled(createEvents("statefulsets", ns, "workers")),
            std::set<std::string>{"controlled.mutate.aiadmit.dev"});

  desired["spec"]["template"]["spec"]["containers"][0]["image"] = "registry.example/train:2";
  desired["metadata"]["resourceVersion"] = placed["metadata"]["resourceVersion"];
  const CommandResult rolled = kubectl(
      {"replace", "-n", ns.name(), "-f", "-", "--as=" + std::string(kLws)}, toText(desired));
  ASSERT_EQ(rolled.exitCode, 0) << rolled.err;
  const json stored = kubectlJson({"get", "statefulset", "workers", "-n", ns.name()});
  ASSERT_TRUE(stored.is_object());
  EXPECT_EQ(stored["spec"]["template"]["spec"]["containers"][0]["image"],
            "registry.example/train:2");
  EXPECT_FALSE(stored["spec"]["template"]["spec"].contains("tolerations"));
  const std::vector<json> updates = auditEvents("statefulsets", ns.name(), "workers", "update");
  ASSERT_FALSE(updates.empty());
  for (const auto& [key, value] : auditAnnotations(updates)) {
    EXPECT_EQ(key.find("aiadmit.dev"), std::string::npos) << key << ": " << value;
    EXPECT_EQ(value.find("aiadmit.dev"), std::string::npos) << key << ": " << value;
  }
}

json gpuPod(const std::string& name, const std::string& gpuName) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"restartPolicy", "Never"},
            {"containers", json::array({{{"name", "main"},
                                         {"image", "registry.example/train:1"},
                                         {"resources", {{"limits", {{gpuName, "1"}}}}}}})}}}};
}

json withGpuName(json deployment, const std::string& gpuName) {
  json& limits = deployment["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"];
  limits.erase("nvidia.com/gpu");
  limits[gpuName] = "1";
  return deployment;
}

constexpr const char* kAppliedDenial =
    "admission webhook \"applied.validate.aiadmit.dev\" denied the request: [AIA003]";

// A person's bare Pod and Deployment, and a team's service account's, with
// an ownerReference they wrote (a ReplicaSet, a Job, an operator's kind,
// the StatefulSet's leader Pod): refused where the same object without it
// is (a misspelt GPU, AIA003), by the Fail tier, and admitted and placed as
// a person's where it is spelt right. Beside them, the real controller's
// request for the same object passes (controlled.*).
TEST(E2eTiers, APersonsForgedOwnerIsRefusedWhereTheObjectWithoutItIs) {
  Namespace ns("forged");
  const std::string account = "system:serviceaccount:" + ns.name() + ":default";
  grant(ns, account, {"", "apps"}, {"pods", "deployments"});
  grant(ns, kLws, {"apps"}, {"statefulsets"});
  const std::string leaderUid = leaderPod(ns);
  // Owners that exist (Kueue's Pod webhook looks a Pod's owner up), with no
  // GPU and nothing to run: a ReplicaSet of no replicas, a suspended Job.
  const json cpu = json::array({{{"name", "c"}, {"image", "pause"}}});
  const json replicaSet = {
      {"apiVersion", "apps/v1"},
      {"kind", "ReplicaSet"},
      {"metadata", {{"name", "rs"}}},
      {"spec",
       {{"replicas", 0},
        {"selector", {{"matchLabels", {{"app", "rs"}}}}},
        {"template",
         {{"metadata", {{"labels", {{"app", "rs"}}}}}, {"spec", {{"containers", cpu}}}}}}}};
  const json job = {
      {"apiVersion", "batch/v1"},
      {"kind", "Job"},
      {"metadata", {{"name", "job"}}},
      {"spec",
       {{"suspend", true},
        {"template", {{"spec", {{"restartPolicy", "Never"}, {"containers", cpu}}}}}}}};
  std::map<std::string, std::string> uids;
  for (const json& owner : {replicaSet, job}) {
    const CommandResult created = kubectl(
        {"create", "-n", ns.name(), "-f", "-", "-o", "jsonpath={.metadata.uid}"}, toText(owner));
    ASSERT_EQ(created.exitCode, 0) << created.err;
    uids[owner["kind"]] = created.out;
  }
  struct Forged {
    std::string name;
    json object;  // spelt right
    json owner;
  };
  const std::vector<Forged> forged = {
      {"pod-of-rs", gpuPod("pod-of-rs", "nvidia.com/gpu"),
       ownerReference("apps/v1", "ReplicaSet", "rs", uids.at("ReplicaSet"))},
      {"pod-of-job", gpuPod("pod-of-job", "nvidia.com/gpu"),
       ownerReference("batch/v1", "Job", "job", uids.at("Job"))},
      {"server-of-isvc", gpuDeployment("server-of-isvc", 0),
       ownerReference("serving.kserve.io/v1beta1", "InferenceService", "isvc",
                      "00000000-0000-4000-8000-000000000003")},
      {"server-of-rs", gpuDeployment("server-of-rs", 0),
       ownerReference("apps/v1", "ReplicaSet", "rs", uids.at("ReplicaSet"))},
      {"workers-of-leader", gpuStatefulSet("workers-of-leader"),
       ownerReference("v1", "Pod", "leader", leaderUid)},
  };
  for (const Forged& f : forged) {
    for (const std::string& as : {std::string(), account}) {
      if (!as.empty() && f.object["kind"] == "StatefulSet") continue;
      const std::string who = as.empty() ? "a person" : "a team account";
      SCOPED_TRACE(f.name + " by " + who);
      const std::string suffix = as.empty() ? "" : "-sa";
      std::vector<std::string> create = {"create", "-n", ns.name(), "-f", "-"};
      if (!as.empty()) create.push_back("--as=" + as);
      auto misspelt = [&](json object) {
        object["metadata"]["name"] = f.name + suffix + "-typo";
        if (object["kind"] == "Pod") {
          return gpuPod(object["metadata"]["name"].get<std::string>(), "nvidia.com/gpus");
        }
        return withGpuName(object, "nvidia.com/gpus");
      };
      // Without the ownerReference, and with it: the same refusal.
      const CommandResult plain = kubectl(create, toText(misspelt(f.object)));
      EXPECT_NE(plain.exitCode, 0);
      EXPECT_NE(plain.err.find(kAppliedDenial), std::string::npos) << plain.err;
      json owned = misspelt(f.object);
      owned["metadata"]["name"] = f.name + suffix + "-owned-typo";
      owned["metadata"]["ownerReferences"] = f.owner;
      const CommandResult refused = kubectl(create, toText(owned));
      EXPECT_NE(refused.exitCode, 0);
      EXPECT_NE(refused.err.find(kAppliedDenial), std::string::npos) << refused.err;
      // Spelt right: admitted, and placed as a person's.
      json right = f.object;
      right["metadata"]["name"] = f.name + suffix;
      right["metadata"]["ownerReferences"] = f.owner;
      const CommandResult admitted = kubectl(create, toText(right));
      EXPECT_EQ(admitted.exitCode, 0) << admitted.err;
      if (admitted.exitCode != 0) continue;
      const std::string resource = f.object["kind"] == "Pod"           ? "pods"
                                   : f.object["kind"] == "StatefulSet" ? "statefulsets"
                                                                       : "deployments";
      EXPECT_EQ(mutatingWebhooksCalled(createEvents(resource, ns, f.name + suffix)),
                std::set<std::string>{"applied.mutate.aiadmit.dev"});
    }
  }
  // Beside them, the controller's own request for what it controls goes to
  // controlled.*, as before.
  json child = stampedWorkers("lws-workers");
  child["metadata"]["ownerReferences"] = ownerReference("v1", "Pod", "leader", leaderUid);
  const CommandResult made =
      kubectl({"create", "-n", ns.name(), "-f", "-", "--as=" + std::string(kLws)}, toText(child));
  ASSERT_EQ(made.exitCode, 0) << made.err;
  EXPECT_EQ(mutatingWebhooksCalled(createEvents("statefulsets", ns, "lws-workers")),
            std::set<std::string>{"controlled.mutate.aiadmit.dev"});
}

}  // namespace
}  // namespace aiadmit::e2e
