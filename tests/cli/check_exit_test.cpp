// `aiadmit check` as a pipeline sees it: exit codes for admitted, denied and
// unusable input, and colour only on a terminal, never for machines.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/support/check_harness.h"
#include "tests/support/test_support.h"

namespace aiadmit {
namespace {

using namespace testing;

TEST(CheckExit, ZeroWhenEveryObjectIsAdmitted) {
  TempDir dir;
  writeFile(dir.file("job.yaml"), kAdmittedJob);
  const CommandResult result = check({dir.file("job.yaml")});
  EXPECT_EQ(result.exitCode, 0) << result.out << result.err;
  EXPECT_NE(result.out.find(
                "job/finetune (ns default)\n"
                "  class:    training (declared by annotation aiadmit.dev/workload=training on the "
                "object)\n"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("  admitted, mutated\n"), std::string::npos) << result.out;
  EXPECT_EQ(lines(result.out).back(), "1 object: 1 admitted (1 mutated), 0 denied");
}

TEST(CheckExit, OneWhenAnyObjectIsDenied) {
  TempDir dir;
  writeFile(dir.file("a-job.yaml"), kAdmittedJob);
  writeFile(dir.file("b-pod.yaml"), kDeniedPod);
  const CommandResult result = check({dir.path()});
  EXPECT_EQ(result.exitCode, 1) << result.out << result.err;
  EXPECT_NE(result.out.find(
                "  Error from server (Forbidden): error when creating \"" + dir.file("b-pod.yaml") +
                "\": admission webhook \"applied.validate.aiadmit.dev\" denied the "
                "request: [AIA003] spec.containers[0].resources.limits: "
                "\"nvidia.com/gpus\" is not a resource the pool of profile batch offers; "
                "did you "
                "mean \"nvidia.com/gpu\"?\n"),
            std::string::npos)
      << result.out;
  EXPECT_EQ(lines(result.out).back(), "2 objects: 1 admitted (1 mutated), 1 denied");
}

TEST(CheckExit, TwoWhenInputIsUnusableButTheRestIsStillChecked) {
  TempDir dir;
  writeFile(dir.file("a-broken.yaml"), kBrokenYaml);
  writeFile(dir.file("b-pod.yaml"), kDeniedPod);
  const CommandResult result = check({dir.path(), dir.file("missing.yaml")});
  EXPECT_EQ(result.exitCode, 2);
  EXPECT_EQ(result.err, "error: " + dir.file("a-broken.yaml") +
                            ":5:11: invalid YAML: illegal map value\n"
                            "error: " +
                            dir.file("missing.yaml") + ": the path does not exist\n");
  EXPECT_NE(result.out.find("pod/typo (ns default)"), std::string::npos) << result.out;
  EXPECT_EQ(lines(result.out).back(), "1 object: 0 admitted (0 mutated), 1 denied; 2 input errors");

  // A pipeline gets nothing rather than part of the set.
  const CommandResult yaml = check({"-o", "yaml", dir.path()});
  EXPECT_EQ(yaml.exitCode, 2);
  EXPECT_EQ(yaml.out, "");
}

TEST(CheckExit, TwoForUnusableProfilesOptionsOrNoObjects) {
  TempDir dir;
  writeFile(dir.file("job.yaml"), kAdmittedJob);
  std::filesystem::create_directories(dir.file("profiles"));
  writeFile(dir.file("profiles/broken.yaml"), "name: [\n");
  const CommandResult profiles =
      runCommand({binaryPath(), "check", "--profiles", dir.file("profiles"), dir.file("job.yaml")});
  EXPECT_EQ(profiles.exitCode, 2);
  EXPECT_NE(profiles.err.find("cannot be used"), std::string::npos) << profiles.err;
  EXPECT_NE(profiles.err.find("broken.yaml:"), std::string::npos) << profiles.err;

  EXPECT_EQ(check({"--output", "wide", dir.file("job.yaml")}).exitCode, 2);
  EXPECT_EQ(check({"--frobnicate", dir.file("job.yaml")}).exitCode, 2);
  EXPECT_EQ(check({dir.file("job.yaml"), "-n"}).exitCode, 2);
  EXPECT_EQ(check({}).exitCode, 2);

  const CommandResult empty = check({"-"}, "# nothing here\n---\n");
  EXPECT_EQ(empty.exitCode, 2);
  EXPECT_EQ(empty.err, "error: no objects in the input\n");
}

// `script` gives the command a terminal.
CommandResult onTerminal(const std::string& command, const std::string& environment = "") {
  return runCommand({"script", "-qec", environment + " " + command, "/dev/null"});
}

TEST(CheckColour, OnlyOnATerminalAndNeverForMachines) {
  TempDir dir;
  writeFile(dir.file("pod.yaml"), kDeniedPod);
  const std::string command =
      binaryPath() + " check --profiles " + shippedProfilesDir() + " " + dir.file("pod.yaml");
  const CommandResult coloured = onTerminal(command, "env -u NO_COLOR TERM=xterm");
  EXPECT_NE(coloured.out.find("\033[31mError from server (Forbidden)"), std::string::npos)
      << coloured.out;
  EXPECT_NE(coloured.out.find("\033[1mpod/typo\033[0m"), std::string::npos) << coloured.out;

  EXPECT_EQ(onTerminal(command, "env NO_COLOR=1 TERM=xterm").out.find('\033'), std::string::npos);
  EXPECT_EQ(onTerminal(command + " -o json", "env -u NO_COLOR TERM=xterm").out.find('\033'),
            std::string::npos);
  EXPECT_EQ(onTerminal(command + " -o yaml", "env -u NO_COLOR TERM=xterm").out.find('\033'),
            std::string::npos);
}

}  // namespace
}  // namespace aiadmit
