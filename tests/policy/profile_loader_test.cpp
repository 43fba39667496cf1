// The strict profile loader: golden error messages for broken profiles
// (tests/golden/profiles: NAME.yaml and the expected NAME.err), the shipped
// profiles, the documented example, directories and ConfigMap volumes, and
// `aiadmit profiles lint`.
//
// AIADMIT_UPDATE_GOLDEN=1 rewrites the .err files from the current output.
#include "webhook/policy/profile_loader.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "mutators/mutator.h"
#include "tests/support/golden_files.h"
#include "tests/support/test_support.h"

namespace aiadmit {
namespace {

namespace fs = std::filesystem;
using namespace testing;

std::string goldenDir() {
  return sourceDir() + "/tests/golden/profiles";
}

class GoldenProfile : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenProfile, IsRefusedWithTheExpectedErrors) {
  ProfileLoadResult result;
  expectGoldenLoadErrors(goldenDir(), GetParam(), result);
}

INSTANTIATE_TEST_SUITE_P(Loader, GoldenProfile, ::testing::ValuesIn(goldenCaseNames(goldenDir())),
                         goldenCaseTestName);

TEST(ProfileLoader, GoldenCasesCoverAtLeastTwentyBrokenProfiles) {
  EXPECT_GE(goldenCaseNames(goldenDir()).size(), 20u);
  EXPECT_GE(goldenLoadErrorCount(goldenDir()), 60u);
}

TEST(ProfileLoader, ShippedProfilesFollowTheSeedCluster) {
  const ProfileLoadResult result =
      loadProfileDirectory(sourceDir() + "/profiles", mutationSwitches());
  ASSERT_TRUE(result.ok()) << formatLoadErrors(result.errors);
  const ProfileSet& set = *result.set;
  const std::map<std::string, std::pair<WorkloadClass, std::string>> expected = {
      {"training", {WorkloadClass::Training, "ai-training"}},
      {"batch", {WorkloadClass::Batch, "ai-batch"}},
      {"realtime", {WorkloadClass::Realtime, "ai-realtime"}},
  };
  ASSERT_EQ(set.profiles().size(), expected.size());
  for (const auto& [name, classAndPriority] : expected) {
    SCOPED_TRACE(name);
    const Profile* profile = set.find(name);
    ASSERT_NE(profile, nullptr);
    EXPECT_EQ(profile->workloadClass, classAndPriority.first);
    EXPECT_TRUE(profile->scope.namespaces.empty()) << "the default applies everywhere";
    EXPECT_TRUE(profile->scope.matchLabels.empty());
    EXPECT_EQ(profile->gpu.resourceName, "nvidia.com/gpu");
    EXPECT_EQ(profile->gpu.gpusPerNode, 8);
    EXPECT_EQ(profile->placement.nodeSelector,
              (std::map<std::string, std::string>{{"accelerator", "nvidia"}}));
    ASSERT_EQ(profile->placement.tolerations.size(), 1u);
    const Toleration& toleration = profile->placement.tolerations[0];
    EXPECT_EQ(toleration.key, "accelerator");
    EXPECT_EQ(toleration.op, "Equal");
    EXPECT_EQ(toleration.value, "gpu");
    EXPECT_EQ(toleration.effect, "NoSchedule");
    EXPECT_EQ(profile->scheduling.priorityClassName, classAndPriority.second);
    EXPECT_FALSE(profile->allowsPriorityClass("ai-critical"));
    for (int rule = kFirstRule; rule <= lastRule().number; ++rule) {
      EXPECT_EQ(profile->rules.of(RuleId{rule}, RuleTarget::BarePod),
                rule == AIA015.number ? RuleAction::Warn : RuleAction::Deny)
          << RuleId{rule}.name();
      const bool existence = rule >= AIA017.number && rule <= AIA019.number;
      EXPECT_EQ(profile->rules.of(RuleId{rule}, RuleTarget::Controller),
                rule == AIA015.number || existence ? RuleAction::Warn : RuleAction::Deny)
          << RuleId{rule}.name();
    }
  }
  // Priority only downwards: ai-realtime > ai-training > ai-batch.
  EXPECT_TRUE(set.find("realtime")->allowsPriorityClass("ai-batch"));
  EXPECT_FALSE(set.find("training")->allowsPriorityClass("ai-realtime"));
  EXPECT_FALSE(set.find("batch")->allowsPriorityClass("ai-training"));
  // Whole GPUs for training; MIG slices where sharing is allowed.
  EXPECT_FALSE(set.find("training")->gpu.sharingAllowed);
  EXPECT_FALSE(set.find("training")->allowsResource("nvidia.com/mig-1g.10gb"));
  EXPECT_TRUE(set.find("realtime")->allowsResource("nvidia.com/mig-3g.40gb"));
  EXPECT_TRUE(set.find("batch")->allowsResource("nvidia.com/mig-1g.10gb"));
  EXPECT_FALSE(set.find("batch")->allowsResource("nvidia.com/gpus"));
  // Probes for serving, Job defaults and /dev/shm for the rest.
  EXPECT_TRUE(set.find("realtime")->probes.enabled);
  EXPECT_GE(set.find("realtime")->probes.startupBudgetSeconds, 600);
  // /dev/shm for every GPU pod of training and batch, for servers from 2 GPUs.
  for (const char* name : {"training", "batch", "realtime"}) {
    EXPECT_TRUE(set.find(name)->sharedMemory.enabled) << name;
    EXPECT_FALSE(set.find(name)->sharedMemory.sizeLimit.empty()) << name;
  }
  EXPECT_EQ(set.find("training")->sharedMemory.minGpus, 1);
  EXPECT_EQ(set.find("batch")->sharedMemory.minGpus, 1);
  EXPECT_EQ(set.find("realtime")->sharedMemory.minGpus, 2);
  EXPECT_TRUE(set.find("training")->jobDefaults.backoffLimit.has_value());
  EXPECT_TRUE(set.find("batch")->jobDefaults.ttlSecondsAfterFinished.has_value());
}

// The complete example in profiles/README.md: the block after the
// "## Complete example" heading.
std::string readmeExample() {
  return documentedYamlBlock(sourceDir() + "/profiles/README.md", "## Complete example");
}

TEST(ProfileLoader, DocumentedCompleteExampleLoadsAndSetsEveryField) {
  const std::string example = readmeExample();
  ASSERT_FALSE(example.empty()) << "profiles/README.md has no complete example";
  const ProfileLoadResult result = loadProfileText(example, "README.md", mutationSwitches());
  ASSERT_TRUE(result.ok()) << formatLoadErrors(result.errors);
  const Profile* p = result.set->find("training-vision");
  ASSERT_NE(p, nullptr);
  const Profile defaults;
  EXPECT_EQ(p->workloadClass, WorkloadClass::Training);
  EXPECT_FALSE(p->scope.namespaces.empty());
  EXPECT_FALSE(p->scope.matchLabels.empty());
  EXPECT_GT(p->gpu.defaultCount, 0);
  EXPECT_FALSE(p->gpu.allowedNamespaces.empty());
  EXPECT_FALSE(p->placement.nodeSelector.empty());
  EXPECT_FALSE(p->placement.requiredNodeAffinity.empty());
  EXPECT_FALSE(p->placement.tolerations.empty());
  EXPECT_FALSE(p->scheduling.priorityClassName.empty());
  EXPECT_FALSE(p->scheduling.allowedPriorityClasses.empty());
  EXPECT_FALSE(p->scheduling.schedulerName.empty());
  EXPECT_FALSE(p->scheduling.labels.empty());
  EXPECT_FALSE(p->scheduling.annotations.empty());
  EXPECT_TRUE(p->scheduling.gang.required);
  EXPECT_FALSE(p->scheduling.gang.queueLabel.empty());
  EXPECT_TRUE(p->jobDefaults.backoffLimit && p->jobDefaults.activeDeadlineSeconds &&
              p->jobDefaults.ttlSecondsAfterFinished);
  EXPECT_TRUE(p->sharedMemory.enabled);
  EXPECT_FALSE(p->sharedMemory.sizeLimit.empty());
  EXPECT_FALSE(p->mutations.on("sharedMemory"));
  EXPECT_EQ(p->rules.of(AIA010, RuleTarget::Controller), RuleAction::Warn);
  EXPECT_EQ(p->rules.of(AIA015, RuleTarget::Controller), RuleAction::Off);
  // The realtime example shows the probe fields.
  const Profile* serving = result.set->find("realtime-llm");
  ASSERT_NE(serving, nullptr);
  EXPECT_TRUE(serving->probes.enabled);
  EXPECT_EQ(serving->probes.readiness.handler, ProbeSpec::Handler::HttpGet);
  EXPECT_TRUE(serving->probes.readiness.port.has_value());
  EXPECT_NE(serving->probes.readiness.path, defaults.probes.readiness.path);
  EXPECT_NE(serving->probes.startupBudgetSeconds, defaults.probes.startupBudgetSeconds);
  EXPECT_TRUE(serving->gpu.sharingAllowed);
  EXPECT_EQ(serving->gpu.allowedResources,
            (std::vector<std::string>{"nvidia.com/gpu", "nvidia.com/mig-*"}));
}

TEST(ProfileLoader, ErrorsOfEveryFileAreListedInFileOrder) {
  TempDir dir;
  writeFile(dir.file("b.yaml"), readFile(goldenDir() + "/toleration-effect.yaml"));
  writeFile(dir.file("a.yml"), readFile(goldenDir() + "/negative-counts.yaml"));
  writeFile(dir.file("notes.txt"), "not a profile: ignored");
  writeFile(dir.file(".hidden.yaml"), "not: a profile");
  const ProfileLoadResult result = loadProfileDirectory(dir.path(), mutationSwitches());
  ASSERT_FALSE(result.ok());
  ASSERT_EQ(result.errors.size(), 6u) << formatLoadErrors(result.errors);
  EXPECT_EQ(result.errors.front().file, dir.file("a.yml"));
  EXPECT_EQ(result.errors.back().format(),
            dir.file("b.yaml") +
                ":15:15: spec.placement.tolerations[0].effect: \"NoSchedul\" is not one of "
                "NoSchedule, PreferNoSchedule, NoExecute");
}

std::string minimalProfile(const std::string& name, const std::string& cls) {
  return "apiVersion: aiadmit.dev/v1\nkind: Profile\nmetadata:\n  name: " + name +
         "\nspec:\n  class: " + cls + "\n";
}

TEST(ProfileLoader, DuplicateNamesAcrossFilesNameTheFirstDefinition) {
  TempDir dir;
  writeFile(dir.file("a.yaml"), minimalProfile("gpu", "training"));
  writeFile(dir.file("b.yaml"), "# second\n" + minimalProfile("gpu", "batch"));
  const ProfileLoadResult result = loadProfileDirectory(dir.path(), mutationSwitches());
  ASSERT_EQ(result.errors.size(), 1u) << formatLoadErrors(result.errors);
  EXPECT_EQ(result.errors[0].format(), dir.file("b.yaml") +
                                           ":5:9: metadata.name: duplicate profile name \"gpu\" "
                                           "(first defined at " +
                                           dir.file("a.yaml") + ":4)");
}

TEST(ProfileLoader, EmptyOrMissingDirectoryIsAnError) {
  TempDir dir;
  ProfileLoadResult result = loadProfileDirectory(dir.path(), mutationSwitches());
  ASSERT_EQ(result.errors.size(), 1u);
  EXPECT_EQ(result.errors[0].format(),
            dir.path() + ": no profiles found (files named *.yaml or *.yml)");
  result = loadProfileDirectory(dir.file("absent"), mutationSwitches());
  ASSERT_EQ(result.errors.size(), 1u);
  EXPECT_NE(result.errors[0].format().find("cannot read profile directory"), std::string::npos);
}

TEST(ProfileLoader, EmptyDocumentsAndCommentsAreFine) {
  const ProfileLoadResult result =
      loadProfileText("# header\n---\n---\n" + minimalProfile("a", "batch") + "---\n# trailing\n",
                      "f.yaml", mutationSwitches());
  ASSERT_TRUE(result.ok()) << formatLoadErrors(result.errors);
  EXPECT_EQ(result.set->profiles().size(), 1u);
}

TEST(ProfileLoader, NumbersOutOfRangeAreRefused) {
  const ProfileLoadResult result =
      loadProfileText(minimalProfile("a", "batch") +
                          "  jobDefaults:\n    backoffLimit: 99999999999999999999\n"
                          "    ttlSecondsAfterFinished: 4294967296\n",
                      "f.yaml", mutationSwitches());
  EXPECT_EQ(formatLoadErrors(result.errors),
            "f.yaml:8:19: spec.jobDefaults.backoffLimit: must be a whole number, got "
            "\"99999999999999999999\"\n"
            "f.yaml:9:30: spec.jobDefaults.ttlSecondsAfterFinished: must be at most 2147483647, "
            "got 4294967296\n");
}

TEST(ProfileLoader, SharedMemoryReadsItsFieldsAndDefaultsToEveryGpuPod) {
  const ProfileLoadResult set = loadProfileText(
      minimalProfile("a", "batch") + "  sharedMemory: {minGpus: 2, sizeLimit: 8Gi}\n---\n" +
          minimalProfile("b", "training") + "  sharedMemory: {}\n---\n" +
          minimalProfile("c", "realtime"),
      "f.yaml", mutationSwitches());
  ASSERT_TRUE(set.ok()) << formatLoadErrors(set.errors);
  const SharedMemory& read = set.set->find("a")->sharedMemory;
  EXPECT_TRUE(read.enabled);
  EXPECT_EQ(read.minGpus, 2);
  EXPECT_EQ(read.sizeLimit, "8Gi");
  const SharedMemory& defaults = set.set->find("b")->sharedMemory;
  EXPECT_TRUE(defaults.enabled) << "the section's presence turns it on";
  EXPECT_EQ(defaults.minGpus, 1);
  EXPECT_EQ(defaults.sizeLimit, "");
  EXPECT_FALSE(set.set->find("c")->sharedMemory.enabled) << "no section, no /dev/shm";

  const ProfileLoadResult refused =
      loadProfileText(minimalProfile("a", "batch") + "  sharedMemory:\n    sizeLimit: -8Gi\n",
                      "f.yaml", mutationSwitches());
  EXPECT_EQ(formatLoadErrors(refused.errors),
            "f.yaml:8:16: spec.sharedMemory.sizeLimit: \"-8Gi\" is not a positive quantity (such "
            "as 16Gi)\n");
}

// Lays out a ConfigMap volume the way kubelet's atomic writer does: files in a
// timestamped hidden directory, ..data pointing at it, one symlink per key.
void writeConfigMap(const std::string& root, const std::string& version,
                    const std::map<std::string, std::string>& files) {
  const std::string data = root + "/.." + version;
  fs::create_directories(data);
  for (const auto& [name, text] : files) writeFile(data + "/" + name, text);
  fs::create_symlink(".." + version, root + "/..data_tmp");
  fs::rename(root + "/..data_tmp", root + "/..data");
  for (const auto& [name, text] : files) {
    if (!fs::exists(fs::symlink_status(root + "/" + name))) {
      fs::create_symlink("..data/" + name, root + "/" + name);
    }
  }
}

TEST(ProfileLoader, ReadsAConfigMapVolumeThroughItsDataLink) {
  TempDir dir;
  writeConfigMap(dir.path(), "2024_01_01_00_00_00.1",
                 {{"training.yaml", minimalProfile("training", "training")},
                  {"batch.yaml", minimalProfile("batch", "batch")}});
  // A stale file of an older version, still in its own hidden directory.
  fs::create_directories(dir.path() + "/..2023_old");
  writeFile(dir.path() + "/..2023_old/realtime.yaml", "broken: [");
  const ProfileLoadResult result = loadProfileDirectory(dir.path(), mutationSwitches());
  ASSERT_TRUE(result.ok()) << formatLoadErrors(result.errors);
  EXPECT_EQ(result.set->profiles().size(), 2u);
  EXPECT_EQ(result.set->find("batch")->sourceFile, dir.file("batch.yaml"))
      << "messages name the file as the user sees it";
}

TEST(ProfilesLint, ListsEveryErrorAndExitsNonZero) {
  TempDir dir;
  const std::vector<std::string> cases = {"toleration-effect", "wrong-types", "tie-glob"};
  std::string expected;
  for (const std::string& name : cases) {
    writeFile(dir.file(name + ".yaml"), readFile(goldenDir() + "/" + name + ".yaml"));
  }
  std::vector<std::string> sorted = cases;
  std::sort(sorted.begin(), sorted.end());
  size_t count = 0;
  for (const std::string& name : sorted) {
    std::string golden = readFile(goldenDir() + "/" + name + ".err");
    for (size_t at = 0; (at = golden.find("profiles/" + name, at)) != std::string::npos;) {
      golden.replace(at, 9, dir.path() + "/");
      at += dir.path().size();
    }
    expected += golden;
    count += static_cast<size_t>(std::count(golden.begin(), golden.end(), '\n'));
  }
  const CommandResult lint = runCommand({testing::binaryPath(), "profiles", "lint", dir.path()});
  EXPECT_EQ(lint.exitCode, 1);
  EXPECT_EQ(lint.out, expected + std::to_string(count) + " errors in " + dir.path() + "\n");
}

TEST(ProfilesLint, ValidSetIsListedWithClassesAndScopes) {
  const CommandResult lint =
      runCommand({testing::binaryPath(), "profiles", "lint", sourceDir() + "/profiles"});
  EXPECT_EQ(lint.exitCode, 0) << lint.out << lint.err;
  EXPECT_EQ(lint.out,
            "batch: class batch, every namespace\n"
            "realtime: class realtime, every namespace\n"
            "training: class training, every namespace\n"
            "3 profiles in " +
                sourceDir() + "/profiles are valid\n");
}

}  // namespace
}  // namespace aiadmit
