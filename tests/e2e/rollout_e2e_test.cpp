// The rollout and the failure modes, with aiadmit restarted or stopped under
// the real API server. Serial: every other test needs aiadmit as `up`
// started it.
#include <gtest/gtest.h>

#include "tests/e2e/support/e2e_cluster.h"

namespace aiadmit::e2e {
namespace {

// A misspelt GPU resource (AIA003): denied by default.
std::string typoPod(const std::string& name) {
  return toText(
      {{"apiVersion", "v1"},
       {"kind", "Pod"},
       {"metadata", {{"name", name}, {"annotations", {{"aiadmit.dev/workload", "batch"}}}}},
       {"spec",
        {{"restartPolicy", "Never"},
         {"containers",
          {{{"name", "main"},
            {"image", "registry.example/train:1"},
            {"resources", {{"limits", {{"nvidia.com/gpus", "1"}}}}}}}}}}});
}

constexpr const char* kDeployment = R"({
  "apiVersion": "apps/v1", "kind": "Deployment",
  "metadata": {"name": "server"},
  "spec": {"replicas": 1,
           "selector": {"matchLabels": {"app": "server"}},
           "template": {"metadata": {"labels": {"app": "server"}},
                        "spec": {"containers": [{"name": "server", "image": "registry.example/server:1",
                                                 "ports": [{"containerPort": 8080}],
                                                 "resources": {"limits": {"nvidia.com/gpu": "1",
                                                                          "memory": "8Gi"}}}]}}}})";

constexpr const char* kGpuPod = R"({
  "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "%s"},
  "spec": {"restartPolicy": "Never",
           "containers": [{"name": "main", "image": "cuda",
                           "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}})";

std::string gpuPod(const std::string& name) {
  std::string text = kGpuPod;
  text.replace(text.find("%s"), 2, name);
  return text;
}

size_t podCount(const Namespace& ns) {
  const json pods = kubectlJson({"get", "pods", "-n", ns.name()});
  return pods.is_object() ? pods["items"].size() : 0;
}

TEST(E2eRolloutSerial, AuditEnforcementAdmitsAndTheAuditLogHoldsAiadmitsAnnotations) {
  Namespace ns("audit");
  {
    AiadmitRestoredAtExit restore;
    const CommandResult restarted = e2eCluster("aiadmit", {"start", "--enforcement=audit"});
    ASSERT_EQ(restarted.exitCode, 0) << restarted.out << restarted.err;

    const CommandResult applied = kubectl({"apply", "-n", ns.name(), "-f", "-"}, typoPod("typo"));
    ASSERT_EQ(applied.exitCode, 0) << "audit admits what deny refuses: " << applied.err;
    EXPECT_EQ(applied.err.find("AIA003"), std::string::npos)
        << "audited, not warned: " << applied.err;

    auto annotations = auditAnnotations(auditEvents("pods", ns.name(), "typo", "create"));
    EXPECT_EQ(annotations.count("applied.validate.aiadmit.dev/rules"), 1u);
    EXPECT_NE(annotations["applied.validate.aiadmit.dev/rules"].find("AIA003=audit"),
              std::string::npos);
    EXPECT_EQ(annotations["applied.validate.aiadmit.dev/enforcement"], "audit");
    EXPECT_NE(annotations["applied.validate.aiadmit.dev/capped"].find("AIA003=deny"),
              std::string::npos);
    EXPECT_EQ(annotations["applied.mutate.aiadmit.dev/class"], "batch");
  }
  // Back at the default enforcement, the same mistake is refused.
  const CommandResult refused =
      kubectl({"apply", "-n", ns.name(), "-f", "-"}, typoPod("typo-again"));
  EXPECT_NE(refused.exitCode, 0);
  EXPECT_NE(refused.err.find("denied the request: [AIA003]"), std::string::npos) << refused.err;
}

TEST(E2eFailureSerial, WithAiadmitDownTheFailTierRefusesAndTheIgnoreTierAdmits) {
  Namespace ns("down");
  ASSERT_EQ(kubectl({"apply", "-n", ns.name(), "-f", "-"}, kDeployment).exitCode, 0);
  ASSERT_TRUE(waitUntil([&] { return podCount(ns) == 1; }, std::chrono::seconds(30)));
  {
    AiadmitRestoredAtExit restore;
    const CommandResult stopped = e2eCluster("aiadmit", {"stop"});
    ASSERT_EQ(stopped.exitCode, 0) << stopped.err;

    // applied.* (failurePolicy Fail): refused with the API server's own error.
    const CommandResult refused =
        kubectl({"create", "-n", ns.name(), "-f", "-"}, gpuPod("while-down"));
    EXPECT_NE(refused.exitCode, 0);
    EXPECT_NE(refused.err.find("failed calling webhook \"applied.mutate.aiadmit.dev\""),
              std::string::npos)
        << refused.err;

    // controlled.* (failurePolicy Ignore): the ReplicaSet still makes Pods.
    ASSERT_EQ(kubectl({"scale", "deployment", "server", "-n", ns.name(), "--replicas=2"}).exitCode,
              0);
    EXPECT_TRUE(waitUntil([&] { return podCount(ns) == 2; }, std::chrono::seconds(30)))
        << kubectl({"get", "events", "-n", ns.name()}).out;
    bool failedOpen = false;
    for (const json& event : auditEvents("pods", ns.name(), "", "create")) {
      for (const auto& [key, value] : event["annotations"].items()) {
        if (key.rfind("failed-open.mutation.webhook.admission.k8s.io/", 0) == 0 &&
            value == "controlled.mutate.aiadmit.dev") {
          failedOpen = true;
        }
      }
    }
    EXPECT_TRUE(failedOpen) << "the API server records the webhook it could not call";
  }
  // Started again, both tiers answer.
  const CommandResult created = kubectl({"create", "-n", ns.name(), "-f", "-"}, gpuPod("after"));
  EXPECT_EQ(created.exitCode, 0) << created.err;
  EXPECT_NE(created.err.find("Warning: aiadmit: class batch"), std::string::npos) << created.err;
  ASSERT_EQ(kubectl({"scale", "deployment", "server", "-n", ns.name(), "--replicas=3"}).exitCode,
            0);
  EXPECT_TRUE(waitUntil([&] { return podCount(ns) == 4; }, std::chrono::seconds(30)));
}

}  // namespace
}  // namespace aiadmit::e2e
