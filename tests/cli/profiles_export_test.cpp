// `aiadmit profiles export --admission-policies DIR -o FILE` as a command:
// the file it writes begins with the report that it also prints on stderr,
// and profiles that do not load, or a missing argument, write nothing.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/test_support.h"

namespace aiadmit {
namespace {

using testing::runCommand;

TEST(ProfilesExport, WritesThePoliciesAndReportsWhatStays) {
  testing::TempDir work;
  const std::string file = work.file("policies.yaml");
  const auto exported =
      runCommand({testing::binaryPath(), "profiles", "export", "--admission-policies",
                  testing::sourceDir() + "/profiles", "-o", file});
  ASSERT_EQ(exported.exitCode, 0) << exported.err;
  const std::string written = testing::readFile(file);
  EXPECT_NE(written.find("kind: MutatingAdmissionPolicy\n"), std::string::npos);
  EXPECT_NE(written.find("kind: ValidatingAdmissionPolicyBinding\n"), std::string::npos);
  // Every line of the report is on stderr and, as a comment, in the file.
  const std::string firstLine = exported.err.substr(0, exported.err.find('\n'));
  EXPECT_EQ(firstLine.rfind("exported: profile batch:", 0), 0u) << exported.err;
  EXPECT_NE(written.find("\n# " + firstLine + "\n"), std::string::npos);
  EXPECT_NE(exported.err.find("stays with the webhook: cluster-aware rules"), std::string::npos);
}

TEST(ProfilesExport, ProfilesThatDoNotLoadWriteNothing) {
  testing::TempDir work;
  std::filesystem::create_directories(work.file("profiles"));
  testing::writeFile(work.file("profiles/broken.yaml"),
                     "apiVersion: aiadmit.dev/v1\nkind: Profile\nspec: [\n");
  const auto broken =
      runCommand({testing::binaryPath(), "profiles", "export", "--admission-policies",
                  work.file("profiles"), "-o", work.file("policies.yaml")});
  EXPECT_EQ(broken.exitCode, 1) << broken.err;
  EXPECT_NE(broken.err.find("broken.yaml"), std::string::npos) << broken.err;
  EXPECT_FALSE(std::filesystem::exists(work.file("policies.yaml")));
}

TEST(ProfilesExport, BothArgumentsAreNeeded) {
  testing::TempDir work;
  const auto withoutFile = runCommand({testing::binaryPath(), "profiles", "export",
                                       "--admission-policies", testing::sourceDir() + "/profiles"});
  EXPECT_EQ(withoutFile.exitCode, 2);
  EXPECT_NE(withoutFile.err.find("export needs --admission-policies DIR and -o FILE"),
            std::string::npos)
      << withoutFile.err;
  const auto withoutDir =
      runCommand({testing::binaryPath(), "profiles", "export", "-o", work.file("policies.yaml")});
  EXPECT_EQ(withoutDir.exitCode, 2);
  EXPECT_FALSE(std::filesystem::exists(work.file("policies.yaml")));
}

}  // namespace
}  // namespace aiadmit
