// Sends manifests written as YAML through the engine's /validate path
// (answerReview, as `serve` answers it) and checks what every rule's test needs: a violation is
// denied, warned or let through as its profile says, with the field path and a fix; a near miss
// passes. The manifests are shaped as /mutate hands them on: on the shipped
// GPU pool, so that each case breaks one rule only.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tests/support/engine_harness.h"
#include "tests/support/test_support.h"
#include "webhook/codec/warnings.h"
#include "webhook/codec/yaml_json.h"
#include "webhook/engine/admission.h"
#include "webhook/policy/rules.h"

namespace aiadmit::testing {

// One object from YAML as JSON text; "{}" (and a failed test) for anything else.
inline std::string yamlToJson(const std::string& yaml) {
  std::vector<ManifestDocument> documents;
  std::string error;
  EXPECT_TRUE(parseManifests(yaml, documents, &error)) << error;
  EXPECT_EQ(documents.size(), 1u) << yaml;
  return documents.empty() ? "{}" : toJson(*documents[0].json);
}

// `text` with its one occurrence of `from` replaced by `to`.
inline std::string replaced(std::string text, std::string_view from, std::string_view to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// The shipped pool's placement, as /mutate adds it to a GPU template.
inline const std::string kPoolPlacement = R"(
      nodeSelector: {accelerator: nvidia}
      tolerations: [{key: accelerator, operator: Equal, value: gpu, effect: NoSchedule}])";

// A realtime Deployment on the pool with `container` as its one container.
inline std::string realtimeDeployment(const std::string& podSpecExtra, const std::string& container,
                                      const std::string& annotations = "") {
  return R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: server)" +
         (annotations.empty() ? "" : "\n  annotations: " + annotations) + R"(
spec:
  replicas: 1
  selector: {matchLabels: {app: server}}
  template:
    metadata: {labels: {app: server}}
    spec:)" +
         kPoolPlacement + podSpecExtra + R"(
      containers:
      - )" +
         container + "\n";
}

// The annotation that declares a workload realtime: the rules whose premise
// is the class (AIA002, AIA009, AIA014, AIA015) deny only a declared class.
inline const std::string kDeclaredRealtime = "{aiadmit.dev/workload: realtime}";

// A GPU server that breaks no rule: a port, its own probe and a memory limit.
inline const std::string kServingContainer =
    R"({name: vllm, image: vllm, ports: [{containerPort: 8000}], readinessProbe: {tcpSocket: {port: 8000}}, resources: {limits: {nvidia.com/gpu: 1, memory: 32Gi}}})";

// A Job of `workloadClass` on the pool; the extras are appended to the Job's
// and the Pod's spec, `containers` is the list's YAML items.
inline std::string gpuJob(const std::string& workloadClass, const std::string& jobSpecExtra,
                          const std::string& podSpecExtra, const std::string& containers) {
  return R"(apiVersion: batch/v1
kind: Job
metadata:
  name: run
  annotations: {aiadmit.dev/workload: )" +
         workloadClass + R"(}
spec:)" + jobSpecExtra +
         R"(
  template:
    spec:
      restartPolicy: Never)" +
         kPoolPlacement + podSpecExtra + R"(
      containers:)" +
         containers + "\n";
}

inline const std::string kOneGpu = R"(
      - {name: train, image: t, resources: {limits: {nvidia.com/gpu: 1}}})";

// A bare Pod of `workloadClass` on the pool; `podSpec` holds its containers.
inline std::string gpuPod(const std::string& workloadClass, const std::string& podSpec) {
  return R"(apiVersion: v1
kind: Pod
metadata:
  name: pod
  annotations: {aiadmit.dev/workload: )" +
         workloadClass + R"(}
spec:
  nodeSelector: {accelerator: nvidia}
  tolerations: [{key: accelerator, operator: Equal, value: gpu, effect: NoSchedule}])" +
         podSpec + "\n";
}

// Profiles beside the shipped ones, scoped by namespace, for the rules that
// the shipped profiles leave switched off.
inline constexpr const char* kExtraProfiles[][2] = {
    {"training-gang.yaml", R"(apiVersion: aiadmit.dev/v1
kind: Profile
metadata:
  name: training-gang
spec:
  class: training
  scope:
    namespaces: ["gang-*"]
  gpu:
    resourceName: nvidia.com/gpu
    gpusPerNode: 8
  placement:
    nodeSelector: {accelerator: nvidia}
    tolerations: [{key: accelerator, operator: Equal, value: gpu, effect: NoSchedule}]
  scheduling:
    priorityClassName: ai-training
    gangScheduling: {required: true, schedulerName: volcano, queueLabel: kueue.x-k8s.io/queue-name}
)"},
    // Gang scheduling by its scheduler or queue only: Kubernetes' own does not count.
    {"training-own-gang.yaml", R"(apiVersion: aiadmit.dev/v1
kind: Profile
metadata:
  name: training-own-gang
spec:
  class: training
  scope:
    namespaces: ["own-gang-*"]
  gpu:
    resourceName: nvidia.com/gpu
    gpusPerNode: 8
  placement:
    nodeSelector: {accelerator: nvidia}
    tolerations: [{key: accelerator, operator: Equal, value: gpu, effect: NoSchedule}]
  scheduling:
    gangScheduling: {required: true, schedulerName: volcano, native: false}
)"},
    // Kubernetes' own gang scheduling only.
    {"training-native-gang.yaml", R"(apiVersion: aiadmit.dev/v1
kind: Profile
metadata:
  name: training-native-gang
spec:
  class: training
  scope:
    namespaces: ["native-gang-*"]
  gpu:
    resourceName: nvidia.com/gpu
    gpusPerNode: 8
  placement:
    nodeSelector: {accelerator: nvidia}
    tolerations: [{key: accelerator, operator: Equal, value: gpu, effect: NoSchedule}]
  scheduling:
    gangScheduling: {required: true}
)"},
    {"batch-restricted.yaml", R"(apiVersion: aiadmit.dev/v1
kind: Profile
metadata:
  name: batch-restricted
spec:
  class: batch
  scope:
    namespaces: ["restricted-*"]
  gpu:
    resourceName: nvidia.com/gpu
    allowedNamespaces: [restricted-gpu, "restricted-lab-*"]
  placement:
    nodeSelector: {accelerator: nvidia}
    tolerations: [{key: accelerator, operator: Equal, value: gpu, effect: NoSchedule}]
  scheduling:
    priorityClassName: ai-batch
)"},
    {"batch-sliced.yaml", R"(apiVersion: aiadmit.dev/v1
kind: Profile
metadata:
  name: batch-sliced
spec:
  class: batch
  scope:
    namespaces: ["sliced-*"]
  gpu:
    resourceName: nvidia.com/gpu.shared
    sharingAllowed: true
    gpusPerNode: 32
  placement:
    nodeSelector: {accelerator: nvidia}
    tolerations: [{key: accelerator, operator: Equal, value: gpu, effect: NoSchedule}]
  scheduling:
    priorityClassName: ai-batch
)"},
    {"realtime-noprobes.yaml", R"(apiVersion: aiadmit.dev/v1
kind: Profile
metadata:
  name: realtime-noprobes
spec:
  class: realtime
  scope:
    namespaces: ["noprobe-*"]
  gpu:
    resourceName: nvidia.com/gpu
  placement:
    nodeSelector: {accelerator: nvidia}
    tolerations: [{key: accelerator, operator: Equal, value: gpu, effect: NoSchedule}]
  scheduling:
    priorityClassName: ai-realtime
)"},
};

// A profile directory: the shipped profiles and the extra ones, with every
// rule set to `action` ("" keeps each profile's own actions).
inline void writeRuleProfiles(const TempDir& dir, const std::string& action) {
  std::vector<std::pair<std::string, std::string>> files;
  for (const char* name : {"batch.yaml", "realtime.yaml", "training.yaml"}) {
    files.emplace_back(name, readFile(sourceDir() + "/profiles/" + name));
  }
  for (const auto& extra : kExtraProfiles) files.emplace_back(extra[0], extra[1]);
  for (auto& [name, text] : files) {
    if (!action.empty()) {
      if (text.back() != '\n') text += '\n';
      text += "  rules:\n";
      for (int rule = kFirstRule; rule <= lastRule().number; ++rule) {
        text += "    " + RuleId{rule}.name() + ": " + action + "\n";
      }
    }
    writeFile(dir.file(name), text);
  }
}

struct RuleCase {
  std::string name;
  std::string namespaceName;
  std::string manifest;  // YAML, as /mutate would hand it on
  // For violations: the field path the message must name; "" for near misses.
  std::string field;
  // For a violation, the whole denial a developer reads when the rule
  // denies, word for word; "" leaves the words to the rule's other tests.
  std::string message{};
};

// One engine per action (deny, warn, off), shared by the suite, each with the
// profiles `serve` would load from its directory; the transport has its own
// tests (tests/serving). The parameter is the rule's number; each rule's
// file instantiates it for its rule. The rules on the cluster view (AIA016
// on) need a view; tests/cli/check_cluster_test.cpp holds them to their
// actions through `check --cluster`.
class RuleActionsTest : public ::testing::TestWithParam<int> {
 protected:
  static void SetUpTestSuite() {
    for (const char* action : {"deny", "warn", "off"}) {
      TempDir dir;
      writeRuleProfiles(dir, action);
      engines_[action] = std::make_unique<EngineWebhook>(EngineWebhook::Options{dir.path()});
    }
  }
  static void TearDownTestSuite() { engines_.clear(); }

  static ReviewResponse validate(const std::string& action, const RuleCase& c) {
    const HttpResponse http = engines_.at(action)->post(
        "/validate",
        makeReview(yamlToJson(c.manifest), "CREATE", "uid-" + c.name, "", c.namespaceName));
    EXPECT_EQ(http.status, 200) << http.body;
    return parseReviewResponse(http.body);
  }

  // Each violation is denied as the only one, with its field path and a fix,
  // warned within the API server's limit, and let through when the rule is
  // off; each near miss passes under every action.
  static void expectViolationsFollowTheActionAndNearMissesPass(const RuleId rule,
                                                               const std::vector<RuleCase>& cases) {
    const std::string tag = "[" + rule.name() + "]";
    ASSERT_FALSE(cases.empty()) << "no cases for " << rule.name();
    bool sawViolation = false, sawNearMiss = false;
    for (const RuleCase& c : cases) {
      SCOPED_TRACE(rule.name() + " " + c.name);
      const bool violates = !c.field.empty();
      (violates ? sawViolation : sawNearMiss) = true;

      const ReviewResponse denied = validate("deny", c);
      if (violates) {
        // The only violation, so rules do not report each other's problems.
        EXPECT_FALSE(denied.allowed);
        EXPECT_EQ(denied.statusCode, 403);
        EXPECT_EQ(denied.statusReason, "Forbidden");
        EXPECT_EQ(denied.message.rfind(tag + " " + c.field + ": ", 0), 0u) << denied.message;
        EXPECT_EQ(denied.message.find('\n'), std::string::npos) << denied.message;
        EXPECT_NE(denied.message.find("; "), std::string::npos) << "no fix: " << denied.message;
        if (!c.message.empty()) {
          EXPECT_EQ(denied.message, c.message);
        }
      } else {
        EXPECT_TRUE(denied.allowed) << denied.message;
      }
      EXPECT_TRUE(denied.warnings.empty()) << denied.warnings.front();

      const ReviewResponse warned = validate("warn", c);
      EXPECT_TRUE(warned.allowed) << warned.message;
      if (violates) {
        ASSERT_EQ(warned.warnings.size(), 1u);
        EXPECT_EQ(warned.warnings[0].rfind("aiadmit: " + tag + " ", 0), 0u) << warned.warnings[0];
        EXPECT_LE(warned.warnings[0].size(), kMaxWarningLength);
        EXPECT_NE(warned.warnings[0].substr(warned.warnings[0].size() - 3), "...")
            << "cut: " << warned.warnings[0];
      } else {
        EXPECT_TRUE(warned.warnings.empty()) << warned.warnings.front();
      }

      const ReviewResponse off = validate("off", c);
      EXPECT_TRUE(off.allowed) << off.message;
      EXPECT_TRUE(off.warnings.empty()) << off.warnings.front();
    }
    EXPECT_TRUE(sawViolation && sawNearMiss) << "each rule needs a violation and a near miss";
  }

  static inline std::map<std::string, std::unique_ptr<EngineWebhook>> engines_;
};

// Names an instantiation of RuleActionsTest by its rule ("AIA004").
inline std::string ruleParamName(const ::testing::TestParamInfo<int>& info) {
  return RuleId{info.param}.name();
}

// The cases each rule's file registers (AIADMIT_RULE_ACTIONS_TEST), by rule
// number; a list, so that a rule registered by two files shows.
inline std::map<int, std::vector<const std::vector<RuleCase>*>>& ruleActionCases() {
  static std::map<int, std::vector<const std::vector<RuleCase>*>> cases;
  return cases;
}

inline bool registerRuleActionCases(const RuleId rule, const std::vector<RuleCase>& cases) {
  ruleActionCases()[rule.number].push_back(&cases);
  return true;
}

inline std::vector<int> rulesWithActionCases() {
  std::vector<int> rules;
  for (const auto& [rule, cases] : ruleActionCases()) rules.push_back(rule);
  return rules;
}

}  // namespace aiadmit::testing

// The rule test of one rule's file: registers `cases` for `rule`.
// tests/validators/rule_actions_test.cpp instantiates RuleActionsTest once
// for every registered rule, in the one executable of tests/validators, so
// each rule's test is AllRules/RuleActionsTest.<test>/AIA0NN.
#define AIADMIT_RULE_ACTIONS_TEST(rule, cases)        \
  [[maybe_unused]] const bool kRuleActionCasesAdded = \
      ::aiadmit::testing::registerRuleActionCases((rule), (cases))
