// The profiles webhook on the real control plane: `kubectl apply` of a
// profiles ConfigMap that does not load is refused with file (the key), line
// and field, and nothing is stored; a good one is stored; an edit that breaks
// the live one is refused and the stored one stays; a delete goes through.
// While aiadmit is down the webhook fails open, so an admin can still act.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "tests/e2e/support/e2e_cluster.h"

namespace aiadmit::e2e {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSystem = "aiadmit-system";
constexpr const char* kWebhook = "profiles.validate.aiadmit.dev";

// The shipped profiles, with training.yaml's first toleration effect
// misspelt when `broken`; `line` is where.
struct ProfileFiles {
  testing::TempDir dir;
  int line = 0;
  explicit ProfileFiles(bool broken) {
    for (const char* name : {"training.yaml", "batch.yaml", "realtime.yaml"}) {
      std::string text = testing::readFile(testing::sourceDir() + "/profiles/" + name);
      const size_t at = text.find("effect: NoSchedule");
      if (broken && std::string(name) == "training.yaml" && at != std::string::npos) {
        text.replace(at, 18, "effect: NoSchedul");
        line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + at, '\n'));
      }
      testing::writeFile(dir.file(name), text);
    }
  }
};

// The ConfigMap `kubectl create configmap --from-file` makes of the files, as YAML.
std::string configMapOf(const std::string& name, const ProfileFiles& files) {
  const CommandResult made = kubectl({"create", "configmap", name, "-n", kSystem, "--from-file",
                                      files.dir.path(), "--dry-run=client", "-o", "yaml"});
  EXPECT_EQ(made.exitCode, 0) << made.err;
  return made.out;
}

class ConfigMapDeletedAtExit {
 public:
  explicit ConfigMapDeletedAtExit(std::string name) : name_(std::move(name)) {}
  ~ConfigMapDeletedAtExit() {
    kubectl({"delete", "configmap", name_, "-n", kSystem, "--ignore-not-found"});
  }

 private:
  std::string name_;
};

TEST(E2eProfilesWebhook, ABrokenProfilesConfigMapIsRefusedAtApplyWithFileLineAndField) {
  const std::string name = "aiadmit-profiles";
  ConfigMapDeletedAtExit cleanup(name);
  const ProfileFiles broken(true);
  ASSERT_GT(broken.line, 0);
  const CommandResult refused = kubectl({"apply", "-f", "-"}, configMapOf(name, broken));
  EXPECT_NE(refused.exitCode, 0);
  EXPECT_NE(refused.err.find("admission webhook \"" + std::string(kWebhook) +
                             "\" denied the request: these profiles do not load (1 error)"),
            std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("\ntraining.yaml:" + std::to_string(broken.line) +
                             ":17: spec.placement.tolerations[0].effect: \"NoSchedul\" is not "
                             "one of NoSchedule, PreferNoSchedule, NoExecute"),
            std::string::npos)
      << refused.err;
  EXPECT_NE(kubectl({"get", "configmap", name, "-n", kSystem}).err.find("NotFound"),
            std::string::npos)
      << "nothing was stored";

  // The good set is stored.
  const ProfileFiles good(false);
  const CommandResult stored = kubectl({"apply", "-f", "-"}, configMapOf(name, good));
  ASSERT_EQ(stored.exitCode, 0) << stored.err;
  const json kept = kubectlJson({"get", "configmap", name, "-n", kSystem});
  ASSERT_TRUE(kept.is_object());

  // An edit that breaks it is refused; the stored set stays as it was.
  const CommandResult edit = kubectl({"apply", "-f", "-"}, configMapOf(name, broken));
  EXPECT_NE(edit.exitCode, 0);
  EXPECT_NE(edit.err.find("training.yaml:" + std::to_string(broken.line) + ":17"),
            std::string::npos)
      << edit.err;
  EXPECT_EQ(kubectlJson({"get", "configmap", name, "-n", kSystem})["data"], kept["data"]);
  // A label changes no file: not even sent.
  EXPECT_EQ(kubectl({"label", "configmap", name, "-n", kSystem, "team=ml-platform"}).exitCode, 0);
  // And a delete is never refused.
  const CommandResult deleted = kubectl({"delete", "configmap", name, "-n", kSystem});
  EXPECT_EQ(deleted.exitCode, 0) << deleted.err;
}

TEST(E2eProfilesWebhook, TheInstalledConfigMapIsGuardedByItsGeneratedName) {
  // The base's configMapGenerator gave it a hash of its contents.
  const json configMaps = kubectlJson({"get", "configmaps", "-n", kSystem});
  ASSERT_TRUE(configMaps.is_object());
  std::string installed;
  for (const json& item : configMaps["items"]) {
    const std::string name = item["metadata"]["name"];
    if (name.rfind("aiadmit-profiles-", 0) == 0) installed = name;
  }
  ASSERT_FALSE(installed.empty()) << configMaps.dump();
  const std::string patch =
      R"({"data":{"batch.yaml":"apiVersion: aiadmit.dev/v1\nkind: Profile\nmetadata:\n  name: batch\nspec:\n  clas: batch\n"}})";
  const CommandResult refused =
      kubectl({"patch", "configmap", installed, "-n", kSystem, "--type=merge", "-p", patch});
  EXPECT_NE(refused.exitCode, 0);
  EXPECT_NE(refused.err.find("batch.yaml:6:3: spec.clas"), std::string::npos) << refused.err;
  // The audit log records the refusal and the webhook that made it.
  bool recorded = false;
  for (const json& event : auditEvents("configmaps", kSystem, installed, "patch")) {
    const json status = event.value("responseStatus", json::object());
    recorded = recorded || (status.value("code", 0) == 403 &&
                            status.value("message", "").find(kWebhook) != std::string::npos);
  }
  EXPECT_TRUE(recorded);
}

// An upgrade applies the new release's profiles ConfigMap while the previous
// release's replicas answer the webhook: a set they cannot load that names a
// later release (aiadmit.dev/release, which the base's generator sets) is
// stored with their warnings, not refused; the same set naming this release
// is refused.
TEST(E2eProfilesWebhook, ALaterReleasesProfilesAreStoredWithAWarningDuringAnUpgrade) {
  const std::string name = "aiadmit-profiles-nextrelease";
  ConfigMapDeletedAtExit cleanup(name);
  const ProfileFiles broken(true);
  const auto annotated = [&](const std::string& release) {
    const CommandResult made =
        kubectl({"annotate", "--local", "-f", "-", "aiadmit.dev/release=" + release, "-o", "yaml"},
                configMapOf(name, broken));
    EXPECT_EQ(made.exitCode, 0) << made.err;
    return made.out;
  };
  const CommandResult refused = kubectl({"apply", "-f", "-"}, annotated(AIADMIT_VERSION));
  EXPECT_NE(refused.exitCode, 0);
  EXPECT_NE(refused.err.find("these profiles do not load"), std::string::npos) << refused.err;

  const CommandResult stored = kubectl({"apply", "-f", "-"}, annotated("99.0.0"));
  ASSERT_EQ(stored.exitCode, 0) << stored.err;
  EXPECT_NE(stored.err.find("Warning: aiadmit: these profiles are for aiadmit 99.0.0, later than "
                            "this replica's " AIADMIT_VERSION ": admitted unjudged"),
            std::string::npos)
      << stored.err;
  EXPECT_NE(stored.err.find("Warning: aiadmit: 1 error here, the first: training.yaml:" +
                            std::to_string(broken.line) + ":17"),
            std::string::npos)
      << stored.err;
  const json kept = kubectlJson({"get", "configmap", name, "-n", kSystem});
  ASSERT_TRUE(kept.is_object());
  EXPECT_EQ(kept["metadata"]["annotations"]["aiadmit.dev/release"], "99.0.0");
}

// While aiadmit is down the webhook fails open: an admin's edit is stored
// (the replicas check it as they reload or start).
TEST(E2eProfilesWebhookSerial, AnEditIsStoredWhileAiadmitIsDown) {
  AiadmitRestoredAtExit restore;
  const std::string name = "aiadmit-profiles";
  ConfigMapDeletedAtExit cleanup(name);
  ASSERT_EQ(e2eCluster("aiadmit", {"stop"}).exitCode, 0);
  const ProfileFiles broken(true);
  const CommandResult stored = kubectl({"apply", "-f", "-"}, configMapOf(name, broken));
  EXPECT_EQ(stored.exitCode, 0) << stored.err;
  EXPECT_TRUE(kubectlJson({"get", "configmap", name, "-n", kSystem}).is_object());
}

}  // namespace
}  // namespace aiadmit::e2e
