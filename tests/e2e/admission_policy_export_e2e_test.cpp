// `aiadmit profiles export --admission-policies` on the real API server: the
// shipped profiles' policies, bound to a namespace of the test's own that the
// webhook is not called for, against the webhook in an opted-in namespace.
// The same Pod, Deployment, StatefulSet, Job or CronJob ends as the same
// stored object in both, each refusal of the policies carries the webhook's
// rule ID and message (and its near miss is admitted by both), a second pass
// of the policies changes nothing, and no corpus or golden object is refused
// by the policies that the webhook admits.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <regex>
#include <set>
#include <utility>

#include "tests/e2e/support/e2e_cluster.h"
#include "tests/e2e/support/workloads.h"

namespace aiadmit::e2e {
namespace {

// `aiadmit profiles export --admission-policies` of the shipped profiles,
// written to `file`.
CommandResult exportShippedProfiles(const std::string& file) {
  return testing::runCommand({testing::binaryPath(), "profiles", "export", "--admission-policies",
                              testing::sourceDir() + "/profiles", "-o", file});
}

// The exported policies and bindings, renamed for `namespaceName` and bound
// to it alone, so that tests running beside this one see none of them.
class ExportedPolicies {
 public:
  explicit ExportedPolicies(const std::string& namespaceName) {
    testing::TempDir work;
    const std::string file = work.file("policies.yaml");
    const CommandResult exported = exportShippedProfiles(file);
    EXPECT_EQ(exported.exitCode, 0) << exported.err;
    EXPECT_NE(exported.err.find("stays with the webhook"), std::string::npos) << exported.err;
    const CommandResult read = kubectl({"create", "--dry-run=client", "-o", "json", "-f", file});
    EXPECT_EQ(read.exitCode, 0) << read.err;
    for (json object : jsonObjects(read.out)) {
      json& spec = object["spec"];
      object["metadata"]["name"] =
          object["metadata"]["name"].get<std::string>() + "-" + namespaceName;
      if (spec.contains("policyName")) {
        spec["policyName"] = spec["policyName"].get<std::string>() + "-" + namespaceName;
        spec["matchResources"]["namespaceSelector"] = {
            {"matchLabels", {{"kubernetes.io/metadata.name", namespaceName}}}};
      }
      names_.push_back(kubectlName(object));
      const CommandResult applied = kubectl({"apply", "-f", "-"}, toText(object));
      EXPECT_EQ(applied.exitCode, 0) << applied.err;
    }
    // Per profile, the mutating and denying policies of each kind it fits,
    // with their bindings, and realtime's warning policies.
    EXPECT_EQ(names_.size(), 36u);
  }
  ~ExportedPolicies() {
    for (const std::string& name : names_) kubectl({"delete", "--ignore-not-found", name});
  }
  ExportedPolicies(const ExportedPolicies&) = delete;
  ExportedPolicies& operator=(const ExportedPolicies&) = delete;

 private:
  std::vector<std::string> names_;
};

json container(const std::string& name, const json& limits) {
  return {
      {"name", name}, {"image", "registry.k8s.io/pause:3.10"}, {"resources", {{"limits", limits}}}};
}

json declaredPod(const std::string& name, const std::string& workload, json containers) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"annotations", {{"aiadmit.dev/workload", workload}}}}},
          {"spec", {{"restartPolicy", "Never"}, {"containers", std::move(containers)}}}};
}

json trainingPod() {
  return declaredPod("trainer", "training",
                     {container("trainer", {{"nvidia.com/gpu", "2"}, {"memory", "32Gi"}}),
                      container("sidecar", json::object())});
}

// A realtime Pod serving on port 8000 with both probes, `limits` on its
// one container.
json realtimeServer(const json& limits) {
  json server = declaredPod("server", "realtime", {container("vllm", limits)});
  server["spec"]["restartPolicy"] = "Always";
  json& vllm = server["spec"]["containers"][0];
  for (const char* probe : {"readinessProbe", "startupProbe"}) {
    vllm[probe] = {{"tcpSocket", {{"port", 8000}}}};
  }
  vllm["ports"] = {{{"containerPort", 8000}}};
  return server;
}

// A controller of Kubernetes' own named `name` around `pod`'s spec, with its
// class declared on the object or, with `onTemplate`, on the pod template.
json controller(const std::string& kind, const std::string& name, const json& pod,
                bool onTemplate = false) {
  json podTemplate = {{"metadata", {{"labels", {{"app", name}}}}}, {"spec", pod["spec"]}};
  json metadata = {{"name", name}};
  (onTemplate ? podTemplate["metadata"] : metadata)["annotations"] = pod["metadata"]["annotations"];
  json spec = {{"template", podTemplate}};
  std::string apiVersion = "apps/v1";
  if (kind == "Job" || kind == "CronJob") {
    apiVersion = "batch/v1";
  } else {
    spec["selector"] = {{"matchLabels", {{"app", name}}}};
  }
  if (kind == "StatefulSet") spec["serviceName"] = name;
  if (kind == "CronJob") spec = {{"schedule", "0 * * * *"}, {"jobTemplate", {{"spec", spec}}}};
  return {{"apiVersion", apiVersion}, {"kind", kind}, {"metadata", metadata}, {"spec", spec}};
}

// What the API server answers to a create of `object` in `namespaceName`:
// the object it stores (`create`) or would store (`dryRun`).
CommandResult create(const json& object, const std::string& namespaceName, bool dryRun = true) {
  std::vector<std::string> args = {"create", "-n", namespaceName, "-o", "json", "-f", "-"};
  if (dryRun) args.push_back("--dry-run=server");
  return kubectl(args, toText(object));
}

// Whether `object` carries aiadmit's stamp, aiadmit.dev/class.
bool stamped(const json& object) {
  const json metadata = object.value("metadata", json::object());
  return metadata.value("annotations", json::object()).contains("aiadmit.dev/class");
}

// The rule IDs a refusal names, in order.
std::vector<std::string> ruleIds(const std::string& text) {
  std::vector<std::string> ids;
  const std::regex id(R"(\[(AIA\d{3})\])");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), id); it != std::sregex_iterator();
       ++it) {
    ids.push_back((*it)[1]);
  }
  return ids;
}

// One covered object of each kind the policies judge.
std::vector<json> oneOfEachKind() {
  const json server = realtimeServer({{"nvidia.com/gpu", "2"}, {"memory", "20Gi"}});
  return {trainingPod(),
          controller("Deployment", "server", server),
          controller("StatefulSet", "server", server),
          controller("ReplicaSet", "server", server),
          controller("Job", "trainer", trainingPod()),
          controller("CronJob", "trainer", trainingPod())};
}

struct Sides {
  Namespace webhook{"export-webhook"};
  Namespace policies{"export-policies", /*optedIn=*/false};
  ExportedPolicies exported{policies.name()};

  Sides() {
    // The API server starts using new policies within moments: until an
    // object of each kind the policies cover gets the stamp, nothing here
    // would say anything.
    for (const json& object : oneOfEachKind()) {
      EXPECT_TRUE(waitUntil(
          [&] {
            const CommandResult answer = create(object, policies.name());
            return answer.exitCode == 0 && stamped(json::parse(answer.out));
          },
          std::chrono::seconds(60)))
          << object["kind"];
    }
  }
};

// Both admit `object` and store the same object; the policies' object sent
// through them again is unchanged.
void expectStoredAlike(const Sides& sides, const json& object, bool dryRun = true) {
  const CommandResult byWebhook = create(object, sides.webhook.name(), dryRun);
  const CommandResult byPolicies = create(object, sides.policies.name(), dryRun);
  ASSERT_EQ(byWebhook.exitCode, 0) << byWebhook.err;
  ASSERT_EQ(byPolicies.exitCode, 0) << byPolicies.err;
  const json stored = withoutServerFields(json::parse(byPolicies.out));
  EXPECT_EQ(stored, withoutServerFields(json::parse(byWebhook.out)))
      << json::diff(withoutServerFields(json::parse(byWebhook.out)), stored).dump(1);
  EXPECT_TRUE(stamped(stored)) << "the policies did not judge it";

  json again = stored;
  if (!dryRun) again["metadata"]["name"] = object["metadata"]["name"].get<std::string>() + "-again";
  // The API server generates a Job's selector, and refuses one sent.
  if (again["kind"] == "Job") again["spec"].erase("selector");
  const CommandResult second = create(again, sides.policies.name());
  ASSERT_EQ(second.exitCode, 0) << second.err;
  EXPECT_EQ(withoutServerFields(json::parse(second.out)),
            dryRun ? stored : withoutServerFields(again))
      << "a second pass changed the object";
}

// Both refuse `object`, and the policies' refusal begins with a rule the
// webhook names.
void expectRefusedAlike(const Sides& sides, const json& object, const std::string& rule) {
  const CommandResult byWebhook = create(object, sides.webhook.name());
  const CommandResult byPolicies = create(object, sides.policies.name());
  ASSERT_NE(byWebhook.exitCode, 0) << byWebhook.out;
  ASSERT_NE(byPolicies.exitCode, 0) << byPolicies.out;
  EXPECT_NE(byPolicies.err.find("ValidatingAdmissionPolicy"), std::string::npos) << byPolicies.err;
  const std::vector<std::string> webhookRules = ruleIds(byWebhook.err);
  const std::vector<std::string> policyRules = ruleIds(byPolicies.err);
  ASSERT_FALSE(policyRules.empty()) << byPolicies.err;
  EXPECT_EQ(policyRules.front(), rule) << byPolicies.err;
  EXPECT_NE(std::find(webhookRules.begin(), webhookRules.end(), rule), webhookRules.end())
      << byWebhook.err;
  // The same message, field path and fix, word for word.
  const size_t start = byPolicies.err.find("[" + rule + "]");
  std::string message = byPolicies.err.substr(start, byPolicies.err.find('\n', start) - start);
  // The namespace it names is each side's own.
  const std::string& policies = sides.policies.name();
  if (const size_t at = message.find(policies); at != std::string::npos) {
    message.replace(at, policies.size(), sides.webhook.name());
  }
  EXPECT_NE(byWebhook.err.find(message), std::string::npos) << byWebhook.err << "\n" << message;
}

TEST(E2eAdmissionPolicyExport, DeclaredPodsStoredAsTheWebhookStoresThem) {
  const Sides sides;
  SCOPED_TRACE("training: 2 GPUs, a sidecar, stored");
  expectStoredAlike(sides, trainingPod(), /*dryRun=*/false);

  json requestOnly = declaredPod("requests", "batch", {container("work", json::object())});
  requestOnly["spec"]["containers"][0]["resources"] = {{"requests", {{"nvidia.com/gpu", "1"}}}};
  expectStoredAlike(sides, requestOnly);

  json tolerated = trainingPod();
  tolerated["metadata"]["name"] = "tolerated";
  tolerated["spec"]["tolerations"] = {{{"key", "accelerator"}, {"operator", "Exists"}}};
  tolerated["spec"]["nodeSelector"] = {{"team", "vision"}};
  expectStoredAlike(sides, tolerated);

  const json server = realtimeServer({{"nvidia.com/gpu", "2"}, {"memory", "20Gi"}});
  expectStoredAlike(sides, server);
}

// Every accelerator has its home: a Pod declared batch that asks for another
// vendor's GPUs (or for an NVIDIA GPU beside another vendor's) is none of the
// NVIDIA profiles' policies' business: stored as it came, neither placed on
// the NVIDIA pool nor stamped, and left to the webhook where it is called.
TEST(E2eAdmissionPolicyExport, AnotherVendorsGpusAreLeftToTheWebhook) {
  const Sides sides;
  const std::vector<json> others = {
      declaredPod("amd", "batch", {container("work", {{"amd.com/gpu", "1"}})}),
      declaredPod("gaudi", "batch", {container("work", {{"habana.ai/gaudi", "1"}})}),
      declaredPod("mixed", "batch",
                  {container("work", {{"nvidia.com/gpu", "1"}, {"amd.com/gpu", "1"}})})};
  for (const json& pod : others) {
    SCOPED_TRACE(pod["metadata"]["name"].get<std::string>());
    const CommandResult answer = create(pod, sides.policies.name());
    ASSERT_EQ(answer.exitCode, 0) << answer.err;
    const json stored = json::parse(answer.out);
    EXPECT_FALSE(stamped(stored));
    EXPECT_FALSE(stored["spec"].contains("nodeSelector")) << stored["spec"];
    EXPECT_FALSE(stored["spec"].contains("tolerations") &&
                 stored["spec"]["tolerations"].dump().find("\"accelerator\"") != std::string::npos)
        << stored["spec"];
  }
  // The nearby case: the same Pod with an NVIDIA GPU alone is placed.
  const CommandResult nvidia =
      create(declaredPod("nvidia", "batch", {container("work", {{"nvidia.com/gpu", "1"}})}),
             sides.policies.name());
  ASSERT_EQ(nvidia.exitCode, 0) << nvidia.err;
  EXPECT_EQ(json::parse(nvidia.out)["spec"]["nodeSelector"].value("accelerator", ""), "nvidia");
}

// The first object of `kind` in the corpus manifest `file`, declared
// `workload`, in no namespace of its own and with a name of its own.
json declaredFromCorpus(const std::string& file, const std::string& kind,
                        const std::string& workload) {
  const CommandResult read = kubectl({"create", "--dry-run=client", "-o", "json", "-f",
                                      testing::corpusDir() + "/manifests/" + file});
  EXPECT_EQ(read.exitCode, 0) << read.err;
  for (json object : jsonObjects(read.out)) {
    if (object.value("kind", "") != kind) continue;
    json& metadata = object["metadata"];
    metadata.erase("namespace");
    if (!metadata.contains("name")) metadata["name"] = metadata.value("generateName", "x") + "x";
    metadata.erase("generateName");
    metadata["annotations"]["aiadmit.dev/workload"] = workload;
    return object;
  }
  ADD_FAILURE() << "no " << kind << " in " << file;
  return json::object();
}

TEST(E2eAdmissionPolicyExport, DeclaredControllersStoredAsTheWebhookStoresThem) {
  const Sides sides;
  for (const json& object : oneOfEachKind()) {
    SCOPED_TRACE(object["kind"].get<std::string>());
    expectStoredAlike(sides, object);
  }
  const json server = realtimeServer({{"nvidia.com/gpu", "1"}, {"memory", "20Gi"}});
  SCOPED_TRACE("the class declared on the template");
  expectStoredAlike(sides, controller("Deployment", "templated", server, /*onTemplate=*/true));
  json requestOnly = declaredPod("requests", "batch", {container("work", json::object())});
  requestOnly["spec"]["restartPolicy"] = "OnFailure";
  requestOnly["spec"]["containers"][0]["resources"] = {{"requests", {{"nvidia.com/gpu", "1"}}}};
  expectStoredAlike(sides, controller("CronJob", "nightly", requestOnly, /*onTemplate=*/true));

  SCOPED_TRACE("Job settings the Job chose: its backoffLimit, its retries per index");
  json chosen = controller("Job", "chosen", trainingPod());
  chosen["spec"]["backoffLimit"] = 2;
  chosen["spec"]["ttlSecondsAfterFinished"] = 60;
  expectStoredAlike(sides, chosen);
  json indexed = controller("Job", "indexed", trainingPod());
  indexed["spec"]["completionMode"] = "Indexed";
  indexed["spec"]["completions"] = 2;
  indexed["spec"]["backoffLimitPerIndex"] = 1;
  expectStoredAlike(sides, indexed);

  SCOPED_TRACE("corpus Jobs");
  expectStoredAlike(
      sides, declaredFromCorpus("GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__axolotl-"
                                "multimodal-finetuning-gemma__k8s__axolotl-training-job.yaml",
                                "Job", "training"));
  expectStoredAlike(
      sides, declaredFromCorpus(
                 "kubernetes-sigs__kueue__site__static__examples__provisioning__sample-job.yaml",
                 "Job", "batch"));
}

// A training Pod with `value` at spec.`field`.
json trainingPodWith(const std::string& field, const json& value) {
  json pod = trainingPod();
  pod["spec"][field] = value;
  return pod;
}

TEST(E2eAdmissionPolicyExport, RefusalsCarryTheWebhooksRuleBesideTheirNearMiss) {
  const Sides sides;
  const auto batchOf = [](const std::string& gpus) {
    return declaredPod("wide", "batch", {container("work", {{"nvidia.com/gpu", gpus}})});
  };
  const auto servingWith = [](const std::string& priorityClass) {
    json server = realtimeServer({{"nvidia.com/gpu", "1"}, {"memory", "20Gi"}});
    server["spec"]["priorityClassName"] = priorityClass;
    return server;
  };
  struct NearMiss {
    std::string rule;
    json refused;
    json admitted;
  };
  const std::vector<NearMiss> cases = {
      {"AIA014", trainingPodWith("restartPolicy", "Always"),
       trainingPodWith("restartPolicy", "OnFailure")},
      {"AIA006", batchOf("9"), batchOf("8")},
      {"AIA011", trainingPodWith("priorityClassName", "system-cluster-critical"),
       trainingPodWith("priorityClassName", "ai-batch")},
      {"AIA006", controller("Job", "wide", batchOf("9")), controller("Job", "wide", batchOf("8"))},
      {"AIA006", controller("CronJob", "wide", batchOf("9")),
       controller("CronJob", "wide", batchOf("8"))},
      {"AIA011", controller("Deployment", "server", servingWith("system-cluster-critical")),
       controller("Deployment", "server", servingWith("ai-batch"))},
  };
  for (const NearMiss& near : cases) {
    SCOPED_TRACE(near.rule);
    expectRefusedAlike(sides, near.refused, near.rule);
    expectStoredAlike(sides, near.admitted);
  }
}

TEST(E2eAdmissionPolicyExport, WarningsCarryTheWebhooksRule) {
  const Sides sides;
  json server = realtimeServer({{"nvidia.com/gpu", "1"}});
  const CommandResult byWebhook = create(server, sides.webhook.name());
  const CommandResult byPolicies = create(server, sides.policies.name());
  ASSERT_EQ(byPolicies.exitCode, 0) << byPolicies.err;
  EXPECT_NE(byPolicies.err.find("[AIA015] spec.containers[0].resources.limits: GPU server "
                                "\"vllm\" has no memory limit; set limits.memory"),
            std::string::npos)
      << byPolicies.err;
  EXPECT_NE(byWebhook.err.find("[AIA015] spec.containers[0].resources.limits: GPU server "
                               "\"vllm\" has no memory limit; set limits.memory"),
            std::string::npos)
      << byWebhook.err;
  // A Deployment's warning line names the field below its pod spec, as the
  // webhook's does.
  const json deployment = controller("Deployment", "server", server);
  for (const std::string& namespaceName : {sides.webhook.name(), sides.policies.name()}) {
    const CommandResult answer = create(deployment, namespaceName);
    ASSERT_EQ(answer.exitCode, 0) << answer.err;
    EXPECT_NE(answer.err.find("[AIA015] containers[0].resources.limits: GPU server \"vllm\" has "
                              "no memory limit; set limits.memory"),
              std::string::npos)
        << namespaceName << ": " << answer.err;
  }
  // With a memory limit, neither warns.
  server["spec"]["containers"][0]["resources"]["limits"]["memory"] = "20Gi";
  EXPECT_EQ(create(server, sides.policies.name()).err.find("AIA015"), std::string::npos);
}

bool isOwnController(const json& object) {
  static const std::vector<std::string> kinds = {"Deployment", "StatefulSet", "ReplicaSet", "Job",
                                                 "CronJob"};
  return object.value("apiVersion", "").find('.') == std::string::npos &&
         std::find(kinds.begin(), kinds.end(), object.value("kind", "")) != kinds.end();
}

// Kubernetes' own controller as it is and declared each class; else nothing.
std::vector<json> controllersOf(const json& object) {
  if (!isOwnController(object)) return {};
  std::vector<json> out = {object};
  for (const char* workload : {"training", "batch", "realtime"}) {
    json declared = object;
    declared["metadata"]["annotations"]["aiadmit.dev/workload"] = workload;
    out.push_back(std::move(declared));
  }
  return out;
}

// The Pods of `object`: itself, or a bare Pod of each of Kubernetes' own
// controllers' pod templates, with the object's annotations (its declared
// class) beside the template's; and the controller itself, as it is and
// declared each class.
std::vector<json> podsOf(const json& object) {
  if (object.value("kind", "") == "Pod") return {object};
  std::vector<json> out = controllersOf(object);
  json spec = object.value("spec", json::object());
  if (spec.contains("jobTemplate")) spec = spec["jobTemplate"].value("spec", json::object());
  const json podTemplate = spec.value("template", json::object());
  if (!podTemplate.contains("spec")) return out;
  json metadata = podTemplate.value("metadata", json::object());
  const json own = object.value("metadata", json::object());
  metadata["name"] = own.value("name", std::string("templated")) + "-pod";
  const json annotations = own.value("annotations", json::object());
  for (const auto& [key, value] : annotations.items()) {
    metadata["annotations"][key] = value;
  }
  out.push_back(json{{"apiVersion", "v1"},
                     {"kind", "Pod"},
                     {"metadata", metadata},
                     {"spec", podTemplate["spec"]}});
  return out;
}

// Every Pod of the corpus and of the golden denials, a Pod of each of their
// pod templates, and each of Kubernetes' own controllers as it is and
// declared each class: what the policies
// refuse, the webhook refuses with the same rule; what they change, they
// change as the webhook does; the rest they leave to the webhook.
TEST(E2eAdmissionPolicyExport, NoRefusalTheWebhookWouldNotMake) {
  const Sides sides;
  std::vector<std::string> files;
  for (const std::string& dir :
       {testing::corpusDir() + "/manifests", testing::sourceDir() + "/tests/golden/denials"}) {
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().extension() == ".yaml") files.push_back(entry.path().string());
    }
  }
  int pods = 0;
  int covered = 0;
  int controllersCovered = 0;
  for (const std::string& file : files) {
    const CommandResult read = kubectl({"create", "--dry-run=client", "-o", "json", "-f", file});
    if (read.exitCode != 0) continue;  // a kind this cluster does not serve
    for (const json& manifest : jsonObjects(read.out)) {
      for (json object : podsOf(manifest)) {
        SCOPED_TRACE(file);
        ++pods;
        json& metadata = object["metadata"];
        metadata.erase("namespace");
        // Both sides store the same name, which a generated one is not.
        if (!metadata.contains("name"))
          metadata["name"] = metadata.value("generateName", "x") + "x";
        metadata.erase("generateName");
        const CommandResult byWebhook = create(object, sides.webhook.name());
        const CommandResult byPolicies = create(object, sides.policies.name());
        if (byPolicies.exitCode != 0) {
          EXPECT_NE(byWebhook.exitCode, 0) << "the policies refuse what the webhook admits:\n"
                                           << byPolicies.err;
          const std::vector<std::string> rules = ruleIds(byPolicies.err);
          if (rules.empty()) continue;  // the API server's own refusal, in both
          ++covered;
          EXPECT_NE(byWebhook.err.find("[" + rules.front() + "]"), std::string::npos)
              << byWebhook.err << "\n"
              << byPolicies.err;
          continue;
        }
        const json stored = withoutServerFields(json::parse(byPolicies.out));
        const json plain = withoutServerFields(object);
        if (stamped(stored) && !stamped(plain)) {
          ++covered;
          if (object.value("kind", "") != "Pod") ++controllersCovered;
          ASSERT_EQ(byWebhook.exitCode, 0) << byWebhook.err;
          EXPECT_EQ(stored, withoutServerFields(json::parse(byWebhook.out)));
        }
      }
    }
  }
  EXPECT_GE(pods, 25);
  // The golden AIA014 Pod is declared training with a GPU: the policies judge it.
  EXPECT_GE(covered, 1);
  // The corpus's Jobs, declared training or batch, are stored alike.
  EXPECT_GE(controllersCovered, 2);
  std::cout << pods << " objects, " << covered << " judged by the policies, " << controllersCovered
            << " of them controllers\n";
}

// The sh block of docs/install.md that writes the narrowing matchCondition,
// with the file names of the test's own.
std::string narrowingScript(const std::string& policies, const std::string& patch) {
  const std::string doc = testing::readFile(testing::sourceDir() + "/docs/install.md");
  const size_t marker = doc.find("not-covered-by-admission-policies");
  const size_t begin = doc.rfind("```sh\n", marker);
  const size_t end = doc.find("```", marker);
  EXPECT_NE(marker, std::string::npos);
  if (marker == std::string::npos || begin == std::string::npos || end == std::string::npos) {
    return "";
  }
  std::string script = doc.substr(begin + 6, end - begin - 6);
  for (const auto& [from, to] :
       {std::pair<std::string, std::string>{"aiadmit-policies.yaml", policies},
        {"my-aiadmit/not-covered.json", patch}}) {
    const size_t at = script.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) script.replace(at, from.size(), to);
  }
  return script;
}

// The webhooks of mutate.aiadmit.dev that the API server called for the
// create of Pod `name` in the namespace.
std::set<std::string> webhooksCalledForPod(const std::string& namespaceName,
                                           const std::string& name) {
  return mutatingWebhooksCalled(auditEvents("pods", namespaceName, name, "create"));
}

// The rollout's second step as docs/install.md gives it: the exported
// policies applied, the narrowing matchCondition its script writes added to
// applied.mutate.aiadmit.dev. A Pod or Job the policies cover is stored
// placed and stamped without a call to it; what they leave to the webhook (a
// class inferred, a realtime Pod without probes) still reaches it.
TEST(E2eAdmissionPolicyExportSerial, TheNarrowedWebhookLeavesToThePoliciesOnlyWhatTheyCover) {
  Namespace ns("export-narrowed");
  ExportedPolicies exported{ns.name()};
  testing::TempDir work;
  const std::string policies = work.file("aiadmit-policies.yaml");
  const CommandResult written = exportShippedProfiles(policies);
  ASSERT_EQ(written.exitCode, 0) << written.err;
  const std::string patch = work.file("not-covered.json");
  const std::string script = narrowingScript(policies, patch);
  ASSERT_FALSE(script.empty());
  const std::string kubeDir = std::filesystem::path(cluster().kubectl).parent_path().string();
  const CommandResult ran = testing::runCommand(
      {"env", "PATH=" + kubeDir + ":" + std::string(std::getenv("PATH")),
       "KUBECONFIG=" + cluster().kubeconfig, "bash", "-euo", "pipefail", "-c", script});
  ASSERT_EQ(ran.exitCode, 0) << ran.err;

  const json before = kubectlJson({"get", "mutatingwebhookconfiguration", "mutate.aiadmit.dev"});
  ASSERT_EQ(before["webhooks"][0]["name"], "applied.mutate.aiadmit.dev");
  const CommandResult narrowed =
      kubectl({"patch", "mutatingwebhookconfiguration", "mutate.aiadmit.dev", "--type", "json",
               "--patch-file", patch});
  ASSERT_EQ(narrowed.exitCode, 0) << narrowed.err;
  struct Restored {
    json configuration;
    ~Restored() {
      for (const char* field :
           {"resourceVersion", "managedFields", "generation", "uid", "creationTimestamp"}) {
        configuration["metadata"].erase(field);
      }
      const CommandResult replaced = kubectl({"replace", "-f", "-"}, toText(configuration));
      EXPECT_EQ(replaced.exitCode, 0) << replaced.err;
    }
  } restored{before};

  // Until the policies act in the namespace, nothing here would say anything.
  const json covered =
      declaredPod("covered", "batch", {container("worker", {{"nvidia.com/gpu", "1"}})});
  ASSERT_TRUE(waitUntil(
      [&] {
        const CommandResult answer = create(covered, ns.name());
        return answer.exitCode == 0 && stamped(json::parse(answer.out));
      },
      std::chrono::seconds(60)));

  json inferred = covered;
  inferred["metadata"] = {{"name", "inferred"}};
  json unprobed =
      declaredPod("unprobed", "realtime", {container("vllm", {{"nvidia.com/gpu", "1"}})});
  unprobed["spec"]["restartPolicy"] = "Always";
  unprobed["spec"]["containers"][0]["ports"] = {{{"containerPort", 8000}}};
  for (const json& pod : {covered, inferred, unprobed}) {
    const CommandResult answer = create(pod, ns.name(), /*dryRun=*/false);
    ASSERT_EQ(answer.exitCode, 0) << answer.err;
    const json stored = json::parse(answer.out);
    EXPECT_TRUE(stamped(stored)) << pod["metadata"]["name"];
    EXPECT_EQ(stored["spec"]["nodeSelector"].value("accelerator", ""), "nvidia")
        << pod["metadata"]["name"];
  }
  const std::set<std::string> applied = {"applied.mutate.aiadmit.dev"};
  EXPECT_TRUE(waitUntil([&] { return webhooksCalledForPod(ns.name(), "inferred") == applied; },
                        std::chrono::seconds(30)));
  EXPECT_TRUE(waitUntil([&] { return webhooksCalledForPod(ns.name(), "unprobed") == applied; },
                        std::chrono::seconds(30)));
  // The audit log has the create of the Pod the policies cover by now.
  ASSERT_FALSE(auditEvents("pods", ns.name(), "covered", "create").empty());
  EXPECT_EQ(webhooksCalledForPod(ns.name(), "covered"), std::set<std::string>{});
  // The webhook's own probe on the Pod it still takes.
  const json unprobedStored = kubectlJson({"get", "pod", "unprobed", "-n", ns.name()});
  EXPECT_TRUE(unprobedStored["spec"]["containers"][0].contains("readinessProbe"));
}

}  // namespace
}  // namespace aiadmit::e2e
