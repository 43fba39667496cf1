// A profile's switches are the mutators' own: each mutator declares the
// switches it honours (MutatorDeclaration), the registry gathers them
// (mutationSwitches), the loader takes exactly those keys, each turns off its
// own switch, and profiles/README.md lists them all.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "mutators/mutator.h"
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
  ASSERT_FALSE(mutationSwitches().empty());
  for (const MutationSwitch& entry : mutationSwitches()) {
    SCOPED_TRACE(std::string(entry.key));
    const ProfileLoadResult loaded = loadProfileText(
        profileWith(std::string(entry.key) + ": false"), "p.yaml", mutationSwitches());
    ASSERT_TRUE(loaded.ok()) << (loaded.errors.empty() ? "" : loaded.errors[0].format());
    const MutationSwitches& switches = loaded.set->find("p")->mutations;
    for (const MutationSwitch& other : mutationSwitches()) {
      EXPECT_EQ(switches.on(other.key), other.key != entry.key) << other.key;
    }
  }
}

TEST(MutationSwitches, ASwitchLeftOutTakesItsDeclaredDefault) {
  const ProfileLoadResult loaded = loadProfileText(profileWith(""), "p.yaml", mutationSwitches());
  ASSERT_TRUE(loaded.ok());
  for (const MutationSwitch& entry : mutationSwitches()) {
    EXPECT_EQ(loaded.set->find("p")->mutations.on(entry.key), entry.onByDefault) << entry.key;
  }
  // A switch declared off by default is off until the profile turns it on.
  const MutationSwitch offByDefault[] = {{.key = "later", .onByDefault = false}};
  const ProfileLoadResult off = loadProfileText(profileWith(""), "p.yaml", offByDefault);
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off.set->find("p")->mutations.on("later"));
  const ProfileLoadResult on = loadProfileText(profileWith("later: true"), "p.yaml", offByDefault);
  ASSERT_TRUE(on.ok());
  EXPECT_TRUE(on.set->find("p")->mutations.on("later"));
}

TEST(MutationSwitches, TheRegistryGathersEachDeclaredKeyOnceWithOneDefault) {
  std::set<std::string_view> keys;
  for (const MutationSwitch& entry : mutationSwitches()) {
    EXPECT_TRUE(keys.insert(entry.key).second) << entry.key << " twice";
  }
  for (const auto& mutator : allMutators()) {
    for (const MutationSwitch& declared : mutator->declaration().switches) {
      SCOPED_TRACE(std::string(mutator->name()) + " " + std::string(declared.key));
      ASSERT_TRUE(keys.count(declared.key));
      for (const MutationSwitch& gathered : mutationSwitches()) {
        if (gathered.key != declared.key) continue;
        EXPECT_EQ(gathered.onByDefault, declared.onByDefault);
      }
    }
  }
}

TEST(MutationSwitches, AnUnknownKeyIsRefusedWithTheClosestOne) {
  const ProfileLoadResult loaded =
      loadProfileText(profileWith("tolerationz: false"), "p.yaml", mutationSwitches());
  ASSERT_EQ(loaded.errors.size(), 1u);
  EXPECT_NE(loaded.errors[0].format().find("spec.mutations.tolerationz: unknown field; did you "
                                           "mean tolerations?"),
            std::string::npos)
      << loaded.errors[0].format();
}

TEST(MutationSwitches, TheProfileReferenceListsEverySwitchAndNoOther) {
  const std::string reference = readFile(sourceDir() + "/profiles/README.md");
  const size_t section = reference.find("### `spec.mutations`");
  ASSERT_NE(section, std::string::npos);
  const std::string text = reference.substr(section, reference.find("###", section + 4) - section);
  std::set<std::string> listed;
  const std::regex quoted("`([A-Za-z]+)`");
  for (std::sregex_iterator it(text.begin(), text.end(), quoted), end; it != end; ++it) {
    listed.insert((*it)[1].str());
  }
  listed.erase("true");
  listed.erase("false");
  std::set<std::string> declared;
  bool allOn = true;
  for (const MutationSwitch& entry : mutationSwitches()) {
    declared.emplace(entry.key);
    allOn = allOn && entry.onByDefault;
  }
  EXPECT_EQ(listed, declared);
  // The reference says what the declarations say about the defaults.
  EXPECT_EQ(text.find("all `true` by default") != std::string::npos, allOn);
}

}  // namespace
}  // namespace aiadmit
