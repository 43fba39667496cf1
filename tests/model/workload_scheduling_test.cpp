// The operators' own scheduling fields of the built-in rows
// (WorkloadType::scheduling): each is in every served version of its kind's
// CRD, as a string where it names a scheduler, class or queue; the object's
// own labels and annotations, which a CRD does not describe, are one key.
#include <gtest/gtest.h>

#include "tests/support/test_support.h"
#include "webhook/codec/json_pointer.h"
#include "webhook/codec/yaml_json.h"
#include "webhook/model/workload_type.h"

namespace aiadmit {
namespace {

using aiadmit::testing::readFile;
using aiadmit::testing::yamlObject;

bool isObjectLabelOrAnnotation(const std::string& pointer) {
  const std::vector<std::string> tokens = pointerTokens(pointer);
  return tokens.size() == 3 && tokens[0] == "metadata" &&
         (tokens[1] == "labels" || tokens[1] == "annotations");
}

TEST(WorkloadScheduling, EveryOperatorFieldIsInEachServedVersionsSchema) {
  size_t checked = 0;
  for (const WorkloadType& type : WorkloadTypeTable::builtIn()->types()) {
    const SchedulingFields& fields = type.scheduling;
    if (fields.schedulerName.empty() && fields.priorityClassName.empty() && fields.gang.empty()) {
      continue;
    }
    SCOPED_TRACE(type.qualifiedKind());
    const std::vector<std::string> files = testing::crdFiles(type.group, type.resource);
    ASSERT_FALSE(files.empty()) << "no CRD";
    const auto crd = yamlObject(readFile(files.front()));
    for (const JsonValue& version : member(member(crd.get(), "spec"), "versions")->GetArray()) {
      const std::string name(stringMember(&version, "name"));
      if (!type.servesVersion(name)) continue;
      const JsonValue* schema = member(member(&version, "schema"), "openAPIV3Schema");
      for (const std::string* named :
           {&fields.schedulerName, &fields.priorityClassName, &fields.queue}) {
        if (named->empty() || isObjectLabelOrAnnotation(*named)) continue;
        const JsonValue* field = testing::crdSchemaAt(schema, *named);
        ASSERT_NE(field, nullptr) << *named << " in " << name;
        EXPECT_EQ(stringMember(field, "type"), "string") << *named << " in " << name;
        ++checked;
      }
      for (const std::string& pattern : fields.gang) {
        if (isObjectLabelOrAnnotation(pattern)) continue;
        EXPECT_NE(testing::crdSchemaAt(schema, pattern), nullptr) << pattern << " in " << name;
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 20u);
}

TEST(WorkloadScheduling, TheOperatorsThatGangScheduleSayBy) {
  const WorkloadTypeTable& table = *WorkloadTypeTable::builtIn();
  const auto gangOf = [&](std::string_view group, std::string_view kind) {
    const WorkloadType* type = table.findGroupKind(group, kind);
    EXPECT_NE(type, nullptr) << kind;
    return type == nullptr ? std::vector<std::string>{} : type->scheduling.gang;
  };
  EXPECT_EQ(gangOf("kubeflow.org", "PyTorchJob"),
            std::vector<std::string>{"/spec/runPolicy/schedulingPolicy"});
  EXPECT_EQ(gangOf("kubeflow.org", "MPIJob"),
            std::vector<std::string>{"/spec/runPolicy/schedulingPolicy"});
  EXPECT_EQ(gangOf("batch.volcano.sh", "Job"), std::vector<std::string>{"/spec/minAvailable"});
  EXPECT_EQ(gangOf("jobset.x-k8s.io", "JobSet").front(),
            "/metadata/annotations/alpha.jobset.sigs.k8s.io~1exclusive-topology");
  for (const char* kind : {"RayCluster", "RayJob", "RayService"}) {
    const WorkloadType* ray = table.findGroupKind("ray.io", kind);
    ASSERT_NE(ray, nullptr);
    EXPECT_EQ(ray->scheduling.schedulerName, "/metadata/labels/ray.io~1scheduler-name") << kind;
    EXPECT_EQ(ray->scheduling.priorityClassName, "/metadata/labels/ray.io~1priority-class-name")
        << kind;
  }
  // Pods and the built-in controllers name their scheduling in the template.
  const WorkloadType* job = table.findGroupKind("batch", "Job");
  ASSERT_NE(job, nullptr);
  EXPECT_TRUE(job->scheduling.schedulerName.empty());
  EXPECT_TRUE(job->scheduling.gang.empty());
}

}  // namespace
}  // namespace aiadmit
