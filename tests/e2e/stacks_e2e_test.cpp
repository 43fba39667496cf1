// The serving and training stacks whose CRDs come from their projects' Go
// modules (scripts/build-stacks, tests/e2e/stacks): each project's published
// example, with the GPUs a GPU platform runs it with where it asks for none,
// is mutated by `aiadmit check`, stored by the real API server against the
// project's real CRD where aiadmit is not called (valid), and `check` of what
// was stored changes nothing (idempotent); applied where aiadmit is called,
// it is stored as check said and a second apply leaves it as it was. A
// TrainJob's runtimePatches are then merged as Kubeflow Trainer v2.3 merges
// them (trainermerge), and the trainer's Pods keep the tolerations the
// project's example gives them beside the pool's.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/e2e/support/e2e_cluster.h"

namespace aiadmit::e2e {
namespace {

// A published example of build/stacks/examples, as kubectl reads it (its
// first object, or its first of `kind`), without the namespace it names.
json example(const std::string& name, const std::string& kind = "") {
  const CommandResult read = kubectl({"create", "--dry-run=client", "-o", "json", "-f",
                                      testing::stacksDir() + "/examples/" + name});
  EXPECT_EQ(read.exitCode, 0) << read.err;
  for (json object : jsonObjects(read.out)) {
    if (!kind.empty() && object.value("kind", "") != kind) continue;
    object["metadata"].erase("namespace");
    return object;
  }
  return json::object();
}

// `aiadmit check -o FORMAT` of `object` in namespace `ns`, with the shipped
// profiles.
CommandResult check(const json& object, const std::string& ns, const std::string& format) {
  return testing::runCommand({testing::binaryPath(), "check", "-n", ns, "-o", format, "-"},
                             toText(object));
}

// The one record `check -o json` prints of `object`.
json checkRecord(const json& object, const std::string& ns) {
  const CommandResult decided = check(object, ns, "json");
  EXPECT_NE(decided.exitCode, 2) << decided.err;
  const json report = json::parse(decided.out, nullptr, false);
  if (report.is_discarded() || report["objects"].empty()) return json();
  return report["objects"][0];
}

// What the stacks' tests keep of one example's round.
struct Round {
  json mutated;  // what check made of it, as the API server stores it
  json stored;   // what the API server stored where aiadmit is called
};

// `spec` with its runtimePatches in manager order: Kueue's TrainJob webhook
// appends its entry wherever it runs among the mutating webhooks, and the
// list is a map keyed by manager.
json byManager(json spec) {
  if (!spec.contains("runtimePatches")) return spec;
  json& patches = spec["runtimePatches"];
  std::sort(patches.begin(), patches.end(), [](const json& a, const json& b) {
    return a.value("manager", "") < b.value("manager", "");
  });
  return spec;
}

// The object as the API server keeps it after a second `kubectl apply` of
// the same file in a namespace where aiadmit is not called.
json reappliedWithoutAiadmit(const json& object) {
  Namespace reference("stacks-reference", /*optedIn=*/false);
  const CommandResult first = kubectl({"apply", "-n", reference.name(), "-f", "-"}, toText(object));
  EXPECT_EQ(first.exitCode, 0) << first.err;
  const CommandResult again =
      kubectl({"apply", "-n", reference.name(), "-o", "json", "-f", "-"}, toText(object));
  EXPECT_EQ(again.exitCode, 0) << again.err;
  return again.exitCode == 0 ? withoutServerFields(json::parse(again.out)) : json();
}

// A second apply of the file where aiadmit is called. kubectl sends a custom
// resource's lists whole (a JSON merge patch): a list the file holds
// (a TrainJob's runtimePatches) loses what webhooks added to it, aiadmit's
// entry and Kueue's alike, as it does where aiadmit is not called, and Trainer
// refuses such an update of a running TrainJob itself. Anything else stays.
void expectReapplyKeepsIt(const json& object, const Round& round, const std::string& ns) {
  const CommandResult reapplied =
      kubectl({"apply", "-n", ns, "-o", "json", "-f", "-"}, toText(object));
  ASSERT_EQ(reapplied.exitCode, 0) << reapplied.err;
  json again = withoutServerFields(json::parse(reapplied.out));
  if (!object["spec"].contains("runtimePatches")) {
    EXPECT_EQ(again, round.stored) << "a second apply changed it";
    return;
  }
  const json reference = reappliedWithoutAiadmit(object);
  EXPECT_EQ(again["spec"]["runtimePatches"], reference["spec"]["runtimePatches"]);
  again["spec"].erase("runtimePatches");
  json stored = round.stored;
  stored["spec"].erase("runtimePatches");
  EXPECT_EQ(again, stored) << "a second apply changed more than the file's list";
}

// The example mutated by check, stored where aiadmit is not called (its CRD
// accepts it), judged again by check (nothing more to do), then applied
// where aiadmit is called, twice: stored as check said, and left as it was.
Round expectMutatedValidAndIdempotent(const json& object) {
  Round round;
  Namespace plain("stacks-plain", /*optedIn=*/false);
  Namespace optedIn("stacks");
  const json record = checkRecord(object, optedIn.name());
  EXPECT_TRUE(record.value("admitted", false)) << record.dump(1);
  const CommandResult mutated = check(object, optedIn.name(), "yaml");
  const CommandResult valid =
      kubectl({"apply", "-n", plain.name(), "-o", "json", "-f", "-"}, mutated.out);
  EXPECT_EQ(valid.exitCode, 0) << valid.err << "\n" << mutated.out;
  if (valid.exitCode != 0) return round;
  round.mutated = withoutServerFields(json::parse(valid.out));
  const json again = checkRecord(round.mutated, optedIn.name());
  EXPECT_TRUE(again.value("injected", json::array()).empty()) << "check changes what it made:\n"
                                                              << again.dump(1);

  const CommandResult applied =
      kubectl({"apply", "-n", optedIn.name(), "-o", "json", "-f", "-"}, toText(object));
  EXPECT_EQ(applied.exitCode, 0) << applied.err;
  if (applied.exitCode != 0) return round;
  round.stored = withoutServerFields(json::parse(applied.out));
  EXPECT_EQ(byManager(round.stored["spec"]), byManager(round.mutated["spec"]))
      << "the webhook and check disagree";
  expectReapplyKeepsIt(object, round, optedIn.name());
  return round;
}

bool hasToleration(const json& tolerations, const std::string& key) {
  if (!tolerations.is_array()) return false;
  for (const json& toleration : tolerations) {
    if (toleration.value("key", "") == key) return true;
  }
  return false;
}

TEST(E2eStacks, AKnativeServiceGetsWhatKnativeTakesAsShipped) {
  json service = example("knative-helloworld.yaml");
  service["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] =
      "1";
  const Round round = expectMutatedValidAndIdempotent(service);
  ASSERT_TRUE(round.stored.is_object());
  const json& revision = round.stored["spec"]["template"];
  EXPECT_EQ(revision["metadata"]["annotations"].value("aiadmit.dev/class", ""), "realtime")
      << revision.dump(1);
  // Knative's webhook refuses these unless config-features enables them.
  for (const char* gated :
       {"tolerations", "nodeSelector", "affinity", "priorityClassName", "schedulerName"}) {
    EXPECT_FALSE(revision["spec"].contains(gated)) << gated;
  }
}

TEST(E2eStacks, AnLlmServiceWithManagedDraIsAimedAtThePoolOfItsDeviceClass) {
  for (const char* name :
       {"llmisvc-managed-dra-minimal.yaml", "llmisvc-managed-dra-multi-device.yaml"}) {
    SCOPED_TRACE(name);
    const json service = example(name);
    ASSERT_EQ(service.value("apiVersion", ""), "serving.kserve.io/v1alpha2");
    const Round round = expectMutatedValidAndIdempotent(service);
    ASSERT_TRUE(round.stored.is_object());
    const json& pod = round.stored["spec"]["template"];
    EXPECT_TRUE(hasToleration(pod["tolerations"], "accelerator")) << pod.dump(1);
    EXPECT_EQ(pod["nodeSelector"].value("accelerator", ""), "nvidia") << pod.dump(1);
    EXPECT_FALSE(pod["containers"][0]["resources"]["limits"].contains("nvidia.com/gpu"))
        << "the claimed GPUs get no nvidia.com/gpu beside them";
  }
}

// The NIM operator's examples (its repository's, each beside the NIMCache it
// serves from, whose CRD is applied so that kubectl reads the file): the NIM
// container's GPUs are spec.resources, and the operator gives every Pod
// spec.priorityClassName. Placement is not injected: a resources slot has
// none.
TEST(E2eStacks, ANimServiceGetsThePriorityClassTheOperatorGivesItsPods) {
  for (const char* name : {"nim-standalone-basic-llm.yaml", "nim-multi-node.yaml"}) {
    SCOPED_TRACE(name);
    const json service = example(name, "NIMService");
    ASSERT_EQ(service.value("kind", ""), "NIMService");
    const Round round = expectMutatedValidAndIdempotent(service);
    ASSERT_TRUE(round.stored.is_object());
    const json& spec = round.stored["spec"];
    EXPECT_EQ(spec.value("priorityClassName", ""), "ai-realtime") << spec.dump(1);
    EXPECT_EQ(spec["resources"], service["spec"]["resources"]) << "its GPUs had their limits";
    for (const char* placement : {"tolerations", "nodeSelector", "affinity"}) {
      EXPECT_FALSE(spec.contains(placement)) << placement;
    }
  }
}

// The Spark operator's examples (its module's): with a GPU on each executor,
// as a GPU platform runs them, the application is batch work, and its
// driver and executors get the batch priority class, which the operator's
// Pod webhook gives their Pods. No placement is written: the operator's
// validator refuses a node selector on the application and on its pod specs
// at once. The pod-template example keeps its templates as published.
TEST(E2eStacks, ASparkApplicationsGpuExecutorsGetThePriorityClassAndNoPlacement) {
  const std::pair<const char*, const char*> examples[] = {
      {"spark-pi.yaml", "/spec"},
      {"spark-pi-pod-template.yaml", "/spec"},
      {"spark-pi-scheduled.yaml", "/spec/template"}};
  for (const auto& [name, pointer] : examples) {
    SCOPED_TRACE(name);
    json application =
        example(name, name == std::string("spark-pi-scheduled.yaml") ? "ScheduledSparkApplication"
                                                                     : "SparkApplication");
    const json::json_pointer at(pointer);
    ASSERT_TRUE(application.contains(at)) << application.dump(1);
    application[at]["executor"]["gpu"] = {{"name", "nvidia.com/gpu"}, {"quantity", 1}};
    const Round round = expectMutatedValidAndIdempotent(application);
    ASSERT_TRUE(round.stored.is_object());
    const json& spec = round.stored[at];
    const json& published = application[at];
    for (const char* role : {"driver", "executor"}) {
      SCOPED_TRACE(role);
      EXPECT_EQ(spec[role].value("priorityClassName", ""), "ai-batch") << spec[role].dump(1);
      for (const char* placement : {"tolerations", "nodeSelector", "affinity", "template"}) {
        EXPECT_EQ(spec[role].contains(placement), published[role].contains(placement)) << placement;
        if (published[role].contains(placement)) {
          EXPECT_EQ(spec[role][placement], published[role][placement]) << placement;
        }
      }
    }
    EXPECT_EQ(spec["executor"]["gpu"], published["executor"]["gpu"]);
    EXPECT_FALSE(spec.contains("nodeSelector"));
  }
}

// Without a GPU the operator's example is no AI workload: admitted as
// published, with no patch.
TEST(E2eStacks, ASparkApplicationWithoutGpusIsLeftAsPublished) {
  const json application = example("spark-pi.yaml", "SparkApplication");
  ASSERT_EQ(application.value("kind", ""), "SparkApplication");
  const json record = checkRecord(application, "stacks");
  EXPECT_TRUE(record.value("admitted", false)) << record.dump(1);
  EXPECT_TRUE(record.value("injected", json::array()).empty()) << record.dump(1);
  const Round round = expectMutatedValidAndIdempotent(application);
  ASSERT_TRUE(round.stored.is_object());
  EXPECT_FALSE(round.stored["spec"]["executor"].contains("priorityClassName"));
  EXPECT_EQ(round.stored["spec"]["executor"]["labels"], application["spec"]["executor"]["labels"]);
}

// Trainer's torch-distributed ClusterTrainingRuntime, which the TrainJob
// examples name: Kueue's TrainJob webhook refuses a TrainJob whose runtime
// does not exist. Cluster-scoped and without the opt-in label, so aiadmit
// does not judge it; applied by each test that needs it, and kept.
void applyTorchRuntime() {
  const CommandResult applied =
      kubectl({"apply", "--server-side", "-f",
               testing::stacksDir() + "/examples/trainer-torch-distributed.yaml"});
  ASSERT_EQ(applied.exitCode, 0) << applied.err;
}

// The trainer's Pods as Trainer v2.3 makes them from the runtime and the
// stored TrainJob's runtimePatches.
json trainerPodSpec(const json& trainJob) {
  testing::TempDir dir;
  testing::writeFile(dir.file("trainjob.json"), trainJob.dump());
  const CommandResult merged =
      testing::runCommand({testing::stacksDir() + "/trainermerge",
                           testing::stacksDir() + "/examples/trainer-torch-distributed.yaml",
                           dir.file("trainjob.json")});
  EXPECT_EQ(merged.exitCode, 0) << merged.err;
  const json spec = json::parse(merged.out, nullptr, false);
  if (spec.is_discarded()) return json();
  for (const json& job : spec["replicatedJobs"]) {
    if (job.value("name", "") == "node") return job["template"]["spec"]["template"]["spec"];
  }
  return json();
}

TEST(E2eStacks, ATrainJobsRuntimePatchKeepsThePatchesBeforeItAsTrainerMergesThem) {
  ASSERT_NO_FATAL_FAILURE(applyTorchRuntime());
  json trainJob = example("trainjob-runtime-patches.yaml");
  trainJob["spec"]["trainer"]["resourcesPerNode"]["limits"]["nvidia.com/gpu"] = "4";
  const Round round = expectMutatedValidAndIdempotent(trainJob);
  ASSERT_TRUE(round.stored.is_object());
  // The platform team's entry, Kueue's (its webhook adds one to every
  // TrainJob) and aiadmit's, last: it carries the team's toleration.
  const json patches = byManager(round.stored["spec"])["runtimePatches"];
  ASSERT_EQ(patches.size(), 3u) << patches.dump(1);
  EXPECT_EQ(patches[0].value("manager", ""), "aiadmit.dev/webhook");

  const json pod = trainerPodSpec(round.stored);
  EXPECT_TRUE(hasToleration(pod["tolerations"], "training-workload"))
      << "the platform team's entry's toleration: " << pod.dump(1);
  EXPECT_TRUE(hasToleration(pod["tolerations"], "accelerator")) << pod.dump(1);
  EXPECT_EQ(pod["nodeSelector"].value("node-type", ""), "training") << pod.dump(1);
  EXPECT_EQ(pod["nodeSelector"].value("accelerator", ""), "nvidia") << pod.dump(1);
}

TEST(E2eStacks, ATrainJobWithoutPatchesGetsThePoolThroughItsOwnEntry) {
  ASSERT_NO_FATAL_FAILURE(applyTorchRuntime());
  json trainJob = example("trainjob-multi-node.yaml");
  trainJob["spec"]["trainer"]["resourcesPerNode"]["limits"]["nvidia.com/gpu"] = "8";
  const Round round = expectMutatedValidAndIdempotent(trainJob);
  ASSERT_TRUE(round.stored.is_object());
  const json pod = trainerPodSpec(round.stored);
  EXPECT_TRUE(hasToleration(pod["tolerations"], "accelerator")) << pod.dump(1);
  EXPECT_EQ(pod["nodeSelector"].value("accelerator", ""), "nvidia") << pod.dump(1);
}

}  // namespace
}  // namespace aiadmit::e2e
