// A WorkloadType document's `scheduling`: where the operator reads its Pods'
// scheduler, priority class and queue, and the fields whose presence says it
// gang-schedules them. The errors of broken ones are in
// tests/golden/workload-types/scheduling.err.
#include <gtest/gtest.h>

#include "mutators/mutator.h"
#include "tests/support/golden_files.h"
#include "tests/support/test_support.h"
#include "webhook/policy/profile_loader.h"

namespace aiadmit {
namespace {

using namespace testing;

// A directory's text needs a profile beside its WorkloadType documents.
const std::string kProfile =
    "apiVersion: aiadmit.dev/v1\nkind: Profile\nmetadata: {name: training}\n"
    "spec: {class: training}\n---\n";

TEST(WorkloadTypeScheduling, TheOperatorsFieldsAreReadIntoTheRow) {
  const ProfileLoadResult result = loadProfileText(kProfile + R"(apiVersion: aiadmit.dev/v1
kind: WorkloadType
metadata: {name: batchjobs}
spec:
  group: example.com
  kind: BatchJob
  resource: batchjobs
  class: training
  scheduling:
    schedulerName: /spec/schedulerName
    priorityClassName: /metadata/labels/example.com~1priority
    queue: /spec/queue
    gang: [/spec/minMember, "/spec/groups/*/gang"]
  templates:
  - role: "{key}"
    template: /spec/groups/*/template
)",
                                                   "batchjobs.yaml", mutationSwitches());
  ASSERT_TRUE(result.ok()) << formatLoadErrors(result.errors);
  const WorkloadType* type = result.workloadTypes->find("example.com", "v1", "BatchJob");
  ASSERT_NE(type, nullptr);
  EXPECT_EQ(type->scheduling.schedulerName, "/spec/schedulerName");
  EXPECT_EQ(type->scheduling.priorityClassName, "/metadata/labels/example.com~1priority");
  EXPECT_EQ(type->scheduling.queue, "/spec/queue");
  EXPECT_EQ(type->scheduling.gang,
            (std::vector<std::string>{"/spec/minMember", "/spec/groups/*/gang"}));
}

TEST(WorkloadTypeScheduling, AKindWithoutItHasNoOperatorFields) {
  const ProfileLoadResult result = loadProfileText(kProfile + R"(apiVersion: aiadmit.dev/v1
kind: WorkloadType
metadata: {name: notebooks}
spec:
  group: kubeflow.org
  kind: Notebook
  resource: notebooks
  class: realtime
  templates:
  - role: notebook
    podSpec: /spec/template/spec
)",
                                                   "notebooks.yaml", mutationSwitches());
  ASSERT_TRUE(result.ok()) << formatLoadErrors(result.errors);
  const WorkloadType* type = result.workloadTypes->find("kubeflow.org", "v1", "Notebook");
  ASSERT_NE(type, nullptr);
  EXPECT_TRUE(type->scheduling.schedulerName.empty());
  EXPECT_TRUE(type->scheduling.priorityClassName.empty());
  EXPECT_TRUE(type->scheduling.gang.empty());
}

}  // namespace
}  // namespace aiadmit
