// Every mutator of the registry runs where its declaration says, and only
// there: its profile switches turn it off, a template whose shape allows none
// of the parts it injects turns it off, and it runs on controllers' objects
// and on unchanged templates only when it declares so.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/support/mutator_harness.h"

namespace aiadmit {
namespace {

using namespace testing;

// A mutation of a bare Pod that asks for a GPU, under `profile`, as the
// engine sets it up; `slot`, when given, is the template's shape.
struct PodMutation {
  std::shared_ptr<JsonDocument> object = manifest(gpuPodManifest());
  Classification classification;
  std::vector<std::string> changes;
  std::vector<std::string> notices;
  ResolvedTemplate place;
  MutationContext context;

  PodMutation(const Profile& profile, const TemplateSlot* slot = nullptr)
      : context{*object,
                object->GetAllocator(),
                *kubernetesKindOf("", "Pod"),
                classification,
                profile,
                "default",
                changes,
                notices} {
    classification.workloadClass = WorkloadClass::Training;
    if (slot == nullptr) return;
    place.slot = slot;
    place.specPointer = "/spec";
    context.place = &place;
  }
};

const MutatorDeclaration& mutatorAt(size_t index) {
  return *allMutators()[index];
}

// A loaded profile that sets each of `keys` to false.
std::shared_ptr<const ProfileSet> switchedOff(const std::vector<std::string_view>& keys) {
  std::string mutations;
  for (std::string_view key : keys) {
    mutations += (mutations.empty() ? "" : ", ") + std::string(key) + ": false";
  }
  return profilesFromYaml(
      "apiVersion: aiadmit.dev/v1\nkind: Profile\nmetadata: {name: off}\n"
      "spec:\n  class: training\n  mutations: {" +
      mutations + "}\n");
}

class DeclaredMutator : public ::testing::TestWithParam<size_t> {};

TEST_P(DeclaredMutator, RunsWhereItsSwitchesAreOnAndTheTemplateAllowsItsParts) {
  const MutatorDeclaration& mutator = mutatorAt(GetParam());
  const Profile profile;
  EXPECT_TRUE(mutator.runsOn(PodMutation(profile).context));
}

TEST_P(DeclaredMutator, AProfileThatSwitchesItOffTurnsItOff) {
  const MutatorDeclaration& mutator = mutatorAt(GetParam());
  const auto& switches = mutator.switches;
  ASSERT_FALSE(switches.empty()) << "every mutator can be switched off";
  std::vector<std::string_view> keys;
  for (const MutationSwitch& declared : switches) keys.push_back(declared.key);
  const auto profiles = switchedOff(keys);
  const Profile* off = profiles->find("off");
  ASSERT_NE(off, nullptr);
  PodMutation mutation(*off);
  EXPECT_FALSE(mutator.runsOn(mutation.context));
  EXPECT_FALSE(mutator.mutate(mutation.context));
  EXPECT_EQ(*mutation.object, *manifest(gpuPodManifest()));
  EXPECT_TRUE(mutation.changes.empty());
  EXPECT_TRUE(mutation.notices.empty());
  // One of several switches off leaves it on for the others' parts.
  for (std::string_view key : keys) {
    if (keys.size() < 2) break;
    const auto oneOff = switchedOff({key});
    EXPECT_TRUE(mutator.runsOn(PodMutation(*oneOff->find("off")).context)) << key;
  }
}

TEST_P(DeclaredMutator, ATemplateThatAllowsNoneOfItsPartsTurnsItOff) {
  const MutatorDeclaration& mutator = mutatorAt(GetParam());
  const uint32_t parts = mutator.injects;
  const Profile profile;
  TemplateSlot slot;
  slot.injectable = kInjectAll & ~parts;
  EXPECT_EQ(mutator.runsOn(PodMutation(profile, &slot).context), parts == 0);
  for (const InjectionName& part : kInjectionNames) {
    if ((parts & part.injection) == 0) continue;
    slot.injectable = part.injection;
    EXPECT_TRUE(mutator.runsOn(PodMutation(profile, &slot).context)) << part.name;
  }
}

TEST_P(DeclaredMutator, RunsOnControllersObjectsAndUnchangedTemplatesOnlyWhenItSaysSo) {
  const MutatorDeclaration& mutator = mutatorAt(GetParam());
  const Profile profile;
  PodMutation controllers(profile);
  controllers.context.madeByController = true;
  EXPECT_EQ(mutator.runsOn(controllers.context), mutator.runs == Runs::AlsoOnControllersObjects);
  PodMutation unchanged(profile);
  unchanged.context.templateUnchanged = true;
  EXPECT_EQ(mutator.runsOn(unchanged.context), mutator.runs == Runs::AlsoOnUnchangedTemplates);
}

std::string mutatorName(const ::testing::TestParamInfo<size_t>& info) {
  std::string name(mutatorAt(info.param).name);
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Registry, DeclaredMutator,
                         ::testing::Range<size_t>(0, allMutators().size()), mutatorName);

}  // namespace
}  // namespace aiadmit
