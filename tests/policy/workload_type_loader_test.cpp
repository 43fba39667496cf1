// WorkloadType documents in the profiles directory: a kind that is not built
// in (Kubeflow's Notebook, the Training Operator's former MXJob) loads and
// resolves its templates; the documented example loads; broken documents are
// refused with the exact errors of tests/golden/workload-types (NAME.yaml and
// the expected NAME.err); a directory with types and profiles loads as one.
//
// AIADMIT_UPDATE_GOLDEN=1 rewrites the .err files from the current output.
#include "webhook/policy/workload_type_loader.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "mutators/mutator.h"
#include "tests/support/golden_files.h"
#include "tests/support/test_support.h"
#include "webhook/codec/yaml_json.h"

namespace aiadmit {
namespace {

namespace fs = std::filesystem;
using namespace testing;

const std::string kProfile =
    "apiVersion: aiadmit.dev/v1\nkind: Profile\nmetadata: {name: realtime}\n"
    "spec: {class: realtime}\n";

const std::string kNotebook = R"(apiVersion: aiadmit.dev/v1
kind: WorkloadType
metadata:
  name: notebooks
spec:
  group: kubeflow.org
  kind: Notebook
  versions: [v1, v1beta1, v1alpha1]
  resource: notebooks
  class: realtime
  classReason: a Notebook is an interactive Jupyter server
  lifecycle: LongRunning
  templates:
  - role: notebook
    podSpec: /spec/template/spec
    metadata: /metadata
)";

TEST(WorkloadTypeLoader, ANotebookTypeLoadsAndResolvesItsTemplate) {
  const ProfileLoadResult result =
      loadProfileText(kProfile + "---\n" + kNotebook, "notebook.yaml", mutationSwitches());
  ASSERT_TRUE(result.ok()) << formatLoadErrors(result.errors);
  ASSERT_NE(result.workloadTypes, nullptr);
  const WorkloadType* type = result.workloadTypes->find("kubeflow.org", "v1", "Notebook");
  ASSERT_NE(type, nullptr);
  EXPECT_FALSE(type->builtIn);
  EXPECT_EQ(type->source, "notebook.yaml:6");
  EXPECT_EQ(type->resource, "notebooks");
  EXPECT_EQ(type->lifecycle, Lifecycle::LongRunning);
  EXPECT_EQ(result.workloadTypes->find("kubeflow.org", "v2", "Notebook"), nullptr);
  // The built-in rows stay, in front.
  EXPECT_NE(result.workloadTypes->find("kubeflow.org", "v1", "PyTorchJob"), nullptr);
  EXPECT_TRUE(result.workloadTypes->types().front().builtIn);

  const auto notebook = yamlObject(
      "apiVersion: kubeflow.org/v1\nkind: Notebook\nmetadata: {name: lab, labels: {app: lab}}\n"
      "spec:\n  template:\n    spec:\n      containers:\n      - name: lab\n"
      "        image: kubeflownotebookswg/jupyter-pytorch-cuda-full:v1.9.0\n"
      "        resources: {limits: {nvidia.com/gpu: 1}}\n");
  ASSERT_EQ(result.workloadTypes->findForObject(*notebook), type);
  const Resolution resolution = resolveTemplates(*type, *notebook);
  ASSERT_TRUE(resolution.ok());
  ASSERT_EQ(resolution.templates.size(), 1u);
  const ResolvedTemplate& resolved = resolution.templates[0];
  EXPECT_EQ(resolved.role, "notebook");
  EXPECT_EQ(resolved.specPointer, "/spec/template/spec");
  EXPECT_EQ(resolved.specFieldPath, "spec.template.spec");
  EXPECT_EQ(resolved.metadataPointer, "/metadata");
  EXPECT_EQ(stringMember(member(resolved.metadata, "labels"), "app"), "lab");
  EXPECT_EQ(resolved.replicas, 1) << "no replicas: one Pod";
  EXPECT_EQ(defaultClassOf(*type, *notebook).reason, "a Notebook is an interactive Jupyter server");
}

TEST(WorkloadTypeLoader, WildcardsRolesCountsAndJobSettingsOfAUserType) {
  const std::string mxJob = R"(apiVersion: aiadmit.dev/v1
kind: WorkloadType
metadata:
  name: mxjobs
spec:
  group: kubeflow.org
  kind: MXJob
  versions: [v1]
  resource: mxjobs
  class: training
  lifecycle: RunsToCompletion
  updates:
    scale: [/spec/mxReplicaSpecs/*/replicas]
    suspend: /spec/runPolicy/suspend
    immutable: [/spec/mxReplicaSpecs/Scheduler]
  jobSettings:
    backoffLimit: /spec/runPolicy/backoffLimit
    ttlSecondsAfterFinished: /spec/runPolicy/ttlSecondsAfterFinished
  templates:
  - role: "{key}"
    template: /spec/mxReplicaSpecs/*/template
    replicas:
    - path: replicas
      default: 1
    inject: [gpuLimits, placement, priority, scheduler, stamps, sharedMemory]
)";
  const ProfileLoadResult result =
      loadProfileText(kProfile + "---\n" + mxJob, "mxjob.yaml", mutationSwitches());
  ASSERT_TRUE(result.ok()) << formatLoadErrors(result.errors);
  const WorkloadType* type = result.workloadTypes->find("kubeflow.org", "v1", "MXJob");
  ASSERT_NE(type, nullptr);
  EXPECT_EQ(type->classReason, "a MXJob is training work (WorkloadType mxjobs)");
  EXPECT_EQ(type->updates.scale, std::vector<std::string>{"/spec/mxReplicaSpecs/*/replicas"});
  EXPECT_EQ(type->updates.suspend, "/spec/runPolicy/suspend");
  EXPECT_EQ(type->updates.immutable, std::vector<std::string>{"/spec/mxReplicaSpecs/Scheduler"});
  ASSERT_EQ(type->templates.size(), 1u);
  EXPECT_EQ(describeInjections(type->templates[0].injectable),
            "gpuLimits, placement, priority, scheduler, stamps, sharedMemory");
  const auto job = yamlObject(
      "apiVersion: kubeflow.org/v1\nkind: MXJob\nspec:\n  jobMode: MXTrain\n"
      "  mxReplicaSpecs:\n    Scheduler: {template: {spec: {}}}\n"
      "    Server: {replicas: 2, template: {spec: {}}}\n"
      "    Worker: {replicas: 4, template: {spec: {}}}\n");
  const Resolution resolution = resolveTemplates(*type, *job);
  ASSERT_TRUE(resolution.ok());
  std::vector<std::string> described;
  for (const ResolvedTemplate& resolved : resolution.templates) {
    described.push_back(resolved.role + " x" + std::to_string(resolved.replicas.value_or(-1)) +
                        " " + resolved.specFieldPath + " " + resolved.jobSettings.backoffLimit);
  }
  EXPECT_EQ(
      described,
      (std::vector<std::string>{
          "Scheduler x1 spec.mxReplicaSpecs.Scheduler.template.spec "
          "/spec/runPolicy/backoffLimit",
          "Server x2 spec.mxReplicaSpecs.Server.template.spec /spec/runPolicy/backoffLimit",
          "Worker x4 spec.mxReplicaSpecs.Worker.template.spec /spec/runPolicy/backoffLimit"}));
}

// The first ```yaml block after "## Adding a kind" in docs/workload-types.md.
std::string documentedExample() {
  return documentedYamlBlock(sourceDir() + "/docs/workload-types.md", "## Adding a kind");
}

TEST(WorkloadTypeLoader, TheDocumentedExampleLoads) {
  const std::string example = documentedExample();
  ASSERT_FALSE(example.empty()) << "docs/workload-types.md has no example";
  const ProfileLoadResult result =
      loadProfileText(kProfile + "---\n" + example, "docs.yaml", mutationSwitches());
  ASSERT_TRUE(result.ok()) << formatLoadErrors(result.errors);
  EXPECT_GT(result.workloadTypes->types().size(), WorkloadTypeTable::builtIn()->types().size());
}

TEST(WorkloadTypeLoader, TheDocumentationListsEveryBuiltInKind) {
  const std::string doc = readFile(sourceDir() + "/docs/workload-types.md");
  for (const WorkloadType& type : WorkloadTypeTable::builtIn()->types()) {
    // Listed as "Kind (group)" or "Kind, Kind (group)" in the table.
    EXPECT_NE(doc.find(type.kind), std::string::npos) << type.qualifiedKind();
    if (!type.group.empty()) {
      EXPECT_NE(doc.find("(" + type.group + ")"), std::string::npos) << type.qualifiedKind();
    }
    for (const std::string& version : type.versions) {
      EXPECT_NE(doc.find(version), std::string::npos) << type.qualifiedKind() << " " << version;
    }
  }
}

TEST(WorkloadTypeLoader, ADirectoryHoldsProfilesAndTypesTogether) {
  TempDir dir;
  for (const auto& entry : fs::directory_iterator(sourceDir() + "/profiles")) {
    if (entry.path().extension() != ".yaml") continue;
    writeFile(dir.file(entry.path().filename().string()), readFile(entry.path().string()));
  }
  writeFile(dir.file("notebook.yaml"), kNotebook);
  const ProfileLoadResult result = loadProfileDirectory(dir.path(), mutationSwitches());
  ASSERT_TRUE(result.ok()) << formatLoadErrors(result.errors);
  EXPECT_EQ(result.set->profiles().size(), 3u);
  EXPECT_NE(result.workloadTypes->find("kubeflow.org", "v1beta1", "Notebook"), nullptr);
  // The shipped directory has no types of its own: the built-in table.
  const ProfileLoadResult shipped =
      loadProfileDirectory(sourceDir() + "/profiles", mutationSwitches());
  ASSERT_TRUE(shipped.ok());
  EXPECT_EQ(shipped.workloadTypes, WorkloadTypeTable::builtIn());
}

TEST(WorkloadTypeLoader, TypesAreRefusedOutsideAProfileDirectoryParse) {
  std::vector<Profile> profiles;
  std::vector<ProfileError> errors;
  parseProfileDocuments(kNotebook, "notebook.yaml", mutationSwitches(), profiles, errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].format(),
            "notebook.yaml:2:7: kind: WorkloadType documents are read from a directory");
}

// ---- Golden broken documents ----

std::string goldenDir() {
  return sourceDir() + "/tests/golden/workload-types";
}

class GoldenWorkloadType : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenWorkloadType, IsRefusedWithTheExpectedErrors) {
  ProfileLoadResult result;
  expectGoldenLoadErrors(goldenDir(), GetParam(), result);
  EXPECT_EQ(result.workloadTypes, nullptr) << "a table with errors must not be built";
  for (const ProfileError& error : result.errors) {
    EXPECT_FALSE(error.field.empty()) << error.format();
  }
}

INSTANTIATE_TEST_SUITE_P(Loader, GoldenWorkloadType,
                         ::testing::ValuesIn(goldenCaseNames(goldenDir())), goldenCaseTestName);

TEST(WorkloadTypeLoader, GoldenCasesCoverEveryKindOfMistake) {
  EXPECT_GE(goldenCaseNames(goldenDir()).size(), 6u);
  EXPECT_GE(goldenLoadErrorCount(goldenDir()), 40u);
}

}  // namespace
}  // namespace aiadmit
