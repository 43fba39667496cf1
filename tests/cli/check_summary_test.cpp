// `aiadmit check --summary`: the report a platform team reads before turning
// enforcement on. The shared corpus with its known counts, in text and JSON;
// `kubectl get -o yaml` Lists; Pods counted under their controllers (through
// a ReplicaSet that is in the input, or one that `kubectl get pods,deployments`
// leaves out), and only under controllers that are in the input.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/test_support.h"
#include "webhook/codec/json.h"

namespace aiadmit {
namespace {

using namespace testing;

CommandResult check(std::vector<std::string> args, const std::string& input = "") {
  std::vector<std::string> argv = {binaryPath(), "check", "--profiles", sourceDir() + "/profiles"};
  argv.insert(argv.end(), args.begin(), args.end());
  return runCommand(argv, input);
}

const JsonValue* find(const JsonValue& list, std::string_view key, std::string_view value) {
  for (const JsonValue& item : list.GetArray()) {
    if (stringMember(&item, key) == value) return &item;
  }
  return nullptr;
}

uint64_t count(const JsonValue* object, const char* key) {
  const JsonValue* value = member(object, key);
  EXPECT_TRUE(value != nullptr && value->IsUint64()) << key;
  return value != nullptr && value->IsUint64() ? value->GetUint64() : 0;
}

TEST(CheckSummary, TheCorpusAsJson) {
  const CommandResult result = check({"--summary", "-o", "json", corpusDir() + "/manifests"});
  EXPECT_EQ(result.exitCode, 1) << result.err;  // some are denied
  const auto report = parseJson(result.out);
  ASSERT_TRUE(report->IsObject()) << result.out;
  // 22 of the corpus's objects are kinds of the workload-type table (the
  // built-in kinds and the operators' custom resources); 1 is denied by the
  // shipped profiles (a priority class they do not allow) and 6 warned: the
  // servers without a readiness probe are servers by inference only.
  EXPECT_EQ(count(report.get(), "objects"), 22u);
  EXPECT_EQ(count(report.get(), "workloads"), 22u);
  EXPECT_EQ(count(report.get(), "countedUnderController"), 0u);
  EXPECT_EQ(count(report.get(), "denied"), 1u);
  EXPECT_EQ(count(report.get(), "warned"), 6u);
  EXPECT_EQ(count(report.get(), "auditedOnly"), 0u);
  EXPECT_EQ(count(report.get(), "clean"), 15u);
  // Services, and the two kinds no row describes (KFService, Volcano's CronJob).
  EXPECT_EQ(count(report.get(), "skipped"), 5u);

  const JsonValue& byRule = (*report)["byRule"];
  ASSERT_EQ(byRule.Size(), 3u);
  EXPECT_EQ(stringMember(&byRule[0], "rule"), "AIA011");  // the worst first
  EXPECT_EQ(count(&byRule[0], "deny"), 1u);
  EXPECT_EQ(count(find(byRule, "rule", "AIA009"), "deny"), 0u);
  EXPECT_EQ(count(find(byRule, "rule", "AIA009"), "warn"), 3u);
  EXPECT_EQ(count(find(byRule, "rule", "AIA015"), "warn"), 4u);
  EXPECT_EQ(count(find(byRule, "rule", "AIA015"), "deny"), 0u);

  const JsonValue& byNamespace = (*report)["byNamespace"];
  EXPECT_EQ(stringMember(&byNamespace[0], "namespace"), "default");
  EXPECT_EQ(count(&byNamespace[0], "denied"), 1u);
  EXPECT_EQ(count(&byNamespace[0], "violating"), 7u);
  const JsonValue& byKind = (*report)["byKind"];
  EXPECT_EQ(stringMember(&byKind[0], "kind"), "Deployment");
  EXPECT_EQ(count(&byKind[0], "denied"), 1u);
  EXPECT_EQ(count(find(byKind, "kind", "Pod"), "denied"), 0u);
  EXPECT_EQ(count(find(byKind, "kind", "Job"), "violating"), 0u);

  const JsonValue& offenders = (*report)["offenders"];
  ASSERT_EQ(offenders.Size(), 7u);
  EXPECT_EQ(stringMember(&offenders[0], "name"), "tgi-gemma-deployment");  // the one denied
  EXPECT_TRUE(offenders[0]["denied"].GetBool());
  for (rapidjson::SizeType i = 1; i < 7; ++i) EXPECT_FALSE(offenders[i]["denied"].GetBool());
  EXPECT_EQ(stringMember(&offenders[1], "name"), "vllm");  // two rules warned
}

TEST(CheckSummary, TheCorpusUnderAuditCountsWhatWouldBeDenied) {
  const CommandResult result =
      check({"--summary", "-o", "json", "--enforcement=audit", corpusDir() + "/manifests"});
  EXPECT_EQ(result.exitCode, 0) << result.err;
  const auto report = parseJson(result.out);
  EXPECT_EQ(count(report.get(), "denied"), 0u);
  EXPECT_EQ(count(report.get(), "auditedOnly"), 7u);
  const JsonValue* aia009 = find((*report)["byRule"], "rule", "AIA009");
  EXPECT_EQ(count(aia009, "audit"), 3u);
  const JsonValue& first = (*report)["offenders"][0];
  EXPECT_EQ(stringMember(&first["rules"][0], "action"), "audit");
  EXPECT_EQ(stringMember(&first["rules"][0], "profileAction"), "deny");

  const CommandResult text =
      check({"--summary", "--enforcement=audit", corpusDir() + "/manifests"});
  // AIA009 rests on an inferred class: a warning at most, under any cap.
  EXPECT_NE(text.out.find(" AIA009=audit(warn),AIA015=audit(warn)\n"), std::string::npos)
      << text.out;
  // What would deny ranks first, as it would at deny.
  const JsonValue& offenders = (*report)["offenders"];
  ASSERT_EQ(offenders.Size(), 7u);
  EXPECT_EQ(stringMember(&offenders[0], "name"), "tgi-gemma-deployment");
}

TEST(CheckSummary, TheCorpusAsText) {
  const CommandResult result = check({"--summary", corpusDir() + "/manifests"});
  EXPECT_EQ(result.exitCode, 1) << result.err;
  EXPECT_EQ(result.out.rfind("22 workloads (22 objects, 0 counted under their controller): "
                             "1 denied, 6 warned, 0 audited only, 15 clean; "
                             "5 skipped (not a kind that runs Pods)\n",
                             0),
            0u)
      << result.out;
  EXPECT_NE(result.out.find("  AIA009         3    0    3     0\n"), std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("  deployment/vllm "), std::string::npos) << result.out;
  EXPECT_LT(result.out.find("By namespace:"), result.out.find("By kind:"));
  EXPECT_LT(result.out.find("By kind:"), result.out.find("Worst offenders:"));
}

// A GPU Pod template breaking AIA003 ("nvidia.com/gpus"), under `metadata`.
std::string podSpec(const std::string& indent) {
  return indent + "spec:\n" + indent + "  restartPolicy: Always\n" + indent + "  containers:\n" +
         indent + "  - name: web\n" + indent + "    image: registry.example/web:1\n" + indent +
         "    resources: {limits: {nvidia.com/gpus: 1}}\n";
}

std::string deployment(const std::string& name, const std::string& uid) {
  return "- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: " + name +
         ", namespace: serving, uid: " + uid +
         "}\n  spec:\n    selector: {matchLabels: {app: " + name +
         "}}\n    template:\n      metadata: {labels: {app: " + name + "}}\n" + podSpec("      ");
}

std::string replicaSet(const std::string& name, const std::string& uid,
                       const std::string& deploymentName, const std::string& deploymentUid) {
  return "- apiVersion: apps/v1\n  kind: ReplicaSet\n  metadata:\n    name: " + name +
         "\n    namespace: serving\n    uid: " + uid +
         "\n    ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: " + deploymentName +
         ", uid: " + deploymentUid +
         ", controller: true}]\n  spec:\n    selector: {matchLabels: {app: x}}\n    template:\n"
         "      metadata: {labels: {app: x}}\n" +
         podSpec("      ");
}

std::string pod(const std::string& name, const std::string& hash, const std::string& ownerKind,
                const std::string& ownerName, const std::string& ownerUid, bool controller = true) {
  return "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: " + name +
         "\n    namespace: serving\n    labels: {pod-template-hash: \"" + hash +
         "\"}\n    ownerReferences: [{apiVersion: apps/v1, kind: " + ownerKind +
         ", name: " + ownerName + ", uid: " + ownerUid +
         ", controller: " + (controller ? "true" : "false") + "}]\n" + podSpec("  ");
}

// As `kubectl get pods,deployments -A -o yaml` prints them: one List.
std::string list(const std::string& items) {
  return "apiVersion: v1\nkind: List\nmetadata: {resourceVersion: \"\"}\nitems:\n" + items;
}

std::shared_ptr<JsonDocument> summaryOf(const std::string& input) {
  const CommandResult result = check({"--summary", "-o", "json", "-"}, input);
  EXPECT_EQ(result.exitCode, 1) << result.err;
  return parseJson(result.out);
}

TEST(CheckSummary, APodOfADeploymentsReplicaSetIsCountedOnceUnderTheDeployment) {
  // The ReplicaSet is not in the input, as `kubectl get pods,deployments` leaves it out.
  const auto report =
      summaryOf(list(deployment("web", "d-1") + pod("web-5d8f7c9b4-x2x7q", "5d8f7c9b4",
                                                    "ReplicaSet", "web-5d8f7c9b4", "rs-1")));
  EXPECT_EQ(count(report.get(), "objects"), 2u);
  EXPECT_EQ(count(report.get(), "workloads"), 1u);
  EXPECT_EQ(count(report.get(), "countedUnderController"), 1u);
  EXPECT_EQ(count(&(*report)["byRule"][0], "deny"), 1u);
  EXPECT_EQ(count(&(*report)["byNamespace"][0], "workloads"), 1u);
  ASSERT_EQ((*report)["offenders"].Size(), 1u);
  EXPECT_EQ(stringMember(&(*report)["offenders"][0], "kind"), "Deployment");
  EXPECT_EQ(count(&(*report)["offenders"][0], "owned"), 1u);
}

TEST(CheckSummary, AChainOfControllersInTheInputEndsAtTheTop) {
  const auto report =
      summaryOf(list(pod("web-abc-1", "abc", "ReplicaSet", "web-abc", "rs-1") +
                     replicaSet("web-abc", "rs-1", "web", "d-1") + deployment("web", "d-1") +
                     pod("web-abc-2", "abc", "ReplicaSet", "web-abc", "rs-1")));
  EXPECT_EQ(count(report.get(), "objects"), 4u);
  EXPECT_EQ(count(report.get(), "workloads"), 1u);
  EXPECT_EQ(count(report.get(), "countedUnderController"), 3u);
  EXPECT_EQ(count(&(*report)["byRule"][0], "workloads"), 1u);
  EXPECT_EQ(count(&(*report)["byKind"][0], "workloads"), 1u);
}

TEST(CheckSummary, OnlyControllersInTheInputTakeTheirPods) {
  const auto report = summaryOf(
      list(deployment("web", "d-1") +
           // A ReplicaSet of another Deployment: the hash leads to "api", not in the input.
           pod("api-77f-1", "77f", "ReplicaSet", "api-77f", "rs-2") +
           // A name that only looks like web's ReplicaSet: the hash does not match.
           pod("web-999-1", "123", "ReplicaSet", "web-999", "rs-3") +
           // An owner that is not the controller.
           pod("web-free", "", "Deployment", "web", "d-1", false)));
  EXPECT_EQ(count(report.get(), "objects"), 4u);
  EXPECT_EQ(count(report.get(), "workloads"), 4u);
  EXPECT_EQ(count(report.get(), "countedUnderController"), 0u);
  // The two Pods of ReplicaSets aiadmit never judged are warned, not
  // refused: opting in changes nothing that runs.
  EXPECT_EQ(count(&(*report)["byRule"][0], "deny"), 2u);
  EXPECT_EQ(count(&(*report)["byRule"][0], "warn"), 2u);
}

TEST(CheckSummary, APodOwnedByACustomResourceInTheInputIsCountedUnderIt) {
  const std::string rayCluster =
      "- apiVersion: ray.io/v1\n  kind: RayCluster\n  metadata: {name: rc, namespace: serving, "
      "uid: rc-1}\n  spec: {}\n";
  const auto report = summaryOf(list(rayCluster + pod("rc-head", "", "RayCluster", "rc", "rc-1")));
  // The RayCluster is a workload of its own now (a row of the table), and
  // its Pod is counted under it.
  EXPECT_EQ(count(report.get(), "objects"), 2u);
  EXPECT_EQ(count(report.get(), "skipped"), 0u);
  EXPECT_EQ(count(report.get(), "workloads"), 1u);
  EXPECT_EQ(count(report.get(), "countedUnderController"), 1u);
  EXPECT_EQ(stringMember(&(*report)["offenders"][0], "kind"), "RayCluster");
}

TEST(CheckSummary, AuditedViolationsShowInTheTextOfEachObject) {
  const std::string typo = sourceDir() + "/tests/golden/denials/aia003-gpus-typo.yaml";
  const CommandResult audited = check({"--enforcement=audit", typo});
  EXPECT_EQ(audited.exitCode, 0) << audited.err;
  EXPECT_NE(audited.out.find("\n  Audit: aiadmit: [AIA003] "), std::string::npos) << audited.out;
  EXPECT_EQ(audited.out.find("Warning: aiadmit: [AIA003]"), std::string::npos) << audited.out;
  const CommandResult denied = check({typo});
  EXPECT_EQ(denied.exitCode, 1);
  EXPECT_EQ(denied.out.find("Audit:"), std::string::npos) << denied.out;
}

TEST(CheckSummary, RefusesYaml) {
  const CommandResult result = check({"--summary", "-o", "yaml", "-"}, list(deployment("a", "u")));
  EXPECT_EQ(result.exitCode, 2);
  EXPECT_NE(result.err.find("--summary"), std::string::npos);
}

}  // namespace
}  // namespace aiadmit
