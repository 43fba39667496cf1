// The aiadmit binary carries the toolchain's hardening (CMakeLists.txt):
// full RELRO, a position-independent executable, stack protector and
// FORTIFY's checked calls, and on x86 the CET notes wherever the toolchain
// gives them to a program built the same way. The sanitizer and fuzz
// builds go without, and say so.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "tests/support/test_support.h"

namespace aiadmit {
namespace {

using namespace testing;

std::string readelf(const std::string& option, const std::string& file) {
  const CommandResult result = runCommand({"readelf", "-W", option, file});
  EXPECT_EQ(result.exitCode, 0) << result.err;
  return result.out;
}

// Instrumented test builds (AIADMIT_SANITIZE) are not what ships.
bool sanitizerBuild() {
  return readelf("--dyn-syms", binaryPath()).find("__asan_init") != std::string::npos;
}

TEST(Hardening, BinaryIsAPieWithFullRelro) {
  if (sanitizerBuild()) GTEST_SKIP() << "a sanitizer build";
  EXPECT_NE(readelf("-h", binaryPath()).find("DYN ("), std::string::npos) << "not a PIE";
  const std::string segments = readelf("-l", binaryPath());
  EXPECT_NE(segments.find("GNU_RELRO"), std::string::npos) << segments;
  const std::string dynamic = readelf("-d", binaryPath());
  EXPECT_TRUE(std::regex_search(dynamic, std::regex(R"(\(FLAGS\)\s+BIND_NOW)")) ||
              std::regex_search(dynamic, std::regex(R"(\(FLAGS_1\)\s+Flags:.*\bNOW\b)")))
      << dynamic;
  EXPECT_TRUE(std::regex_search(dynamic, std::regex(R"(\(FLAGS_1\)\s+Flags:.*\bPIE\b)")))
      << dynamic;
}

TEST(Hardening, BinaryCallsTheStackProtectorAndFortifiedFunctions) {
  if (sanitizerBuild()) GTEST_SKIP() << "a sanitizer build";
  const std::string symbols = readelf("--dyn-syms", binaryPath());
  EXPECT_NE(symbols.find("__stack_chk_fail"), std::string::npos);
  // FORTIFY replaces calls whose buffer size it knows with their checked
  // forms (__memcpy_chk, __snprintf_chk, ...).
  const std::regex checked(R"(\b__[a-z0-9_]+_chk\b)");
  int fortified = 0;
  for (auto it = std::sregex_iterator(symbols.begin(), symbols.end(), checked);
       it != std::sregex_iterator(); ++it) {
    if (it->str() != "__stack_chk_fail") ++fortified;
  }
  EXPECT_GE(fortified, 3) << symbols;
}

// CET's IBT and SHSTK notes survive linking only when every object has them,
// the C runtime's start files included: expected of aiadmit exactly when a
// program built with -fcf-protection here gets them.
TEST(Hardening, BinaryHasTheCetNotesTheToolchainGives) {
  if (sanitizerBuild()) GTEST_SKIP() << "a sanitizer build";
  const CommandResult machine = runCommand({"uname", "-m"});
  if (machine.out.rfind("x86_64", 0) != 0) GTEST_SKIP() << "CET is x86 only";
  TempDir dir;
  writeFile(dir.file("probe.cpp"), "int main() { return 0; }\n");
  const CommandResult built =
      runCommand({"c++", "-O2", "-fcf-protection", "-o", dir.file("probe"), dir.file("probe.cpp")});
  ASSERT_EQ(built.exitCode, 0) << built.err;
  const bool toolchainGives =
      readelf("-n", dir.file("probe")).find("IBT, SHSTK") != std::string::npos;
  const std::string notes = readelf("-n", binaryPath());
  EXPECT_EQ(notes.find("IBT, SHSTK") != std::string::npos, toolchainGives) << notes;
}

}  // namespace
}  // namespace aiadmit
