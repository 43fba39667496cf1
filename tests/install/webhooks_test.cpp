// The webhook configurations as an admin installs them (rendered by
// `kubectl kustomize`): held to the safety properties that others learned
// the hard way, called only in opted-in namespaces, and with rules that name
// exactly the resources of the workload-type table, at the versions its rows
// read and with the scope of each kind's CRD (and, for validation only, DRA
// claim objects). The reconciled tier is the applied one but for who asks
// and its failurePolicy; the controlled tier validates only what it
// mutates. The matchConditions are evaluated in match_conditions_test.cpp.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "tests/install/rendered_manifests.h"
#include "webhook/model/workload_type.h"
#include "webhook/model/workload_type_builtin.h"

namespace aiadmit {
namespace {

using namespace install;
namespace fs = std::filesystem;

TEST(Webhooks, WebhooksAreCalledOnlyForOptedInNamespacesNeverTheSystemOnes) {
  const Rendered base = render(manifestsDir() + "/base");
  const std::vector<Webhook> webhooks = webhooksOf(base);
  ASSERT_EQ(webhooks.size(), kWebhookCount);
  for (const Webhook& webhook : webhooks) {
    SCOPED_TRACE(webhook.name());
    const JsonValue* selector = member(webhook.value, "namespaceSelector");
    ASSERT_TRUE(isObject(selector));
    EXPECT_TRUE(selects(selector, namespaceNamed("team-a", "true")));
    EXPECT_FALSE(selects(selector, namespaceNamed("team-b", std::nullopt)));
    EXPECT_FALSE(selects(selector, namespaceNamed("team-c", "false")));
    EXPECT_FALSE(selects(selector, namespaceNamed("kube-system", "true")));
    EXPECT_FALSE(selects(selector, namespaceNamed(std::string(kNamespace), "true")));
    EXPECT_EQ(member(webhook.value, "objectSelector"), nullptr);
  }
}

TEST(Webhooks, WebhooksAreSafeToCall) {
  const Rendered base = render(manifestsDir() + "/base");
  std::set<std::string> names;
  for (const Webhook& webhook : webhooksOf(base)) {
    const std::string name = webhook.name();
    SCOPED_TRACE(name);
    names.insert(name);
    const bool mutating = webhook.configurationKind == "MutatingWebhookConfiguration";
    const bool applied = name.rfind("applied.", 0) == 0;
    const bool reconciled = name.rfind("reconciled.", 0) == 0;
    EXPECT_EQ(stringSet(member(webhook.value, "admissionReviewVersions")),
              std::set<std::string>{"v1"});
    EXPECT_EQ(member(webhook.value, "admissionReviewVersions")->Size(), 1u);
    EXPECT_EQ(stringMember(webhook.value, "sideEffects"), "None");
    const int timeout = intMember(webhook.value, "timeoutSeconds");
    EXPECT_GE(timeout, 1);
    EXPECT_LE(timeout, 5);
    EXPECT_EQ(stringMember(webhook.value, "matchPolicy"), "Equivalent");
    if (mutating) {
      EXPECT_EQ(stringMember(webhook.value, "reinvocationPolicy"), "IfNeeded");
    }
    const JsonValue* service = member(member(webhook.value, "clientConfig"), "service");
    EXPECT_EQ(stringMember(service, "name"), "aiadmit");
    EXPECT_EQ(stringMember(service, "namespace"), kNamespace);
    EXPECT_EQ(intMember(service, "port"), 443);
    // The applied paths judge the object as a person's, whatever owner it
    // names; the controller's paths, which only controlled.* calls, believe it.
    EXPECT_EQ(stringMember(service, "path"), std::string(applied || reconciled ? "/applied" : "") +
                                                 (mutating ? "/mutate" : "/validate"));
    EXPECT_EQ(member(member(webhook.value, "clientConfig"), "url"), nullptr);

    // Fail closed only for what people apply; controllers' objects and
    // updates fail open.
    EXPECT_EQ(stringMember(webhook.value, "failurePolicy"), applied ? "Fail" : "Ignore");
    const std::set<std::string> conditions = conditionNames(webhook.value);
    EXPECT_TRUE(conditions.count("not-a-mirror-pod"));
    // The API server refuses a webhook with more than 64 conditions.
    EXPECT_LE(member(webhook.value, "matchConditions")->Size(), 64u);
    if (applied || reconciled) {
      EXPECT_TRUE(conditions.count("not-made-by-its-controller"));
      EXPECT_TRUE(conditions.count("not-being-deleted"));
      EXPECT_EQ(conditions.count("not-a-controllers-update"), applied ? 1u : 0u);
      EXPECT_EQ(conditions.count("a-controllers-update"), reconciled ? 1u : 0u);
    } else {
      EXPECT_TRUE(conditions.count("made-by-its-controller"));
    }
  }
  EXPECT_EQ(names,
            (std::set<std::string>{kAppliedMutate, kReconciledMutate, kControlledMutate,
                                   kAppliedValidate, kReconciledValidate, kControlledValidate}));
}

// "group/version/resource" → the operations and the scope of its rules.
struct Coverage {
  std::set<std::string> operations;
  std::string scope;
  bool operator==(const Coverage& other) const {
    return operations == other.operations && scope == other.scope;
  }
};
using Coverages = std::map<std::string, Coverage>;

std::ostream& operator<<(std::ostream& out, const Coverage& coverage) {
  for (const std::string& op : coverage.operations) out << op << " ";
  return out << coverage.scope;
}

Coverages coverageOf(const JsonValue* webhook) {
  Coverages out;
  const JsonValue* rules = member(webhook, "rules");
  EXPECT_TRUE(isArray(rules));
  if (!isArray(rules)) return out;
  for (const JsonValue& rule : rules->GetArray()) {
    const std::string scope(stringMember(&rule, "scope"));
    for (const std::string& group : stringSet(member(&rule, "apiGroups"))) {
      EXPECT_NE(group, "*");
      for (const std::string& version : stringSet(member(&rule, "apiVersions"))) {
        EXPECT_NE(version, "*") << "only versions whose paths aiadmit knows";
        for (const std::string& resource : stringSet(member(&rule, "resources"))) {
          // No wildcards and no subresources (status, binding, exec, ...).
          EXPECT_EQ(resource.find_first_of("*/"), std::string::npos) << resource;
          const std::string key = group + "/" + version + "/" + resource;
          Coverage& coverage = out[key];
          EXPECT_TRUE(coverage.scope.empty()) << key << " is named by two rules";
          coverage.scope = scope;
          for (const std::string& op : stringSet(member(&rule, "operations"))) {
            coverage.operations.insert(op);
          }
        }
      }
    }
  }
  return out;
}

bool isKubernetesGroup(const std::string& group) {
  return group.empty() || group == "apps" || group == "batch";
}

// The scope of a custom resource, from its CRD (in ../shared/crds, else its
// project's module: testing::crdFiles), which must serve every version the
// row reads.
std::string crdScope(const WorkloadType& type) {
  const std::vector<std::string> files = testing::crdFiles(type.group, type.resource);
  EXPECT_FALSE(files.empty()) << "no CRD of " << type.qualifiedKind();
  if (files.empty()) return "";
  const std::string& file = files.front();
  std::vector<ManifestDocument> documents;
  std::string error;
  EXPECT_TRUE(parseManifests(readFile(file), documents, &error)) << file << ": " << error;
  if (documents.size() != 1) return "";
  const JsonValue* spec = member(documents[0].json.get(), "spec");
  EXPECT_EQ(stringMember(spec, "group"), type.group);
  EXPECT_EQ(stringMember(member(spec, "names"), "plural"), type.resource);
  EXPECT_EQ(stringMember(member(spec, "names"), "kind"), type.kind);
  std::set<std::string> served;
  for (const JsonValue& version : member(spec, "versions")->GetArray()) {
    if (boolMember(&version, "served")) served.emplace(stringMember(&version, "name"));
  }
  for (const std::string& version : type.versions) {
    EXPECT_TRUE(served.count(version)) << type.qualifiedKind() << " " << version;
  }
  return std::string(stringMember(spec, "scope"));
}

// What the applied webhooks must take: every resource of the built-in
// workload-type table (webhook/model/workload_type_builtin.cpp), at each
// version its row reads, created or updated.
Coverages workloadTypeTableCoverage() {
  Coverages out;
  for (const WorkloadType& type : builtInWorkloadTypes()) {
    SCOPED_TRACE(type.qualifiedKind());
    EXPECT_FALSE(type.versions.empty());
    EXPECT_FALSE(type.resource.empty());
    const std::string scope = isKubernetesGroup(type.group) ? "Namespaced" : crdScope(type);
    for (const std::string& version : type.versions) {
      out[type.group + "/" + version + "/" + type.resource] = {{"CREATE", "UPDATE"}, scope};
    }
  }
  return out;
}

// DRA claim objects, which applied.validate alone takes (they carry no Pod
// and are never mutated): every version a cluster may serve.
Coverages claimObjectCoverage() {
  Coverages out;
  for (const char* version : {"v1", "v1beta1", "v1beta2"}) {
    for (const char* resource : {"resourceclaims", "resourceclaimtemplates"}) {
      out["resource.k8s.io/" + std::string(version) + "/" + resource] = {{"CREATE", "UPDATE"},
                                                                         "Namespaced"};
    }
  }
  return out;
}

// Pods of any controller, and the workloads operators make, at creation.
Coverages controlledCoverage(std::set<std::string> operations) {
  Coverages out;
  for (const char* key :
       {"/v1/pods", "apps/v1/deployments", "apps/v1/statefulsets", "batch/v1/jobs"}) {
    out[key] = {operations, "Namespaced"};
  }
  return out;
}

TEST(Webhooks, AppliedRulesCoverExactlyTheWorkloadTypeTable) {
  const Coverages table = workloadTypeTableCoverage();
  // The six Kubernetes kinds and the operators' 20, some at two versions.
  ASSERT_GE(table.size(), 29u);
  EXPECT_EQ(table.at("trainer.kubeflow.org/v1alpha1/clustertrainingruntimes").scope, "Cluster");
  EXPECT_EQ(table.at("ray.io/v1alpha1/rayclusters").scope, "Namespaced");
  const Rendered base = render(manifestsDir() + "/base");
  for (const Webhook& webhook : webhooksOf(base)) {
    SCOPED_TRACE(webhook.name());
    const Coverages rules = coverageOf(webhook.value);
    const bool validating =
        webhook.name() == kAppliedValidate || webhook.name() == kReconciledValidate;
    if (validating || webhook.name() == kAppliedMutate || webhook.name() == kReconciledMutate) {
      Coverages expected = table;
      if (validating) expected.merge(claimObjectCoverage());
      for (const auto& [key, coverage] : expected) {
        EXPECT_EQ(rules.count(key) ? rules.at(key) : Coverage{}, coverage) << key;
      }
      for (const auto& [key, coverage] : rules) {
        EXPECT_TRUE(expected.count(key)) << key << " is neither a row of the table nor a claim";
      }
    }
  }
}

// What controlled.validate takes, controlled.mutate takes too, kind by kind
// and operation by operation: an operator's update of an object aiadmit
// placed at creation (its desired spec, without what aiadmit added) is never
// refused for what aiadmit itself injected.
TEST(Webhooks, ControlledWebhooksTakeWhatAnOperatorMakesAndValidateOnlyWhatTheyMutate) {
  const Rendered base = render(manifestsDir() + "/base");
  std::map<std::string, Coverages> byName;
  for (const Webhook& webhook : webhooksOf(base))
    byName[webhook.name()] = coverageOf(webhook.value);
  EXPECT_EQ(byName.at(kControlledMutate), controlledCoverage({"CREATE"}));
  EXPECT_EQ(byName.at(kControlledValidate), controlledCoverage({"CREATE"}));
  for (const auto& [key, coverage] : byName.at(kControlledValidate)) {
    ASSERT_TRUE(byName.at(kControlledMutate).count(key)) << key << " validated, never mutated";
    for (const std::string& operation : coverage.operations) {
      EXPECT_TRUE(byName.at(kControlledMutate).at(key).operations.count(operation))
          << key << " " << operation << " validated, never mutated";
    }
  }
}

// A webhook's matchConditions: each expression by its condition's name.
std::map<std::string, std::string> conditionsOf(const JsonValue* webhook) {
  std::map<std::string, std::string> out;
  const JsonValue* conditions = member(webhook, "matchConditions");
  if (!isArray(conditions)) return out;
  for (const JsonValue& condition : conditions->GetArray()) {
    out[std::string(stringMember(&condition, "name"))] =
        std::string(stringMember(&condition, "expression"));
  }
  return out;
}

// reconciled.* is applied.* for the UPDATEs of controllers: the same
// rules, namespaces, endpoint and conditions but the one on who asks, and it
// fails open, so that no controller waits on aiadmit.
TEST(Webhooks, ReconciledWebhooksAreTheAppliedOnesButForWhoAsksAndTheirFailurePolicy) {
  const Rendered base = render(manifestsDir() + "/base");
  std::map<std::string, const JsonValue*> byName;
  for (const Webhook& webhook : webhooksOf(base)) byName[webhook.name()] = webhook.value;
  for (const auto& [applied, reconciled] :
       {std::pair{kAppliedMutate, kReconciledMutate}, {kAppliedValidate, kReconciledValidate}}) {
    SCOPED_TRACE(reconciled);
    ASSERT_TRUE(byName.count(applied) && byName.count(reconciled));
    const JsonValue* a = byName.at(applied);
    const JsonValue* r = byName.at(reconciled);
    EXPECT_EQ(stringMember(a, "failurePolicy"), "Fail");
    EXPECT_EQ(stringMember(r, "failurePolicy"), "Ignore");
    EXPECT_LE(intMember(r, "timeoutSeconds"), intMember(a, "timeoutSeconds"));
    EXPECT_EQ(coverageOf(r), coverageOf(a));
    for (const char* field : {"namespaceSelector", "clientConfig", "matchPolicy", "sideEffects",
                              "admissionReviewVersions", "reinvocationPolicy", "objectSelector"}) {
      const JsonValue* af = member(a, field);
      const JsonValue* rf = member(r, field);
      EXPECT_EQ(af == nullptr ? "" : toJson(*af), rf == nullptr ? "" : toJson(*rf)) << field;
    }
    std::map<std::string, std::string> appliedConditions = conditionsOf(a);
    std::map<std::string, std::string> reconciledConditions = conditionsOf(r);
    ASSERT_EQ(appliedConditions.erase("not-a-controllers-update"), 1u);
    ASSERT_EQ(reconciledConditions.erase("a-controllers-update"), 1u);
    EXPECT_EQ(reconciledConditions, appliedConditions);
    EXPECT_GE(appliedConditions.size(), 5u);
  }
}

// docs/install.md, "Adding a kind of your own": the WorkloadType document
// loads with the shipped profiles, and the documented patch adds exactly its
// resource to the applied and reconciled webhooks.
TEST(Webhooks, DocumentedKindOfYourOwnLoadsAndReachesTheAppliedAndReconciledWebhooks) {
  const std::string workloadType = documentedYaml("## Adding a kind of your own");
  ASSERT_NE(workloadType.find("kind: WorkloadType"), std::string::npos) << workloadType;
  TempDir profiles;
  fs::copy(sourceDir() + "/profiles", profiles.path(), fs::copy_options::recursive);
  writeFile(profiles.file("notebooks.yaml"), workloadType);
  const CommandResult lint = runCommand({binaryPath(), "profiles", "lint", profiles.path()});
  EXPECT_EQ(lint.exitCode, 0) << lint.out << lint.err;

  std::vector<ManifestDocument> documents;
  std::string error;
  ASSERT_TRUE(parseManifests(workloadType, documents, &error)) << error;
  ASSERT_EQ(documents.size(), 1u);
  const JsonValue* spec = member(documents[0].json.get(), "spec");
  const std::string resource = std::string(stringMember(spec, "group")) + "/" +
                               std::string(stringOf(&(*member(spec, "versions"))[0])) + "/" +
                               std::string(stringMember(spec, "resource"));

  const std::string patches =
      documentedYaml("Its resource in the applied and reconciled webhooks' rules");
  ASSERT_NE(patches.find("patches:"), std::string::npos) << patches;
  TempDir overlay;
  writeFile(overlay.file("kustomization.yaml"),
            "resources:\n  - " + fs::relative(manifestsDir() + "/base", overlay.path()).string() +
                "\n" + patches);
  const Rendered rendered = render(overlay.path());
  const CommandResult schema = validateSchemas(rendered.jsons());
  EXPECT_EQ(schema.exitCode, 0) << schema.out << schema.err;
  std::map<std::string, Coverages> base;
  // Held here: the webhooks point into the rendered documents.
  const Rendered baseRendered = render(manifestsDir() + "/base");
  for (const Webhook& webhook : webhooksOf(baseRendered)) {
    base[webhook.name()] = coverageOf(webhook.value);
  }
  const std::vector<Webhook> webhooks = webhooksOf(rendered);
  ASSERT_EQ(webhooks.size(), kWebhookCount);
  for (const Webhook& webhook : webhooks) {
    SCOPED_TRACE(webhook.name());
    Coverages expected = base.at(webhook.name());
    if (webhook.name() == kAppliedMutate || webhook.name() == kAppliedValidate ||
        webhook.name() == kReconciledMutate || webhook.name() == kReconciledValidate) {
      expected[resource] = {{"CREATE", "UPDATE"}, "Namespaced"};
    }
    EXPECT_EQ(coverageOf(webhook.value), expected);
  }
}

}  // namespace
}  // namespace aiadmit
