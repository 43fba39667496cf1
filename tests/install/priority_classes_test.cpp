// The PriorityClasses that the shipped profiles inject, as the install
// creates them: manifests/components/priority-classes, which both shipped
// overlays include. Without them the API server refuses every Pod that
// aiadmit gave a class, so a profile that names a class the component does
// not create fails here rather than on a cluster.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "mutators/mutator.h"
#include "tests/install/rendered_manifests.h"
#include "webhook/policy/profile_loader.h"

namespace aiadmit {
namespace {

using namespace install;
namespace fs = std::filesystem;

const std::set<std::string> kInstalledClasses = {"ai-realtime", "ai-training", "ai-batch"};

std::string componentDir() {
  return manifestsDir() + "/components/priority-classes";
}

std::string nameOf(const JsonValue* object) {
  return std::string(stringMember(member(object, "metadata"), "name"));
}

std::set<std::string> priorityClassNames(const Rendered& rendered) {
  std::set<std::string> names;
  for (const JsonValue* priorityClass : rendered.ofKind("PriorityClass")) {
    names.insert(nameOf(priorityClass));
  }
  return names;
}

const std::vector<Profile>& shippedProfiles() {
  static const ProfileLoadResult result = [] {
    ProfileLoadResult loaded = loadProfileDirectory(sourceDir() + "/profiles", mutationSwitches());
    for (const ProfileError& error : loaded.errors) ADD_FAILURE() << error.format();
    return loaded;
  }();
  static const std::vector<Profile> none;
  return result.ok() ? result.set->profiles() : none;
}

// Every class a shipped profile injects or accepts (AIA011), but the system
// classes, which every cluster has.
std::set<std::string> classesTheProfilesName() {
  std::set<std::string> names;
  for (const Profile& profile : shippedProfiles()) {
    if (!profile.scheduling.priorityClassName.empty()) {
      names.insert(profile.scheduling.priorityClassName);
    }
    names.insert(profile.scheduling.allowedPriorityClasses.begin(),
                 profile.scheduling.allowedPriorityClasses.end());
  }
  names.erase("system-cluster-critical");
  names.erase("system-node-critical");
  return names;
}

int64_t valueOf(const Rendered& rendered, std::string_view name) {
  const JsonValue* value = member(rendered.find("PriorityClass", name), "value");
  return value != nullptr && value->IsInt64() ? value->GetInt64() : -1;
}

TEST(PriorityClasses, TheComponentCreatesEveryClassTheShippedProfilesName) {
  const Rendered component = render(componentDir());
  EXPECT_EQ(component.objects.size(), kInstalledClasses.size());
  const std::set<std::string> created = priorityClassNames(component);
  EXPECT_EQ(created, kInstalledClasses);
  const std::set<std::string> named = classesTheProfilesName();
  ASSERT_FALSE(named.empty());
  for (const std::string& name : named) {
    EXPECT_TRUE(created.count(name)) << "a shipped profile names " << name
                                     << ", which manifests/components/priority-classes does "
                                        "not create";
  }
  const CommandResult schema = validateSchemas(component.jsons());
  EXPECT_EQ(schema.exitCode, 0) << schema.out << schema.err;
}

TEST(PriorityClasses, RealtimeOutranksTrainingOutranksBatchFarBelowTheSystemClasses) {
  const Rendered component = render(componentDir());
  const int64_t realtime = valueOf(component, "ai-realtime");
  const int64_t training = valueOf(component, "ai-training");
  const int64_t batch = valueOf(component, "ai-batch");
  EXPECT_GT(realtime, training);
  EXPECT_GT(training, batch);
  // Above Pods without a class (0); far below the highest value a class of
  // users may take (1000000000), which the platform keeps for its own.
  EXPECT_GT(batch, 0);
  EXPECT_LE(realtime, 1000000);

  std::map<std::string, std::string> profiles;  // by the class each injects
  for (const Profile& profile : shippedProfiles()) {
    profiles[profile.scheduling.priorityClassName] = profile.name;
  }
  for (const JsonValue* priorityClass : component.ofKind("PriorityClass")) {
    const std::string name = nameOf(priorityClass);
    SCOPED_TRACE(name);
    // A global default would give every Pod of the cluster, AI or not, this class.
    const JsonValue* globalDefault = member(priorityClass, "globalDefault");
    ASSERT_NE(globalDefault, nullptr);
    EXPECT_TRUE(globalDefault->IsBool() && !globalDefault->GetBool());
    // Batch waits for free GPUs; the others may preempt what ranks below them.
    EXPECT_EQ(stringMember(priorityClass, "preemptionPolicy"),
              name == "ai-batch" ? "Never" : "PreemptLowerPriority");
    // `kubectl get priorityclasses` says which profile injects it.
    ASSERT_TRUE(profiles.count(name)) << "no shipped profile injects " << name;
    EXPECT_NE(std::string(stringMember(priorityClass, "description"))
                  .find("aiadmit's " + profiles.at(name) + " profile"),
              std::string::npos);
  }
}

TEST(PriorityClasses, BothShippedOverlaysCreateExactlyTheThreeClasses) {
  ScriptCertsCheckout checkout;
  for (const std::string& dir : {manifestsDir() + "/overlays/cert-manager", checkout.overlay}) {
    SCOPED_TRACE(dir);
    const Rendered rendered = render(dir);
    EXPECT_EQ(priorityClassNames(rendered), kInstalledClasses);
    EXPECT_EQ(rendered.ofKind("PriorityClass").size(), kInstalledClasses.size());
    // Cluster-scoped, even in an overlay that sets a namespace.
    for (const JsonValue* priorityClass : rendered.ofKind("PriorityClass")) {
      EXPECT_EQ(member(member(priorityClass, "metadata"), "namespace"), nullptr)
          << nameOf(priorityClass);
    }
  }
}

TEST(PriorityClasses, AnOverlayWithoutTheComponentCreatesNone) {
  EXPECT_TRUE(priorityClassNames(render(manifestsDir() + "/base")).empty());

  // The shipped overlay with its components entry removed.
  TempDir dir;
  copyCheckout(dir);
  const std::string path = dir.file("manifests/overlays/cert-manager/kustomization.yaml");
  std::string text = readFile(path);
  const std::string entry = "components:\n  - ../../components/priority-classes\n";
  const size_t at = text.find(entry);
  ASSERT_NE(at, std::string::npos) << text;
  text.erase(at, entry.size());
  writeFile(path, text);
  const Rendered withoutComponent = render(dir.file("manifests/overlays/cert-manager"));
  EXPECT_NE(withoutComponent.find("Deployment", "aiadmit"), nullptr);
  EXPECT_TRUE(priorityClassNames(withoutComponent).empty());
}

TEST(PriorityClasses, DocumentedPatchLeavesThemOutOfAnOverlayOfYourOwn) {
  const std::string patches = documentedYaml("delete them with a patch");
  ASSERT_NE(patches.find("patches:"), std::string::npos);
  TempDir dir;
  writeFile(dir.file("kustomization.yaml"),
            "resources:\n  - " +
                fs::relative(manifestsDir() + "/overlays/cert-manager", dir.path()).string() +
                "\n" + patches);
  const Rendered rendered = render(dir.path());
  EXPECT_NE(rendered.find("Deployment", "aiadmit"), nullptr);
  EXPECT_TRUE(priorityClassNames(rendered).empty());
}

}  // namespace
}  // namespace aiadmit
