// AIA017 on the operator's own priority field: a Volcano Job's
// spec.priorityClassName and KubeRay's ray.io/priority-class-name label name
// the class the operator gives the Pods, so a class the cluster lacks is
// reported there, once for the workload, as a template's is (a warning on a
// controller's object by default).
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>

#include "mutators/mutator.h"
#include "tests/support/test_support.h"
#include "webhook/cluster/cluster_snapshot.h"
#include "webhook/cluster/cluster_view.h"
#include "webhook/codec/yaml_json.h"
#include "webhook/engine/engine.h"
#include "webhook/policy/profile_loader.h"

namespace aiadmit {
namespace {

using namespace testing;

// PriorityClasses are listed, and only ai-training exists.
constexpr const char* kCluster = R"(apiVersion: v1
kind: List
items:
- apiVersion: scheduling.k8s.io/v1
  kind: PriorityClass
  metadata: {name: ai-training}
  value: 10000
)";

const std::string kGpuTemplate = R"(
    template:
      spec:
        restartPolicy: Never
        nodeSelector: {accelerator: nvidia}
        tolerations: [{key: accelerator, operator: Equal, value: gpu, effect: NoSchedule}]
        containers: [{name: w, image: i, resources: {limits: {nvidia.com/gpu: 1}}}]
)";

// A training Volcano Job of two GPU tasks; `spec` is added to its spec.
std::string volcanoJob(const std::string& spec) {
  return R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: mpi, namespace: ml, annotations: {aiadmit.dev/workload: training}}
spec:)" + spec +
         "\n  tasks:\n  - name: a\n    replicas: 1" + kGpuTemplate +
         "  - name: b\n    replicas: 1" + kGpuTemplate;
}

std::string rayCluster(const std::string& priorityClass) {
  return R"(apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: ray
  namespace: ml
  annotations: {aiadmit.dev/workload: training}
  labels: {ray.io/priority-class-name: )" +
         priorityClass + R"(}
spec:
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers: [{name: head, image: ray}]
  workerGroupSpecs:
  - groupName: gpu
    replicas: 1
    rayStartParams: {})" +
         kGpuTemplate;
}

class OperatorPriorityClassExists : public ::testing::Test {
 protected:
  void SetUp() override {
    const ProfileLoadResult loaded =
        loadProfileDirectory(sourceDir() + "/profiles", mutationSwitches());
    ASSERT_TRUE(loaded.ok());
    const ClusterSnapshot snapshot = readClusterSnapshot(kCluster, "cluster.yaml");
    ASSERT_TRUE(snapshot.error.empty()) << snapshot.error;
    engine_ = std::make_unique<Engine>(loaded.set);
    engine_->replaceClusterView(snapshot.view);
  }
  // The AIA017 violations of validating `yaml`, each also a warning.
  std::vector<std::string> aia017(const std::string& yaml) const {
    std::vector<ManifestDocument> documents;
    std::string error;
    EXPECT_TRUE(parseManifests(yaml, documents, &error)) << error;
    if (documents.size() != 1) return {};
    const ReviewAnswer answer =
        answerReview(*engine_, Endpoint::Validate,
                     makeReview(toJson(*documents[0].json), "CREATE", "uid", "", "ml"));
    const ReviewResponse response = parseReviewResponse(answer.body);
    EXPECT_TRUE(response.allowed) << response.message;
    // The violation as the denial message would print it: a warning line
    // drops the field when it would not fit.
    std::vector<std::string> found;
    for (const Violation& violation : answer.evaluation.warnings) {
      if (violation.rule == AIA017) found.push_back(violation.format());
    }
    EXPECT_EQ(std::count_if(response.warnings.begin(), response.warnings.end(),
                            [](const std::string& warning) {
                              return warning.find("[AIA017]") != std::string::npos;
                            }),
              static_cast<std::ptrdiff_t>(found.size()));
    return found;
  }
  std::unique_ptr<Engine> engine_;
};

TEST_F(OperatorPriorityClassExists, AVolcanoJobsClassIsJudgedOnceWhereItIsNamed) {
  const std::vector<std::string> warnings = aia017(volcanoJob("\n  priorityClassName: ai-batch"));
  ASSERT_EQ(warnings.size(), 1u) << ::testing::PrintToString(warnings);
  EXPECT_EQ(warnings[0].rfind("[AIA017] spec.priorityClassName: PriorityClass "
                              "\"ai-batch\" does not exist",
                              0),
            0u)
      << warnings[0];
  EXPECT_TRUE(aia017(volcanoJob("\n  priorityClassName: ai-training")).empty());
}

TEST_F(OperatorPriorityClassExists, KubeRaysPriorityLabelIsJudged) {
  const std::vector<std::string> warnings = aia017(rayCluster("ai-batch"));
  ASSERT_EQ(warnings.size(), 1u) << ::testing::PrintToString(warnings);
  EXPECT_EQ(warnings[0].rfind("[AIA017] metadata.labels[ray.io/priority-class-name]: ", 0), 0u)
      << warnings[0];
  EXPECT_TRUE(aia017(rayCluster("ai-training")).empty());
}

}  // namespace
}  // namespace aiadmit
