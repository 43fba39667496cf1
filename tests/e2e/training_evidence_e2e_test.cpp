// Training told from batch by what the object runs, on the real control
// plane: a GPU Job under torchrun is stored as training, with the training
// priority and without a deadline, and its Pod runs on the pool; a guess
// refuses nothing batch would admit (a MIG slice under torchrun is warned
// of, and its Pod made), until its developer declares the class; a JobSet of
// a leader and GPU workers trains, and JobSet makes its Jobs and Pods.
#include <gtest/gtest.h>

#include "tests/e2e/support/e2e_cluster.h"
#include "tests/e2e/support/workloads.h"

namespace aiadmit::e2e {
namespace {

// A Job whose one container runs `command` on `gpus` (a resources.limits
// entry), declared `workload` when given.
json gpuJob(const std::string& name, const json& command, const json& gpus,
            const std::string& workload = "") {
  json metadata = {{"name", name}};
  if (!workload.empty()) metadata["annotations"] = {{"aiadmit.dev/workload", workload}};
  json limits = gpus;
  limits["memory"] = "16Gi";
  const json container = {{"name", "trainer"},
                          {"image", "nvcr.io/nvidia/pytorch:24.05-py3"},
                          {"command", command},
                          {"resources", {{"limits", limits}}}};
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata", metadata},
          {"spec",
           {{"backoffLimit", 0},
            {"template",
             {{"spec", {{"restartPolicy", "Never"}, {"containers", json::array({container})}}}}}}}};
}

const json kTorchrun = {"torchrun", "--nproc_per_node=1", "finetune.py"};

bool warned(const CommandResult& result, const std::string& text) {
  for (const std::string& warning : aiadmitWarnings(result.err)) {
    if (warning.find(text) != std::string::npos) return true;
  }
  return false;
}

CommandResult kubectlApply(const Namespace& ns, const json& object) {
  return kubectl({"apply", "-n", ns.name(), "-f", "-"}, toText(object));
}

TEST(E2eTrainingEvidence, ATorchrunJobRunsAsTrainingWithoutADeadline) {
  Namespace ns("torchrun-job");
  const CommandResult applied =
      kubectlApply(ns, gpuJob("finetune", kTorchrun, {{"nvidia.com/gpu", "1"}}));
  ASSERT_EQ(applied.exitCode, 0) << applied.err;
  EXPECT_TRUE(warned(applied,
                     "aiadmit: class training: inferred from what it runs: container "
                     "trainer runs torchrun"))
      << applied.err;
  EXPECT_TRUE(warned(applied,
                     "aiadmit: left out activeDeadlineSeconds=604800: class inferred; "
                     "declare it in aiadmit.dev/workload (profile training)"))
      << applied.err;

  const json job = stored("jobs", ns.name(), "finetune");
  ASSERT_TRUE(job.is_object());
  EXPECT_FALSE(job["spec"].contains("activeDeadlineSeconds")) << job["spec"];
  EXPECT_EQ(job["spec"]["template"]["spec"].value("priorityClassName", ""), "ai-training");
  EXPECT_EQ(job["metadata"]["annotations"].value("aiadmit.dev/class", ""), "training");
  const auto audit = auditAnnotations(auditEvents("jobs", ns.name(), "finetune", "create"));
  EXPECT_EQ(audit.at("applied.validate.aiadmit.dev/class-basis"), "inferred");

  ASSERT_TRUE(podsBound(ns.name(), 1)) << kubectl({"get", "events", "-n", ns.name()}).out;
  EXPECT_TRUE(isGpuNode(podsOf(ns.name())[0]["spec"]["nodeName"]));
}

TEST(E2eTrainingEvidence, AGuessRefusesNothingBatchAdmitsUntilTheClassIsDeclared) {
  Namespace ns("torchrun-mig");
  // A MIG slice: the batch profile allows it, the training profile does not.
  const json mig = {{"nvidia.com/mig-1g.10gb", "1"}};
  const CommandResult guessed = kubectlApply(ns, gpuJob("finetune", kTorchrun, mig));
  ASSERT_EQ(guessed.exitCode, 0) << guessed.err;
  EXPECT_TRUE(warned(guessed,
                     "aiadmit: inferred class training: AIA013 only warns; declare it "
                     "in aiadmit.dev/workload"))
      << guessed.err;
  EXPECT_TRUE(warned(guessed, "[AIA013]")) << guessed.err;
  // The Job controller's Pod, stamped training as its Job, is made too.
  EXPECT_TRUE(waitUntil([&] { return podsOf(ns.name()).size() == 1; }, std::chrono::seconds(60)))
      << kubectl({"get", "events", "-n", ns.name()}).out;
  EXPECT_GE(expectAllowed("pods", ns.name(), controllerUser("job-controller"), {"create"}).count,
            1u);

  const CommandResult declared =
      kubectlApply(ns, gpuJob("finetune-declared", kTorchrun, mig, "training"));
  EXPECT_NE(declared.exitCode, 0) << declared.out;
  EXPECT_NE(declared.err.find("denied the request: [AIA013]"), std::string::npos) << declared.err;
}

// A JobSet as its leader-worker examples write it: a leader that asks for no
// GPU, and two worker Pods of one GPU each running a plain script.
json leaderAndWorkers(const std::string& name) {
  return json::parse(R"({
    "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
    "metadata": {"name": ")" +
                     name + R"("},
    "spec": {"replicatedJobs": [
      {"name": "leader", "template": {"spec": {"parallelism": 1, "completions": 1,
        "template": {"spec": {"restartPolicy": "Never",
          "containers": [{"name": "leader", "image": "registry.example/trainer:1",
            "command": ["python", "rendezvous.py"]}]}}}}},
      {"name": "workers", "template": {"spec": {"parallelism": 2, "completions": 2,
        "template": {"spec": {"restartPolicy": "Never",
          "containers": [{"name": "worker", "image": "registry.example/trainer:1",
            "command": ["python", "main.py"],
            "resources": {"limits": {"nvidia.com/gpu": "1", "memory": "16Gi"}}}]}}}}}]}})");
}

TEST(E2eTrainingEvidence, AJobSetsLeaderAndGpuWorkersTrainAndJobSetMakesTheirJobs) {
  Namespace ns("leader-workers");
  const CommandResult applied = kubectlApply(ns, leaderAndWorkers("pretrain"));
  ASSERT_EQ(applied.exitCode, 0) << applied.err;
  EXPECT_TRUE(warned(applied,
                     "aiadmit: class training: inferred from what it runs: a "
                     "coordinator (leader) and 2 GPU Pods (workers)"))
      << applied.err;

  const json jobSet = stored("jobset", ns.name(), "pretrain");
  ASSERT_TRUE(jobSet.is_object());
  const json& workers = jobSet["spec"]["replicatedJobs"][1]["template"]["spec"];
  EXPECT_FALSE(workers.contains("activeDeadlineSeconds")) << workers;
  EXPECT_EQ(workers["template"]["spec"].value("priorityClassName", ""), "ai-training");

  // The leader's Pod and the two workers', made by JobSet's Jobs and bound.
  ASSERT_TRUE(podsBound(ns.name(), 3)) << kubectl({"get", "jobs,pods,events", "-n", ns.name()}).out;
  EXPECT_EQ(expectUnpatchedCreates("jobs", ns.name(), kJobSetUser), 2u);
  for (const json& pod : podsOf(ns.name(), "jobset.sigs.k8s.io/replicatedjob-name=workers")) {
    EXPECT_TRUE(isGpuNode(pod["spec"]["nodeName"])) << pod["metadata"]["name"];
    EXPECT_EQ(pod["metadata"]["annotations"].value("aiadmit.dev/class", ""), "training");
  }
}

}  // namespace
}  // namespace aiadmit::e2e
