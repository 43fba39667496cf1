// Profiles in the running server: selection over HTTPS, the reload of a
// ConfigMap volume without a restart (a good update takes effect, a broken
// one is refused and the last good set stays), and the refusal to start on a
// broken set.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "tests/support/test_support.h"
#include "webhook/serving/profile_watch.h"

namespace aiadmit {
namespace {

namespace fs = std::filesystem;
using aiadmit::testing::applyPatch;
using aiadmit::testing::binaryPath;
using aiadmit::testing::CommandResult;
using aiadmit::testing::corpusDir;
using aiadmit::testing::devCertificates;
using aiadmit::testing::HttpResponse;
using aiadmit::testing::makeReview;
using aiadmit::testing::parseReviewResponse;
using aiadmit::testing::readFile;
using aiadmit::testing::ReviewResponse;
using aiadmit::testing::runCommand;
using aiadmit::testing::sourceDir;
using aiadmit::testing::TempDir;
using aiadmit::testing::WebhookServer;
using aiadmit::testing::writeFile;

using Files = std::map<std::string, std::string>;

// Updates a ConfigMap volume the way kubelet's atomic writer does: the new
// files in a new hidden directory, ..data swapped to it by one rename, a
// symlink per key, then the old version and stale keys removed.
class ConfigMapVolume {
 public:
  explicit ConfigMapVolume(std::string root) : root_(std::move(root)) {}

  void update(const Files& files) {
    const std::string version = "..2024_01_01_00_00_0" + std::to_string(++version_);
    fs::create_directory(root_ + "/" + version);
    for (const auto& [name, text] : files) writeFile(root_ + "/" + version + "/" + name, text);
    fs::create_symlink(version, root_ + "/..data_tmp");
    fs::rename(root_ + "/..data_tmp", root_ + "/..data");
    for (const auto& [name, text] : files) {
      if (!fs::exists(fs::symlink_status(root_ + "/" + name))) {
        fs::create_symlink("..data/" + name, root_ + "/" + name);
      }
    }
    for (const std::string& stale : keys_) {
      if (files.count(stale) == 0) fs::remove(root_ + "/" + stale);
    }
    if (!current_.empty()) fs::remove_all(root_ + "/" + current_);
    current_ = version;
    keys_.clear();
    for (const auto& [name, text] : files) keys_.push_back(name);
  }

 private:
  std::string root_;
  int version_ = 0;
  std::string current_;
  std::vector<std::string> keys_;
};

Files shippedProfiles() {
  Files files;
  for (const char* name : {"training.yaml", "batch.yaml", "realtime.yaml"}) {
    files[name] = readFile(sourceDir() + "/profiles/" + name);
  }
  return files;
}

std::string withTolerationValue(std::string profile, const std::string& value) {
  const std::string from = "value: gpu\n";
  const size_t at = profile.find(from);
  EXPECT_NE(at, std::string::npos);
  if (at != std::string::npos) profile.replace(at, from.size(), "value: " + value + "\n");
  return profile;
}

std::string extraProfile(const std::string& name, const std::string& ns) {
  return "apiVersion: aiadmit.dev/v1\nkind: Profile\nmetadata:\n  name: " + name +
         "\nspec:\n  class: batch\n  scope:\n    namespaces: [" + ns + "]\n";
}

std::string referenceReview() {
  return readFile(corpusDir() + "/../bench/gpu-pod-review.json");
}

// The toleration the server adds to the reference GPU Pod, as kubectl applies it.
std::string injectedTolerationValue(const WebhookServer& server) {
  const HttpResponse http = server.post("/mutate", referenceReview());
  EXPECT_EQ(http.status, 200) << http.body;
  const ReviewResponse response = parseReviewResponse(http.body);
  EXPECT_TRUE(response.allowed);
  const auto review = aiadmit::testing::parseJson(referenceReview());
  const std::string object = toJson(*member(member(review.get(), "request"), "object"));
  const std::string patched = applyPatch(object, response.patch);
  const auto doc = aiadmit::testing::parseJson(patched);
  const JsonValue* tolerations = member(member(doc.get(), "spec"), "tolerations");
  if (!isArray(tolerations)) return "";
  for (const JsonValue& toleration : tolerations->GetArray()) {
    if (stringMember(&toleration, "key") == "accelerator") {
      return std::string(stringMember(&toleration, "value"));
    }
  }
  return "";
}

std::string reloadedLine(const std::string& dir, int profiles) {
  return R"("msg":"profiles reloaded","dir":")" + dir + R"(","profiles":")" +
         std::to_string(profiles) + "\"";
}

TEST(ProfileWatch, SeesEachKindOfChangeOnce) {
  TempDir dir;
  ConfigMapVolume volume(dir.path());
  volume.update({{"a.yaml", "first"}});
  ProfileWatch watch(dir.path());
  EXPECT_FALSE(watch.changed());
  volume.update({{"a.yaml", "second"}});  // the ..data swap
  EXPECT_TRUE(watch.changed());
  EXPECT_FALSE(watch.changed());
  volume.update({{"a.yaml", "second"}, {"b.yaml", "new key"}});
  EXPECT_TRUE(watch.changed());
  writeFile(dir.file("c.yaml"), "a plain file");
  EXPECT_TRUE(watch.changed());
  writeFile(dir.file("c.yaml"), "b plain file");  // same size, likely the same clock tick
  EXPECT_TRUE(watch.changed());
  fs::remove(dir.file("c.yaml"));
  EXPECT_TRUE(watch.changed());
  EXPECT_FALSE(watch.changed());
}

TEST(ProfileReload, ConfigMapUpdateTakesEffectAndABrokenOneKeepsTheLastGoodSet) {
  TempDir dir;
  ConfigMapVolume volume(dir.path());
  Files files = shippedProfiles();
  const std::string realtime = files["realtime.yaml"];
  volume.update(files);
  WebhookServer server(WebhookServer::Options{dir.path(), "", "", {}});
  ASSERT_GT(server.port(), 0);
  EXPECT_EQ(injectedTolerationValue(server), "gpu");

  // A good update: a new toleration value and a fourth profile.
  files["realtime.yaml"] = withTolerationValue(realtime, "gpu-v2");
  files["extra.yaml"] = extraProfile("batch-nightly", "nightly");
  volume.update(files);
  ASSERT_TRUE(server.waitForOutput(reloadedLine(dir.path(), 4), 20)) << server.output();
  EXPECT_EQ(injectedTolerationValue(server), "gpu-v2");

  // A broken update: refused, logged with its location, the last good set stays.
  Files broken = files;
  broken["realtime.yaml"] = withTolerationValue(realtime, "gpu-v3");
  const size_t effect = broken["realtime.yaml"].find("effect: NoSchedule");
  ASSERT_NE(effect, std::string::npos);
  broken["realtime.yaml"].replace(effect, 18, "effect: NoSchedul");
  broken["more.yaml"] = extraProfile("batch-weekly", "weekly");
  volume.update(broken);
  ASSERT_TRUE(server.waitForOutput("profile reload refused; keeping the last good set", 20))
      << server.output();
  EXPECT_NE(server.output().find(dir.path() + "/realtime.yaml:"), std::string::npos);
  EXPECT_NE(server.output().find(R"(\"NoSchedul\" is not one of)"), std::string::npos)
      << server.output();
  EXPECT_EQ(injectedTolerationValue(server), "gpu-v2");
  EXPECT_EQ(server.get("/readyz").status, 200);
  const std::string metrics = server.get("/metrics").body;
  EXPECT_NE(metrics.find("aiadmit_profile_reloads_total{result=\"success\"} 2\n"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("aiadmit_profile_reloads_total{result=\"failure\"} 1\n"),
            std::string::npos);
  EXPECT_NE(metrics.find("aiadmit_profiles 4\n"), std::string::npos);
  EXPECT_NE(metrics.find("aiadmit_profile_last_reload_successful 0\n"), std::string::npos);

  // Fixed again: the next good set takes over.
  broken["realtime.yaml"] = withTolerationValue(realtime, "gpu-v4");
  volume.update(broken);
  ASSERT_TRUE(server.waitForOutput(reloadedLine(dir.path(), 5), 20)) << server.output();
  EXPECT_EQ(injectedTolerationValue(server), "gpu-v4");
  EXPECT_NE(server.get("/metrics").body.find("aiadmit_profile_last_reload_successful 1\n"),
            std::string::npos);
}

TEST(ProfileReload, PlainDirectoryEditsAreReloadedToo) {
  TempDir dir;
  for (const auto& [name, text] : shippedProfiles()) writeFile(dir.file(name), text);
  WebhookServer server(WebhookServer::Options{dir.path(), "", "", {}});
  ASSERT_GT(server.port(), 0);
  // Written aside and renamed into place, so that no half-written file is seen.
  writeFile(dir.file(".zz-extra.yml.tmp"), extraProfile("batch-nightly", "nightly"));
  fs::rename(dir.file(".zz-extra.yml.tmp"), dir.file("zz-extra.yml"));
  ASSERT_TRUE(server.waitForOutput(reloadedLine(dir.path(), 4), 20)) << server.output();
  fs::remove(dir.file("zz-extra.yml"));
  ASSERT_TRUE(server.waitForOutput(reloadedLine(dir.path(), 3), 20)) << server.output();
}

TEST(ProfileReload, BrokenProfilesAtStartUpStopTheServerWithTheErrors) {
  TempDir dir;
  writeFile(dir.file("training.yaml"),
            readFile(sourceDir() + "/tests/golden/profiles/toleration-effect.yaml"));
  const CommandResult result =
      runCommand({binaryPath(), "serve", "--profiles", dir.path(), "--tls-cert",
                  devCertificates().file("tls.crt"), "--tls-key", devCertificates().file("tls.key"),
                  "--listen", "127.0.0.1:0"});
  EXPECT_EQ(result.exitCode, 1);
  const std::string output = result.out + result.err;
  EXPECT_NE(output.find(dir.file("training.yaml") +
                        R"(:15:15: spec.placement.tolerations[0].effect: \"NoSchedul\")"),
            std::string::npos)
      << output;
  EXPECT_NE(output.find("no usable profiles; not starting"), std::string::npos);
  EXPECT_EQ(output.find("\"listening\""), std::string::npos);
}

std::string gpuPod(const std::string& annotations, const std::string& labels) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"server","annotations":)" +
         annotations + R"(,"labels":)" + labels +
         R"(},"spec":{"containers":[{"name":"server","image":"vllm/vllm-openai:v0.6.3","ports":[{"containerPort":8000}],"resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})";
}

Files scopedProfiles() {
  Files files = shippedProfiles();
  std::string serving = withTolerationValue(files["realtime.yaml"], "serving-pool");
  serving.replace(serving.find("name: realtime"), 14, "name: realtime-serving");
  serving.replace(serving.find("  class: realtime\n"), 18,
                  "  class: realtime\n  scope:\n    namespaces: [\"serving-*\"]\n");
  files["serving.yaml"] = serving;
  return files;
}

TEST(ProfileSelectionServer, NamespaceScopeAndAnnotationChooseTheProfile) {
  TempDir dir;
  for (const auto& [name, text] : scopedProfiles()) writeFile(dir.file(name), text);
  WebhookServer server(WebhookServer::Options{dir.path(), "", "", {}});
  ASSERT_GT(server.port(), 0);

  auto mutate = [&](const std::string& object, const std::string& ns) {
    const HttpResponse http = server.post("/mutate", makeReview(object, "CREATE", "u", "", ns));
    EXPECT_EQ(http.status, 200) << http.body;
    return parseReviewResponse(http.body);
  };
  auto mentions = [](const ReviewResponse& response, const std::string& text) {
    for (const std::string& warning : response.warnings) {
      if (warning.find(text) != std::string::npos) return true;
    }
    return false;
  };

  // By scope: the namespace pattern beats the class default.
  const ReviewResponse scoped = mutate(gpuPod("{}", "{}"), "serving-eu");
  EXPECT_NE(scoped.patch.find(R"("value":"serving-pool")"), std::string::npos) << scoped.patch;
  EXPECT_TRUE(mentions(scoped, "(profile realtime-serving)"));
  const ReviewResponse fallback = mutate(gpuPod("{}", "{}"), "default");
  EXPECT_NE(fallback.patch.find(R"("value":"gpu")"), std::string::npos) << fallback.patch;
  EXPECT_TRUE(mentions(fallback, "(profile realtime)"));

  // By name: allowed where the profile's scope admits the namespace...
  const ReviewResponse named =
      mutate(gpuPod(R"({"aiadmit.dev/profile":"realtime"})", "{}"), "serving-eu");
  EXPECT_TRUE(mentions(named, "(profile realtime)"));

  // ...and refused elsewhere: /mutate injects nothing and says why, /validate denies.
  const std::string outside = gpuPod(R"({"aiadmit.dev/profile":"realtime-serving"})", "{}");
  const ReviewResponse nothing = mutate(outside, "default");
  EXPECT_TRUE(nothing.allowed);
  EXPECT_TRUE(nothing.patch.empty());
  EXPECT_TRUE(mentions(nothing,
                       "nothing injected: profile \"realtime-serving\" is not allowed "
                       "in namespace default"));
  const HttpResponse http =
      server.post("/validate", makeReview(outside, "CREATE", "v", "", "default"));
  ASSERT_EQ(http.status, 200) << http.body;
  const ReviewResponse denied = parseReviewResponse(http.body);
  EXPECT_FALSE(denied.allowed);
  EXPECT_EQ(denied.statusCode, 403);
  EXPECT_NE(denied.message.find("metadata.annotations[aiadmit.dev/profile]: profile "
                                "\"realtime-serving\" is not allowed in namespace default "
                                "(profiles of class realtime that place nvidia.com/gpu for "
                                "namespace default: realtime)"),
            std::string::npos)
      << denied.message;
}

}  // namespace
}  // namespace aiadmit
