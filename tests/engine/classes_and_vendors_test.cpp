// A guess is not a statement, and every accelerator has a home, through the
// engine both webhooks call: an inferred class only warns where a declared
// one is refused; `kubectl run` with a GPU image is a command, not a server;
// each vendor's workload gets its vendor's pool or none, untouched and told
// what to add; a DRA claim places by its DeviceClass, also when the workload
// comes before its claim template.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "mutators/mutator.h"
#include "tests/support/test_support.h"
#include "tests/support/validator_harness.h"
#include "webhook/cluster/cluster_snapshot.h"
#include "webhook/cluster/cluster_view.h"
#include "webhook/engine/engine.h"
#include "webhook/policy/profile_loader.h"

namespace aiadmit {
namespace {

using namespace testing;

std::shared_ptr<const ProfileSet> shippedWith(const std::string& extra = "") {
  std::string text;
  for (const char* name : {"batch.yaml", "realtime.yaml", "training.yaml"}) {
    text += "---\n" + readFile(sourceDir() + "/profiles/" + name);
  }
  const ProfileLoadResult loaded =
      loadProfileText(text + extra, "profiles.yaml", mutationSwitches());
  std::string errors;
  for (const ProfileError& error : loaded.errors) errors += error.format() + "\n";
  EXPECT_TRUE(loaded.ok()) << errors;
  return loaded.set;
}

ReviewResponse answer(const Engine& engine, Endpoint endpoint, const std::string& yaml,
                      const ClusterAnswers* answers = nullptr) {
  const ReviewAnswer result =
      answerReview(engine, endpoint, makeReview(yamlToJson(yaml), "CREATE", "u"), answers);
  return parseReviewResponse(result.body);
}

bool mentions(const ReviewResponse& response, const std::string& text) {
  for (const std::string& warning : response.warnings) {
    if (warning.find(text) != std::string::npos) return true;
  }
  return false;
}

// A vLLM Deployment as the Kubernetes project's example writes it: a GPU,
// no port, no probe.
std::string vllm(const std::string& annotations = "{}") {
  return R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm, annotations: )" +
         annotations + R"(}
spec:
  replicas: 1
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}}
    spec:)" +
         kPoolPlacement + R"(
      containers:
      - name: vllm
        image: vllm/vllm-openai:latest
        args: [--model, google/gemma-3-1b-it]
        resources: {limits: {nvidia.com/gpu: 1, memory: 32Gi}}
)";
}

TEST(InferredClasses, AnInferredServerWithoutAProbeIsAdmittedWithAWarning) {
  const Engine engine(shippedWith());
  const ReviewResponse inferred = answer(engine, Endpoint::Validate, vllm());
  EXPECT_TRUE(inferred.allowed) << inferred.message;
  EXPECT_TRUE(mentions(inferred,
                       "inferred class realtime: AIA009 only warns; declare it in "
                       "aiadmit.dev/workload (profile realtime)"))
      << ::testing::PrintToString(inferred.warnings);
  EXPECT_TRUE(mentions(inferred, "[AIA009]"));
  EXPECT_EQ(inferred.auditAnnotations.at("class-basis"), "inferred");
  EXPECT_EQ(inferred.auditAnnotations.at("rules"), "AIA009=warn");
  EXPECT_EQ(inferred.auditAnnotations.count("capped"), 0u);

  const ReviewResponse declared =
      answer(engine, Endpoint::Validate, vllm("{aiadmit.dev/workload: realtime}"));
  EXPECT_FALSE(declared.allowed);
  EXPECT_EQ(declared.message.rfind("[AIA009] spec.template.spec.containers[0]: ", 0), 0u)
      << declared.message;
  EXPECT_EQ(declared.auditAnnotations.at("class-basis"), "declared");
}

TEST(InferredClasses, ANamedProfileDeclaresItsClassButAiadmitsRecordDoesNot) {
  const Engine engine(shippedWith());
  const ReviewResponse named =
      answer(engine, Endpoint::Validate, vllm("{aiadmit.dev/profile: realtime}"));
  EXPECT_FALSE(named.allowed) << "the developer chose the realtime profile";
  EXPECT_NE(named.message.find("[AIA009]"), std::string::npos) << named.message;
  // The stamp writes both: then the profile is aiadmit's record, no choice.
  const ReviewResponse recorded =
      answer(engine, Endpoint::Validate,
             vllm("{aiadmit.dev/class: realtime, aiadmit.dev/profile: realtime}"));
  EXPECT_TRUE(recorded.allowed) << recorded.message;
  EXPECT_EQ(recorded.auditAnnotations.at("class-basis"), "inferred");
}

TEST(InferredClasses, AProfileMayEnforceInferredClasses) {
  const std::string strict = R"(---
apiVersion: aiadmit.dev/v1
kind: Profile
metadata: {name: realtime-strict}
spec:
  class: realtime
  scope: {namespaces: [strict]}
  classification: {enforceInferred: true}
)";
  const Engine engine(shippedWith(strict));
  const ReviewAnswer result = answerReview(
      engine, Endpoint::Validate, makeReview(yamlToJson(vllm()), "CREATE", "u", "", "strict"));
  const ReviewResponse response = parseReviewResponse(result.body);
  EXPECT_FALSE(response.allowed);
  EXPECT_NE(response.message.find("[AIA009]"), std::string::npos) << response.message;
}

// `kubectl run smi --image=nvidia/cuda --limits=nvidia.com/gpu=1 -- nvidia-smi`
const std::string kKubectlRunPod = R"(apiVersion: v1
kind: Pod
metadata: {name: smi, labels: {run: smi}}
spec:
  containers:
  - name: smi
    image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04
    args: [nvidia-smi]
    resources: {limits: {nvidia.com/gpu: 1}}
  restartPolicy: Always
)";

TEST(InferredClasses, KubectlRunWithAGpuIsACommandNotAServer) {
  const Engine engine(shippedWith());
  const ReviewResponse mutated = answer(engine, Endpoint::Mutate, kKubectlRunPod);
  ASSERT_TRUE(mutated.allowed);
  EXPECT_EQ(mutated.auditAnnotations.at("class"), "batch");
  EXPECT_NE(mutated.patch.find("\"ai-batch\""), std::string::npos) << mutated.patch;
  EXPECT_EQ(mutated.patch.find("ai-realtime"), std::string::npos) << mutated.patch;
  EXPECT_EQ(mutated.patch.find("readinessProbe"), std::string::npos) << mutated.patch;
  const ReviewResponse validated =
      answer(engine, Endpoint::Validate, applyPatch(yamlToJson(kKubectlRunPod), mutated.patch));
  EXPECT_TRUE(validated.allowed) << validated.message;
  EXPECT_TRUE(mentions(validated, "[AIA014]")) << ::testing::PrintToString(validated.warnings);
}

std::string gpuDeployment(const std::string& resource, const std::string& count = "1") {
  return R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: server}
spec:
  selector: {matchLabels: {app: server}}
  template:
    metadata: {labels: {app: server}}
    spec:
      containers:
      - name: server
        image: rocm/vllm
        ports: [{name: http, containerPort: 8000}]
        resources: {limits: {)" +
         resource + ": " + count + R"(, memory: 64Gi}}
)";
}

TEST(VendorPools, AnotherVendorsWorkloadIsAdmittedUntouchedAndToldWhatToAdd) {
  const Engine engine(shippedWith());
  for (const char* resource : {"amd.com/gpu", "gpu.intel.com/i915", "habana.ai/gaudi",
                               "aws.amazon.com/neuroncore", "google.com/tpu"}) {
    SCOPED_TRACE(resource);
    const ReviewResponse mutated = answer(engine, Endpoint::Mutate, gpuDeployment(resource));
    EXPECT_TRUE(mutated.allowed);
    EXPECT_TRUE(mutated.patch.empty()) << mutated.patch;
    EXPECT_TRUE(mentions(mutated, std::string("nothing injected: no realtime profile places ") +
                                      resource + "; add one with it as gpu.resourceName"))
        << ::testing::PrintToString(mutated.warnings);
    const ReviewResponse validated = answer(engine, Endpoint::Validate, gpuDeployment(resource));
    EXPECT_TRUE(validated.allowed) << validated.message;
    EXPECT_FALSE(mentions(validated, "[AIA003]")) << ::testing::PrintToString(validated.warnings);
  }
  // A misspelling of the vendor's own name is one, profile or not.
  const ReviewResponse typo = answer(engine, Endpoint::Validate, gpuDeployment("amd.com/gpus"));
  EXPECT_FALSE(typo.allowed);
  EXPECT_NE(typo.message.find("did you mean \"amd.com/gpu\"?"), std::string::npos) << typo.message;
}

const std::string kAmdProfile = R"(---
apiVersion: aiadmit.dev/v1
kind: Profile
metadata: {name: realtime-amd}
spec:
  class: realtime
  gpu: {resourceName: amd.com/gpu, gpusPerNode: 8}
  placement:
    nodeSelector: {accelerator: amd}
    tolerations: [{key: amd.com/gpu, operator: Exists, effect: NoSchedule}]
)";

TEST(VendorPools, EachVendorsWorkloadGoesToItsOwnPool) {
  const Engine engine(shippedWith(kAmdProfile));
  const ReviewResponse amd = answer(engine, Endpoint::Mutate, gpuDeployment("amd.com/gpu"));
  EXPECT_EQ(amd.auditAnnotations.at("profile"), "realtime-amd");
  EXPECT_NE(amd.patch.find("{\"accelerator\":\"amd\"}"), std::string::npos) << amd.patch;
  EXPECT_EQ(amd.patch.find("nvidia"), std::string::npos) << amd.patch;
  const ReviewResponse nvidia = answer(engine, Endpoint::Mutate, gpuDeployment("nvidia.com/gpu"));
  EXPECT_EQ(nvidia.auditAnnotations.at("profile"), "realtime");
  EXPECT_NE(nvidia.patch.find("{\"accelerator\":\"nvidia\"}"), std::string::npos) << nvidia.patch;
  // More AMD GPUs than the AMD pool's nodes have is AIA006 of that pool.
  const ReviewResponse tooMany =
      answer(engine, Endpoint::Validate, gpuDeployment("amd.com/gpu", "16"));
  EXPECT_FALSE(tooMany.allowed);
  EXPECT_NE(tooMany.message.find("[AIA006]"), std::string::npos) << tooMany.message;
}

// A cluster with NVIDIA and Intel DRA classes, an Intel claim template, and
// one template of another name so that templates are a kind it lists.
constexpr const char* kDraCluster = R"(apiVersion: v1
kind: List
items:
- apiVersion: resource.k8s.io/v1
  kind: DeviceClass
  metadata: {name: gpu.nvidia.com}
  spec:
    selectors: [{cel: {expression: "device.driver == 'gpu.nvidia.com'"}}]
- apiVersion: resource.k8s.io/v1
  kind: DeviceClass
  metadata: {name: gpu.intel.com}
  spec:
    selectors: [{cel: {expression: "device.driver == 'gpu.intel.com'"}}]
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaimTemplate
  metadata: {name: intel-gpu, namespace: default}
  spec:
    spec:
      devices:
        requests: [{name: gpu, exactly: {deviceClassName: gpu.intel.com}}]
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaimTemplate
  metadata: {name: nvidia-gpu, namespace: default}
  spec:
    spec:
      devices:
        requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}]
)";

std::string claimingDeployment(const std::string& templateName,
                               const std::string& ownerAndStamp = "") {
  return R"(apiVersion: apps/v1
kind: )" +
         std::string(ownerAndStamp.empty() ? "Deployment" : "ReplicaSet") +
         R"(
metadata: {name: server)" +
         ownerAndStamp + R"(}
spec:
  selector: {matchLabels: {app: server}}
  template:
    metadata: {labels: {app: server})" +
         (ownerAndStamp.empty() ? "" : ", annotations: {aiadmit.dev/class: realtime}") + R"(}
    spec:
      resourceClaims: [{name: gpu, resourceClaimTemplateName: )" +
         templateName + R"(}]
      containers:
      - name: server
        image: intel/vllm
        ports: [{containerPort: 8000}]
        resources: {claims: [{name: gpu}], limits: {memory: 64Gi}}
)";
}

class DraPools : public ::testing::Test {
 protected:
  void SetUp() override {
    const ClusterSnapshot snapshot = readClusterSnapshot(kDraCluster, "cluster.yaml");
    ASSERT_TRUE(snapshot.error.empty()) << snapshot.error;
    engine_ = std::make_unique<Engine>(shippedWith());
    engine_->replaceClusterView(snapshot.view);
  }
  std::unique_ptr<Engine> engine_;
};

TEST_F(DraPools, AClaimPlacesByItsDeviceClass) {
  const ReviewResponse nvidia =
      answer(*engine_, Endpoint::Mutate, claimingDeployment("nvidia-gpu"));
  EXPECT_EQ(nvidia.auditAnnotations.at("profile"), "realtime");
  EXPECT_NE(nvidia.patch.find("{\"accelerator\":\"nvidia\"}"), std::string::npos) << nvidia.patch;
  const ReviewResponse intel = answer(*engine_, Endpoint::Mutate, claimingDeployment("intel-gpu"));
  EXPECT_TRUE(intel.patch.empty()) << "never the NVIDIA pool: " << intel.patch;
  EXPECT_TRUE(mentions(intel, "no realtime profile places DeviceClass gpu.intel.com"))
      << ::testing::PrintToString(intel.warnings);
}

TEST_F(DraPools, AWorkloadBeforeItsClaimTemplateIsRecordedAndItsPodsPlaced) {
  // The API, asked, has no such template yet: nothing is placed, the class
  // its kind gives it is recorded.
  ClusterAnswers none;
  none.presence[{ClusterKind::ResourceClaimTemplate, "default", "later-gpu"}] = Presence::No;
  const ReviewResponse first =
      answer(*engine_, Endpoint::Mutate, claimingDeployment("later-gpu"), &none);
  ASSERT_TRUE(first.allowed);
  EXPECT_EQ(
      first.patch,
      R"([{"op":"add","path":"/metadata/annotations","value":{"aiadmit.dev/class":"realtime"}},)"
      R"({"op":"add","path":"/spec/template/metadata/annotations",)"
      R"("value":{"aiadmit.dev/class":"realtime"}}])");
  EXPECT_TRUE(mentions(first, "its Pods get their pool once the claim templates exist"))
      << ::testing::PrintToString(first.warnings);
  // Without a view of the cluster nothing is known absent: nothing recorded.
  const Engine blind(shippedWith());
  const ReviewResponse unknown = answer(blind, Endpoint::Mutate, claimingDeployment("later-gpu"));
  EXPECT_TRUE(unknown.patch.empty()) << unknown.patch;
  // Once the template exists, what the controller makes from the recorded
  // template gets its pool: NVIDIA's for an NVIDIA class.
  const std::string owner =
      ", ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: server, uid: u1, "
      "controller: true}]";
  const ReviewResponse child =
      answer(*engine_, Endpoint::Mutate, claimingDeployment("nvidia-gpu", owner));
  EXPECT_NE(child.patch.find("{\"accelerator\":\"nvidia\"}"), std::string::npos) << child.patch;
  EXPECT_EQ(child.patch.find("priorityClassName"), std::string::npos)
      << "a child gets only the placement its GPU role lacks: " << child.patch;
  const ReviewResponse intelChild =
      answer(*engine_, Endpoint::Mutate, claimingDeployment("intel-gpu", owner));
  EXPECT_TRUE(intelChild.patch.empty()) << intelChild.patch;
}

// Kubeflow's spark-pi example (spark-operator v2.5.0) with GPUs on its
// executors, asked as the operator asks them: `gpu: {name, quantity}`.
std::string sparkPi(const std::string& gpuName) {
  return R"(apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: spark-pi, namespace: default}
spec:
  type: Scala
  mode: cluster
  image: docker.io/library/spark:4.0.1
  mainClass: org.apache.spark.examples.SparkPi
  mainApplicationFile: local:///opt/spark/examples/jars/spark-examples.jar
  sparkVersion: 4.0.1
  driver: {cores: 1, memory: 512m, serviceAccount: spark-operator-spark}
  executor:
    instances: 2
    cores: 1
    memory: 512m
    gpu: {name: )" +
         gpuName + R"(, quantity: 1}
)";
}

// A misspelt GPU name, which no node offers and the operator would put on
// the executors as it is, is refused at the field that holds it; the right
// name is admitted, and another vendor's is admitted untouched, never aimed
// at the NVIDIA pool.
TEST(ClassesAndVendors, ASparkExecutorsMisspeltGpuIsRefusedWhereTheRightOneRuns) {
  const Engine engine(shippedWith());
  const ReviewResponse misspelt = answer(engine, Endpoint::Validate, sparkPi("nvidia.com/gpus"));
  EXPECT_FALSE(misspelt.allowed);
  EXPECT_NE(misspelt.message.find("[AIA003]"), std::string::npos) << misspelt.message;
  EXPECT_NE(misspelt.message.find("spec.executor.gpu"), std::string::npos) << misspelt.message;
  EXPECT_NE(misspelt.message.find("nvidia.com/gpu"), std::string::npos) << misspelt.message;

  const ReviewResponse right = answer(engine, Endpoint::Validate, sparkPi("nvidia.com/gpu"));
  EXPECT_TRUE(right.allowed) << right.message;
  const ReviewResponse mutated = answer(engine, Endpoint::Mutate, sparkPi("nvidia.com/gpu"));
  EXPECT_TRUE(mutated.allowed) << mutated.message;
  EXPECT_NE(mutated.patch.find("ai-batch"), std::string::npos) << mutated.patch;

  const ReviewResponse amd = answer(engine, Endpoint::Mutate, sparkPi("amd.com/gpu"));
  EXPECT_TRUE(amd.allowed) << amd.message;
  EXPECT_EQ(amd.patch.find("nvidia"), std::string::npos) << amd.patch;
  EXPECT_EQ(amd.patch.find("accelerator"), std::string::npos) << amd.patch;
}

}  // namespace
}  // namespace aiadmit
