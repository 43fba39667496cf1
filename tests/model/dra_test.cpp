// DRA claims and Pod claims read from published objects (tests/golden/cluster,
// the shared corpus), in every request shape the API serves, and the v1
// objects checked against kubernetes-models' resource.k8s.io/v1 schemas.
#include "webhook/model/dra.h"

#include <gtest/gtest.h>

#include "tests/support/test_support.h"
#include "webhook/codec/yaml_json.h"

namespace aiadmit {
namespace {

using namespace testing;

std::vector<ManifestDocument> golden(const std::string& name) {
  std::vector<ManifestDocument> documents;
  std::string error;
  EXPECT_TRUE(
      parseManifests(readFile(sourceDir() + "/tests/golden/cluster/" + name), documents, &error))
      << name << ": " << error;
  return documents;
}

const JsonValue* objectOf(const std::vector<ManifestDocument>& documents, std::string_view kind,
                          std::string_view name) {
  for (const ManifestDocument& document : documents) {
    if (stringMember(document.json.get(), "kind") == kind &&
        stringMember(member(document.json.get(), "metadata"), "name") == name) {
      return document.json.get();
    }
  }
  ADD_FAILURE() << "no " << kind << " " << name;
  return nullptr;
}

ClaimObject claimOf(const JsonValue* object) {
  ClaimObject claim;
  std::string error;
  EXPECT_NE(object, nullptr);
  if (object != nullptr) {
    EXPECT_TRUE(readClaimObject(*object, claim, &error)) << error;
  }
  return claim;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

TEST(DraClaims, V1beta1RequestCarriesClassAndCountItself) {
  const auto documents = golden("nvidia-gpu-test-count.yaml");
  const ClaimObject claim = claimOf(objectOf(documents, "ResourceClaimTemplate", "double-gpu"));
  EXPECT_TRUE(claim.isTemplate);
  EXPECT_EQ(claim.namespaceName, "gpu-test1");
  EXPECT_EQ(claim.specPath, "spec.spec");
  EXPECT_TRUE(claim.spec.problems.empty()) << joined(claim.spec.problems);
  ASSERT_EQ(claim.spec.requests.size(), 1u);
  const DeviceRequest& request = claim.spec.requests[0];
  EXPECT_EQ(request.name, "gpu");
  EXPECT_FALSE(request.firstAvailable);
  ASSERT_EQ(request.alternatives.size(), 1u);
  EXPECT_EQ(request.alternatives[0].deviceClassName, "gpu.nvidia.com");
  EXPECT_EQ(request.alternatives[0].count, 2);
  EXPECT_EQ(request.alternatives[0].mode, AllocationMode::ExactCount);
  EXPECT_EQ(request.alternatives[0].fieldPath, "devices.requests[0]");
  EXPECT_FALSE(request.alternatives[0].consumesShares());

  const PodClaims pod = readPodClaims(member(objectOf(documents, "Pod", "gpu-pod"), "spec"));
  EXPECT_TRUE(pod.problems.empty()) << joined(pod.problems);
  ASSERT_EQ(pod.sources.size(), 1u);
  EXPECT_EQ(pod.sources[0].name, "twogpus");
  EXPECT_EQ(pod.sources[0].resourceClaimTemplateName, "double-gpu");
  EXPECT_EQ(pod.sources[0].fieldPath, "resourceClaims[0]");
  ASSERT_EQ(pod.uses.size(), 1u);
  EXPECT_EQ(pod.uses[0].container, "ctr0");
  EXPECT_EQ(pod.uses[0].claim, "twogpus");
  EXPECT_EQ(pod.uses[0].fieldPath, "containers[0].resources.claims[0]");
  EXPECT_NE(pod.source("twogpus"), nullptr);
  EXPECT_TRUE(pod.deviceClassRequests.empty());
}

TEST(DraClaims, V1CapacityRequestIsAShareOfOneWholeDevice) {
  const auto documents = golden("nvidia-consumable-memory-sharing.yaml");
  const ClaimObject claim = claimOf(objectOf(documents, "ResourceClaimTemplate", "gpu-4gi"));
  EXPECT_TRUE(claim.spec.problems.empty()) << joined(claim.spec.problems);
  ASSERT_EQ(claim.spec.requests.size(), 1u);
  ASSERT_EQ(claim.spec.requests[0].alternatives.size(), 1u);
  const DeviceAlternative& exactly = claim.spec.requests[0].alternatives[0];
  EXPECT_EQ(exactly.fieldPath, "devices.requests[0].exactly");
  EXPECT_EQ(exactly.deviceClassName, "gpu.nvidia.com");
  EXPECT_EQ(exactly.count, 1) << "count defaults to one device";
  EXPECT_TRUE(exactly.consumesShares());
  ASSERT_EQ(exactly.capacity.size(), 1u);
  EXPECT_EQ(exactly.capacity[0].name, "memory");
  EXPECT_EQ(exactly.capacity[0].quantity, "4Gi");

  const JsonValue* deployment = objectOf(documents, "Deployment", "memory-sharing");
  const PodClaims pod =
      readPodClaims(member(member(member(deployment, "spec"), "template"), "spec"));
  EXPECT_TRUE(pod.problems.empty()) << joined(pod.problems);
  ASSERT_EQ(pod.sources.size(), 1u);
  EXPECT_EQ(pod.sources[0].resourceClaimTemplateName, "gpu-4gi");
}

TEST(DraClaims, FirstAvailableKeepsEverySubRequestInOrder) {
  const auto documents = golden("dra-example-prioritized-alternatives.yaml");
  const ClaimObject claim =
      claimOf(objectOf(documents, "ResourceClaimTemplate", "prioritized-gpu"));
  EXPECT_TRUE(claim.spec.problems.empty()) << joined(claim.spec.problems);
  ASSERT_EQ(claim.spec.requests.size(), 1u);
  const DeviceRequest& request = claim.spec.requests[0];
  EXPECT_TRUE(request.firstAvailable);
  ASSERT_EQ(request.alternatives.size(), 3u);
  EXPECT_EQ(request.alternatives[0].name, "bleeding-edge-gpu");
  EXPECT_EQ(request.alternatives[1].name, "huge-gpu");
  EXPECT_EQ(request.alternatives[2].name, "older-gpu");
  EXPECT_EQ(request.alternatives[2].fieldPath, "devices.requests[0].firstAvailable[2]");
  for (const DeviceAlternative& alternative : request.alternatives) {
    EXPECT_EQ(alternative.deviceClassName, "gpu.dra-example-driver.sigs.k8s.io");
    EXPECT_EQ(alternative.count, 1);
  }
}

TEST(DraClaims, ImplicitDeviceClassNamesNeedNoLookup) {
  const auto documents = golden("dra-example-extended-resource-request.yaml");
  const PodClaims pod0 = readPodClaims(member(objectOf(documents, "Pod", "pod0"), "spec"));
  ASSERT_EQ(pod0.deviceClassRequests.size(), 1u);
  EXPECT_EQ(pod0.deviceClassRequests[0].deviceClassName, "gpu.example.com");
  EXPECT_EQ(pod0.deviceClassRequests[0].count, 1);
  EXPECT_EQ(pod0.deviceClassRequests[0].container, "ctr0");
  EXPECT_EQ(pod0.deviceClassRequests[0].fieldPath, "containers[0].resources.limits");
  EXPECT_FALSE(pod0.empty());

  // An explicit extendedResourceName (example.com/gpu) is a class's to claim:
  // only the cluster view can tell.
  const PodClaims pod1 = readPodClaims(member(objectOf(documents, "Pod", "pod1"), "spec"));
  EXPECT_TRUE(pod1.deviceClassRequests.empty());
  EXPECT_TRUE(pod1.empty());

  EXPECT_EQ(deviceClassOfResourceName("deviceclass.resource.kubernetes.io/mig.nvidia.com"),
            std::optional<std::string_view>("mig.nvidia.com"));
  EXPECT_FALSE(deviceClassOfResourceName("deviceclass.resource.kubernetes.io/"));
  EXPECT_FALSE(deviceClassOfResourceName("nvidia.com/gpu"));
}

TEST(DraClaims, TheCorpusKueueJobUsesATemplate) {
  bool found = false;
  for (const CorpusObject& object : corpusObjects()) {
    if (object.file !=
        "kubernetes-sigs__kueue__site__static__examples__dra__gpu-job-admitted.yaml") {
      continue;
    }
    found = true;
    const auto document = parseJson(object.json);
    const JsonValue* podSpec = member(member(member(document.get(), "spec"), "template"), "spec");
    const PodClaims pod = readPodClaims(podSpec);
    EXPECT_TRUE(pod.problems.empty()) << joined(pod.problems);
    ASSERT_EQ(pod.sources.size(), 1u);
    EXPECT_EQ(pod.sources[0].resourceClaimTemplateName, "gpu-claim");
    ASSERT_EQ(pod.uses.size(), 1u);
    EXPECT_EQ(pod.uses[0].container, "main");
  }
  EXPECT_TRUE(found);
}

// The same request written in the other version's shape is what the API
// server refuses or reads differently; it is reported, not guessed.
TEST(DraClaims, AShapeOfAnotherVersionIsAProblem) {
  const auto v1beta1 = parseJson(R"({"devices":{"requests":[
      {"name":"gpu","deviceClassName":"gpu.nvidia.com","count":2}]}})");
  const ClaimSpec asV1 = readClaimSpec(v1beta1.get(), ClaimShape::Nested);
  EXPECT_NE(joined(asV1.problems)
                .find("devices.requests[0].deviceClassName: in this version it "
                      "belongs under exactly"),
            std::string::npos)
      << joined(asV1.problems);

  const auto v1 = parseJson(R"({"devices":{"requests":[
      {"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com","count":2}}]}})");
  const ClaimSpec asV1beta1 = readClaimSpec(v1.get(), ClaimShape::Inline);
  EXPECT_NE(joined(asV1beta1.problems).find("devices.requests[0].exactly"), std::string::npos);
  const ClaimSpec right = readClaimSpec(v1.get(), ClaimShape::Nested);
  EXPECT_TRUE(right.problems.empty()) << joined(right.problems);
  EXPECT_EQ(right.requests[0].alternatives[0].count, 2);

  EXPECT_EQ(claimShapeOf("resource.k8s.io/v1"), ClaimShape::Nested);
  EXPECT_EQ(claimShapeOf("resource.k8s.io/v1beta2"), ClaimShape::Nested);
  EXPECT_EQ(claimShapeOf("resource.k8s.io/v1beta1"), ClaimShape::Inline);
  EXPECT_FALSE(claimShapeOf("resource.k8s.io/v2"));
}

TEST(DraClaims, AllocationModesAndCounts) {
  const auto spec = parseJson(R"({"devices":{"requests":[
      {"name":"all","exactly":{"deviceClassName":"gpu.nvidia.com","allocationMode":"All"}},
      {"name":"both","exactly":{"deviceClassName":"gpu.nvidia.com","allocationMode":"All","count":2}},
      {"name":"zero","exactly":{"deviceClassName":"gpu.nvidia.com","count":0}},
      {"name":"half","exactly":{"deviceClassName":"gpu.nvidia.com","count":"0.5"}},
      {"name":"odd","exactly":{"deviceClassName":"gpu.nvidia.com","allocationMode":"Some"}},
      {"name":"none","exactly":{}},
      {"name":"neither"}]}})");
  const ClaimSpec claim = readClaimSpec(spec.get(), ClaimShape::Nested);
  ASSERT_EQ(claim.requests.size(), 7u);
  EXPECT_EQ(claim.requests[0].alternatives[0].mode, AllocationMode::All);
  const std::string problems = joined(claim.problems);
  EXPECT_NE(problems.find("devices.requests[1].exactly.count: allocationMode All takes no count"),
            std::string::npos)
      << problems;
  EXPECT_NE(problems.find("devices.requests[2].exactly.count: must be a positive integer"),
            std::string::npos);
  EXPECT_NE(problems.find("devices.requests[3].exactly.count: must be a positive integer, not "
                          "\"0.5\""),
            std::string::npos);
  EXPECT_NE(problems.find("devices.requests[4].exactly.allocationMode: unknown mode \"Some\""),
            std::string::npos);
  EXPECT_NE(problems.find("devices.requests[5].exactly.deviceClassName: required"),
            std::string::npos);
  EXPECT_NE(problems.find("devices.requests[6]: exactly one of exactly or firstAvailable"),
            std::string::npos);
  EXPECT_EQ(claim.requests[2].alternatives[0].count, 1) << "a refused count is not used";
}

TEST(DraClaims, PodClaimMistakesAreReported) {
  const auto spec = parseJson(R"({
      "resourceClaims":[
        {"name":"both","resourceClaimName":"a","resourceClaimTemplateName":"b"},
        {"name":"old","source":{"resourceClaimTemplateName":"b"}}],
      "initContainers":[{"name":"init","resources":{"claims":[{"name":"both"}]}}],
      "containers":[{"name":"main","resources":{
        "claims":[{"name":"missing"},{"name":"both","request":"gpu"}],
        "requests":{"deviceclass.resource.kubernetes.io/gpu.nvidia.com":"2"},
        "limits":{"deviceclass.resource.kubernetes.io/gpu.nvidia.com":"2"}}}]})");
  const PodClaims pod = readPodClaims(spec.get());
  const std::string problems = joined(pod.problems);
  EXPECT_NE(problems.find("resourceClaims[0]: exactly one of resourceClaimName or "
                          "resourceClaimTemplateName"),
            std::string::npos)
      << problems;
  EXPECT_NE(problems.find("resourceClaims[1].source: removed in Kubernetes 1.31"),
            std::string::npos);
  EXPECT_NE(problems.find("containers[0].resources.claims[0].name: \"missing\" is not in "
                          "spec.resourceClaims"),
            std::string::npos);
  ASSERT_EQ(pod.uses.size(), 3u);
  EXPECT_TRUE(pod.uses[0].initContainer);
  EXPECT_EQ(pod.uses[2].request, "gpu");
  ASSERT_EQ(pod.deviceClassRequests.size(), 1u) << "limits and requests name the class once";
  EXPECT_EQ(pod.deviceClassRequests[0].count, 2);
  EXPECT_EQ(pod.deviceClassRequests[0].fieldPath, "containers[0].resources.limits");
}

// The recorded v1 objects are what the API accepts, by kubernetes-models'
// resource.k8s.io/v1 schemas; a v1 request without its class is not.
TEST(DraClaims, RecordedV1ObjectsMatchTheSchema) {
  std::vector<std::string> objects;
  for (const std::string file :
       {"nvidia-consumable-memory-sharing.yaml", "dra-example-prioritized-alternatives.yaml",
        "deviceclass-nvidia-gpu.yaml", "resourceslices-dra-example-driver.yaml"}) {
    for (const ManifestDocument& document : golden(file)) {
      const JsonValue* items = member(document.json.get(), "items");
      if (isArray(items)) {
        for (const JsonValue& item : items->GetArray()) objects.push_back(toJson(item));
      } else if (stringMember(document.json.get(), "apiVersion") == "resource.k8s.io/v1") {
        objects.push_back(toJson(*document.json));
      }
    }
  }
  ASSERT_EQ(objects.size(), 5u);
  const CommandResult valid = validateSchemas(objects);
  EXPECT_EQ(valid.exitCode, 0) << valid.out << valid.err;
  EXPECT_NE(
      valid.out.find("ok ResourceSlice/dra-example-driver-cluster-worker-gpu.example.com-rf2f7"),
      std::string::npos)
      << valid.out;

  const CommandResult invalid = validateSchemas({R"({"apiVersion":"resource.k8s.io/v1",
      "kind":"ResourceClaimTemplate","metadata":{"name":"t","namespace":"n"},
      "spec":{"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"count":2}}]}}}})"});
  EXPECT_NE(invalid.exitCode, 0) << invalid.out;
}

// ---------------------------------------------------------------------------
// Device taints and the tolerations of requests (KEP-5055).

constexpr const char* kTolerantClaims = R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: tolerant, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          tolerations:
          - {key: gpu.nvidia.com/unhealthy, operator: Exists, effect: NoSchedule}
      - name: any
        firstAvailable:
        - name: big
          deviceClassName: gpu.nvidia.com
        - name: small
          deviceClassName: gpu.nvidia.com
          tolerations: [{key: example.com/maintenance, value: firmware}]
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: old, namespace: ml}
spec:
  devices:
    requests:
    - name: gpu
      deviceClassName: gpu.nvidia.com
      tolerations: [{operator: Exists}]
)";

std::vector<ManifestDocument> parsed(const char* text) {
  std::vector<ManifestDocument> documents;
  std::string error;
  EXPECT_TRUE(parseManifests(text, documents, &error)) << error;
  return documents;
}

TEST(DraDeviceTaints, RequestsReadTheirTolerationsInEveryShape) {
  const auto documents = parsed(kTolerantClaims);
  const ClaimObject v1 = claimOf(documents[0].json.get());
  EXPECT_TRUE(v1.spec.problems.empty()) << joined(v1.spec.problems);
  ASSERT_EQ(v1.spec.requests.size(), 2u);
  const std::vector<Toleration>& exactly = v1.spec.requests[0].alternatives[0].tolerations;
  ASSERT_EQ(exactly.size(), 1u);
  EXPECT_EQ(exactly[0].key, "gpu.nvidia.com/unhealthy");
  EXPECT_EQ(exactly[0].op, "Exists");
  EXPECT_EQ(exactly[0].effect, "NoSchedule");
  EXPECT_TRUE(v1.spec.requests[1].alternatives[0].tolerations.empty());
  const std::vector<Toleration>& small = v1.spec.requests[1].alternatives[1].tolerations;
  ASSERT_EQ(small.size(), 1u);
  EXPECT_EQ(small[0].op, "Equal") << "the API's default";
  EXPECT_EQ(small[0].value, "firmware");
  const ClaimObject v1beta1 = claimOf(documents[1].json.get());
  ASSERT_EQ(v1beta1.spec.requests.size(), 1u);
  ASSERT_EQ(v1beta1.spec.requests[0].alternatives[0].tolerations.size(), 1u);
  EXPECT_EQ(v1beta1.spec.requests[0].alternatives[0].tolerations[0].key, "");
}

TEST(DraDeviceTaints, TolerationsMatchAsTheAllocatorMatchesThem) {
  const DeviceTaint taint{"gpu.nvidia.com/unhealthy", "xid-79", "NoSchedule", ""};
  const auto tolerates = [&](Toleration toleration) {
    return toleratesDeviceTaint({toleration}, taint);
  };
  EXPECT_TRUE(tolerates({"", "Exists", "", "", {}})) << "no key, Exists: every taint";
  EXPECT_TRUE(tolerates({"gpu.nvidia.com/unhealthy", "Exists", "", "", {}}));
  EXPECT_TRUE(tolerates({"gpu.nvidia.com/unhealthy", "Equal", "xid-79", "NoSchedule", {}}));
  EXPECT_FALSE(tolerates({"gpu.nvidia.com/unhealthy", "Equal", "xid-48", "", {}}));
  EXPECT_FALSE(tolerates({"gpu.nvidia.com/unhealthy", "Exists", "", "NoExecute", {}}));
  EXPECT_FALSE(tolerates({"example.com/maintenance", "Exists", "", "", {}}));
  EXPECT_FALSE(tolerates({"gpu.nvidia.com/unhealthy", "Gt", "xid-79", "", {}}))
      << "an operator the API does not know tolerates nothing";
  EXPECT_FALSE(toleratesDeviceTaint({}, taint));
}

TEST(DraDeviceTaints, OnlyNoScheduleAndNoExecuteKeepRequestsOff) {
  EXPECT_TRUE(keepsRequestsOff({"k", "", "NoSchedule", ""}));
  EXPECT_TRUE(keepsRequestsOff({"k", "", "NoExecute", ""}));
  EXPECT_FALSE(keepsRequestsOff({"k", "", "None", ""}));
  EXPECT_FALSE(keepsRequestsOff({"k", "", "PreferNoSchedule", ""}))
      << "an effect the API does not know is read as None";
}

// kubernetes-models has resource.k8s.io/v1's tolerations and device taints
// (it has no DeviceTaintRule of v1 yet, which 1.37 added).
TEST(DraDeviceTaints, TolerationsAndDeviceTaintsMatchTheSchema) {
  const auto documents = parsed(kTolerantClaims);
  const std::string slice =
      R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":"s"},)"
      R"("spec":{"driver":"gpu.nvidia.com","nodeName":"gpu-a","pool":{"name":"gpu-a",)"
      R"("generation":1,"resourceSliceCount":1},"devices":[{"name":"gpu-0","taints":[{"key":)"
      R"("gpu.nvidia.com/unhealthy","value":"xid-79","effect":"NoExecute",)"
      R"("timeAdded":"2026-12-01T09:00:00Z"}]}]}})";
  const CommandResult valid = validateSchemas({toJson(*documents[0].json), slice});
  EXPECT_EQ(valid.exitCode, 0) << valid.out << valid.err;
  EXPECT_NE(valid.out.find("ok ResourceSlice/s"), std::string::npos) << valid.out;
}

}  // namespace
}  // namespace aiadmit
