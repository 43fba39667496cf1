// spec.gpu.maxNodeGpus: an autoscaled pool and the largest node its
// autoscaler can add, read strictly (AIA016 judges Pods by it).
#include <gtest/gtest.h>

#include <string>

#include "mutators/mutator.h"
#include "tests/support/golden_files.h"
#include "tests/support/test_support.h"
#include "webhook/policy/profile_loader.h"

namespace aiadmit {
namespace {

using namespace testing;

std::string batchProfile(const std::string& gpuFields) {
  return "apiVersion: aiadmit.dev/v1\nkind: Profile\nmetadata:\n  name: batch\nspec:\n"
         "  class: batch\n  gpu:\n    resourceName: nvidia.com/gpu\n" +
         gpuFields;
}

TEST(ProfilePool, MaxNodeGpusMarksThePoolAutoscaled) {
  const ProfileLoadResult result = loadProfileText(
      batchProfile("    gpusPerNode: 8\n    maxNodeGpus: 4\n"), "batch.yaml", mutationSwitches());
  ASSERT_TRUE(result.ok()) << formatLoadErrors(result.errors);
  const Profile* batch = result.set->find("batch");
  ASSERT_NE(batch, nullptr);
  EXPECT_EQ(batch->gpu.maxNodeGpus, 4);

  const ProfileLoadResult fixed =
      loadProfileText(batchProfile(""), "batch.yaml", mutationSwitches());
  ASSERT_TRUE(fixed.ok()) << formatLoadErrors(fixed.errors);
  EXPECT_FALSE(fixed.set->find("batch")->gpu.maxNodeGpus.has_value()) << "a pool of fixed nodes";
}

TEST(ProfilePool, MaxNodeGpusMayEqualGpusPerNodeButNotExceedIt) {
  EXPECT_TRUE(loadProfileText(batchProfile("    gpusPerNode: 16\n    maxNodeGpus: 16\n"), "b.yaml",
                              mutationSwitches())
                  .ok());
  const ProfileLoadResult above =
      loadProfileText(batchProfile("    maxNodeGpus: 16\n"), "batch.yaml", mutationSwitches());
  ASSERT_FALSE(above.ok());
  EXPECT_NE(formatLoadErrors(above.errors)
                .find("batch.yaml:9:18: spec.gpu.maxNodeGpus: is more than gpusPerNode (8)"),
            std::string::npos)
      << formatLoadErrors(above.errors);
}

TEST(ProfilePool, AMisspelledKeyIsRefusedWithTheRightName) {
  const ProfileLoadResult result =
      loadProfileText(batchProfile("    maxNodeGPUs: 8\n"), "batch.yaml", mutationSwitches());
  ASSERT_FALSE(result.ok());
  EXPECT_NE(formatLoadErrors(result.errors).find("did you mean maxNodeGpus?"), std::string::npos)
      << formatLoadErrors(result.errors);
}

TEST(ProfilePool, TheDocumentedExampleSetsIt) {
  const std::string example =
      documentedYamlBlock(sourceDir() + "/profiles/README.md", "## Complete example");
  const ProfileLoadResult result = loadProfileText(example, "README.md", mutationSwitches());
  ASSERT_TRUE(result.ok()) << formatLoadErrors(result.errors);
  const Profile* vision = result.set->find("training-vision");
  ASSERT_NE(vision, nullptr);
  EXPECT_TRUE(vision->gpu.maxNodeGpus.has_value());
}

}  // namespace
}  // namespace aiadmit
