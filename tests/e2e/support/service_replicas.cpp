#include "tests/e2e/support/service_replicas.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <cctype>
#include <set>

#include "webhook/codec/base64.h"

namespace aiadmit::e2e {

namespace {

constexpr const char* kNamespace = "aiadmit-system";
constexpr const char* kHostNode = "aiadmit-host";
// Keeps everything but the replicas' Pods off their Node.
constexpr const char* kHostTaint = "aiadmit.dev/e2e-replicas";
constexpr const char* kPortName = "https";

std::string trimmed(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

std::string portOf(const std::string& address) {
  return address.substr(address.rfind(':') + 1);
}

// manifests/base as kustomize renders it, one JSON object each.
std::vector<json> renderBase() {
  const CommandResult rendered = kubectl({"kustomize", testing::sourceDir() + "/manifests/base"});
  if (rendered.exitCode != 0) {
    ADD_FAILURE() << "kubectl kustomize manifests/base: " << rendered.err;
    return {};
  }
  const CommandResult asJson =
      kubectl({"create", "--dry-run=client", "-o", "json", "-f", "-"}, rendered.out);
  if (asJson.exitCode != 0) ADD_FAILURE() << asJson.err;
  return jsonObjects(asJson.out);
}

const json& objectOf(const std::vector<json>& objects, const std::string& kind) {
  static const json none;
  for (const json& object : objects) {
    if (object.value("kind", "") == kind) return object;
  }
  ADD_FAILURE() << "manifests/base has no " << kind;
  return none;
}

const json& shippedContainer(const std::vector<json>& base) {
  return objectOf(base, "Deployment")["spec"]["template"]["spec"]["containers"][0];
}

ReadinessProbe readinessProbeOf(const std::vector<json>& base) {
  const json& probe = shippedContainer(base)["readinessProbe"];
  ReadinessProbe shipped;
  shipped.period = std::chrono::seconds(probe.value("periodSeconds", 10));
  shipped.timeout = std::chrono::seconds(probe.value("timeoutSeconds", 1));
  shipped.failureThreshold = probe.value("failureThreshold", 3);
  return shipped;
}

bool apply(const json& object) {
  const CommandResult applied = kubectl({"apply", "-f", "-"}, toText(object));
  EXPECT_EQ(applied.exitCode, 0) << kubectlName(object) << ": " << applied.err;
  return applied.exitCode == 0;
}

// The Node the replicas' Pods are bound to: Ready, with the machine's
// address, as a kubelet would report it.
bool applyHostNode(const std::string& host) {
  NodeShape shape;
  shape.name = kHostNode;
  shape.labels = {{"kubernetes.io/hostname", kHostNode},
                  {"kubernetes.io/os", "linux"},
                  {"kubernetes.io/arch", "amd64"}};
  shape.taints = json::array({{{"key", kHostTaint}, {"effect", "NoSchedule"}}});
  shape.internalIP = host;
  return applyNode(shape);
}

// One replica's Pod: the shipped template, bound to the host Node, its
// https port the replica's own.
json podFor(const std::vector<json>& base, const std::string& name, const std::string& port) {
  const json& templ = objectOf(base, "Deployment")["spec"]["template"];
  json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"spec", templ["spec"]}};
  pod["metadata"] = {
      {"name", name}, {"namespace", kNamespace}, {"labels", templ["metadata"]["labels"]}};
  pod["spec"]["nodeName"] = kHostNode;
  pod["spec"]["tolerations"] =
      json::array({{{"key", kHostTaint}, {"operator", "Exists"}, {"effect", "NoSchedule"}}});
  for (json& containerPort : pod["spec"]["containers"][0]["ports"]) {
    if (containerPort.value("name", "") == kPortName)
      containerPort["containerPort"] = std::stoi(port);
  }
  return pod;
}

json podStatus(const std::string& host, bool ready) {
  const std::string state = ready ? "True" : "False";
  json conditions = json::array();
  for (const auto& [type, status] :
       std::vector<std::pair<std::string, std::string>>{{"PodScheduled", "True"},
                                                        {"Initialized", "True"},
                                                        {"ContainersReady", state},
                                                        {"Ready", state}}) {
    conditions.push_back({{"type", type}, {"status", status}});
  }
  return {{"status",
           {{"phase", "Running"},
            {"hostIP", host},
            {"podIP", host},
            {"podIPs", json::array({{{"ip", host}}})},
            {"conditions", conditions}}}};
}

// As the kubelet probes: HTTPS without verifying the certificate.
bool probeReadyz(const std::string& address, std::chrono::seconds timeout) {
  const size_t colon = address.rfind(':');
  httplib::SSLClient client(address.substr(0, colon), std::stoi(address.substr(colon + 1)));
  client.enable_server_certificate_verification(false);
  client.set_connection_timeout(timeout);
  client.set_read_timeout(timeout);
  const auto response = client.Get("/readyz");
  return response && response->status >= 200 && response->status < 400;
}

// The ports of the Service's ready endpoints.
std::set<std::string> readyEndpointPorts() {
  std::set<std::string> ports;
  const CommandResult slices = kubectl({"get", "endpointslices", "-n", kNamespace, "-l",
                                        "kubernetes.io/service-name=aiadmit", "-o", "json"});
  if (slices.exitCode != 0) return ports;
  for (const json& slice : jsonObjects(slices.out)) {
    for (const json& port : slice["ports"]) {
      if (port.value("name", "") != kPortName || !port.contains("port")) continue;
      for (const json& endpoint : slice["endpoints"]) {
        if (endpoint["conditions"].value("ready", false)) {
          ports.insert(std::to_string(port["port"].get<int>()));
        }
      }
    }
  }
  return ports;
}

}  // namespace

ServiceReplicas::ServiceReplicas() {
  ready_ = setUp();
}

bool ServiceReplicas::setUp() {
  const CommandResult host = e2eCluster("replica", {"host"});
  if (host.exitCode != 0) {
    ADD_FAILURE() << host.err;
    return false;
  }
  host_ = trimmed(host.out);
  base_ = renderBase();
  if (base_.empty()) return false;
  probe_ = readinessProbeOf(base_);
  if (!applyHostNode(host_) || !apply(objectOf(base_, "Service")) ||
      !apply(objectOf(base_, "PodDisruptionBudget"))) {
    return false;
  }
  prober_ = std::thread([this] { probeLoop(); });
  for (int i = 0; i < 2; ++i) {
    const std::string pod = nextPodName();
    if (!startReplica(pod) || !waitForPodReady(pod, true, std::chrono::seconds(30))) return false;
  }
  // Registered once both are in the endpoints: the Fail tier never finds
  // the Service empty.
  return waitForEndpoints(std::chrono::seconds(60)) && applyWebhooks();
}

ServiceReplicas::~ServiceReplicas() {
  stopping_ = true;
  if (prober_.joinable()) prober_.join();
  // The URL registration first, so that the Fail tier calls the single
  // aiadmit again before the replicas go.
  const CommandResult restored = e2eCluster("aiadmit", {"manifests", "apply"});
  EXPECT_EQ(restored.exitCode, 0) << restored.err;
  kubectl({"delete", "pods", "-n", kNamespace, "-l", "app.kubernetes.io/name=aiadmit",
           "--grace-period=0", "--force", "--ignore-not-found"});
  kubectl(
      {"delete", "service,poddisruptionbudget", "aiadmit", "-n", kNamespace, "--ignore-not-found"});
  kubectl({"delete", "node", kHostNode, "--ignore-not-found"});
  const CommandResult down = e2eCluster("replica", {"down"});
  EXPECT_EQ(down.exitCode, 0) << down.err;
}

std::string ServiceReplicas::nextPodName() {
  return "aiadmit-" + std::to_string(++made_);
}

std::vector<std::string> ServiceReplicas::podNames() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> names;
  for (const auto& [name, replica] : replicas_) names.push_back(name);
  return names;
}

std::vector<std::string> ServiceReplicas::addresses() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> list;
  for (const auto& [name, replica] : replicas_) list.push_back(replica.address);
  return list;
}

// The kubelet's part for a new Pod: its container started, the Pod running
// with its address and not ready until the first probe passes.
bool ServiceReplicas::startReplica(const std::string& pod, const std::string& port) {
  std::vector<std::string> args = {"start", pod};
  if (!port.empty()) args.push_back(port);
  const CommandResult started = e2eCluster("replica", args);
  if (started.exitCode != 0) {
    ADD_FAILURE() << "replica " << pod << ": " << started.err;
    return false;
  }
  const std::string address = trimmed(started.out);
  if (port.empty() && !createPod(pod, address)) return false;
  std::lock_guard lock(mutex_);
  Replica& replica = replicas_[pod];
  replica.address = address;
  replica.failures = 0;
  replica.nextProbe = std::chrono::steady_clock::now();
  return true;
}

bool ServiceReplicas::createPod(const std::string& pod, const std::string& address) {
  const CommandResult created =
      kubectl({"create", "-f", "-"}, toText(podFor(base_, pod, portOf(address))));
  if (created.exitCode != 0) {
    ADD_FAILURE() << "pod " << pod << ": " << created.err;
    return false;
  }
  return setPodStatus(pod, false);
}

bool ServiceReplicas::setPodStatus(const std::string& pod, bool ready) {
  const CommandResult patched =
      kubectl({"patch", "pod", pod, "-n", kNamespace, "--subresource=status", "--type=merge", "-p",
               toText(podStatus(host_, ready))});
  return patched.exitCode == 0;
}

bool ServiceReplicas::waitForPodReady(const std::string& pod, bool ready,
                                      std::chrono::seconds timeout) const {
  const bool reached = waitUntil(
      [&] {
        std::lock_guard lock(mutex_);
        const auto found = replicas_.find(pod);
        return found != replicas_.end() && found->second.reported &&
               found->second.reportedReady == ready;
      },
      timeout, std::chrono::milliseconds(50));
  EXPECT_TRUE(reached) << "pod " << pod << " never turned " << (ready ? "ready" : "unready");
  return reached;
}

bool ServiceReplicas::waitForEndpoints(std::chrono::seconds timeout) const {
  const bool reached = waitUntil(
      [&] {
        std::set<std::string> expected;
        {
          std::lock_guard lock(mutex_);
          for (const auto& [name, replica] : replicas_) {
            if (replica.probing && replica.reportedReady) expected.insert(portOf(replica.address));
          }
        }
        return !expected.empty() && readyEndpointPorts() == expected;
      },
      timeout, std::chrono::milliseconds(200));
  EXPECT_TRUE(reached) << "the Service's ready endpoints never became the ready replicas";
  return reached;
}

// The base's webhook configurations, each webhook with the replicas' CA
// bundle (as the script-certs overlay puts it in).
bool ServiceReplicas::applyWebhooks() {
  const CommandResult bundle = e2eCluster("replica", {"ca-bundle"});
  if (bundle.exitCode != 0) {
    ADD_FAILURE() << bundle.err;
    return false;
  }
  const std::string caBundle = base64Encode(bundle.out);
  for (const char* kind : {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}) {
    json configuration = objectOf(base_, kind);
    for (json& webhook : configuration["webhooks"]) webhook["clientConfig"]["caBundle"] = caBundle;
    if (!apply(configuration)) return false;
  }
  return true;
}

void ServiceReplicas::probeLoop() {
  while (!stopping_) {
    std::vector<std::string> due;
    {
      std::lock_guard lock(mutex_);
      for (const auto& [name, replica] : replicas_) {
        if (replica.probing && std::chrono::steady_clock::now() >= replica.nextProbe) {
          due.push_back(name);
        }
      }
    }
    for (const std::string& pod : due) {
      Replica copy;
      {
        std::lock_guard lock(mutex_);
        // Terminated meanwhile: its Pod is gone.
        const auto found = replicas_.find(pod);
        if (found == replicas_.end() || !found->second.probing) continue;
        copy = found->second;
        found->second.nextProbe = copy.nextProbe + probe_.period;
      }
      probeOnce(pod, copy);
    }
    // Pacing of the prober's own loop: probes are due every period.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// One probe as the kubelet runs it: ready at the first success, unready
// after failureThreshold failures in a row; the status patched when that
// changes (or the last patch failed: the API server may be restarting).
void ServiceReplicas::probeOnce(const std::string& pod, Replica& copy) {
  const bool passed = probeReadyz(copy.address, probe_.timeout);
  const int failures = passed ? 0 : copy.failures + 1;
  bool ready = copy.reportedReady;
  if (passed) ready = true;
  if (failures >= probe_.failureThreshold) ready = false;
  bool reported = copy.reported && ready == copy.reportedReady;
  if (!reported) reported = setPodStatus(pod, ready);
  std::lock_guard lock(mutex_);
  const auto found = replicas_.find(pod);
  if (found == replicas_.end() || !found->second.probing) return;
  found->second.failures = failures;
  found->second.reportedReady = ready;
  found->second.reported = reported;
}

void ServiceReplicas::stopProbing(const std::string& pod) {
  std::lock_guard lock(mutex_);
  const auto found = replicas_.find(pod);
  if (found != replicas_.end()) found->second.probing = false;
}

// The shipped container's preStop hook, as the kubelet runs it before
// SIGTERM. The shipped Pod has none: aiadmit's own --shutdown-delay keeps it
// serving while its endpoint goes. A sleep hook is honoured; another kind
// cannot run without a container, and fails the test.
namespace {
bool runPreStop(const std::vector<json>& base) {
  const json& container = shippedContainer(base);
  if (!container.contains("lifecycle") || !container["lifecycle"].contains("preStop")) return true;
  const json& hook = container["lifecycle"]["preStop"];
  if (!hook.contains("sleep")) {
    ADD_FAILURE() << "the shipped preStop hook cannot run here: " << hook.dump();
    return false;
  }
  // The hook's own duration, not a wait for anything.
  std::this_thread::sleep_for(std::chrono::seconds(hook["sleep"].value("seconds", 0)));
  return true;
}
}  // namespace

// What happens to a Pod the Deployment controller deletes: marked
// terminating (the EndpointSlice controller takes its endpoint out of the
// ready ones), its preStop hook, SIGTERM and the grace period, and, once
// the container has exited, the Pod removed.
bool ServiceReplicas::terminate(const std::string& pod) {
  stopProbing(pod);
  const CommandResult deleting = kubectl({"delete", "pod", pod, "-n", kNamespace, "--wait=false"});
  EXPECT_EQ(deleting.exitCode, 0) << deleting.err;
  if (!runPreStop(base_)) return false;
  const CommandResult stopped = e2eCluster("replica", {"stop", pod});
  EXPECT_EQ(stopped.exitCode, 0) << stopped.err;
  const CommandResult removed =
      kubectl({"delete", "pod", pod, "-n", kNamespace, "--grace-period=0", "--force"});
  std::lock_guard lock(mutex_);
  replicas_.erase(pod);
  return deleting.exitCode == 0 && stopped.exitCode == 0 && removed.exitCode == 0;
}

bool ServiceReplicas::rollingRestart() {
  for (const std::string& old : podNames()) {
    // maxSurge 1, maxUnavailable 0: the new Pod ready before the old goes.
    const std::string pod = nextPodName();
    if (!startReplica(pod) || !waitForPodReady(pod, true, probe_.period * 3)) return false;
    if (!terminate(old)) return false;
  }
  return true;
}

bool ServiceReplicas::killAndRecover(const std::string& pod) {
  std::string address;
  {
    std::lock_guard lock(mutex_);
    const auto found = replicas_.find(pod);
    if (found != replicas_.end()) address = found->second.address;
  }
  if (address.empty()) {
    ADD_FAILURE() << "no replica " << pod;
    return false;
  }
  const CommandResult killed = e2eCluster("replica", {"kill", pod});
  if (killed.exitCode != 0) {
    ADD_FAILURE() << killed.err;
    return false;
  }
  const auto detection = probe_.period * (probe_.failureThreshold + 1) + probe_.timeout;
  if (!waitForPodReady(pod, false, std::chrono::duration_cast<std::chrono::seconds>(detection)))
    return false;
  return startReplica(pod, portOf(address)) && waitForPodReady(pod, true, probe_.period * 3);
}

bool ServiceReplicas::rotateCa() {
  for (const std::vector<std::string>& step :
       {std::vector<std::string>{"certs", "--rotate-ca"}, std::vector<std::string>{"reload"},
        std::vector<std::string>{"certs", "--finish-ca-rotation"}}) {
    const CommandResult done = e2eCluster("replica", step);
    if (done.exitCode != 0) {
      ADD_FAILURE() << step[0] << ": " << done.out << done.err;
      return false;
    }
    // Applied after each run of the script, as docs/install.md says: the
    // bundle that trusts both CAs before any replica serves the new pair.
    if (step[0] == "certs" && !applyWebhooks()) return false;
  }
  return true;
}

}  // namespace aiadmit::e2e
