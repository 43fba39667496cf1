// Ordinary GPU work is never refused, on the real control plane: a model
// server aiadmit only takes for one (a Deployment with no port and no probe,
// as the Kubernetes project's vLLM example is written) runs with a warning,
// and is refused only once its developer declares it a server; `kubectl run`
// with a GPU is a command, not a server; a Deployment and the DRA claim
// template it names, applied in either order, make Pods placed alike; and in
// a cluster of two vendors each vendor's work lands on its own nodes.
#include <gtest/gtest.h>

#include "tests/e2e/support/e2e_cluster.h"
#include "tests/e2e/support/workloads.h"
#include "webhook/cluster/cluster_snapshot.h"

namespace aiadmit::e2e {
namespace {

json list(json items) {
  return {{"apiVersion", "v1"}, {"kind", "List"}, {"items", std::move(items)}};
}

// A model server as the vLLM examples write it: a GPU, the port in its
// arguments only, no probe.
json vllmServer(const std::string& name, const json& annotations = json::object()) {
  const json container = {
      {"name", "vllm"},
      {"image", "vllm/vllm-openai:latest"},
      {"args", {"--model", "google/gemma-3-1b-it", "--port", "8000"}},
      {"resources", {{"limits", {{"nvidia.com/gpu", "1"}, {"memory", "16Gi"}}}}}};
  return {{"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata", {{"name", name}, {"annotations", annotations}}},
          {"spec",
           {{"replicas", 1},
            {"selector", {{"matchLabels", {{"app", name}}}}},
            {"template",
             {{"metadata", {{"labels", {{"app", name}}}}},
              {"spec", {{"containers", json::array({container})}}}}}}}};
}

TEST(E2eGuesses, AServerOnlyInferredRunsAndIsRefusedOnceDeclared) {
  Namespace ns("guessed-server");
  const CommandResult applied =
      kubectl({"apply", "-n", ns.name(), "-f", "-"}, toText(vllmServer("vllm")));
  ASSERT_EQ(applied.exitCode, 0) << applied.err;
  EXPECT_NE(applied.err.find("Warning: aiadmit: inferred class realtime: AIA009 only warns; "
                             "declare it in aiadmit.dev/workload"),
            std::string::npos)
      << applied.err;
  // The controller makes its Pod, placed on the pool.
  ASSERT_TRUE(podsBound(ns.name(), 1)) << kubectl({"get", "events", "-n", ns.name()}).out;
  EXPECT_TRUE(isGpuNode(podsOf(ns.name())[0]["spec"]["nodeName"]));
  const auto audit = auditAnnotations(auditEvents("deployments", ns.name(), "vllm", "create"));
  EXPECT_EQ(audit.at("applied.validate.aiadmit.dev/class-basis"), "inferred");

  const CommandResult declared =
      kubectl({"apply", "-n", ns.name(), "-f", "-"},
              toText(vllmServer("vllm-declared", {{"aiadmit.dev/workload", "realtime"}})));
  EXPECT_NE(declared.exitCode, 0) << declared.out;
  EXPECT_NE(declared.err.find("denied the request: [AIA009]"), std::string::npos) << declared.err;
}

TEST(E2eGuesses, KubectlRunWithAGpuIsABatchCommand) {
  Namespace ns("kubectl-run");
  const std::string overrides =
      R"({"spec":{"containers":[{"name":"smi","image":"nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04",)"
      R"("args":["nvidia-smi"],"resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})";
  const CommandResult ran =
      kubectl({"run", "smi", "-n", ns.name(), "--image=nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04",
               "--overrides=" + overrides});
  ASSERT_EQ(ran.exitCode, 0) << ran.err;
  const json pod = kubectlJson({"get", "pod", "smi", "-n", ns.name()});
  ASSERT_TRUE(pod.is_object());
  EXPECT_EQ(pod["spec"]["restartPolicy"], "Always");
  EXPECT_EQ(pod["metadata"]["annotations"].value("aiadmit.dev/class", ""), "batch");
  // The API server's Priority admission has set a bare Pod's priority before
  // any webhook: aiadmit names no class then, and never the servers' one.
  EXPECT_NE(pod["spec"].value("priorityClassName", ""), "ai-realtime");
  EXPECT_FALSE(pod["spec"]["containers"][0].contains("readinessProbe"));
  EXPECT_NE(ran.err.find("[AIA014]"), std::string::npos) << "restarts Always, said: " << ran.err;
}

json gpuClaimTemplate(const std::string& name) {
  return claimTemplate(name, 1);
}

// A Deployment of one server whose GPU is a claim of `templateName`.
json claimingServer(const std::string& name, const std::string& templateName) {
  const json container = {
      {"name", "server"},
      {"image", "registry.example/server:1"},
      {"ports", {{{"containerPort", 8000}}}},
      {"resources", {{"claims", {{{"name", "gpu"}}}}, {"limits", {{"memory", "16Gi"}}}}}};
  return {
      {"apiVersion", "apps/v1"},
      {"kind", "Deployment"},
      {"metadata", {{"name", name}}},
      {"spec",
       {{"replicas", 1},
        {"selector", {{"matchLabels", {{"app", name}}}}},
        {"template",
         {{"metadata", {{"labels", {{"app", name}}}}},
          {"spec",
           {{"resourceClaims", {{{"name", "gpu"}, {"resourceClaimTemplateName", templateName}}}},
            {"containers", json::array({container})}}}}}}}};
}

void expectPlacedOnTheDraNode(const Namespace& ns) {
  ASSERT_TRUE(podsBound(ns.name(), 1)) << kubectl({"get", "events", "-n", ns.name()}).out;
  const json pod = podsOf(ns.name())[0];
  EXPECT_EQ(pod["spec"]["nodeName"], kDraGpuNode);
  EXPECT_EQ(pod["spec"]["nodeSelector"].value("accelerator", ""), "nvidia") << pod["spec"];
  bool tolerated = false;
  for (const json& toleration : pod["spec"]["tolerations"]) {
    tolerated = tolerated || toleration.value("key", "") == "accelerator";
  }
  EXPECT_TRUE(tolerated) << pod["spec"]["tolerations"];
}

TEST(E2eDraOrder, ADeploymentAndItsClaimTemplateArePlacedAlikeInEitherOrder) {
  Namespace templateFirst("dra-template-first");
  const CommandResult first =
      kubectl({"apply", "-n", templateFirst.name(), "-f", "-"},
              toText(list({gpuClaimTemplate("one-gpu"), claimingServer("server", "one-gpu")})));
  ASSERT_EQ(first.exitCode, 0) << first.err;
  expectPlacedOnTheDraNode(templateFirst);

  // Helm's order: kinds it does not know, the template among them, last.
  Namespace workloadFirst("dra-workload-first");
  const CommandResult second =
      kubectl({"apply", "-n", workloadFirst.name(), "-f", "-"},
              toText(list({claimingServer("server", "one-gpu"), gpuClaimTemplate("one-gpu")})));
  ASSERT_EQ(second.exitCode, 0) << second.err;
  EXPECT_NE(second.err.find("its Pods get their pool once the claim templates exist"),
            std::string::npos)
      << second.err;
  const json deployment = kubectlJson({"get", "deployment", "server", "-n", workloadFirst.name()});
  EXPECT_EQ(
      deployment["spec"]["template"]["metadata"]["annotations"].value("aiadmit.dev/class", ""),
      "realtime");
  expectPlacedOnTheDraNode(workloadFirst);
}

// A node group of AMD MI300s beside the suite's NVIDIA nodes.
NodeShape amdNode(const std::string& name) {
  NodeShape node;
  node.name = name;
  node.labels = {{"eks.amazonaws.com/nodegroup", "mi300"}};
  node.taints = json::array({{{"key", "amd.com/gpu"}, {"effect", "NoSchedule"}}});
  node.allocatable = {{"cpu", "96"}, {"memory", "1Ti"}, {"pods", "110"}, {"amd.com/gpu", "8"}};
  return node;
}

json server(const std::string& name, const std::string& resource) {
  json deployment = vllmServer(name);
  json& container = deployment["spec"]["template"]["spec"]["containers"][0];
  container["ports"] = json::array({{{"name", "http"}, {"containerPort", 8000}}});
  container["resources"]["limits"] = {{resource, "1"}, {"memory", "16Gi"}};
  return deployment;
}

TEST(E2eMixedVendorsSerial, EachVendorsWorkLandsOnItsOwnNodes) {
  AiadmitRestoredAtExit restored;
  ASSERT_TRUE(applyNode(amdNode("amd-mi300-0")));
  const struct NodeDeletedAtExit {
    ~NodeDeletedAtExit() { kubectl({"delete", "node", "amd-mi300-0", "--wait=false"}); }
  } cleanup;

  // The shipped profiles place NVIDIA GPUs alone: the AMD server is admitted
  // as it is, told what to add, and never sent to the NVIDIA pool.
  Namespace shipped("amd-shipped");
  const CommandResult untouched =
      kubectl({"apply", "-n", shipped.name(), "-f", "-"}, toText(server("rocm", "amd.com/gpu")));
  ASSERT_EQ(untouched.exitCode, 0) << untouched.err;
  EXPECT_NE(untouched.err.find("no realtime profile places amd.com/gpu"), std::string::npos)
      << untouched.err;
  const json stored = kubectlJson({"get", "deployment", "rocm", "-n", shipped.name()});
  EXPECT_FALSE(stored["spec"]["template"]["spec"].contains("nodeSelector")) << stored["spec"];

  // Profiles written from the cluster itself: a pool per vendor.
  testing::TempDir dir;
  ASSERT_TRUE(writeClusterSnapshot(dir.file("cluster.yaml")));
  const CommandResult init =
      testing::runCommand({testing::binaryPath(), "profiles", "init", "--cluster",
                           dir.file("cluster.yaml"), "-o", dir.file("profiles")});
  ASSERT_EQ(init.exitCode, 0) << init.out << init.err;
  ASSERT_TRUE(std::filesystem::exists(dir.file("profiles/realtime-amd.yaml"))) << init.out;
  ASSERT_EQ(e2eCluster("aiadmit", {"stop"}).exitCode, 0);
  const CommandResult started =
      e2eCluster("aiadmit", {"start", "--profiles=" + dir.file("profiles")});
  ASSERT_EQ(started.exitCode, 0) << started.out << started.err;

  Namespace mixed("amd-and-nvidia");
  for (const auto& [name, resource] :
       {std::pair{"rocm", "amd.com/gpu"}, std::pair{"cuda", "nvidia.com/gpu"}}) {
    const CommandResult applied =
        kubectl({"apply", "-n", mixed.name(), "-f", "-"}, toText(server(name, resource)));
    ASSERT_EQ(applied.exitCode, 0) << applied.err;
  }
  ASSERT_TRUE(podsBound(mixed.name(), 2)) << kubectl({"get", "events", "-n", mixed.name()}).out;
  for (const json& pod : podsOf(mixed.name())) {
    const std::string app = pod["metadata"]["labels"]["app"];
    const std::string node = pod["spec"]["nodeName"];
    if (app == "rocm") {
      EXPECT_EQ(node, "amd-mi300-0");
      EXPECT_EQ(pod["metadata"]["annotations"].value("aiadmit.dev/profile", ""), "realtime-amd");
    } else {
      EXPECT_TRUE(isGpuNode(node)) << node;
      EXPECT_EQ(pod["metadata"]["annotations"].value("aiadmit.dev/profile", ""), "realtime");
    }
  }
}

}  // namespace
}  // namespace aiadmit::e2e
