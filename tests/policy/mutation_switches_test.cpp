// A profile's switches are the mutators' own: each mutator declares the
// switches it honours (MutatorDeclaration), the registry gathers them
// (mutationSwitches), the loader takes exactly those keys, each turns off its
// own switch, and docs/mutators.md lists them all.
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
    for (const MutationSwitch& declared : mutator->switches) {
      SCOPED_TRACE(std::string(mutator->name) + " " + std::string(declared.key));
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

// The switches are listed once, in the table of docs/mutators.md beside the
// mutators they turn off; the profile reference points there.
TEST(MutationSwitches, TheMutatorsTableListsEverySwitchAndNoOther) {
  const std::string reference = readFile(sourceDir() + "/docs/mutators.md");
  const size_t section = reference.find("\n## Order\n");
  ASSERT_NE(section, std::string::npos);
  const std::string text =
      reference.substr(section, reference.find("\n## ", section + 4) - section);
  std::set<std::string> listed;
  const std::regex offWith("`mutations\\.([A-Za-z]+): false`");
  for (std::sregex_iterator it(text.begin(), text.end(), offWith), end; it != end; ++it) {
    listed.insert((*it)[1].str());
  }
  std::set<std::string> declared;
  bool allOn = true;
  for (const MutationSwitch& entry : mutationSwitches()) {
    declared.emplace(entry.key);
    allOn = allOn && entry.onByDefault;
  }
  EXPECT_EQ(listed, declared);
  // The table says what the declarations say about the defaults.
  EXPECT_EQ(std::regex_search(text, std::regex("all\\s+`true`\\s+by\\s+default")), allOn);
  const std::string profiles = readFile(sourceDir() + "/profiles/README.md");
  const size_t mutations = profiles.find("### `spec.mutations`");
  ASSERT_NE(mutations, std::string::npos);
  const std::string pointer =
      profiles.substr(mutations, profiles.find("###", mutations + 4) - mutations);
  EXPECT_NE(pointer.find("(../docs/mutators.md#order)"), std::string::npos);
}

}  // namespace
}  // namespace aiadmit
