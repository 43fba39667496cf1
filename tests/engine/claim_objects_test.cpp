// DRA claim objects on /validate (docs/rules.md, "DRA claim objects"):
// ResourceClaimTemplates and ResourceClaims of resource.k8s.io v1 and v1beta1
// judged by AIA020 (and AIA019, AIA001) over TLS against the shipped
// profiles, and in-process with a cluster view through the same engine.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mutators/mutator.h"
#include "tests/support/test_support.h"
#include "webhook/cluster/cluster_snapshot.h"
#include "webhook/cluster/cluster_view.h"
#include "webhook/engine/engine.h"
#include "webhook/policy/profile_loader.h"

namespace aiadmit {
namespace {

using namespace testing;

// A v1 ResourceClaimTemplate whose one request is `request` (the fields of
// a DeviceRequest after its name).
std::string v1Template(const std::string& request, const std::string& annotations = "{}") {
  return R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaimTemplate",)"
         R"("metadata":{"name":"gpus","namespace":"team-a","annotations":)" +
         annotations + R"(},"spec":{"spec":{"devices":{"requests":[{"name":"gpu",)" + request +
         "}]}}}}";
}

std::string exactly(const std::string& deviceClass, int count) {
  return R"("exactly":{"deviceClassName":")" + deviceClass + R"(","count":)" +
         std::to_string(count) + "}";
}

std::string allOf(const std::string& deviceClass) {
  return R"("exactly":{"deviceClassName":")" + deviceClass + R"(","allocationMode":"All"})";
}

// A v1beta1 ResourceClaim: class and count on the request itself.
std::string v1beta1Claim(const std::string& deviceClass, int count,
                         const std::string& labels = "{}") {
  return R"({"apiVersion":"resource.k8s.io/v1beta1","kind":"ResourceClaim",)"
         R"("metadata":{"name":"gpus","namespace":"team-a","labels":)" +
         labels + R"(},"spec":{"devices":{"requests":[{"name":"gpu","deviceClassName":")" +
         deviceClass + R"(","count":)" + std::to_string(count) + "}]}}}";
}

const std::string kFirstAvailable =
    R"("firstAvailable":[{"name":"big","deviceClassName":"gpu.nvidia.com","count":8},)"
    R"({"name":"small","deviceClassName":"gpu.nvidia.cmo","count":2}])";

class ClaimObjectsOverTls : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = new WebhookServer(); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  static ReviewResponse validate(const std::string& object, const std::string& operation = "CREATE",
                                 const std::string& oldObject = "") {
    const HttpResponse answer =
        server_->post("/validate", makeReview(object, operation, "uid-claim", oldObject));
    EXPECT_EQ(answer.status, 200) << answer.body;
    const ReviewResponse response = parseReviewResponse(answer.body);
    EXPECT_EQ(response.uid, "uid-claim");
    return response;
  }
  static WebhookServer* server_;
};
WebhookServer* ClaimObjectsOverTls::server_ = nullptr;

TEST(ClaimObjects, TestObjectsAreSchemaValid) {
  const CommandResult result = validateSchemas({
      v1Template(exactly("gpu.nvidia.com", 2)),
      v1Template(exactly("gpu.nvidia.comm", 16)),
      v1Template(allOf("gpu.nvidia.com")),
      v1Template(kFirstAvailable),
  });
  EXPECT_EQ(result.exitCode, 0) << result.out << result.err;
  // kubernetes-models 5.1.0 has resource.k8s.io/v1 only: the v1beta1 claim's
  // request is held to v1's schema with class and count moved under exactly.
  std::string asV1 = v1beta1Claim("gpu.nvidia.com", 2);
  asV1.replace(asV1.find("v1beta1"), 7, "v1");
  const size_t fields = asV1.find(R"("deviceClassName")");
  asV1.insert(fields, R"("exactly":{)");
  asV1.insert(asV1.find("}]}}}"), "}");
  const CommandResult v1beta1 = validateSchemas({asV1});
  EXPECT_EQ(v1beta1.exitCode, 0) << asV1 << v1beta1.out << v1beta1.err;
}

TEST_F(ClaimObjectsOverTls, TemplateAskingForTwoGpusIsAdmitted) {
  const ReviewResponse response = validate(v1Template(exactly("gpu.nvidia.com", 2)));
  EXPECT_TRUE(response.allowed) << response.message;
  EXPECT_TRUE(response.warnings.empty());
  EXPECT_EQ(response.auditAnnotations.at("class"), "training");
  EXPECT_EQ(response.auditAnnotations.at("profile"), "training");
}

TEST_F(ClaimObjectsOverTls, MisspeltClassIsDeniedWithDidYouMean) {
  const ReviewResponse response = validate(v1Template(exactly("gpu.nvidia.comm", 2)));
  EXPECT_FALSE(response.allowed);
  EXPECT_EQ(response.statusCode, 403);
  EXPECT_NE(response.message.find("[AIA020] spec.spec.devices.requests[0].exactly.deviceClassName: "
                                  "DeviceClass \"gpu.nvidia.comm\" is not one profile training "
                                  "allows"),
            std::string::npos)
      << response.message;
  EXPECT_NE(response.message.find("did you mean \"gpu.nvidia.com\"?"), std::string::npos);
}

// Another vendor's GPUs have their own pool: no shipped profile places
// gpu.amd.com or gpu.intel.com, so nothing judges the claim by the NVIDIA
// pool; a warning names what to add.
TEST_F(ClaimObjectsOverTls, AnotherVendorsClassIsAdmittedWithWhatToAdd) {
  for (const char* deviceClass : {"gpu.amd.com", "gpu.intel.com", "tpu.google.com"}) {
    const ReviewResponse response = validate(v1Template(exactly(deviceClass, 1)));
    EXPECT_TRUE(response.allowed) << response.message;
    ASSERT_EQ(response.warnings.size(), 1u) << deviceClass;
    EXPECT_NE(response.warnings[0].find("profile places DeviceClass " + std::string(deviceClass) +
                                        "; add one with it in gpu.deviceClasses"),
              std::string::npos)
        << response.warnings[0];
  }
}

// A profile that places the vendor's class judges the claim by its pool.
TEST(ClaimObjectsVendors, AProfileOfTheVendorJudgesItsClaims) {
  TempDir dir;
  WebhookServer::Options options;
  options.profilesDir = shippedProfilesWith(dir, {{"training-amd.yaml", R"(
apiVersion: aiadmit.dev/v1
kind: Profile
metadata: {name: training-amd}
spec:
  class: training
  gpu: {resourceName: amd.com/gpu, gpusPerNode: 8}
)"}});
  WebhookServer server(options);
  const auto post = [&](const std::string& deviceClass, int count) {
    return parseReviewResponse(
        server.post("/validate", makeReview(v1Template(exactly(deviceClass, count)), "CREATE", "u"))
            .body);
  };
  const ReviewResponse placed = post("gpu.amd.com", 2);
  EXPECT_TRUE(placed.allowed) << placed.message;
  EXPECT_TRUE(placed.warnings.empty()) << placed.warnings.front();
  EXPECT_EQ(placed.auditAnnotations.at("profile"), "training-amd");
  const ReviewResponse tooMany = post("gpu.amd.com", 16);
  EXPECT_FALSE(tooMany.allowed);
  EXPECT_NE(tooMany.message.find("[AIA020]"), std::string::npos) << tooMany.message;
  // The NVIDIA class is still the shipped training profile's.
  const ReviewResponse nvidia = post("gpu.nvidia.com", 2);
  EXPECT_EQ(nvidia.auditAnnotations.at("profile"), "training");
}

TEST_F(ClaimObjectsOverTls, ClassesOfOtherDevicesAreNotTheProfilesToJudge) {
  const ReviewResponse response = validate(v1Template(exactly("rdma.example.com", 4)));
  EXPECT_TRUE(response.allowed) << response.message;
}

TEST_F(ClaimObjectsOverTls, SixteenGpusOnEightGpuNodesAreDenied) {
  const ReviewResponse response = validate(v1Template(exactly("gpu.nvidia.com", 16)));
  EXPECT_FALSE(response.allowed);
  EXPECT_NE(response.message.find("[AIA020] spec.spec.devices.requests[0].exactly.count: the "
                                  "ResourceClaimTemplate asks for 16 devices"),
            std::string::npos)
      << response.message;
  EXPECT_NE(response.message.find("ask for at most 8"), std::string::npos);
  EXPECT_TRUE(validate(v1Template(exactly("gpu.nvidia.com", 8))).allowed);
}

TEST_F(ClaimObjectsOverTls, AllocationModeAllIsAdmittedWithoutAClusterView) {
  const ReviewResponse response = validate(v1Template(allOf("gpu.nvidia.com")));
  EXPECT_TRUE(response.allowed) << response.message;
}

TEST_F(ClaimObjectsOverTls, EachFirstAvailableAlternativeIsChecked) {
  const ReviewResponse response = validate(v1Template(kFirstAvailable));
  EXPECT_FALSE(response.allowed);
  EXPECT_NE(response.message.find(
                "[AIA020] spec.spec.devices.requests[0].firstAvailable[1].deviceClassName: "),
            std::string::npos)
      << response.message;
  EXPECT_EQ(response.message.find("firstAvailable[0]"), std::string::npos) << response.message;
  EXPECT_EQ(response.message.find('\n'), std::string::npos) << "one violation";
}

TEST_F(ClaimObjectsOverTls, V1beta1ClaimIsReadInItsOwnShape) {
  EXPECT_TRUE(validate(v1beta1Claim("gpu.nvidia.com", 2)).allowed);
  const ReviewResponse response = validate(v1beta1Claim("gpu.nvidia.com", 12));
  EXPECT_FALSE(response.allowed);
  EXPECT_NE(response.message.find("[AIA020] spec.devices.requests[0].count: the ResourceClaim "
                                  "asks for 12 devices"),
            std::string::npos)
      << response.message;
}

TEST_F(ClaimObjectsOverTls, UnchangedSpecOnUpdateIsNotRefused) {
  // Made before the profile refused it: a label change must not start failing.
  const std::string before = v1beta1Claim("gpu.nvidia.com", 12);
  const std::string after = v1beta1Claim("gpu.nvidia.com", 12, R"({"team":"vision"})");
  EXPECT_TRUE(validate(after, "UPDATE", before).allowed);
  // What the update adds is still refused.
  const ReviewResponse added = validate(v1beta1Claim("gpu.nvidia.comm", 12), "UPDATE", before);
  EXPECT_FALSE(added.allowed);
  EXPECT_NE(added.message.find("deviceClassName"), std::string::npos) << added.message;
  EXPECT_EQ(added.message.find(".count"), std::string::npos) << added.message;
}

TEST_F(ClaimObjectsOverTls, WorkloadAnnotationChoosesTheProfile) {
  const ReviewResponse realtime =
      validate(v1Template(exactly("gpu.nvidia.com", 1), R"({"aiadmit.dev/workload":"realtime"})"));
  EXPECT_TRUE(realtime.allowed) << realtime.message;
  EXPECT_EQ(realtime.auditAnnotations.at("profile"), "realtime");
  const ReviewResponse unknown =
      validate(v1Template(exactly("gpu.nvidia.com", 1), R"({"aiadmit.dev/workload":"trainig"})"));
  EXPECT_FALSE(unknown.allowed);
  EXPECT_NE(unknown.message.find("[AIA001] metadata.annotations[aiadmit.dev/workload]: "
                                 "\"trainig\" is not a class"),
            std::string::npos)
      << unknown.message;
}

// ---------------------------------------------------------------------------
// With a cluster view: two nodes of the pool with 4 NVIDIA GPUs each in
// ResourceSlices, and a DeviceClass of a driver that no node has.

constexpr const char* kCluster = R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: gpu-a, labels: {accelerator: nvidia}}
  spec:
    taints: [{key: accelerator, value: gpu, effect: NoSchedule}]
- apiVersion: v1
  kind: Node
  metadata: {name: gpu-b, labels: {accelerator: nvidia}}
  spec:
    taints: [{key: accelerator, value: gpu, effect: NoSchedule}]
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {name: gpu-a-gpus}
  spec:
    driver: gpu.nvidia.com
    nodeName: gpu-a
    pool: {name: gpu-a, generation: 1, resourceSliceCount: 1}
    devices: [{name: gpu-0}, {name: gpu-1}, {name: gpu-2}, {name: gpu-3}]
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {name: gpu-b-gpus}
  spec:
    driver: gpu.nvidia.com
    nodeName: gpu-b
    pool: {name: gpu-b, generation: 1, resourceSliceCount: 1}
    devices: [{name: gpu-0}, {name: gpu-1}, {name: gpu-2}, {name: gpu-3}]
- apiVersion: resource.k8s.io/v1
  kind: DeviceClass
  metadata: {name: gpu.nvidia.com}
  spec:
    selectors: [{cel: {expression: "device.driver == 'gpu.nvidia.com'"}}]
- apiVersion: resource.k8s.io/v1
  kind: DeviceClass
  metadata: {name: gpu.amd.com}
  spec:
    selectors: [{cel: {expression: "device.driver == 'gpu.amd.com'"}}]
)";

constexpr const char* kProfile = R"(apiVersion: aiadmit.dev/v1
kind: Profile
metadata:
  name: training
spec:
  class: training
  gpu:
    gpusPerNode: 8
    deviceClasses: [gpu.nvidia.com, gpu.amd.com]
  placement:
    nodeSelector:
      accelerator: nvidia
    tolerations:
      - key: accelerator
        operator: Equal
        value: gpu
        effect: NoSchedule
)";

class ClaimObjectsWithClusterView : public ::testing::Test {
 protected:
  void SetUp() override {
    const ProfileLoadResult loaded = loadProfileText(kProfile, "training.yaml", mutationSwitches());
    ASSERT_TRUE(loaded.ok());
    const ClusterSnapshot snapshot = readClusterSnapshot(kCluster, "cluster.yaml");
    ASSERT_TRUE(snapshot.error.empty()) << snapshot.error;
    engine_ = std::make_unique<Engine>(loaded.set);
    engine_->replaceClusterView(snapshot.view);
  }
  ReviewResponse validate(const std::string& object) const {
    const ReviewAnswer answer =
        answerReview(*engine_, Endpoint::Validate, makeReview(object, "CREATE", "uid-view"));
    return parseReviewResponse(answer.body);
  }
  std::unique_ptr<Engine> engine_;
};

TEST_F(ClaimObjectsWithClusterView, CountIsCheckedAgainstTheLargestNodeOfTheSlices) {
  EXPECT_TRUE(validate(v1Template(exactly("gpu.nvidia.com", 4))).allowed);
  const ReviewResponse response = validate(v1Template(exactly("gpu.nvidia.com", 8)));
  EXPECT_FALSE(response.allowed) << "gpusPerNode says 8, the nodes have 4";
  EXPECT_NE(response.message.find("the largest of the 2 nodes of the pool (node gpu-a) has 4"),
            std::string::npos)
      << response.message;
}

TEST_F(ClaimObjectsWithClusterView, RequestsOfOneClaimAddUpOnOneNode) {
  const std::string claim =
      R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"c",)"
      R"("namespace":"team-a"},"spec":{"devices":{"requests":[)"
      R"({"name":"a","exactly":{"deviceClassName":"gpu.nvidia.com","count":3}},)"
      R"({"name":"b","exactly":{"deviceClassName":"gpu.nvidia.com","count":3}}]}}})";
  const CommandResult schema = validateSchemas({claim});
  EXPECT_EQ(schema.exitCode, 0) << schema.out << schema.err;
  const ReviewResponse response = validate(claim);
  EXPECT_FALSE(response.allowed);
  EXPECT_NE(response.message.find("[AIA020] spec.devices.requests[0].exactly.count: the "
                                  "ResourceClaim asks for 6 devices of class \"gpu.nvidia.com\" "
                                  "in all"),
            std::string::npos)
      << response.message;
}

TEST_F(ClaimObjectsWithClusterView, AllocationModeAllNeedsADeviceOnTheNode) {
  EXPECT_TRUE(validate(v1Template(allOf("gpu.nvidia.com"))).allowed);
  const ReviewResponse response = validate(v1Template(allOf("gpu.amd.com")));
  EXPECT_FALSE(response.allowed);
  EXPECT_NE(response.message.find(
                "[AIA020] spec.spec.devices.requests[0].exactly.allocationMode: allocationMode "
                "All needs at least one device of class \"gpu.amd.com\""),
            std::string::npos)
      << response.message;
}

// The same cluster with every device tainted, by its driver and by a
// DeviceTaintRule: AIA020 counts them all the same, as taints pass.
TEST(ClaimObjectsWithTaintedDevices, CountIsCheckedAgainstTheDevicesTaintedOrNot) {
  std::string cluster = kCluster;
  const std::string untainted =
      "devices: [{name: gpu-0}, {name: gpu-1}, {name: gpu-2}, "
      "{name: gpu-3}]";
  const std::string taint = ", taints: [{key: gpu.nvidia.com/unhealthy, effect: NoExecute}]}";
  std::string tainted = "devices: [";
  for (int i = 0; i < 4; ++i) {
    tainted += (i == 0 ? "{name: gpu-" : ", {name: gpu-") + std::to_string(i) + taint;
  }
  tainted += "]";
  for (size_t at = cluster.find(untainted); at != std::string::npos;
       at = cluster.find(untainted, at)) {
    cluster.replace(at, untainted.size(), tainted);
  }
  cluster += R"(- apiVersion: resource.k8s.io/v1
  kind: DeviceTaintRule
  metadata: {name: drain-pool}
  spec:
    deviceSelector: {driver: gpu.nvidia.com}
    taint: {key: example.com/maintenance, effect: NoSchedule}
)";
  const ProfileLoadResult loaded = loadProfileText(kProfile, "training.yaml", mutationSwitches());
  ASSERT_TRUE(loaded.ok());
  const ClusterSnapshot snapshot = readClusterSnapshot(cluster, "cluster.yaml");
  ASSERT_TRUE(snapshot.error.empty()) << snapshot.error;
  ASSERT_EQ(snapshot.view->deviceTaintRules().size(), 1u);
  Engine engine(loaded.set);
  engine.replaceClusterView(snapshot.view);
  const auto validate = [&](const std::string& object) {
    return parseReviewResponse(
        answerReview(engine, Endpoint::Validate, makeReview(object, "CREATE", "uid-taints")).body);
  };
  EXPECT_TRUE(validate(v1Template(exactly("gpu.nvidia.com", 4))).allowed);
  const ReviewResponse response = validate(v1Template(exactly("gpu.nvidia.com", 8)));
  EXPECT_FALSE(response.allowed);
  EXPECT_NE(response.message.find("the largest of the 2 nodes of the pool (node gpu-a) has 4"),
            std::string::npos)
      << response.message;
}

// A claim object is not a bare Pod: the class may come with its driver a
// moment later, so AIA019 warns by default (docs/rules.md).
TEST_F(ClaimObjectsWithClusterView, ClassTheClusterDoesNotHaveIsAia019WithDidYouMean) {
  const ReviewResponse response = validate(v1Template(exactly("gpu.nvidia.comm", 1)));
  EXPECT_TRUE(response.allowed) << response.message;
  ASSERT_EQ(response.warnings.size(), 1u) << ::testing::PrintToString(response.warnings);
  const std::string& warning = response.warnings[0];
  EXPECT_NE(warning.find("aiadmit: [AIA019] DeviceClass \"gpu.nvidia.comm\" does not exist"),
            std::string::npos)
      << warning;
  EXPECT_NE(warning.find("did you mean \"gpu.nvidia.com\"?"), std::string::npos) << warning;
  EXPECT_EQ(warning.find("AIA020"), std::string::npos) << "one fact, one rule";
}

}  // namespace
}  // namespace aiadmit
