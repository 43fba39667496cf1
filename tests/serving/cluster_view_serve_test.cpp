// `serve` with its live cluster view: the real server over TLS on a free
// loopback port, reading a stand-in API server (tests/support/api_standin.h)
// through --kubeconfig. The stand-in serves the recorded Node of
// NVIDIA/k8s-device-plugin#112 (tests/golden/cluster), joined to the seed
// cluster's GPU pool. Every wait is on a condition with a deadline: a log
// line, or /metrics polled until it says what is awaited.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>

#include "tests/support/api_standin.h"
#include "tests/support/test_support.h"
#include "webhook/codec/yaml_json.h"

namespace aiadmit {
namespace {

using namespace testing;
using namespace std::chrono_literals;

constexpr const char* kNodes = "/api/v1/nodes";
constexpr double kDeadlineSeconds = 20;

// The recorded node as `kubectl get node -o yaml` printed it, renamed, with
// `gpus` GPUs, and labelled and tainted as the shipped profiles' pool is.
std::string recordedPoolNode(const std::string& name, int gpus) {
  std::vector<ManifestDocument> documents;
  std::string error;
  EXPECT_TRUE(parseManifests(
      readFile(sourceDir() + "/tests/golden/cluster/node-k8s-device-plugin-issue-112.yaml"),
      documents, &error))
      << error;
  JsonDocument& node = *documents.at(0).json;
  JsonAllocator& allocator = node.GetAllocator();
  JsonValue& metadata = node["metadata"];
  metadata["name"].SetString(name.c_str(), allocator);
  metadata["labels"]["kubernetes.io/hostname"].SetString(name.c_str(), allocator);
  metadata["labels"].AddMember("accelerator", "nvidia", allocator);
  JsonValue taint(rapidjson::kObjectType);
  taint.AddMember("key", "accelerator", allocator);
  taint.AddMember("value", "gpu", allocator);
  taint.AddMember("effect", "NoSchedule", allocator);
  JsonValue taints(rapidjson::kArrayType);
  taints.PushBack(taint, allocator);
  node["spec"].AddMember("taints", taints, allocator);
  const std::string count = std::to_string(gpus);
  for (const char* section : {"allocatable", "capacity"}) {
    node["status"][section]["nvidia.com/gpu"].SetString(count.c_str(), allocator);
  }
  return toJson(node);
}

// A batch Pod on the pool (as /mutate leaves it) asking for 8 GPUs: the
// profiles allow it (8 per node), nodes of 4 can never hold it.
const std::string kEightGpuPod =
    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"train-8","namespace":"default"},)"
    R"("spec":{"restartPolicy":"Never","nodeSelector":{"accelerator":"nvidia"},)"
    R"("tolerations":[{"key":"accelerator","operator":"Equal","value":"gpu","effect":"NoSchedule"}],)"
    R"("containers":[{"name":"trainer","image":"nvcr.io/nvidia/pytorch:24.05-py3",)"
    R"("resources":{"limits":{"nvidia.com/gpu":"8"}}}]}})";

size_t occurrences(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

// The value of one sample of /metrics ("name" or "name{labels}"), -1 when absent.
double metric(const std::string& metrics, const std::string& sample) {
  const std::string line = "\n" + sample + " ";
  const size_t at = ("\n" + metrics).find(line);
  if (at == std::string::npos) return -1;
  return std::atof(metrics.c_str() + at + line.size() - 1);
}

// Polls /metrics until `ready` holds of it or the deadline passes; returns
// the last answer.
std::string metricsWhen(const WebhookServer& server,
                        const std::function<bool(const std::string&)>& ready) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(kDeadlineSeconds);
  std::string body;
  do {
    body = server.get("/metrics").body;
    if (ready(body)) break;
  } while (std::chrono::steady_clock::now() < deadline);
  return body;
}

ReviewResponse validate(const WebhookServer& server, const std::string& uid) {
  const HttpResponse response = server.post("/validate", makeReview(kEightGpuPod, "CREATE", uid));
  EXPECT_EQ(response.status, 200) << response.body;
  return parseReviewResponse(response.body);
}

class ServeClusterView : public ::testing::Test {
 protected:
  void SetUp() override {
    api_.serve(kNodes, "v1", "Node");
    api_.serve("/apis/scheduling.k8s.io/v1/priorityclasses", "scheduling.k8s.io/v1",
               "PriorityClass");
    api_.serve("/api/v1/namespaces", "v1", "Namespace");
    api_.serve("/apis/node.k8s.io/v1/runtimeclasses", "node.k8s.io/v1", "RuntimeClass");
    api_.put("/api/v1/namespaces",
             R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"default"}})");
    api_.put(kNodes, recordedPoolNode("gpu-a", 4));
    api_.put(kNodes, recordedPoolNode("gpu-b", 4));
    writeFile(dir_.file("kubeconfig"), standInKubeconfig(api_.port()));
  }

  std::unique_ptr<WebhookServer> serve(std::vector<std::string> args) {
    WebhookServer::Options options;
    options.extraArgs = std::move(args);
    return std::make_unique<WebhookServer>(options);
  }

  ApiStandIn api_;
  TempDir dir_;
};

TEST_F(ServeClusterView, SyncsFromTheApiAndRefusesAPodNoNodeCanHold) {
  auto server = serve({"--kubeconfig", dir_.file("kubeconfig")});
  ASSERT_TRUE(server->waitForOutput("\"msg\":\"cluster view: synced\"", kDeadlineSeconds))
      << server->output();
  const std::string metrics = metricsWhen(
      *server, [](const std::string& m) { return metric(m, "aiadmit_cluster_view_synced") == 1; });
  EXPECT_EQ(metric(metrics, "aiadmit_cluster_view_enabled"), 1) << metrics;
  EXPECT_EQ(metric(metrics, "aiadmit_cluster_view_synced"), 1) << metrics;
  EXPECT_EQ(metric(metrics, R"(aiadmit_cluster_view_objects{resource="nodes"})"), 2) << metrics;
  EXPECT_EQ(metric(metrics, R"(aiadmit_cluster_view_resource_synced{resource="nodes"})"), 1);
  EXPECT_EQ(metric(metrics, R"(aiadmit_cluster_view_resource_stale{resource="nodes"})"), 0);
  // Kueue is not installed: skipped, not an error.
  EXPECT_EQ(metric(metrics, R"(aiadmit_cluster_view_resource_absent{resource="localqueues"})"), 1);
  EXPECT_GE(metric(metrics, "aiadmit_cluster_view_publishes_total"), 1);
  EXPECT_GT(metric(metrics, "aiadmit_cluster_view_last_publish_timestamp_seconds"), 1.7e9);
  EXPECT_EQ(metric(metrics, "aiadmit_cluster_view_unauthorized_total"), 0);

  const ReviewResponse refused = validate(*server, "eight-gpus");
  EXPECT_FALSE(refused.allowed);
  EXPECT_EQ(refused.uid, "eight-gpus");
  EXPECT_NE(refused.message.find("[AIA016] spec.containers[0].resources.limits: the Pod asks for "
                                 "8 \"nvidia.com/gpu\" on one node, but the largest of the 2 "
                                 "nodes it may land on has 4"),
            std::string::npos)
      << refused.message;
  EXPECT_EQ(server->get("/readyz").status, 200);

  bool sentToken = false;
  for (const ApiStandIn::Request& request : api_.requests()) {
    sentToken = sentToken || (request.path == kNodes && request.token == "token-1");
  }
  EXPECT_TRUE(sentToken);
  EXPECT_EQ(server->terminate(), 0);
  const std::string log = server->output();
  EXPECT_EQ(occurrences(log, "cluster view: synced"), 1u) << log;
  EXPECT_EQ(log.find("token-1"), std::string::npos) << "the token never reaches the log";
  EXPECT_EQ(log.find("192.168.13.64"), std::string::npos) << "nor do object contents";
}

TEST_F(ServeClusterView, EveryPublishedViewReachesTheRequestPath) {
  auto server = serve({"--kubeconfig=" + dir_.file("kubeconfig"), "--cluster-view=on"});
  ASSERT_TRUE(server->waitForOutput("\"msg\":\"cluster view: synced\"", kDeadlineSeconds))
      << server->output();
  EXPECT_FALSE(validate(*server, "before").allowed);

  // An 8-GPU node joins the pool: the watch brings it, a new view is built
  // and the same Pod fits, without a restart.
  api_.put(kNodes, recordedPoolNode("gpu-c", 8));
  const std::string metrics = metricsWhen(*server, [](const std::string& m) {
    return metric(m, R"(aiadmit_cluster_view_objects{resource="nodes"})") == 3;
  });
  EXPECT_EQ(metric(metrics, R"(aiadmit_cluster_view_objects{resource="nodes"})"), 3) << metrics;
  EXPECT_GE(metric(metrics, R"(aiadmit_cluster_view_events_total{resource="nodes"})"), 1);
  EXPECT_EQ(metric(metrics, R"(aiadmit_cluster_view_relists_total{resource="nodes"})"), 0)
      << "the change came by the watch, not a new list";
  bool admitted = false;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(kDeadlineSeconds);
  while (!admitted && std::chrono::steady_clock::now() < deadline) {
    admitted = validate(*server, "after").allowed;
  }
  EXPECT_TRUE(admitted);
}

TEST_F(ServeClusterView, APriorityClassTheClusterLacksIsNotInjectedUntilItExists) {
  // The stand-in lists PriorityClasses and has none: the batch profile's
  // ai-batch would make the API server refuse the Pod.
  auto server = serve({"--kubeconfig", dir_.file("kubeconfig")});
  ASSERT_TRUE(server->waitForOutput("\"msg\":\"cluster view: synced\"", kDeadlineSeconds))
      << server->output();
  const auto mutate = [&](const std::string& uid) {
    const HttpResponse response = server->post("/mutate", makeReview(kEightGpuPod, "CREATE", uid));
    EXPECT_EQ(response.status, 200) << response.body;
    return parseReviewResponse(response.body);
  };
  const ReviewResponse missing = mutate("missing");
  EXPECT_TRUE(missing.allowed);
  EXPECT_EQ(missing.patch.find("priorityClassName"), std::string::npos) << missing.patch;
  EXPECT_NE(std::find(missing.warnings.begin(), missing.warnings.end(),
                      "aiadmit: no PriorityClass ai-batch, not set; see "
                      "manifests/components/priority-classes (profile batch)"),
            missing.warnings.end())
      << ::testing::PrintToString(missing.warnings);

  // The class is created: the watch brings it, and the next Pod gets it.
  api_.put("/apis/scheduling.k8s.io/v1/priorityclasses",
           R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass",)"
           R"("metadata":{"name":"ai-batch"},"value":1000})");
  ReviewResponse created;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(kDeadlineSeconds);
  do {
    created = mutate("created");
  } while (created.patch.find("priorityClassName") == std::string::npos &&
           std::chrono::steady_clock::now() < deadline);
  EXPECT_NE(created.patch.find(R"("path":"/spec/priorityClassName","value":"ai-batch")"),
            std::string::npos)
      << created.patch;
}

TEST_F(ServeClusterView, APoolThatMatchesNoGpuNodeIsSaidOnceCountedAndWarnedOnEachRequest) {
  // A node group of another cloud's shape: GPUs, but neither the shipped
  // pool's label nor its taint.
  api_.remove(kNodes, "gpu-a");
  api_.remove(kNodes, "gpu-b");
  api_.put(kNodes, R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"gke-a100-0",)"
                   R"("labels":{"cloud.google.com/gke-nodepool":"a100"}},"spec":{"taints":[)"
                   R"({"key":"nvidia.com/gpu","value":"present","effect":"NoSchedule"}]},)"
                   R"("status":{"allocatable":{"nvidia.com/gpu":"8"}}})");
  auto server = serve({"--kubeconfig", dir_.file("kubeconfig")});
  const std::string metrics = metricsWhen(*server, [](const std::string& m) {
    return metric(m, "aiadmit_profile_pools_unmatched") == 3;
  });
  EXPECT_EQ(metric(metrics, "aiadmit_profile_pools_unmatched"), 3) << metrics;
  EXPECT_EQ(metric(metrics, R"(aiadmit_profile_pool_unmatched{profile="batch"})"), 1) << metrics;
  const std::string warning =
      "aiadmit: no GPU node of this cluster matches the pool: its Pods would stay Pending; run "
      "profiles init (profile batch)";
  for (const char* uid : {"first", "second"}) {
    const HttpResponse answer = server->post("/mutate", makeReview(kEightGpuPod, "CREATE", uid));
    ASSERT_EQ(answer.status, 200) << answer.body;
    const ReviewResponse response = parseReviewResponse(answer.body);
    EXPECT_TRUE(response.allowed);
    EXPECT_NE(std::find(response.warnings.begin(), response.warnings.end(), warning),
              response.warnings.end())
        << uid << ::testing::PrintToString(response.warnings);
  }
  // A node of the pool joins: the fit changes once, and says so.
  api_.put(kNodes, recordedPoolNode("gpu-c", 8));
  const std::string fitted = metricsWhen(*server, [](const std::string& m) {
    return metric(m, "aiadmit_profile_pools_unmatched") == 0;
  });
  EXPECT_EQ(metric(fitted, "aiadmit_profile_pools_unmatched"), 0) << fitted;
  const ReviewResponse placed =
      parseReviewResponse(server->post("/mutate", makeReview(kEightGpuPod, "CREATE", "c")).body);
  EXPECT_EQ(::testing::PrintToString(placed.warnings).find("matches the pool"), std::string::npos);
  ASSERT_TRUE(server->waitForOutput("every profile's pool matches a GPU node", kDeadlineSeconds));
  EXPECT_EQ(server->terminate(), 0);
  const std::string log = server->output();
  EXPECT_EQ(occurrences(log, "\"msg\":\"profile misconfigured for this cluster\""), 3u) << log;
  EXPECT_NE(
      log.find("\"profile\":\"training\",\"file\":\"" + sourceDir() + "/profiles/training.yaml:"),
      std::string::npos)
      << log;
}

// A port that is taken and never listened on: every connection is refused.
class ClosedPort {
 public:
  ClosedPort() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    socklen_t size = sizeof address;
    EXPECT_EQ(getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &size), 0);
    port_ = ntohs(address.sin_port);
  }
  ~ClosedPort() { close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

TEST_F(ServeClusterView, UnreachableApiLeavesTheProfilesToDecideAndReadinessAlone) {
  ClosedPort closed;
  writeFile(dir_.file("unreachable"), standInKubeconfig(closed.port()));
  auto server = serve({"--kubeconfig", dir_.file("unreachable")});
  EXPECT_EQ(server->get("/readyz").status, 200);
  // The profiles say 8 GPUs per node, and the view knows no node.
  const ReviewResponse decided = validate(*server, "unreachable");
  EXPECT_TRUE(decided.allowed) << decided.message;

  const std::string metrics = metricsWhen(*server, [](const std::string& m) {
    return metric(m, R"(aiadmit_cluster_view_failures_total{resource="nodes"})") >= 3;
  });
  EXPECT_GE(metric(metrics, R"(aiadmit_cluster_view_failures_total{resource="nodes"})"), 3)
      << metrics;
  EXPECT_EQ(metric(metrics, "aiadmit_cluster_view_enabled"), 1);
  EXPECT_EQ(metric(metrics, "aiadmit_cluster_view_synced"), 0);
  EXPECT_EQ(metric(metrics, R"(aiadmit_cluster_view_resource_failing{resource="nodes"})"), 1);
  EXPECT_EQ(metric(metrics, R"(aiadmit_cluster_view_resource_synced{resource="nodes"})"), 0);
  EXPECT_EQ(server->get("/readyz").status, 200);
  EXPECT_TRUE(validate(*server, "still").allowed);
  // Said once, however often the lists are tried again.
  ASSERT_TRUE(server->waitForOutput("cluster view: the API server cannot be used", 5))
      << server->output();
  EXPECT_EQ(occurrences(server->output(), "cluster view: the API server cannot be used"), 1u)
      << server->output();
}

TEST_F(ServeClusterView, OffNeverReadsTheApi) {
  auto server = serve({"--cluster-view=off", "--kubeconfig", dir_.file("kubeconfig")});
  EXPECT_NE(server->output().find("\"msg\":\"cluster view off; decisions use the profiles "
                                  "alone\",\"reason\":\"--cluster-view=off\""),
            std::string::npos)
      << server->output();
  const std::string metrics = server->get("/metrics").body;
  EXPECT_EQ(metric(metrics, "aiadmit_cluster_view_enabled"), 0) << metrics;
  EXPECT_EQ(metric(metrics, "aiadmit_cluster_view_synced"), -1) << metrics;
  EXPECT_TRUE(validate(*server, "off").allowed);
  EXPECT_TRUE(api_.requests().empty());
}

TEST(ServeClusterViewFlags, AutoWithoutCredentialsRunsWithoutTheView) {
  WebhookServer server;
  EXPECT_NE(server.output().find("\"msg\":\"cluster view off; decisions use the profiles alone\""),
            std::string::npos)
      << server.output();
  EXPECT_EQ(metric(server.get("/metrics").body, "aiadmit_cluster_view_enabled"), 0);
}

// `serve` outside a Pod (no service variables), with `extra` arguments.
CommandResult serveOutsideAPod(std::vector<std::string> environment,
                               const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {"/usr/bin/env", "-u", "KUBERNETES_SERVICE_HOST", "-u",
                                   "KUBERNETES_SERVICE_PORT"};
  argv.insert(argv.end(), environment.begin(), environment.end());
  for (const std::string& arg :
       {binaryPath(), std::string("serve"), std::string("--profiles"), sourceDir() + "/profiles",
        std::string("--tls-cert"), devCertificates().file("tls.crt"), std::string("--tls-key"),
        devCertificates().file("tls.key"), std::string("--listen"), std::string("127.0.0.1:0")}) {
    argv.push_back(arg);
  }
  argv.insert(argv.end(), extra.begin(), extra.end());
  return runCommand(argv);
}

TEST(ServeClusterViewFlags, OnWithoutCredentialsExitsOneAndSaysWhatIsMissing) {
  const CommandResult run = serveOutsideAPod({}, {"--cluster-view=on"});
  EXPECT_EQ(run.exitCode, 1) << run.out << run.err;
  EXPECT_NE(run.out.find("--cluster-view=on needs credentials for the Kubernetes API: "
                         "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("pass --kubeconfig FILE"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("\"msg\":\"listening\""), std::string::npos) << run.out;

  // In a Pod that mounts no token.
  const CommandResult noToken =
      serveOutsideAPod({"KUBERNETES_SERVICE_HOST=10.96.0.1", "KUBERNETES_SERVICE_PORT=443"},
                       {"--cluster-view", "on"});
  EXPECT_EQ(noToken.exitCode, 1) << noToken.out;
  EXPECT_NE(noToken.out.find("the Pod mounts no service-account token"), std::string::npos)
      << noToken.out;
}

TEST(ServeClusterViewFlags, AnUnusableKubeconfigOrModeIsRefused) {
  TempDir dir;
  const CommandResult missing = serveOutsideAPod({}, {"--kubeconfig", dir.file("absent")});
  EXPECT_EQ(missing.exitCode, 1) << missing.out;
  EXPECT_NE(missing.out.find("--kubeconfig: " + dir.file("absent") + " cannot be read"),
            std::string::npos)
      << missing.out;

  const CommandResult mode = serveOutsideAPod({}, {"--cluster-view=sometimes"});
  EXPECT_EQ(mode.exitCode, 2);
  EXPECT_NE(mode.err.find("--cluster-view: auto, on or off"), std::string::npos) << mode.err;
}

// A bare batch Pod naming ai-batch, which fits the 4-GPU nodes.
const std::string kBatchPod =
    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"batch-4","namespace":"default"},)"
    R"("spec":{"restartPolicy":"Never","priorityClassName":"ai-batch",)"
    R"("nodeSelector":{"accelerator":"nvidia"},)"
    R"("tolerations":[{"key":"accelerator","operator":"Equal","value":"gpu","effect":"NoSchedule"}],)"
    R"("containers":[{"name":"trainer","image":"nvcr.io/nvidia/pytorch:24.05-py3",)"
    R"("resources":{"limits":{"nvidia.com/gpu":"4"}}}]}})";
constexpr const char* kPriorityClasses = "/apis/scheduling.k8s.io/v1/priorityclasses";
constexpr const char* kAiBatchPath = "/apis/scheduling.k8s.io/v1/priorityclasses/ai-batch";

size_t requestsTo(const ApiStandIn& api, const std::string& path) {
  const std::vector<ApiStandIn::Request> requests = api.requests();
  return static_cast<size_t>(std::count_if(requests.begin(), requests.end(),
                                           [&](const auto& r) { return r.path == path; }));
}

TEST_F(ServeClusterView, AClassTheViewHasNotSeenYetIsAskedForAndThePodAdmitted) {
  // Every watch stays silent: the view holds what the lists gave and no
  // later create, as a view a moment behind the API does.
  api_.stallNextWatches(1000);
  auto server = serve({"--kubeconfig", dir_.file("kubeconfig")});
  ASSERT_TRUE(server->waitForOutput("\"msg\":\"cluster view: synced\"", kDeadlineSeconds))
      << server->output();
  api_.put(kPriorityClasses, R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass",)"
                             R"("metadata":{"name":"ai-batch"},"value":1000})");
  const HttpResponse answer = server->post("/validate", makeReview(kBatchPod, "CREATE", "lag"));
  ASSERT_EQ(answer.status, 200) << answer.body;
  const ReviewResponse response = parseReviewResponse(answer.body);
  EXPECT_TRUE(response.allowed) << response.message;
  EXPECT_EQ(response.uid, "lag");
  EXPECT_EQ(::testing::PrintToString(response.warnings).find("AIA017"), std::string::npos)
      << ::testing::PrintToString(response.warnings);
  EXPECT_EQ(requestsTo(api_, kAiBatchPath), 1u);
}

// The same for a review over 64 KiB, decided on a review worker: its answer
// waits in turn for the API's.
TEST_F(ServeClusterView, ALargeReviewDecidedOnAWorkerIsAskedForTooAndThePodAdmitted) {
  api_.stallNextWatches(1000);
  auto server = serve({"--kubeconfig", dir_.file("kubeconfig")});
  ASSERT_TRUE(server->waitForOutput("\"msg\":\"cluster view: synced\"", kDeadlineSeconds))
      << server->output();
  api_.put(kPriorityClasses, R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass",)"
                             R"("metadata":{"name":"ai-batch"},"value":1000})");
  const std::string large = makeReview(kBatchPod, "CREATE", "large") + std::string(70000, ' ');
  const HttpResponse answer = server->post("/validate", large);
  ASSERT_EQ(answer.status, 200) << answer.body;
  const ReviewResponse response = parseReviewResponse(answer.body);
  EXPECT_TRUE(response.allowed) << response.message;
  EXPECT_EQ(response.uid, "large");
  EXPECT_EQ(requestsTo(api_, kAiBatchPath), 1u);
}

TEST_F(ServeClusterView, AClassTheApiLacksTooRefusesTheBarePodAndIsAskedForOnce) {
  auto server = serve({"--kubeconfig", dir_.file("kubeconfig")});
  ASSERT_TRUE(server->waitForOutput("\"msg\":\"cluster view: synced\"", kDeadlineSeconds))
      << server->output();
  for (const char* uid : {"first", "second"}) {
    const HttpResponse answer = server->post("/validate", makeReview(kBatchPod, "CREATE", uid));
    ASSERT_EQ(answer.status, 200) << answer.body;
    const ReviewResponse response = parseReviewResponse(answer.body);
    EXPECT_FALSE(response.allowed) << uid;
    EXPECT_EQ(response.uid, uid);
    EXPECT_NE(response.message.find("[AIA017] spec.priorityClassName: PriorityClass \"ai-batch\" "
                                    "does not exist"),
              std::string::npos)
        << response.message;
  }
  EXPECT_EQ(requestsTo(api_, kAiBatchPath), 1u) << "the 404 is remembered for a moment";
}

TEST_F(ServeClusterView, AJobNamingAMissingClassIsWarnedWithoutAsking) {
  auto server = serve({"--kubeconfig", dir_.file("kubeconfig")});
  ASSERT_TRUE(server->waitForOutput("\"msg\":\"cluster view: synced\"", kDeadlineSeconds))
      << server->output();
  std::string job = kBatchPod;
  const std::string spec = job.substr(job.find(R"("spec":)"));
  job = R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"batch-4",)"
        R"("namespace":"default"},"spec":{"template":{)" +
        spec.substr(0, spec.size() - 1) + "}}}";
  const HttpResponse answer = server->post("/validate", makeReview(job, "CREATE", "job"));
  ASSERT_EQ(answer.status, 200) << answer.body;
  const ReviewResponse response = parseReviewResponse(answer.body);
  EXPECT_TRUE(response.allowed) << response.message;
  EXPECT_NE(::testing::PrintToString(response.warnings).find("[AIA017]"), std::string::npos)
      << ::testing::PrintToString(response.warnings);
  EXPECT_EQ(requestsTo(api_, kAiBatchPath), 0u);
}

}  // namespace
}  // namespace aiadmit
