// aiadmit as the install registers it (manifests/overlays/local applied by
// scripts/e2e-cluster): the webhook configurations as the base ships them
// but for where they call, the cluster-view RBAC in force for aiadmit's own
// ServiceAccount, the PriorityClasses the profiles name, and matchConditions
// evaluated by the API server itself.
#include <gtest/gtest.h>
#include <httplib.h>

#include "tests/e2e/support/e2e_cluster.h"

namespace aiadmit::e2e {
namespace {

// The base's webhook configurations, rendered as a platform team would.
std::map<std::string, json> baseWebhooks() {
  std::map<std::string, json> webhooks;
  const CommandResult rendered = kubectl({"kustomize", testing::sourceDir() + "/manifests/base"});
  EXPECT_EQ(rendered.exitCode, 0) << rendered.err;
  const CommandResult asJson =
      kubectl({"create", "--dry-run=client", "-o", "json", "-f", "-"}, rendered.out);
  for (const json& item : jsonObjects(asJson.out)) {
    if (!item.contains("webhooks")) continue;
    for (const json& webhook : item["webhooks"]) webhooks[webhook["name"]] = webhook;
  }
  return webhooks;
}

TEST(E2eInstall, WebhooksAreTheBasesCallingTheLocalAiadmitWithItsCaBundle) {
  const std::map<std::string, json> shipped = baseWebhooks();
  // Three tiers, each with a mutating and a validating webhook, and the
  // profiles ConfigMap's own.
  ASSERT_EQ(shipped.size(), 7u);
  const std::string caBundle = [] {
    const CommandResult encoded = testing::runCommand({"base64", "-w0", cluster().aiadmitCa});
    return encoded.out;
  }();
  const std::string address = "https://127.0.0.1:" + std::to_string(cluster().aiadmitPort);

  size_t seen = 0;
  for (const char* kind : {"mutatingwebhookconfiguration", "validatingwebhookconfiguration"}) {
    const json configurations =
        kubectlJson({"get", kind, "-l", "app.kubernetes.io/part-of=aiadmit"});
    ASSERT_TRUE(configurations.is_object());
    for (const json& configuration : configurations["items"]) {
      for (const json& stored : configuration["webhooks"]) {
        const std::string name = stored["name"];
        SCOPED_TRACE(name);
        ASSERT_TRUE(shipped.count(name));
        ++seen;
        const json& base = shipped.at(name);
        // The path the base's Service reference names.
        const std::string path = base["clientConfig"]["service"].value("path", "");
        EXPECT_FALSE(path.empty());
        EXPECT_EQ(stored["clientConfig"].value("url", ""), address + path);
        EXPECT_FALSE(stored["clientConfig"].contains("service"));
        EXPECT_EQ(stored["clientConfig"].value("caBundle", ""), caBundle);
        for (const char* field :
             {"rules", "matchConditions", "namespaceSelector", "failurePolicy", "timeoutSeconds",
              "sideEffects", "admissionReviewVersions", "matchPolicy", "reinvocationPolicy"}) {
          if (!base.contains(field)) continue;
          EXPECT_EQ(stored[field], base[field]) << field;
        }
      }
    }
  }
  EXPECT_EQ(seen, shipped.size());
}

TEST(E2eInstall, AiadmitsServiceAccountMayReadItsClusterViewAndNothingMore) {
  const std::string as = "--as=system:serviceaccount:aiadmit-system:aiadmit";
  for (const char* resource :
       {"nodes", "priorityclasses", "namespaces", "resourceslices.resource.k8s.io",
        "deviceclasses.resource.k8s.io", "resourceclaimtemplates.resource.k8s.io",
        "localqueues.kueue.x-k8s.io"}) {
    for (const char* verb : {"list", "watch"}) {
      const CommandResult allowed = kubectl({"auth", "can-i", verb, resource, "-A", as});
      EXPECT_EQ(allowed.out, "yes\n") << verb << " " << resource << ": " << allowed.err;
    }
  }
  for (const auto& [verb, resource] :
       std::vector<std::pair<const char*, const char*>>{{"create", "pods"},
                                                        {"update", "nodes"},
                                                        {"list", "secrets"},
                                                        {"delete", "priorityclasses"}}) {
    const CommandResult refused = kubectl({"auth", "can-i", verb, resource, "-A", as});
    EXPECT_EQ(refused.out, "no\n") << verb << " " << resource;
  }
  // And it reads with them: the view aiadmit serves from is synced.
  const std::string metrics = aiadmitMetrics();
  EXPECT_NE(metrics.find("\naiadmit_cluster_view_synced 1\n"), std::string::npos) << metrics;
  EXPECT_EQ(metrics.find("aiadmit_cluster_view_resource_failing{resource=\"nodes\"} 1"),
            std::string::npos);
}

TEST(E2eInstall, PriorityClassesTheShippedProfilesNameExist) {
  std::map<std::string, int> values;
  for (const char* name : {"ai-realtime", "ai-training", "ai-batch"}) {
    const json priorityClass = kubectlJson({"get", "priorityclass", name});
    ASSERT_TRUE(priorityClass.is_object()) << name;
    values[name] = priorityClass["value"];
    EXPECT_FALSE(priorityClass.value("globalDefault", false)) << name;
  }
  EXPECT_GT(values["ai-realtime"], values["ai-training"]);
  EXPECT_GT(values["ai-training"], values["ai-batch"]);
}

// The API server evaluates matchConditions: an ordinary Pod of an opted-in
// namespace never reaches aiadmit, a GPU Pod does, and neither does a GPU
// Pod of a namespace that did not opt in.
TEST(E2eInstall, TheApiServerSendsAiadmitOnlyWhatConcernsIt) {
  Namespace optedIn("match");
  Namespace plain("match-plain", /*optedIn=*/false);
  const std::string web = R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
    "spec": {"containers": [{"name": "web", "image": "nginx",
                             "resources": {"requests": {"cpu": "100m"}}}]}})";
  const std::string gpu = R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "gpu"},
    "spec": {"restartPolicy": "Never",
             "containers": [{"name": "main", "image": "cuda",
                             "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}})";
  for (const std::string* pod : {&web, &gpu}) {
    for (const Namespace* ns : {&optedIn, &plain}) {
      const CommandResult made = kubectl({"create", "-n", ns->name(), "-f", "-"}, *pod);
      ASSERT_EQ(made.exitCode, 0) << made.err;
    }
  }
  auto calledAiadmit = [](const Namespace& ns, const std::string& name) {
    for (const auto& [key, value] :
         auditAnnotations(auditEvents("pods", ns.name(), name, "create"))) {
      if (key.rfind("mutation.webhook.admission.k8s.io/", 0) == 0 &&
          value.find("mutate.aiadmit.dev") != std::string::npos) {
        return true;
      }
    }
    return false;
  };
  EXPECT_FALSE(calledAiadmit(optedIn, "web"));
  EXPECT_TRUE(calledAiadmit(optedIn, "gpu"));
  EXPECT_FALSE(calledAiadmit(plain, "web"));
  EXPECT_FALSE(calledAiadmit(plain, "gpu"));
  const json stored = kubectlJson({"get", "pod", "gpu", "-n", optedIn.name()});
  EXPECT_EQ(stored["metadata"]["annotations"].value("aiadmit.dev/class", ""), "batch");
}

// The API server presents the client certificate of its admission
// configuration (scripts/e2e-cluster, docs/install.md "Mutual TLS"), and
// aiadmit runs with --client-ca: a review reaches it only from there. The
// API server's own calls are answered, as every other e2e test shows too.
TEST(E2eInstall, AiadmitAnswersReviewsFromTheApiServerAlone) {
  Namespace ns("e2e-mtls");
  const std::string pod = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"mtls"},
    "spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox",
    "resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})";
  const CommandResult created =
      kubectl({"create", "--dry-run=server", "-n", ns.name(), "-o", "json", "-f", "-"}, pod);
  ASSERT_EQ(created.exitCode, 0) << created.err;
  EXPECT_NE(created.out.find("\"aiadmit.dev/class\""), std::string::npos)
      << "the API server's review was answered: " << created.out;

  const Cluster& c = cluster();
  httplib::SSLClient anonymous("127.0.0.1", c.aiadmitPort);
  anonymous.set_ca_cert_path(c.aiadmitCa.c_str());
  anonymous.enable_server_certificate_verification(true);
  anonymous.set_connection_timeout(2);
  anonymous.set_read_timeout(5);
  const auto refused = anonymous.Post("/validate", "{}", "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 403) << refused->body;
  const auto probe = anonymous.Get("/readyz");
  ASSERT_TRUE(probe);
  EXPECT_EQ(probe->status, 200) << "the kubelet's probes need no certificate";
  const std::string metrics = aiadmitMetrics();
  EXPECT_NE(metrics.find("\naiadmit_unauthenticated_requests_total "), std::string::npos)
      << metrics;
  EXPECT_EQ(metrics.find("\naiadmit_unauthenticated_requests_total 0\n"), std::string::npos);
}

}  // namespace
}  // namespace aiadmit::e2e
