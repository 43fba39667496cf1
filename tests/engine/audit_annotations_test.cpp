// auditAnnotations within what the API server accepts. kube-apiserver stores
// each under "<webhook name>/<key>" (k8s.io/apiserver admission plugin
// webhook dispatchers) and drops it unless checkKeyFormat passes: exactly one
// '/', and the whole key a qualified name (k8s.io/apimachinery
// IsQualifiedName: a DNS-1123 subdomain prefix of at most 253 characters, a
// name of at most 63 of [-A-Za-z0-9_.] that starts and ends alphanumeric).
// Every answer the engine gives on the corpus and the golden denials, at every
// enforcement level and on both endpoints, is held to those rules with every
// webhook name of manifests/base/webhooks.yaml, and to the value budget.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "mutators/mutator.h"
#include "tests/support/test_support.h"
#include "webhook/codec/yaml_json.h"
#include "webhook/engine/audit_annotations.h"
#include "webhook/engine/engine.h"
#include "webhook/policy/profile_loader.h"

namespace aiadmit {
namespace {

using namespace testing;

// IsDNS1123Subdomain, as the API server checks an annotation key's prefix.
bool isDns1123Subdomain(const std::string& value) {
  static const std::regex subdomain(
      "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$");
  return value.size() <= 253 && std::regex_match(value, subdomain);
}

// checkKeyFormat, then IsQualifiedName, on the key the API server forms.
bool apiServerAcceptsKey(const std::string& key) {
  if (std::count(key.begin(), key.end(), '/') != 1) return false;
  const size_t slash = key.find('/');
  const std::string prefix = key.substr(0, slash);
  const std::string name = key.substr(slash + 1);
  static const std::regex qualifiedName("^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$");
  return !prefix.empty() && isDns1123Subdomain(prefix) && !name.empty() && name.size() <= 63 &&
         std::regex_match(name, qualifiedName);
}

std::vector<std::string> webhookNames() {
  std::vector<std::string> names;
  std::istringstream lines(readFile(sourceDir() + "/manifests/base/webhooks.yaml"));
  // The webhooks of each configuration are the list items two spaces in.
  static const std::regex webhook("^  - name: ([^ #]+)\\s*$");
  std::smatch match;
  for (std::string line; std::getline(lines, line);) {
    if (std::regex_match(line, match, webhook)) names.push_back(match[1]);
  }
  return names;
}

TEST(AuditAnnotationKeys, TheCheckerRefusesWhatTheApiServerRefuses) {
  EXPECT_TRUE(apiServerAcceptsKey("applied.validate.aiadmit.dev/rules"));
  EXPECT_TRUE(apiServerAcceptsKey("a.b/profile-error"));
  EXPECT_FALSE(apiServerAcceptsKey("rules"));                               // no prefix
  EXPECT_FALSE(apiServerAcceptsKey("/rules"));                              // empty prefix
  EXPECT_FALSE(apiServerAcceptsKey("applied.validate.aiadmit.dev/a/b"));    // two '/'
  EXPECT_FALSE(apiServerAcceptsKey("Applied.validate.aiadmit.dev/rules"));  // upper-case prefix
  EXPECT_FALSE(apiServerAcceptsKey("applied.validate.aiadmit.dev/-rules"));
  EXPECT_FALSE(apiServerAcceptsKey("applied.validate.aiadmit.dev/rules_"));
  EXPECT_FALSE(apiServerAcceptsKey("applied.validate.aiadmit.dev/rule list"));
  EXPECT_FALSE(apiServerAcceptsKey("applied.validate.aiadmit.dev/" + std::string(64, 'a')));
  EXPECT_TRUE(apiServerAcceptsKey("applied.validate.aiadmit.dev/" + std::string(63, 'a')));
  EXPECT_FALSE(apiServerAcceptsKey(std::string(254, 'a') + "/rules"));
}

TEST(AuditAnnotationKeys, TheManifestsNameTheWebhooks) {
  const std::vector<std::string> names = webhookNames();
  EXPECT_EQ(names, (std::vector<std::string>{
                       "applied.mutate.aiadmit.dev", "reconciled.mutate.aiadmit.dev",
                       "controlled.mutate.aiadmit.dev", "applied.validate.aiadmit.dev",
                       "reconciled.validate.aiadmit.dev", "controlled.validate.aiadmit.dev",
                       "profiles.validate.aiadmit.dev"}));
}

struct Sample {
  std::string label;
  std::string json;
  std::string namespaceName;
};

std::vector<Sample> samples() {
  std::vector<Sample> out;
  for (const CorpusObject& object : corpusObjects()) {
    out.push_back({object.file + "#" + std::to_string(object.index), object.json, "default"});
  }
  const std::string denials = sourceDir() + "/tests/golden/denials";
  for (const auto& entry : std::filesystem::directory_iterator(denials)) {
    if (entry.path().extension() != ".yaml") continue;
    std::vector<ManifestDocument> documents;
    std::string error;
    EXPECT_TRUE(parseManifests(readFile(entry.path().string()), documents, &error)) << error;
    for (const ManifestDocument& document : documents) {
      const std::string ns(stringMember(member(document.json.get(), "metadata"), "namespace"));
      out.push_back(
          {entry.path().filename().string(), toJson(*document.json), ns.empty() ? "default" : ns});
    }
  }
  return out;
}

// Container images and the object's name are contents an audit log must not repeat.
std::vector<std::string> contentsOf(const JsonValue& object) {
  std::vector<std::string> out;
  const std::string name(stringMember(member(&object, "metadata"), "name"));
  if (name.size() > 8) out.push_back(name);
  std::function<void(const JsonValue&)> walk = [&](const JsonValue& value) {
    if (value.IsObject()) {
      for (const auto& entry : value.GetObject()) {
        if (std::string_view(entry.name.GetString()) == "image" && entry.value.IsString()) {
          out.emplace_back(entry.value.GetString());
        }
        walk(entry.value);
      }
    } else if (value.IsArray()) {
      for (const JsonValue& item : value.GetArray()) walk(item);
    }
  };
  walk(object);
  return out;
}

TEST(AuditAnnotations, EveryAnswerStaysWithinWhatTheApiServerAccepts) {
  const ProfileLoadResult loaded =
      loadProfileDirectory(sourceDir() + "/profiles", mutationSwitches());
  ASSERT_TRUE(loaded.ok());
  const std::vector<std::string> webhooks = webhookNames();
  ASSERT_FALSE(webhooks.empty());
  std::map<std::string, size_t> keysSeen;
  size_t answers = 0;
  for (RuleAction level : {RuleAction::Audit, RuleAction::Warn, RuleAction::Deny}) {
    const Engine engine(loaded.set, level);
    for (const Sample& sample : samples()) {
      const auto object = parseJson(sample.json);
      const std::vector<std::string> contents = contentsOf(*object);
      const std::string review =
          makeReview(sample.json, "CREATE", "uid-1", "", sample.namespaceName);
      for (Endpoint endpoint : {Endpoint::Mutate, Endpoint::Validate}) {
        const ReviewAnswer answer = answerReview(engine, endpoint, review);
        const ReviewResponse response = parseReviewResponse(answer.body);
        ++answers;
        size_t total = 0;
        for (const auto& [key, value] : response.auditAnnotations) {
          ++keysSeen[key];
          for (const std::string& webhook : webhooks) {
            EXPECT_TRUE(apiServerAcceptsKey(webhook + "/" + key)) << webhook << "/" << key;
          }
          EXPECT_LE(value.size(), kMaxAuditAnnotationValue) << sample.label << " " << key;
          EXPECT_FALSE(value.empty()) << sample.label << " " << key;
          for (unsigned char c : value) {
            EXPECT_TRUE(c >= 0x20 && c < 0x7f) << sample.label << " " << key << ": " << value;
          }
          for (const std::string& content : contents) {
            EXPECT_EQ(value.find(content), std::string::npos)
                << sample.label << " " << key << " repeats " << content;
          }
          total += key.size() + value.size();
        }
        EXPECT_LT(total, 1024u) << sample.label;
      }
    }
  }
  EXPECT_GT(answers, 100u);
  // The samples reach every key but profile-error, which the next test covers.
  for (std::string_view key :
       {kAuditClass, kAuditProfile, kAuditMutated, kAuditRules, kAuditCapped, kAuditEnforcement}) {
    EXPECT_GT(keysSeen[std::string(key)], 0u) << key;
  }
}

TEST(AuditAnnotations, AnUnusableProfileIsRecordedAndCapped) {
  const ProfileLoadResult loaded =
      loadProfileDirectory(sourceDir() + "/profiles", mutationSwitches());
  ASSERT_TRUE(loaded.ok());
  const std::string pod = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":
    {"aiadmit.dev/workload":"training","aiadmit.dev/profile":"batch"}},"spec":{"restartPolicy":
    "Never","containers":[{"name":"m","image":"i","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})";
  const std::string review = makeReview(pod, "CREATE", "uid-p");
  const ReviewResponse denied =
      parseReviewResponse(answerReview(Engine(loaded.set), Endpoint::Validate, review).body);
  EXPECT_FALSE(denied.allowed);
  ASSERT_TRUE(denied.auditAnnotations.count("profile-error")) << denied.message;
  EXPECT_EQ(denied.auditAnnotations.count("enforcement"), 0u);
  const ReviewResponse audited = parseReviewResponse(
      answerReview(Engine(loaded.set, RuleAction::Audit), Endpoint::Validate, review).body);
  EXPECT_TRUE(audited.allowed);
  EXPECT_TRUE(audited.warnings.empty());
  EXPECT_EQ(audited.auditAnnotations.at("profile-error"),
            denied.auditAnnotations.at("profile-error"));
  EXPECT_EQ(audited.auditAnnotations.at("enforcement"), "audit");
  const ReviewResponse warned = parseReviewResponse(
      answerReview(Engine(loaded.set, RuleAction::Warn), Endpoint::Validate, review).body);
  EXPECT_TRUE(warned.allowed);
  EXPECT_EQ(warned.warnings.size(), 1u);
}

TEST(AuditAnnotations, ErrorsCarryNone) {
  const ProfileLoadResult loaded =
      loadProfileDirectory(sourceDir() + "/profiles", mutationSwitches());
  ASSERT_TRUE(loaded.ok());
  const ReviewAnswer answer = answerReview(Engine(loaded.set), Endpoint::Validate, "{}");
  EXPECT_EQ(answer.httpStatus, 400);
  EXPECT_EQ(answer.body.find("auditAnnotations"), std::string::npos);
}

TEST(MutatedFields, NamesFieldsBelowThePodTemplateOnce) {
  const std::vector<std::string> paths = {
      "/spec/template/spec/tolerations",
      "/spec/template/spec/tolerations/-",
      "/spec/template/spec/containers/0/readinessProbe",
      "/spec/template/spec/containers/0/resources/limits/nvidia.com~1gpu",
      "/metadata/annotations/aiadmit.dev~1class",
      "/spec/template/metadata/labels/kueue.x-k8s.io~1queue-name",
      "/spec/jobTemplate/spec/template/spec/priorityClassName",
      "/spec/backoffLimit"};
  EXPECT_EQ(mutatedFieldsOf(paths),
            "tolerations,containers[0].readinessProbe,containers[0].resources,"
            "metadata.annotations,template.metadata.labels,priorityClassName,backoffLimit");
}

TEST(MutatedFields, StaysWithinTheValueBudget) {
  std::vector<std::string> paths;
  for (int i = 0; i < 200; ++i) {
    paths.push_back("/spec/containers/" + std::to_string(i) + "/readinessProbe");
  }
  const std::string fields = mutatedFieldsOf(paths);
  EXPECT_LE(fields.size(), kMaxAuditAnnotationValue);
  EXPECT_EQ(fields.rfind("containers[0].readinessProbe,", 0), 0u) << fields;
  EXPECT_NE(fields.find(" more"), std::string::npos) << fields;
  // What was left out is counted: the shown items and N add up to 200.
  const size_t shown = static_cast<size_t>(std::count(fields.begin(), fields.end(), ','));
  const size_t plus = fields.rfind('+');
  ASSERT_NE(plus, std::string::npos);
  EXPECT_EQ(shown + std::stoul(fields.substr(plus + 1)), 200u) << fields;
}

TEST(AuditAnnotations, EveryRuleAtOnceFits) {
  Evaluation evaluation;
  evaluation.workloadClass = WorkloadClass::Training;
  evaluation.profile = std::string(63, 'p');
  for (int rule = kFirstRule; rule <= lastRule().number; ++rule) {
    evaluation.rules.push_back({RuleId{rule}, RuleAction::Audit, RuleAction::Deny});
  }
  const auto annotations = validationAuditAnnotations(evaluation, RuleAction::Audit);
  std::map<std::string, std::string> byKey;
  for (const AuditAnnotation& a : annotations) byKey[a.key] = a.value;
  EXPECT_EQ(byKey["rules"].substr(0, 13), "AIA001=audit,");
  EXPECT_NE(byKey["rules"].find("AIA015=audit"), std::string::npos);
  EXPECT_NE(byKey["capped"].find("AIA015=deny"), std::string::npos);
  EXPECT_EQ(byKey["enforcement"], "audit");
  for (const auto& [key, value] : byKey) EXPECT_LE(value.size(), kMaxAuditAnnotationValue);
}

}  // namespace
}  // namespace aiadmit
