// POST /validate-profiles over the real TLS server: the review of aiadmit's
// own profiles ConfigMap. A set that does not load is a policy denial (HTTP
// 200, allowed: false) naming each error as `aiadmit profiles lint` prints it,
// with the ConfigMap key as the file; a good set is admitted; a delete, and an
// update that leaves the files as they were, are never refused; a review that
// cannot be read is a 400.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <sstream>

#include "tests/support/test_support.h"
#include "webhook/codec/base64.h"
#include "webhook/codec/json.h"
#include "webhook/engine/admission.h"

namespace aiadmit {
namespace {

using namespace testing;

using Files = std::map<std::string, std::string>;

Files shippedProfiles() {
  Files files;
  for (const char* name : {"training.yaml", "batch.yaml", "realtime.yaml"}) {
    files[name] = readFile(sourceDir() + "/profiles/" + name);
  }
  return files;
}

// The shipped profiles with the first toleration effect of training.yaml
// misspelled; `line` is where it is.
Files brokenTraining(int* line = nullptr) {
  Files files = shippedProfiles();
  std::string& training = files["training.yaml"];
  const size_t at = training.find("effect: NoSchedule");
  EXPECT_NE(at, std::string::npos);
  training.replace(at, 18, "effect: NoSchedul");
  if (line != nullptr)
    *line = 1 + static_cast<int>(std::count(training.begin(), training.begin() + at, '\n'));
  return files;
}

std::string configMap(const Files& data, const Files& binaryData = {},
                      const std::string& label = "", const std::string& release = "") {
  JsonDocument doc(rapidjson::kObjectType);
  JsonAllocator& allocator = doc.GetAllocator();
  setString(doc, "apiVersion", "v1", allocator);
  setString(doc, "kind", "ConfigMap", allocator);
  JsonValue metadata(rapidjson::kObjectType);
  setString(metadata, "name", "aiadmit-profiles-62d78tk7gk", allocator);
  setString(metadata, "namespace", "aiadmit-system", allocator);
  if (!label.empty()) {
    JsonValue labels(rapidjson::kObjectType);
    setString(labels, "team", label, allocator);
    setMember(metadata, "labels", std::move(labels), allocator);
  }
  if (!release.empty()) {
    JsonValue annotations(rapidjson::kObjectType);
    setString(annotations, "aiadmit.dev/release", release, allocator);
    setMember(metadata, "annotations", std::move(annotations), allocator);
  }
  setMember(doc, "metadata", std::move(metadata), allocator);
  for (const auto& [field, files] : {std::pair{"data", &data}, {"binaryData", &binaryData}}) {
    if (files->empty()) continue;
    JsonValue map(rapidjson::kObjectType);
    for (const auto& [key, text] : *files) {
      setString(map, key, std::string_view(field) == "data" ? text : base64Encode(text), allocator);
    }
    setMember(doc, field, std::move(map), allocator);
  }
  return toJson(doc);
}

ReviewResponse review(const WebhookServer& server, const std::string& body, int status = 200) {
  const HttpResponse response = server.post("/validate-profiles", body);
  EXPECT_EQ(response.status, status) << response.body;
  return parseReviewResponse(response.body);
}

ReviewResponse create(const WebhookServer& server, const std::string& object) {
  return review(server, makeReview(object, "CREATE", "u-create", "", "aiadmit-system"));
}

// What `aiadmit profiles lint` prints for `files` written to a directory,
// each error line with that directory's prefix taken off: KEY:LINE:COL: ...
std::vector<std::string> lintErrors(const Files& files) {
  TempDir dir;
  for (const auto& [name, text] : files) writeFile(dir.file(name), text);
  const CommandResult lint = runCommand({binaryPath(), "profiles", "lint", dir.path()});
  EXPECT_EQ(lint.exitCode, 1) << lint.out;
  std::vector<std::string> errors;
  std::istringstream lines(lint.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(dir.path() + "/", 0) == 0) errors.push_back(line.substr(dir.path().size() + 1));
  }
  EXPECT_FALSE(errors.empty()) << lint.out;
  return errors;
}

TEST(ProfilesReview, ABrokenSetIsDeniedWithKeyLineAndFieldAsLintPrintsThem) {
  WebhookServer server;
  int line = 0;
  const Files files = brokenTraining(&line);
  const ReviewResponse answer = create(server, configMap(files));
  EXPECT_EQ(answer.uid, "u-create");
  EXPECT_FALSE(answer.allowed);
  EXPECT_EQ(answer.statusCode, 403);
  EXPECT_NE(answer.message.find("training.yaml:" + std::to_string(line) + ":"), std::string::npos)
      << answer.message;
  EXPECT_NE(answer.message.find("spec.placement.tolerations[0].effect"), std::string::npos);
  for (const std::string& error : lintErrors(files)) {
    EXPECT_NE(answer.message.find("\n" + error), std::string::npos) << error << "\n"
                                                                    << answer.message;
  }
  EXPECT_NE(answer.message.find("would keep their last good set"), std::string::npos);
}

// During an upgrade the previous release's replicas answer for the new
// release's ConfigMap: a set they cannot load but that names a later release
// is admitted and said, never refused; the same set of this release or an
// earlier one, or naming no release it can read, is refused as before.
TEST(ProfilesReview, ASetOfALaterReleaseIsAdmittedWithAWarningNotRefused) {
  WebhookServer server;
  int line = 0;
  const Files files = brokenTraining(&line);
  const std::string ours = AIADMIT_VERSION;
  // Compared number by number: "100" after "99.1", a fourth part after none.
  for (const std::string& later : std::vector<std::string>{"99.0.0", "100", ours + ".1"}) {
    const ReviewResponse answer = create(server, configMap(files, {}, "", later));
    EXPECT_TRUE(answer.allowed) << later << ": " << answer.message;
    ASSERT_EQ(answer.warnings.size(), 3u) << later;
    EXPECT_EQ(answer.warnings[0], "aiadmit: these profiles are for aiadmit " + later +
                                      ", later than this replica's " + ours +
                                      ": admitted unjudged");
    EXPECT_EQ(answer.warnings[1],
              "aiadmit: the new release's replicas load them as they start and stop its rollout "
              "if they fail");
    EXPECT_EQ(
        answer.warnings[2].rfind(
            "aiadmit: 1 error here, the first: training.yaml:" + std::to_string(line) + ":", 0),
        0u)
        << answer.warnings[2];
  }
  for (const std::string& notLater : std::vector<std::string>{
           ours, ours + ".0", "0.0.0", "0", ours + "-rc.1", "next", "0..2", "99.0.0.", ""}) {
    const ReviewResponse answer = create(server, configMap(files, {}, "", notLater));
    EXPECT_FALSE(answer.allowed) << "release \"" << notLater << "\"";
    EXPECT_NE(answer.message.find("these profiles do not load"), std::string::npos)
        << answer.message;
  }
  // A good set of a later release is admitted like any good set.
  const ReviewResponse good = create(server, configMap(shippedProfiles(), {}, "", "99.0.0"));
  EXPECT_TRUE(good.allowed);
  EXPECT_TRUE(good.warnings.empty());
}

TEST(ProfilesReview, TheShippedSetAndWorkloadTypeDocumentsAreAdmitted) {
  WebhookServer server;
  Files files = shippedProfiles();
  files["notebooks.yaml"] =
      "apiVersion: aiadmit.dev/v1\nkind: WorkloadType\nmetadata:\n  name: notebooks\nspec:\n"
      "  group: kubeflow.org\n  kind: Notebook\n  versions: [v1]\n  resource: notebooks\n"
      "  class: realtime\n  classReason: a Notebook is an interactive Jupyter server\n"
      "  lifecycle: LongRunning\n  templates:\n  - role: notebook\n"
      "    podSpec: /spec/template/spec\n    metadata: /metadata\n";
  const ReviewResponse answer = create(server, configMap(files));
  EXPECT_TRUE(answer.allowed) << answer.message;
  EXPECT_TRUE(answer.warnings.empty());

  // The same document with a lifecycle the loader does not know.
  std::string& notebooks = files["notebooks.yaml"];
  notebooks.replace(notebooks.find("LongRunning"), 11, "Forever");
  const ReviewResponse broken = create(server, configMap(files));
  EXPECT_FALSE(broken.allowed);
  EXPECT_NE(broken.message.find("notebooks.yaml:12:"), std::string::npos) << broken.message;
  EXPECT_NE(broken.message.find("spec.lifecycle"), std::string::npos) << broken.message;
}

TEST(ProfilesReview, KeysTheServerDoesNotReadAreNamedAndNotJudged) {
  WebhookServer server;
  Files files = shippedProfiles();
  files["training.yaml.bak"] = "not: [a profile";
  const ReviewResponse answer = create(server, configMap(files));
  EXPECT_TRUE(answer.allowed) << answer.message;
  ASSERT_EQ(answer.warnings.size(), 1u);
  EXPECT_NE(answer.warnings[0].find("training.yaml.bak is not read as profiles"), std::string::npos)
      << answer.warnings[0];

  // No profile file at all: the server would not start on it.
  const ReviewResponse empty = create(server, configMap({{"README", "profiles live elsewhere"}}));
  EXPECT_FALSE(empty.allowed);
  EXPECT_NE(empty.message.find("no profiles found"), std::string::npos) << empty.message;
}

TEST(ProfilesReview, BinaryDataIsJudgedAsTheVolumeHoldsIt) {
  WebhookServer server;
  Files files = brokenTraining();
  const Files binary = {{"training.yaml", files["training.yaml"]}};
  files.erase("training.yaml");
  const ReviewResponse answer = create(server, configMap(files, binary));
  EXPECT_FALSE(answer.allowed);
  EXPECT_NE(answer.message.find("training.yaml:"), std::string::npos) << answer.message;

  std::string notBase64 = configMap(shippedProfiles());
  notBase64.insert(notBase64.size() - 1, R"(,"binaryData":{"extra.yaml":"%%%"})");
  const ReviewResponse refused =
      review(server, makeReview(notBase64, "CREATE", "u-b64", "", "aiadmit-system"), 400);
  EXPECT_EQ(refused.statusCode, 400);
  EXPECT_NE(refused.message.find("binaryData[\"extra.yaml\"] is not base64"), std::string::npos)
      << refused.message;
}

TEST(ProfilesReview, UpdatesAreJudgedOnlyWhenTheyChangeTheFiles) {
  WebhookServer server;
  const std::string good = configMap(shippedProfiles());
  const std::string broken = configMap(brokenTraining());
  const std::string brokenRelabelled = configMap(brokenTraining(), {}, "ml-platform");
  // A broken edit of the live set.
  EXPECT_FALSE(review(server, makeReview(broken, "UPDATE", "u1", good, "aiadmit-system")).allowed);
  // Its repair.
  EXPECT_TRUE(review(server, makeReview(good, "UPDATE", "u2", broken, "aiadmit-system")).allowed);
  // A label on a set stored before the check existed: nothing the server
  // reads changes, and refusing it would only block what comes with it (a
  // finalizer's removal).
  EXPECT_TRUE(review(server, makeReview(brokenRelabelled, "UPDATE", "u3", broken, "aiadmit-system"))
                  .allowed);
}

TEST(ProfilesReview, DeletesAreNeverRefused) {
  WebhookServer server;
  const std::string broken = configMap(brokenTraining());
  const std::string body =
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-del",)"
      R"("kind":{"group":"","version":"v1","kind":"ConfigMap"},"namespace":"aiadmit-system",)"
      R"("name":"aiadmit-profiles-62d78tk7gk","operation":"DELETE","object":null,"oldObject":)" +
      broken + "}}";
  const ReviewResponse answer = review(server, body);
  EXPECT_EQ(answer.uid, "u-del");
  EXPECT_TRUE(answer.allowed);
}

TEST(ProfilesReview, WhatCannotBeReadIsABadRequestNotADenial) {
  WebhookServer server;
  EXPECT_EQ(review(server, "{not json", 400).statusCode, 400);
  const ReviewResponse notText = review(
      server,
      makeReview(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"aiadmit-profiles"},)"
                 R"("data":{"training.yaml":7}})",
                 "CREATE", "u-int", "", "aiadmit-system"),
      400);
  EXPECT_EQ(notText.uid, "u-int");
  EXPECT_NE(notText.message.find("data[\"training.yaml\"] is not a string"), std::string::npos)
      << notText.message;
  const HttpResponse wrongType = server.post(
      "/validate-profiles", makeReview(configMap(shippedProfiles()), "CREATE", "u"), "text/plain");
  EXPECT_EQ(wrongType.status, 400);
  EXPECT_EQ(server.get("/validate-profiles").status, 405);
}

TEST(ProfilesReview, ADenialListsTheFirstErrorsAndCountsTheRest) {
  WebhookServer server;
  Files files;
  for (int i = 0; i < 25; ++i) {
    files["p" + std::to_string(100 + i) + ".yaml"] = "apiVersion: aiadmit.dev/v1\nkind: Profile\n";
  }
  const ReviewResponse answer = create(server, configMap(files));
  EXPECT_FALSE(answer.allowed);
  EXPECT_NE(answer.message.find("\np100.yaml:"), std::string::npos) << answer.message;
  EXPECT_EQ(answer.message.find("\np124.yaml:"), std::string::npos) << answer.message;
  EXPECT_NE(answer.message.find(" more; `aiadmit profiles lint DIR` lists them all"),
            std::string::npos)
      << answer.message;
  EXPECT_LT(answer.message.size(), 8000u);
}

// A ConfigMap of 1.3 MB of YAML: loading it takes a second and more.
std::string largeProfile() {
  std::string yaml =
      "apiVersion: aiadmit.dev/v1\nkind: Profile\nmetadata:\n  name: big\nspec:\n"
      "  class: batch\n  notes:\n";
  // Just under the 1 MiB a ConfigMap holds at most.
  for (int i = 0; yaml.size() < 1000 * 1024; ++i) {
    yaml += "  - {name: item" + std::to_string(i) + ", value: " + std::to_string(i) +
            ", other: [a, b, c]}\n";
  }
  return yaml;
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(ProfilesReview, ALargeConfigMapIsLoadedOffTheIoThreads) {
  WebhookServer::Options options;
  // A body limit above the review's own, so that its 4 MiB is what refuses.
  options.extraArgs = {"--io-threads", "1", "--max-body-bytes", "8388608"};
  WebhookServer server(options);
  const std::string body = makeReview(configMap({{"big.yaml", largeProfile()}}), "CREATE", "u-big",
                                      "", "aiadmit-system");
  RawConnection review(server.port(), true);
  ASSERT_TRUE(
      review.send("POST /validate-profiles HTTP/1.1\r\nHost: x\r\n"
                  "Content-Type: application/json\r\nContent-Length: " +
                  std::to_string(body.size()) + "\r\n\r\n" + body));
  const auto sent = std::chrono::steady_clock::now();
  // The one I/O thread answers others all the while: were it loading the
  // ConfigMap itself, the first /healthz would wait for the load, and the
  // review's answer would be there as soon as it came back.
  std::string answered;
  int answeredMeanwhile = 0;
  while (answered.empty() && secondsSince(sent) < 60) {
    EXPECT_EQ(server.get("/healthz").status, 200);
    answered = review.readResponse(0.01);
    if (answered.empty()) ++answeredMeanwhile;
  }
  EXPECT_GE(answeredMeanwhile, 3) << "the review held the I/O thread";
  // Denied (an unknown field), or, past the wait, a 503 the API server takes
  // as the webhook failing.
  const int status = statusOf(answered);
  EXPECT_TRUE(status == 200 || status == 503) << answered;
  if (status == 200) {
    EXPECT_NE(answered.find("spec.notes"), std::string::npos) << answered;
  }

  // More than two ConfigMaps (at most 1 MiB each) would make: refused at once.
  const HttpResponse huge =
      server.post("/validate-profiles", body + std::string(4 * 1024 * 1024, ' '));
  EXPECT_EQ(huge.status, 413);
}

// More than a ConfigMap may hold (1 MiB) is not loaded: a 400, which the API
// server, which stores no such ConfigMap, never sends.
TEST(ProfilesReview, AConfigMapOverOneMebibyteIsNotLoaded) {
  WebhookServer server;
  const std::string over = largeProfile() + "#" + std::string(64 * 1024, 'x') + "\n";
  const HttpResponse refused = server.post(
      "/validate-profiles",
      makeReview(configMap({{"big.yaml", over}}), "CREATE", "u-over", "", "aiadmit-system"));
  EXPECT_EQ(refused.status, 400) << refused.body.substr(0, 300);
  EXPECT_NE(refused.body.find("more than 1 MiB"), std::string::npos) << refused.body;
}

TEST(ProfilesReview, ReviewsAreCountedByDecision) {
  WebhookServer server;
  create(server, configMap(shippedProfiles()));
  create(server, configMap(brokenTraining()));
  create(server, configMap(brokenTraining()));
  review(server, "{}", 400);
  const std::string metrics = server.get("/metrics").body;
  EXPECT_NE(metrics.find("aiadmit_profile_reviews_total{decision=\"allowed\"} 1\n"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("aiadmit_profile_reviews_total{decision=\"denied\"} 2\n"),
            std::string::npos);
  EXPECT_NE(metrics.find("aiadmit_profile_reviews_total{decision=\"errored\"} 1\n"),
            std::string::npos);
  // A review is an answer about the ConfigMap, not a reload: the set in force stays.
  EXPECT_NE(metrics.find("aiadmit_profile_last_reload_successful 1\n"), std::string::npos);
}

}  // namespace
}  // namespace aiadmit
