// What differs between Kubernetes' own kinds is a field of their rows: a
// bare Pod is its own Pod and is edited only as it is created, a Job's
// backoffLimit is defaulted by the API server and its completions cap the
// Pods that run at once, a CronJob's Jobs carry the metadata between the
// object and its Pods. Every operator's row is a custom resource.
#include <gtest/gtest.h>

#include "tests/support/test_support.h"
#include "webhook/model/workload.h"
#include "webhook/model/workload_type.h"

namespace aiadmit {
namespace {

using aiadmit::testing::yamlObject;

const WorkloadType& row(std::string_view group, std::string_view kind) {
  const WorkloadType* type = WorkloadTypeTable::builtIn()->findGroupKind(group, kind);
  EXPECT_NE(type, nullptr) << kind;
  static const WorkloadType none;
  return type != nullptr ? *type : none;
}

TEST(KubernetesKinds, ABarePodIsItsOwnPodAndIsEditedOnlyAtCreation) {
  const WorkloadType& pod = row("", "Pod");
  EXPECT_TRUE(pod.objectIsPod);
  EXPECT_FALSE(pod.customResource);
  EXPECT_FALSE(pod.updates.editedOnUpdate);
  ASSERT_EQ(pod.templates.size(), 1u);
  EXPECT_EQ(pod.templates[0].spec, "/spec");
  EXPECT_EQ(pod.templates[0].intermediateMetadata, "");
  for (const WorkloadType& type : WorkloadTypeTable::builtIn()->types()) {
    if (&type == &pod) continue;
    EXPECT_FALSE(type.objectIsPod) << type.qualifiedKind();
    EXPECT_TRUE(type.updates.editedOnUpdate) << type.qualifiedKind();
  }
}

TEST(KubernetesKinds, AJobsRowNamesItsDefaultedBackoffLimitAndItsCompletions) {
  const WorkloadType& job = row("batch", "Job");
  ASSERT_EQ(job.templates.size(), 1u);
  const TemplateSlot& slot = job.templates[0];
  EXPECT_EQ(slot.jobSettings.backoffLimit, "/spec/backoffLimit");
  EXPECT_EQ(slot.jobSettings.serverBackoffLimit, 6);
  EXPECT_EQ(slot.jobSettings.backoffLimitPerIndex, "/spec/backoffLimitPerIndex");
  EXPECT_EQ(slot.completions, "/spec/completions");
  EXPECT_EQ(job.updates.immutable, std::vector<std::string>{"/spec/template"});
  // Nothing defaults what a CronJob's jobTemplate leaves out.
  const TemplateSlot& cron = row("batch", "CronJob").templates.at(0);
  EXPECT_EQ(cron.jobSettings.backoffLimit, "/spec/jobTemplate/spec/backoffLimit");
  EXPECT_FALSE(cron.jobSettings.serverBackoffLimit.has_value());
  EXPECT_EQ(cron.completions, "/spec/jobTemplate/spec/completions");
}

TEST(KubernetesKinds, ACronJobsJobsCarryTheMetadataBetweenObjectAndPods) {
  const WorkloadType& cronJob = row("batch", "CronJob");
  EXPECT_EQ(cronJob.templates.at(0).intermediateMetadata, "/spec/jobTemplate/metadata");
  const auto object = yamlObject(R"(
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "@daily"
  jobTemplate:
    spec:
      template:
        spec:
          containers: [{name: main, image: x}]
)");
  const Resolution resolution = resolveTemplates(cronJob, *object);
  ASSERT_EQ(resolution.templates.size(), 1u);
  EXPECT_EQ(resolution.templates[0].intermediateMetadataPointer, "/spec/jobTemplate/metadata");
  EXPECT_EQ(resolution.templates[0].jobSettings.backoffLimit,
            "/spec/jobTemplate/spec/backoffLimit");
}

TEST(KubernetesKinds, OnlyPodAndItsControllersAreKubernetesKinds) {
  std::vector<std::string> kinds;
  for (const WorkloadType& type : WorkloadTypeTable::builtIn()->types()) {
    if (!type.customResource) kinds.push_back(type.qualifiedKind());
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"Pod", "Deployment.apps", "StatefulSet.apps",
                                             "ReplicaSet.apps", "Job.batch", "CronJob.batch"}));
  EXPECT_EQ(kubernetesKindOf("batch", "CronJob"), &row("batch", "CronJob"));
  EXPECT_EQ(kubernetesKindOf("batch.volcano.sh", "Job"), nullptr) << "an operator's kind";
  EXPECT_EQ(kubernetesKindOf("kubeflow.org", "PyTorchJob"), nullptr) << "a custom resource";
  EXPECT_EQ(kubernetesKindOf("", "ConfigMap"), nullptr) << "carries no Pods";
}

TEST(KubernetesKinds, ATemplateTheObjectLacksIsReadWhereTheRowPutsIt) {
  const auto pod =
      yamlObject("apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {a: b}}\n");
  const WorkloadType& type = row("", "Pod");
  EXPECT_TRUE(resolveTemplates(type, *pod).templates.empty());
  const PodTemplateView view = PodTemplateView::ofFirstSlot(*pod, type);
  EXPECT_EQ(view.place, nullptr);
  EXPECT_EQ(view.slot, &type.templates[0]);
  EXPECT_EQ(view.spec, nullptr);
  EXPECT_EQ(stringMember(member(view.metadata, "annotations"), "a"), "b");
  EXPECT_EQ(view.specFieldPath(), "spec");
  EXPECT_EQ(view.role(), "pod");
  EXPECT_TRUE(view.objectIsPod());
  EXPECT_FALSE(view.isCustomResource());

  const auto deployment =
      yamlObject("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n");
  const PodTemplateView controller =
      PodTemplateView::ofFirstSlot(*deployment, row("apps", "Deployment"));
  EXPECT_EQ(controller.specFieldPath(), "spec.template.spec");
  EXPECT_EQ(controller.metadataFieldPath(), "spec.template.metadata");
  EXPECT_FALSE(controller.objectIsPod());
}

}  // namespace
}  // namespace aiadmit
