// `aiadmit workload-types suggest` on real CRDs: what it writes for a kind
// the table lacks (KubeRay's RayCluster under another group) loads beside the
// shipped profiles and reads the kind's Pods where the built-in row does; its
// webhook patch, applied by an overlay of manifests/base as docs/install.md
// says, puts the kind in the rules of the applied and reconciled webhooks; a
// CRD with no pod template in its schema is named, not guessed at.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "mutators/mutator.h"
#include "tests/install/rendered_manifests.h"
#include "webhook/model/workload_type_builtin.h"
#include "webhook/policy/profile_loader.h"

namespace aiadmit::install {
namespace {

// The real RayCluster CRD as a kind of another group, which no row holds.
std::string regroupedRayClusters(const TempDir& dir) {
  std::string text = readFile(sharedCrds() + "/ray.io_rayclusters.yaml");
  for (const auto& [from, to] : {std::pair<std::string, std::string>{
                                     "name: rayclusters.ray.io", "name: rayclusters.example.com"},
                                 {"group: ray.io", "group: example.com"}}) {
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
  }
  const std::string file = dir.file("rayclusters.yaml");
  writeFile(file, text);
  return file;
}

std::set<std::string> specsOf(const WorkloadType& type) {
  std::set<std::string> specs;
  for (const TemplateSlot& slot : type.templates) specs.insert(slot.spec);
  return specs;
}

TEST(WorkloadTypesSuggest, WhatItWritesLoadsAndReadsTheKindAsTheBuiltInRowDoes) {
  TempDir dir;
  const CommandResult suggested =
      runCommand({binaryPath(), "workload-types", "suggest", regroupedRayClusters(dir)});
  ASSERT_EQ(suggested.exitCode, 0) << suggested.err;
  const std::string profiles = shippedProfilesWith(dir, {{"rayclusters.yaml", suggested.out}});
  const CommandResult lint = runCommand({binaryPath(), "profiles", "lint", profiles});
  EXPECT_EQ(lint.exitCode, 0) << lint.out;

  const ProfileLoadResult loaded = loadProfileDirectory(profiles, mutationSwitches());
  ASSERT_TRUE(loaded.ok());
  const WorkloadType* suggestedRow =
      loaded.workloadTypes->findGroupKind("example.com", "RayCluster");
  ASSERT_NE(suggestedRow, nullptr) << suggested.out;
  const WorkloadType* builtInRow = loaded.workloadTypes->findGroupKind("ray.io", "RayCluster");
  ASSERT_NE(builtInRow, nullptr);
  EXPECT_EQ(specsOf(*suggestedRow), specsOf(*builtInRow));
  EXPECT_EQ(suggestedRow->resource, "rayclusters");
  EXPECT_NE(suggested.out.find("class: batch   # cannot be read from a schema"), std::string::npos);
}

TEST(WorkloadTypesSuggest, ItsWebhookPatchAddsTheKindToTheAppliedAndReconciledRules) {
  TempDir dir;
  const std::string patch = dir.file("patch.yaml");
  const CommandResult suggested = runCommand({binaryPath(), "workload-types", "suggest",
                                              "--webhook-patch", patch, regroupedRayClusters(dir)});
  ASSERT_EQ(suggested.exitCode, 0) << suggested.err;
  const std::string overlay = dir.file("overlay");
  std::filesystem::create_directories(overlay);
  writeFile(overlay + "/kustomization.yaml",
            "resources:\n- " +
                std::filesystem::relative(manifestsDir() + "/base", overlay).string() + "\n" +
                readFile(patch));
  const Rendered rendered = render(overlay);
  for (const char* name : {"mutate.aiadmit.dev", "validate.aiadmit.dev"}) {
    const JsonValue* configuration =
        rendered.find(std::string(name) == "mutate.aiadmit.dev" ? "MutatingWebhookConfiguration"
                                                                : "ValidatingWebhookConfiguration",
                      name);
    ASSERT_NE(configuration, nullptr) << name;
    for (const JsonValue& webhook : (*configuration)["webhooks"].GetArray()) {
      const std::string_view webhookName = stringMember(&webhook, "name");
      bool covered = false;
      for (const JsonValue& rule : webhook["rules"].GetArray()) {
        covered = covered || (stringSet(member(&rule, "apiGroups")).count("example.com") != 0 &&
                              stringSet(member(&rule, "resources")).count("rayclusters") != 0);
      }
      const bool wanted =
          webhookName.starts_with("applied.") || webhookName.starts_with("reconciled.");
      EXPECT_EQ(covered, wanted) << webhookName;
    }
  }
}

TEST(WorkloadTypesSuggest, ACrdWithNoPodTemplateInItsSchemaIsNamedNotGuessedAt) {
  const CommandResult suggested =
      runCommand({binaryPath(), "workload-types", "suggest",
                  sharedCrds() + "/trainer.kubeflow.org_trainjobs.yaml"});
  EXPECT_EQ(suggested.exitCode, 1);
  EXPECT_EQ(suggested.out, "");
  EXPECT_NE(suggested.err.find("TrainJob.trainer.kubeflow.org: no field of its schema is shaped "
                               "like a pod template"),
            std::string::npos)
      << suggested.err;
  TempDir dir;
  writeFile(dir.file("broken.yaml"), "kind: [\n");
  EXPECT_EQ(
      runCommand({binaryPath(), "workload-types", "suggest", dir.file("broken.yaml")}).exitCode, 2);
}

}  // namespace
}  // namespace aiadmit::install
