// Training inferred from what a Job runs, through the engine both webhooks
// call: it gets the training profile's priority and no deadline, and a guess
// refuses nothing the kind's batch would admit (webhook/engine/guessed_class.h),
// while a refusal that holds for batch too stands.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "mutators/mutator.h"
#include "tests/support/test_support.h"
#include "tests/support/validator_harness.h"
#include "webhook/engine/engine.h"
#include "webhook/policy/profile_loader.h"

namespace aiadmit {
namespace {

using namespace testing;

std::shared_ptr<const ProfileSet> shippedProfiles() {
  const ProfileLoadResult loaded =
      loadProfileDirectory(sourceDir() + "/profiles", mutationSwitches());
  EXPECT_TRUE(loaded.ok());
  return loaded.set;
}

ReviewResponse answer(const Engine& engine, Endpoint endpoint, const std::string& json) {
  return parseReviewResponse(answerReview(engine, endpoint, makeReview(json, "CREATE", "u")).body);
}

bool mentions(const ReviewResponse& response, const std::string& text) {
  for (const std::string& warning : response.warnings) {
    if (warning.find(text) != std::string::npos) return true;
  }
  return false;
}

// A fine-tune on a MIG slice, which the batch profile allows and the
// training profile does not; `command` is what it runs, `metadata` extra
// lines of its metadata (annotations, an owner).
std::string migJob(const std::string& command, const std::string& metadata = "",
                   const std::string& gpus = "nvidia.com/mig-1g.10gb: 1") {
  return yamlToJson(R"(apiVersion: batch/v1
kind: Job
metadata:
  name: finetune
  namespace: default
)" + metadata + R"(
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3
        command: )" +
                    command +
                    R"(
        resources: {limits: {)" +
                    gpus +
                    R"(}}
)");
}

const std::string kTorchrun = "[torchrun, --nproc_per_node=1, finetune.py]";

// /mutate, then /validate on what the API server would store.
struct Admitted {
  ReviewResponse mutated;
  ReviewResponse validated;
};
Admitted admit(const Engine& engine, const std::string& json) {
  Admitted out;
  out.mutated = answer(engine, Endpoint::Mutate, json);
  const std::string stored = out.mutated.patch.empty() ? json : applyPatch(json, out.mutated.patch);
  out.validated = answer(engine, Endpoint::Validate, stored);
  return out;
}

TEST(GuessedTraining, ALauncherMakesAJobTrainingWithItsPriorityAndNoDeadline) {
  const Engine engine(shippedProfiles());
  const Admitted run = admit(engine, migJob(kTorchrun, "", "nvidia.com/gpu: 1"));
  EXPECT_EQ(run.mutated.auditAnnotations.at("class"), "training");
  EXPECT_EQ(run.mutated.auditAnnotations.at("class-basis"), "inferred");
  EXPECT_NE(run.mutated.patch.find("\"ai-training\""), std::string::npos) << run.mutated.patch;
  EXPECT_EQ(run.mutated.patch.find("activeDeadlineSeconds"), std::string::npos)
      << run.mutated.patch;
  EXPECT_TRUE(mentions(run.mutated,
                       "aiadmit: class training: inferred from what it runs: container trainer "
                       "runs torchrun"))
      << ::testing::PrintToString(run.mutated.warnings);
  EXPECT_TRUE(mentions(run.mutated,
                       "aiadmit: left out activeDeadlineSeconds=604800: class inferred; declare "
                       "it in aiadmit.dev/workload (profile training)"))
      << ::testing::PrintToString(run.mutated.warnings);
  EXPECT_TRUE(run.validated.allowed) << run.validated.message;
  EXPECT_EQ(run.validated.auditAnnotations.at("class"), "training");
}

TEST(GuessedTraining, ADeclaredClassGetsTheDeadline) {
  const Engine engine(shippedProfiles());
  for (const char* declaration : {"  annotations: {aiadmit.dev/workload: training}",
                                  "  annotations: {aiadmit.dev/profile: training}"}) {
    SCOPED_TRACE(declaration);
    const ReviewResponse mutated =
        answer(engine, Endpoint::Mutate, migJob(kTorchrun, declaration, "nvidia.com/gpu: 1"));
    EXPECT_NE(mutated.patch.find(R"("path":"/spec/activeDeadlineSeconds","value":604800)"),
              std::string::npos)
        << mutated.patch;
    EXPECT_FALSE(mentions(mutated, "left out activeDeadlineSeconds"));
  }
}

TEST(GuessedTraining, ARuleTheGuessAloneBreaksOnlyWarns) {
  const Engine engine(shippedProfiles());
  // The batch profile allows MIG slices: a Job that runs a plain script is
  // admitted.
  const Admitted batch = admit(engine, migJob("[python, main.py]"));
  EXPECT_EQ(batch.mutated.auditAnnotations.at("class"), "batch");
  EXPECT_TRUE(batch.validated.allowed) << batch.validated.message;
  EXPECT_FALSE(mentions(batch.validated, "[AIA013]"));

  // Under torchrun it is taken for training, whose profile forbids sharing:
  // a guess, so AIA013 warns and says how to make it a statement.
  const Admitted guessed = admit(engine, migJob(kTorchrun));
  EXPECT_EQ(guessed.mutated.auditAnnotations.at("class"), "training");
  EXPECT_TRUE(guessed.validated.allowed) << guessed.validated.message;
  EXPECT_TRUE(mentions(guessed.validated, "[AIA013]"))
      << ::testing::PrintToString(guessed.validated.warnings);
  EXPECT_TRUE(mentions(guessed.validated,
                       "inferred class training: AIA013 only warns; declare it in "
                       "aiadmit.dev/workload"))
      << ::testing::PrintToString(guessed.validated.warnings);
  EXPECT_EQ(guessed.validated.auditAnnotations.at("rules"), "AIA013=warn");

  // Declared, it is the developer's statement, and refused.
  const ReviewResponse declared =
      answer(engine, Endpoint::Validate,
             migJob(kTorchrun, "  annotations: {aiadmit.dev/workload: training}"));
  EXPECT_FALSE(declared.allowed);
  EXPECT_NE(declared.message.find("[AIA013]"), std::string::npos) << declared.message;
}

TEST(GuessedTraining, ARefusalThatHoldsForBatchTooStands) {
  const Engine engine(shippedProfiles());
  // 16 GPUs in one Pod of an 8-GPU pool: no node holds it, whatever the class.
  const Admitted tooBig = admit(engine, migJob(kTorchrun, "", "nvidia.com/gpu: 16"));
  EXPECT_EQ(tooBig.mutated.auditAnnotations.at("class"), "training");
  EXPECT_FALSE(tooBig.validated.allowed);
  EXPECT_NE(tooBig.validated.message.find("[AIA006]"), std::string::npos)
      << tooBig.validated.message;
}

TEST(GuessedTraining, TheJobsOfAGuessedJobSetAreNotRefusedForTheGuess) {
  const Engine engine(shippedProfiles());
  // A JobSet's Job, stamped with the training class aiadmit guessed for the
  // JobSet, placed on the pool as its role needs: judged as the JobSet's
  // batch, it would be admitted.
  const Admitted child = admit(
      engine, migJob(kTorchrun,
                     R"(  annotations: {aiadmit.dev/class: training, aiadmit.dev/profile: training}
  ownerReferences:
  - {apiVersion: jobset.x-k8s.io/v1alpha2, kind: JobSet, name: finetune,
     uid: 1b2c3d4e-0000-4000-8000-000000000001, controller: true})"));
  EXPECT_TRUE(child.validated.allowed) << child.validated.message;
  EXPECT_TRUE(mentions(child.validated, "[AIA013]"))
      << ::testing::PrintToString(child.validated.warnings);
  // A PyTorchJob's is training by its kind: no guess, the rule holds.
  const Admitted pyTorchJobs = admit(
      engine, migJob(kTorchrun,
                     R"(  annotations: {aiadmit.dev/class: training, aiadmit.dev/profile: training}
  ownerReferences:
  - {apiVersion: kubeflow.org/v1, kind: PyTorchJob, name: finetune,
     uid: 1b2c3d4e-0000-4000-8000-000000000001, controller: true})"));
  EXPECT_FALSE(pyTorchJobs.validated.allowed);
  EXPECT_NE(pyTorchJobs.validated.message.find("[AIA013]"), std::string::npos)
      << pyTorchJobs.validated.message;
}

}  // namespace
}  // namespace aiadmit
