// A mutator's profile switch is declared once (kMutationSwitches): the
// loader takes exactly those keys, each turns off its own member, and
// profiles/README.md lists them all.
#include <gtest/gtest.h>

#include <set>

#include "tests/support/test_support.h"
#include "webhook/policy/profile_loader.h"

namespace aiadmit {
namespace {

using namespace testing;

std::string profileWith(const std::string& mutations) {
  return "apiVersion: aiadmit.dev/v1\nkind: Profile\nmetadata: {name: p}\nspec:\n"
         "  class: batch\n  mutations: {" +
         mutations + "}\n";
}

TEST(MutationSwitches, EachKeyTurnsOffItsOwnSwitchAndNoOther) {
  std::set<const void*> members;
  for (const MutationSwitch& entry : kMutationSwitches) {
    SCOPED_TRACE(std::string(entry.key));
    const ProfileLoadResult loaded =
        loadProfileText(profileWith(std::string(entry.key) + ": false"), "p.yaml");
    ASSERT_TRUE(loaded.ok()) << (loaded.errors.empty() ? "" : loaded.errors[0].format());
    const MutationSwitches& switches = loaded.set->find("p")->mutations;
    for (const MutationSwitch& other : kMutationSwitches) {
      EXPECT_EQ(switches.*other.member, other.key != entry.key) << other.key;
    }
    EXPECT_TRUE(members.insert(&(switches.*entry.member)).second) << "two keys, one member";
  }
  EXPECT_EQ(members.size(), sizeof(MutationSwitches) / sizeof(bool));
}

TEST(MutationSwitches, AnUnknownKeyIsRefusedWithTheClosestOne) {
  const ProfileLoadResult loaded = loadProfileText(profileWith("tolerationz: false"), "p.yaml");
  ASSERT_EQ(loaded.errors.size(), 1u);
  EXPECT_NE(loaded.errors[0].format().find("spec.mutations.tolerationz: unknown field; did you "
                                           "mean tolerations?"),
            std::string::npos)
      << loaded.errors[0].format();
}

TEST(MutationSwitches, TheProfileReferenceListsEverySwitch) {
  const std::string reference = readFile(sourceDir() + "/profiles/README.md");
  const size_t section = reference.find("### `spec.mutations`");
  ASSERT_NE(section, std::string::npos);
  const std::string text = reference.substr(section, reference.find("###", section + 4) - section);
  for (const MutationSwitch& entry : kMutationSwitches) {
    EXPECT_NE(text.find("`" + std::string(entry.key) + "`"), std::string::npos) << entry.key;
  }
}

}  // namespace
}  // namespace aiadmit
