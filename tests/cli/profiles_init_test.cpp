// `aiadmit profiles init` and `profiles lint --cluster` on snapshots shaped
// like GKE, EKS and a cluster whose GPU groups are scaled to zero: the pools
// written are the cluster's node groups, lint accepts them on that cluster,
// and the shipped profiles' pool, which no such node carries, is refused.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/test_support.h"
#include "webhook/codec/yaml_json.h"

namespace aiadmit {
namespace {

using nlohmann::json;
using testing::runCommand;

constexpr const char* kGke = R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: gke-a100-0
    labels: {cloud.google.com/gke-nodepool: a100-pool, cloud.google.com/gke-accelerator: nvidia-tesla-a100}
  spec:
    taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
  status: {allocatable: {cpu: "12", nvidia.com/gpu: "8"}}
- apiVersion: v1
  kind: Node
  metadata:
    name: gke-l4-0
    labels: {cloud.google.com/gke-nodepool: l4-pool, cloud.google.com/gke-accelerator: nvidia-l4}
  spec:
    taints:
    - {key: nvidia.com/gpu, value: present, effect: NoSchedule}
    - {key: node.kubernetes.io/not-ready, effect: NoSchedule}
  status: {allocatable: {cpu: "12", nvidia.com/gpu: "1"}}
- apiVersion: v1
  kind: Node
  metadata:
    name: gke-cpu-0
    labels: {cloud.google.com/gke-nodepool: default-pool}
  status: {allocatable: {cpu: "4"}}
)";

constexpr const char* kEks = R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: ip-10-0-1-1
    labels: {eks.amazonaws.com/nodegroup: gpu-p4d, node.kubernetes.io/instance-type: p4d.24xlarge}
  spec:
    taints: [{key: nvidia.com/gpu, value: "true", effect: NoSchedule}]
  status: {allocatable: {cpu: "96", nvidia.com/gpu: "8", nvidia.com/mig-1g.10gb: "0"}}
- apiVersion: v1
  kind: Node
  metadata:
    name: ip-10-0-1-2
    labels: {eks.amazonaws.com/nodegroup: gpu-p4d, node.kubernetes.io/instance-type: p4d.24xlarge}
  spec:
    taints: [{key: nvidia.com/gpu, value: "true", effect: NoSchedule}]
  status: {allocatable: {cpu: "96", nvidia.com/gpu: "4", nvidia.com/mig-1g.10gb: "7"}}
)";

constexpr const char* kNoGpus = R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: cpu-0, labels: {cloud.google.com/gke-nodepool: default-pool}}
  status: {allocatable: {cpu: "4"}}
)";

struct Initialized {
  testing::CommandResult result;
  testing::TempDir dir;
  std::string snapshot() const { return dir.file("snapshot.yaml"); }
  std::string out() const { return dir.file("profiles"); }
  json profile(const std::string& name) const {
    std::vector<ManifestDocument> documents;
    std::string error;
    EXPECT_TRUE(parseManifests(testing::readFile(out() + "/" + name + ".yaml"), documents, &error))
        << error;
    return documents.empty() ? json() : json::parse(toJson(*documents[0].json));
  }
};

std::unique_ptr<Initialized> init(const char* snapshot, std::vector<std::string> extra = {}) {
  auto initialized = std::make_unique<Initialized>();
  testing::writeFile(initialized->snapshot(), snapshot);
  std::vector<std::string> argv = {
      testing::binaryPath(), "profiles", "init", "--cluster", initialized->snapshot(), "-o",
      initialized->out()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  initialized->result = runCommand(argv);
  return initialized;
}

testing::CommandResult lint(const std::string& snapshot, const std::string& dir) {
  return runCommand({testing::binaryPath(), "profiles", "lint", "--cluster", snapshot, dir});
}

TEST(ProfilesInit, GkeNodePoolsBecomeThePoolWithTheirTaintAndTheLargestNode) {
  const auto gke = init(kGke);
  ASSERT_EQ(gke->result.exitCode, 0) << gke->result.err;
  EXPECT_NE(
      gke->result.out.find("cloud.google.com/gke-nodepool=a100-pool: 1 node, 8 nvidia.com/gpu"),
      std::string::npos)
      << gke->result.out;
  for (const char* name : {"training", "batch", "realtime"}) {
    const json profile = gke->profile(name);
    const json& placement = profile["spec"]["placement"];
    EXPECT_EQ(placement["requiredNodeAffinity"],
              json::parse(R"([{"key": "cloud.google.com/gke-nodepool", "operator": "In",
                               "values": ["a100-pool", "l4-pool"]}])"))
        << name;
    EXPECT_EQ(placement["tolerations"],
              json::parse(R"([{"key": "nvidia.com/gpu", "operator": "Equal", "value": "present",
                               "effect": "NoSchedule"}])"))
        << "the not-ready taint passes on its own: " << name;
    EXPECT_FALSE(placement.contains("nodeSelector")) << name;
    EXPECT_EQ(profile["spec"]["gpu"]["gpusPerNode"], 8) << name;
  }
  EXPECT_EQ(gke->profile("training")["spec"]["scheduling"]["priorityClassName"], "ai-training")
      << "the rest of the shipped profile is kept";
  EXPECT_TRUE(std::filesystem::exists(gke->out() + "/Kustomization"));

  const testing::CommandResult fitted = lint(gke->snapshot(), gke->out());
  EXPECT_EQ(fitted.exitCode, 0) << fitted.out;
}

TEST(ProfilesInit, TheShippedPoolMatchesNoNodeOfAGkeClusterAndLintSaysSo) {
  testing::TempDir dir;
  testing::writeFile(dir.file("gke.yaml"), kGke);
  const testing::CommandResult shipped =
      lint(dir.file("gke.yaml"), testing::sourceDir() + "/profiles");
  EXPECT_EQ(shipped.exitCode, 1) << shipped.out;
  EXPECT_NE(shipped.out.find("training.yaml:"), std::string::npos) << shipped.out;
  EXPECT_NE(shipped.out.find("spec.placement: the pool of profile training matches none of the "
                             "cluster's 2 GPU nodes"),
            std::string::npos)
      << shipped.out;
  EXPECT_NE(shipped.out.find("3 pools in "), std::string::npos) << shipped.out;
  // Without a cluster, or on one without GPU nodes, there is nothing to match.
  EXPECT_EQ(
      runCommand({testing::binaryPath(), "profiles", "lint", testing::sourceDir() + "/profiles"})
          .exitCode,
      0);
  testing::writeFile(dir.file("cpu.yaml"), kNoGpus);
  EXPECT_EQ(lint(dir.file("cpu.yaml"), testing::sourceDir() + "/profiles").exitCode, 0);
}

TEST(ProfilesInit, AnEksNodeGroupIsSelectedByItsLabelAndItsMigSlicesAreAllowedWhereSharingIs) {
  const auto eks = init(kEks, {"--preset", "eks"});
  ASSERT_EQ(eks->result.exitCode, 0) << eks->result.err;
  const json realtime = eks->profile("realtime");
  EXPECT_EQ(realtime["spec"]["placement"]["nodeSelector"],
            json::parse(R"({"eks.amazonaws.com/nodegroup": "gpu-p4d"})"));
  EXPECT_EQ(realtime["spec"]["placement"]["tolerations"][0]["value"], "true");
  EXPECT_EQ(realtime["spec"]["gpu"]["gpusPerNode"], 8);
  const json allowed = realtime["spec"]["gpu"]["allowedResources"];
  EXPECT_NE(std::find(allowed.begin(), allowed.end(), "nvidia.com/mig-1g.10gb"), allowed.end())
      << allowed;
  const json training = eks->profile("training");
  EXPECT_FALSE(training["spec"]["gpu"].contains("allowedResources"))
      << "training allows no sharing: " << training.dump();
  EXPECT_EQ(lint(eks->snapshot(), eks->out()).exitCode, 0);
}

TEST(ProfilesInit, AClusterScaledToZeroTakesThePresetsPlacement) {
  const auto gke = init(kNoGpus, {"--preset", "gke"});
  ASSERT_EQ(gke->result.exitCode, 0) << gke->result.err;
  const json placement = gke->profile("batch")["spec"]["placement"];
  EXPECT_EQ(placement["requiredNodeAffinity"],
            json::parse(R"([{"key": "cloud.google.com/gke-accelerator", "operator": "Exists"}])"));
  EXPECT_EQ(placement["tolerations"][0]["value"], "present");
  EXPECT_NE(testing::readFile(gke->out() + "/batch.yaml").find("which has no GPU node"),
            std::string::npos);

  const auto none = init(kNoGpus);
  EXPECT_EQ(none->result.exitCode, 2);
  EXPECT_NE(none->result.err.find("give --preset"), std::string::npos) << none->result.err;
}

// NVIDIA H100s, AMD MI300s, Intel Gaudi and GPUs through DRA of Intel's
// driver: each vendor's node groups, each its own pool.
constexpr const char* kMixedVendors = R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: h100-0, labels: {eks.amazonaws.com/nodegroup: h100}}
  spec: {taints: [{key: nvidia.com/gpu, value: "true", effect: NoSchedule}]}
  status: {allocatable: {cpu: "96", nvidia.com/gpu: "8"}}
- apiVersion: v1
  kind: Node
  metadata: {name: h100-1, labels: {eks.amazonaws.com/nodegroup: h100}}
  spec: {taints: [{key: nvidia.com/gpu, value: "true", effect: NoSchedule}]}
  status: {allocatable: {cpu: "96", nvidia.com/gpu: "8"}}
- apiVersion: v1
  kind: Node
  metadata: {name: mi300-0, labels: {eks.amazonaws.com/nodegroup: mi300}}
  spec: {taints: [{key: amd.com/gpu, effect: NoSchedule}]}
  status: {allocatable: {cpu: "96", amd.com/gpu: "8"}}
- apiVersion: v1
  kind: Node
  metadata: {name: gaudi-0, labels: {eks.amazonaws.com/nodegroup: dl1}}
  status: {allocatable: {cpu: "96", habana.ai/gaudi: "8"}}
- apiVersion: v1
  kind: Node
  metadata: {name: arc-0, labels: {eks.amazonaws.com/nodegroup: arc}}
  status: {allocatable: {cpu: "16"}}
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {name: arc-0-gpus}
  spec:
    driver: gpu.intel.com
    nodeName: arc-0
    pool: {name: arc-0, generation: 1, resourceSliceCount: 1}
    devices: [{name: card0}, {name: card1}]
- apiVersion: resource.k8s.io/v1
  kind: DeviceClass
  metadata: {name: gpu.intel.com}
  spec:
    selectors: [{cel: {expression: "device.driver == 'gpu.intel.com'"}}]
)";

TEST(ProfilesInit, EachVendorsNodeGroupsGetAPoolOfTheirOwn) {
  const auto mixed = init(kMixedVendors);
  ASSERT_EQ(mixed->result.exitCode, 0) << mixed->result.err;
  // The vendor with the most GPUs keeps the shipped names and the default GPU.
  const json training = mixed->profile("training");
  EXPECT_EQ(training["spec"]["gpu"]["resourceName"], "nvidia.com/gpu");
  EXPECT_EQ(training["spec"]["gpu"]["defaultCount"], 1);
  EXPECT_EQ(training["spec"]["placement"]["nodeSelector"],
            json::parse(R"({"eks.amazonaws.com/nodegroup": "h100"})"));
  const std::pair<const char*, const char*> vendors[] = {
      {"amd", "amd.com/gpu"}, {"gaudi", "habana.ai/gaudi"}, {"intel", "gpu.intel.com/i915"}};
  for (const auto& [vendor, resource] : vendors) {
    for (const std::string cls : {"training", "batch", "realtime"}) {
      const json profile = mixed->profile(cls + "-" + vendor);
      ASSERT_TRUE(profile.is_object()) << cls << "-" << vendor;
      EXPECT_EQ(profile["metadata"]["name"], cls + "-" + vendor);
      EXPECT_EQ(profile["spec"]["gpu"]["resourceName"], resource) << vendor;
      EXPECT_EQ(profile["spec"]["gpu"]["defaultCount"], 0) << "never a second default: " << vendor;
      EXPECT_FALSE(profile["spec"]["gpu"].contains("allowedResources"))
          << "no NVIDIA MIG slices on another vendor's pool: " << profile["spec"]["gpu"];
    }
  }
  EXPECT_EQ(
      mixed->profile("realtime-amd")["spec"]["placement"]["tolerations"],
      json::parse(R"([{"key": "amd.com/gpu", "operator": "Exists", "effect": "NoSchedule"}])"));
  // GPUs through Intel's DRA driver: the pool of its DeviceClass.
  EXPECT_EQ(mixed->profile("batch-intel")["spec"]["gpu"]["deviceClasses"],
            json::parse(R"(["gpu.intel.com"])"));
  EXPECT_EQ(mixed->profile("batch-intel")["spec"]["placement"]["nodeSelector"],
            json::parse(R"({"eks.amazonaws.com/nodegroup": "arc"})"));
  EXPECT_FALSE(training["spec"]["gpu"].contains("deviceClasses") &&
               training["spec"]["gpu"]["deviceClasses"].dump().find("intel") != std::string::npos)
      << training["spec"]["gpu"];
  const std::string kustomization = testing::readFile(mixed->out() + "/Kustomization");
  for (const char* file :
       {"- training.yaml", "- training-amd.yaml", "- realtime-gaudi.yaml", "- batch-intel.yaml"}) {
    EXPECT_NE(kustomization.find(file), std::string::npos) << kustomization;
  }
  // The set loads (no two profiles tie) and every pool matches its nodes.
  const testing::CommandResult fitted = lint(mixed->snapshot(), mixed->out());
  EXPECT_EQ(fitted.exitCode, 0) << fitted.out << fitted.err;
  EXPECT_NE(fitted.out.find("12 profiles in"), std::string::npos) << fitted.out;
}

TEST(ProfilesInit, UsageErrorsExitTwo) {
  EXPECT_EQ(runCommand({testing::binaryPath(), "profiles", "init", "-o", "/tmp/x"}).exitCode, 2);
  EXPECT_EQ(init(kGke, {"--preset", "openshift"})->result.exitCode, 2);
  EXPECT_EQ(runCommand({testing::binaryPath(), "profiles", "init", "--cluster", "/nonexistent",
                        "-o", "/tmp/x"})
                .exitCode,
            2);
}

TEST(ProfilesInit, HelpIsInitsOwnAndLintsIsTheProfilesCommands) {
  const testing::CommandResult initHelp =
      runCommand({testing::binaryPath(), "profiles", "init", "--help"});
  EXPECT_EQ(initHelp.exitCode, 0);
  EXPECT_EQ(initHelp.out.rfind("Usage: aiadmit profiles init ", 0), 0u) << initHelp.out;
  const testing::CommandResult lintHelp =
      runCommand({testing::binaryPath(), "profiles", "lint", "--help"});
  EXPECT_EQ(lintHelp.exitCode, 0);
  EXPECT_EQ(lintHelp.out.rfind("Usage: aiadmit profiles lint ", 0), 0u) << lintHelp.out;
}

}  // namespace
}  // namespace aiadmit
