// The overlay docs/install.md tells a platform team to write: the shipped
// overlay, its own image, and the profiles `aiadmit profiles init` wrote for
// its cluster in place of the shipped set. Rendered by `kubectl kustomize`
// as the doc shows it, with the doc's own kustomization.yaml.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "tests/install/admission_matching.h"
#include "tests/install/rendered_manifests.h"
#include "tests/support/test_support.h"

namespace aiadmit {
namespace {

using namespace testing;
using install::AdmissionCase;
using install::evaluateMatching;
using install::kProfilesValidate;
using install::namespaceNamed;
using install::render;
using install::Rendered;

constexpr const char* kGkeNodes = R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: gke-a100-0
    labels: {cloud.google.com/gke-nodepool: a100-pool}
  spec:
    taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
  status: {allocatable: {nvidia.com/gpu: "8"}}
)";

// The YAML block of docs/install.md that starts with `# my-aiadmit/kustomization.yaml`
// and names a configMapGenerator.
std::string docsOverlay() {
  const std::string doc = readFile(sourceDir() + "/docs/install.md");
  const std::regex block(
      "```yaml\n(# my-aiadmit/kustomization.yaml\n[^`]*configMapGenerator[^`]*)```");
  std::smatch found;
  EXPECT_TRUE(std::regex_search(doc, found, block)) << "docs/install.md lost its overlay example";
  return found.size() > 1 ? found[1].str() : "";
}

TEST(OwnOverlay, TheDocsOverlayInstallsTheProfilesInitWroteAndTheImageNamed) {
  // The layout the doc assumes: this repository beside my-aiadmit.
  TempDir dir;
  std::filesystem::create_symlink(sourceDir(), dir.file("aiadmit"));
  std::filesystem::create_directories(dir.file("my-aiadmit"));
  writeFile(dir.file("my-aiadmit/kustomization.yaml"), docsOverlay());
  writeFile(dir.file("cluster.yaml"), kGkeNodes);
  const CommandResult init =
      runCommand({binaryPath(), "profiles", "init", "--cluster", dir.file("cluster.yaml"), "-o",
                  dir.file("my-aiadmit/profiles")});
  ASSERT_EQ(init.exitCode, 0) << init.err;

  const Rendered rendered = render(dir.file("my-aiadmit"));
  const JsonValue* configMap = nullptr;
  for (const auto& object : rendered.objects) {
    if (stringMember(object.get(), "kind") == "ConfigMap" &&
        stringMember(member(object.get(), "metadata"), "name").rfind("aiadmit-profiles-", 0) == 0) {
      ASSERT_EQ(configMap, nullptr) << "one profiles ConfigMap";
      configMap = object.get();
    }
  }
  ASSERT_NE(configMap, nullptr);
  const std::string training(stringMember(member(configMap, "data"), "training.yaml"));
  EXPECT_NE(training.find("cloud.google.com/gke-nodepool: a100-pool"), std::string::npos)
      << training;
  EXPECT_EQ(training.find("accelerator: nvidia"), std::string::npos) << "the shipped pool is gone";

  const JsonValue* deployment = rendered.find("Deployment", "aiadmit");
  ASSERT_NE(deployment, nullptr);
  const JsonValue* pod = member(member(member(deployment, "spec"), "template"), "spec");
  std::string mounted;
  for (const JsonValue& volume : member(pod, "volumes")->GetArray()) {
    if (stringMember(&volume, "name") == "profiles") {
      mounted = stringMember(member(&volume, "configMap"), "name");
    }
  }
  EXPECT_EQ(mounted, stringMember(member(configMap, "metadata"), "name"))
      << "the Deployment mounts the new ConfigMap, by its hashed name";
  const JsonValue* container = &(*member(pod, "containers"))[0];
  EXPECT_EQ(stringMember(container, "image"), "REGISTRY/aiadmit:0.1.0");

  // The profiles webhook takes this ConfigMap too, by its generated name: an
  // edit that does not load is refused at apply.
  AdmissionCase edit{"the overlay's profiles", toJson(*configMap), toJson(*configMap), "UPDATE"};
  std::string changed = edit.object;
  changed.replace(changed.find("a100-pool"), 9, "h100-pool");
  edit.object = changed;
  edit.namespaceLabels = namespaceNamed("aiadmit-system", std::nullopt);
  const auto outcomes = evaluateMatching(rendered, {edit});
  EXPECT_EQ(outcomes.at(edit.id).at(kProfilesValidate), "call");
}

}  // namespace
}  // namespace aiadmit
