// `aiadmit check` with CRDs: a custom resource is checked as the API server
// hands it to the webhook, with the defaults of its CRD applied, whether the
// CRD comes from --crds, from the --cluster snapshot or from the input
// itself; without a CRD, the object is checked as written.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/support/check_harness.h"

namespace aiadmit {
namespace {

using namespace testing;

constexpr const char* kSharedCrds = AIADMIT_SOURCE_DIR "/../shared/crds";

std::string corpusManifest(const std::string& name) {
  return corpusDir() + "/manifests/" + name;
}

const std::string kRayJob = corpusManifest(
    "ray-project__kuberay__ray-operator__config__samples__pytorch-text-classifier__"
    "ray-job.pytorch-distributed-training.yaml");
const std::string kVolcanoJob = corpusManifest(
    "volcano-sh__volcano__example__MindSpore-example__mindspore_gpu__mindspore-gpu.yaml");

// The `injected` lines of the only object that `check -o json` decided.
std::vector<std::string> injected(const CommandResult& result) {
  const auto json = parseJson(result.out);
  const JsonValue* objects = member(json.get(), "objects");
  std::vector<std::string> lines;
  if (!isArray(objects) || objects->Size() != 1) {
    ADD_FAILURE() << "not one object: " << result.out << result.err;
    return lines;
  }
  for (const JsonValue& line : (*objects)[0]["injected"].GetArray()) lines.push_back(str(&line));
  return lines;
}

bool has(const std::vector<std::string>& lines, const std::string& line) {
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

TEST(CheckCrds, RayJobIsNotGivenTheJobSettingsItsCrdDefaults) {
  const CommandResult raw = check({"-o", "json", kRayJob});
  ASSERT_EQ(raw.exitCode, 0) << raw.err;
  const std::vector<std::string> asWritten = injected(raw);
  // Training by its entrypoint (fine-tune-...py), inferred: no deadline.
  EXPECT_TRUE(has(asWritten, "set spec.backoffLimit=3"));
  EXPECT_TRUE(has(asWritten, "set spec.ttlSecondsAfterFinished=86400"));

  const CommandResult defaulted = check({"--crds", kSharedCrds, "-o", "json", kRayJob});
  ASSERT_EQ(defaulted.exitCode, 0) << defaulted.err;
  const std::vector<std::string> asServed = injected(defaulted);
  // KubeRay's CRD defaults backoffLimit and ttlSecondsAfterFinished to 0, so
  // the webhook finds them set.
  EXPECT_FALSE(has(asServed, "set spec.backoffLimit=3"));
  EXPECT_FALSE(has(asServed, "set spec.ttlSecondsAfterFinished=86400"));
  EXPECT_TRUE(has(asServed, "added toleration accelerator=gpu:NoSchedule"));
  EXPECT_EQ(asServed.size() + 2, asWritten.size());
}

TEST(CheckCrds, VolcanoJobIsNotGivenTheMaxRetryItsCrdDefaults) {
  EXPECT_TRUE(has(injected(check({"-o", "json", kVolcanoJob})), "set spec.maxRetry=3"));
  const CommandResult defaulted = check({"--crds", kSharedCrds, "-o", "json", kVolcanoJob});
  ASSERT_EQ(defaulted.exitCode, 0) << defaulted.err;
  const std::vector<std::string> lines = injected(defaulted);
  EXPECT_FALSE(has(lines, "set spec.maxRetry=3"));
  EXPECT_TRUE(has(lines, "set spec.ttlSecondsAfterFinished=86400"));
}

TEST(CheckCrds, YamlOutputHoldsTheDefaultsAsTheApiServerStoresThem) {
  const CommandResult result =
      check({"--crds", kSharedCrds + std::string("/ray.io_rayjobs.yaml"), "-o", "yaml", kRayJob});
  ASSERT_EQ(result.exitCode, 0) << result.err;
  EXPECT_NE(result.out.find("\n  backoffLimit: 0\n"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("\n  submissionMode: K8sJobMode\n"), std::string::npos);
  EXPECT_NE(result.out.find("\n  ttlSecondsAfterFinished: 0\n"), std::string::npos);
}

TEST(CheckCrds, ACrdInTheInputIsUsedForItsCustomResources) {
  const TempDir dir;
  writeFile(dir.file("input.yaml"), readFile(std::string(kSharedCrds) + "/ray.io_rayjobs.yaml") +
                                        "\n---\n" + readFile(kRayJob));
  const CommandResult result = check({"-o", "json", dir.file("input.yaml")});
  ASSERT_EQ(result.exitCode, 0) << result.err;
  const std::vector<std::string> lines = injected(result);
  EXPECT_FALSE(has(lines, "set spec.backoffLimit=3"));
  EXPECT_TRUE(has(lines, "set priorityClassName ai-training"));
  // The CRD itself runs no Pods: skipped and counted.
  EXPECT_EQ(parseJson(result.out)->operator[]("summary")["skipped"].GetInt(), 1);
}

TEST(CheckCrds, TheCrdsOfTheClusterSnapshotAreUsed) {
  const TempDir dir;
  writeFile(dir.file("cluster.yaml"),
            "apiVersion: v1\nkind: Node\nmetadata:\n  name: gpu-1\n  labels:\n"
            "    accelerator: nvidia\nspec:\n  taints:\n  - key: accelerator\n    value: gpu\n"
            "    effect: NoSchedule\nstatus:\n  allocatable:\n    nvidia.com/gpu: \"8\"\n---\n" +
                readFile(std::string(kSharedCrds) + "/ray.io_rayjobs.yaml"));
  const CommandResult result =
      check({"--cluster", dir.file("cluster.yaml"), "-o", "json", kRayJob});
  ASSERT_EQ(result.exitCode, 0) << result.err;
  const std::vector<std::string> lines = injected(result);
  EXPECT_FALSE(has(lines, "set spec.backoffLimit=3"));
  EXPECT_TRUE(has(lines, "set priorityClassName ai-training"));
  // Read for their defaults, so not named among the kinds the view skips.
  EXPECT_EQ(result.err.find("CustomResourceDefinition"), std::string::npos) << result.err;
}

TEST(CheckCrds, CrdsThatCannotBeUsedStopTheCheck) {
  const TempDir dir;
  const CommandResult missing = check({"--crds", dir.file("nothing"), kRayJob});
  EXPECT_EQ(missing.exitCode, 2);
  EXPECT_NE(missing.err.find("nothing: the path does not exist"), std::string::npos) << missing.err;

  writeFile(dir.file("old.yaml"),
            "apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\n"
            "metadata:\n  name: widgets.example.com\nspec:\n  group: example.com\n");
  const CommandResult old = check({"--crds", dir.path(), kRayJob});
  EXPECT_EQ(old.exitCode, 2);
  EXPECT_NE(old.err.find("old.yaml:1: CustomResourceDefinition widgets.example.com: only "
                         "apiextensions.k8s.io/v1 is read"),
            std::string::npos)
      << old.err;
  EXPECT_EQ(old.out, "");
}

TEST(CheckCrds, HelpSaysWhatIsCheckedAndWhatCrdsDo) {
  const CommandResult help = check({"--help"});
  EXPECT_EQ(help.exitCode, 0);
  EXPECT_NE(help.out.find("--crds PATH"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("AI operators' custom resources are checked"), std::string::npos);
  EXPECT_EQ(help.out.find("that are not Pods, Jobs"), std::string::npos);
}

}  // namespace
}  // namespace aiadmit
