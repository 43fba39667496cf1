// Pod templates found in a CRD's schema alone, against the real CRDs of
// ../shared/crds: for every kind the table holds, the schema's
// PodTemplateSpec- and PodSpec-shaped fields are the row's own templates,
// but for the differences each named here with its reason.
#include "webhook/model/crd_templates.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

#include "tests/support/test_support.h"
#include "webhook/codec/yaml_json.h"
#include "webhook/model/workload_type_builtin.h"

namespace aiadmit {
namespace {

std::vector<FoundKind> kindsOf(const std::string& file) {
  const std::string text = testing::readFile(file);
  std::vector<ManifestDocument> documents;
  std::string error;
  EXPECT_TRUE(parseManifests(text, documents, &error)) << file << ": " << error;
  std::vector<FoundKind> kinds;
  for (const ManifestDocument& document : documents) {
    FoundKind kind;
    std::string why;
    if (findTemplates(*document.json, kind, why)) kinds.push_back(std::move(kind));
  }
  return kinds;
}

std::set<std::string> found(const FoundKind& kind) {
  std::set<std::string> specs;
  for (const FoundTemplate& each : kind.templates) specs.insert(each.spec);
  return specs;
}

std::set<std::string> builtIn(const WorkloadType& type) {
  std::set<std::string> specs;
  for (const TemplateSlot& slot : type.templates) {
    if (slot.shape == TemplateShape::PodSpec) specs.insert(slot.spec);
  }
  return specs;
}

TEST(CrdTemplates, EachBuiltInKindsTemplatesAreFoundInItsCrd) {
  // What the schema shows that the row reads otherwise, and why.
  // MPIJob's row names the keys of its replica map, Launcher and Worker,
  // which the operator treats apart; the schema knows only a map.
  const std::map<std::string, std::set<std::string>> notInRow = {
      {"MPIJob.kubeflow.org", {"/spec/mpiReplicaSpecs/*/template/spec"}}};
  const std::map<std::string, std::set<std::string>> notInSchema = {
      {"MPIJob.kubeflow.org",
       {"/spec/mpiReplicaSpecs/Launcher/template/spec",
        "/spec/mpiReplicaSpecs/Worker/template/spec"}}};
  size_t compared = 0;
  for (const auto& entry : std::filesystem::directory_iterator(testing::sharedCrds())) {
    for (const FoundKind& kind : kindsOf(entry.path().string())) {
      const std::vector<WorkloadType> table = builtInWorkloadTypes();
      const auto row = std::find_if(table.begin(), table.end(), [&](const WorkloadType& type) {
        return type.group == kind.group && type.kind == kind.kind;
      });
      if (row == table.end()) continue;
      ++compared;
      std::set<std::string> expected = builtIn(*row);
      const std::string name = kind.kind + "." + kind.group;
      if (const auto it = notInRow.find(name); it != notInRow.end()) {
        expected.insert(it->second.begin(), it->second.end());
      }
      if (const auto it = notInSchema.find(name); it != notInSchema.end()) {
        for (const std::string& spec : it->second) expected.erase(spec);
      }
      EXPECT_EQ(found(kind), expected) << name;
    }
  }
  EXPECT_GE(compared, 19u);
}

}  // namespace
}  // namespace aiadmit
