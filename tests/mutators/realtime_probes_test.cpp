// Realtime probes: readiness and startup probes on the serving container when
// it has none, on the port it serves on or the profile's, with the startup
// budget; none on the ranks of one multi-node server.
#include "tests/support/mutator_harness.h"

namespace aiadmit {
namespace {

using namespace testing;

const MutatorDeclaration& kMutator = registeredMutator("realtime-probes");

std::string server(const std::string& containers,
                   const std::string& annotations = "{aiadmit.dev/workload: realtime}") {
  return R"(
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  selector: {matchLabels: {app: vllm}}
  template:
    metadata:
      labels: {app: vllm}
      annotations: )" +
         annotations + R"(
    spec:
      containers: )" +
         containers + "\n";
}

TEST(RealtimeProbesMutator, ServingContainerGetsTcpProbesWithTheStartupBudget) {
  const MutationRun run = runMutator(
      kMutator,
      server("[{name: vllm, image: x, ports: [{name: http, containerPort: 8000}], resources: "
             "{limits: {nvidia.com/gpu: 1}}}]"),
      realtime());
  EXPECT_EQ(
      run.patch(),
      R"([{"op":"add","path":"/spec/template/spec/containers/0/readinessProbe","value":)"
      R"({"tcpSocket":{"port":8000},"periodSeconds":10,"timeoutSeconds":1,"failureThreshold":3}},)"
      R"({"op":"add","path":"/spec/template/spec/containers/0/startupProbe","value":)"
      R"({"tcpSocket":{"port":8000},"periodSeconds":10,"timeoutSeconds":1,"failureThreshold":180}}])");
  EXPECT_EQ(run.changes,
            (std::vector<std::string>{
                "added readiness probe tcp on port 8000 to container vllm",
                "added startup probe tcp on port 8000 to container vllm, 1800s to start",
            }));
  expectAppliedAndIdempotent(kMutator, run, realtime());
}

const char* kHttpProfiles = R"(
apiVersion: aiadmit.dev/v1
kind: Profile
metadata: {name: http}
spec:
  class: realtime
  probes:
    readiness: {httpGet: {path: /v1/models, port: 8080}, periodSeconds: 5, failureThreshold: 2}
    startup: {httpGet: {path: /health, port: 8080}, periodSeconds: 15}
    startupBudgetSeconds: 1000
---
apiVersion: aiadmit.dev/v1
kind: Profile
metadata: {name: switched-off}
spec:
  class: realtime
  scope: {namespaces: [a]}
  probes: {readiness: {tcpSocket: {}}}
  mutations: {probes: false}
---
apiVersion: aiadmit.dev/v1
kind: Profile
metadata: {name: disabled}
spec:
  class: realtime
  scope: {namespaces: [b]}
  probes: {enabled: false}
)";

TEST(RealtimeProbesMutator, HttpProbesOnThePortTheProfileNames) {
  const auto profiles = profilesFromYaml(kHttpProfiles);
  const Profile& profile = *profiles->find("http");
  const MutationRun run = runMutator(kMutator, server("[{name: triton, image: x}]"), profile);
  const JsonValue* readiness = at(*run.after, "/spec/template/spec/containers/0/readinessProbe");
  ASSERT_NE(readiness, nullptr);
  EXPECT_EQ(toJson(*readiness),
            R"({"httpGet":{"path":"/v1/models","port":8080,"scheme":"HTTP"},"periodSeconds":5,)"
            R"("timeoutSeconds":1,"failureThreshold":2})");
  // 1000 s at 15 s a try: 67 tries, 1005 s.
  EXPECT_EQ(toJson(*at(*run.after, "/spec/template/spec/containers/0/startupProbe")),
            R"({"httpGet":{"path":"/health","port":8080,"scheme":"HTTP"},"periodSeconds":15,)"
            R"("timeoutSeconds":1,"failureThreshold":67})");
  EXPECT_EQ(
      run.changes[1],
      "added startup probe http GET /health on port 8080 to container triton, 1005s to start");
  expectAppliedAndIdempotent(kMutator, run, profile);
}

TEST(RealtimeProbesMutator, AnExistingProbeIsKeptAndOnlyTheMissingOneAdded) {
  const MutationRun run =
      runMutator(kMutator, server(R"([{name: s, image: x, ports: [{containerPort: 9000}],
        readinessProbe: {httpGet: {path: /ready, port: 9000}}}])"),
                 realtime());
  EXPECT_EQ(toJson(*at(*run.after, "/spec/template/spec/containers/0/readinessProbe")),
            R"({"httpGet":{"path":"/ready","port":9000}})");
  EXPECT_NE(at(*run.after, "/spec/template/spec/containers/0/startupProbe"), nullptr);
  EXPECT_EQ(run.changes.size(), 1u);
  expectAppliedAndIdempotent(kMutator, run, realtime());
}

TEST(RealtimeProbesMutator, TheFirstTcpPortOfTheMainContainerIsProbed) {
  const MutationRun run =
      runMutator(kMutator,
                 server(R"([{name: proxy, image: x, ports: [{containerPort: 80}]},
        {name: model, image: x, ports: [{containerPort: 5353, protocol: UDP}, {containerPort: 7000, protocol: TCP}]}])",
                        "{aiadmit.dev/workload: realtime, aiadmit.dev/gpu-container: model}"),
                 realtime());
  EXPECT_EQ(at(*run.after, "/spec/template/spec/containers/0/readinessProbe"), nullptr);
  EXPECT_EQ(
      at(*run.after, "/spec/template/spec/containers/1/readinessProbe/tcpSocket/port")->GetInt(),
      7000);
  expectAppliedAndIdempotent(kMutator, run, realtime());
}

// A log shipper first and the model server second: the probes go on the
// container with the GPU, not on the sidecar's port.
TEST(RealtimeProbesMutator, TheGpuContainerIsProbedWhenASidecarComesFirst) {
  const MutationRun run = runMutator(
      kMutator,
      server("[{name: log-shipper, image: fluent-bit, ports: [{containerPort: 24224}]}, "
             "{name: vllm, image: vllm, ports: [{containerPort: 8000}], resources: {limits: "
             "{nvidia.com/gpu: 1}}}]",
             "{}"),
      realtime());
  EXPECT_EQ(at(*run.after, "/spec/template/spec/containers/0/readinessProbe"), nullptr);
  EXPECT_EQ(
      at(*run.after, "/spec/template/spec/containers/1/readinessProbe/tcpSocket/port")->GetInt(),
      8000);
  EXPECT_EQ(
      at(*run.after, "/spec/template/spec/containers/1/startupProbe/tcpSocket/port")->GetInt(),
      8000);
  expectAppliedAndIdempotent(kMutator, run, realtime());
}

// A Ray head that serves too: its runtime's ports (GCS, dashboard, client)
// come first, as KubeRay's samples list them, and the probes go on the port
// named for serving; so they do on the HTTP port of a server whose gRPC port
// comes first (NIM), where an HTTP GET needs HTTP.
TEST(RealtimeProbesMutator, ThePortNamedForServingIsProbedBeforeTheFirstOne) {
  const MutationRun run = runMutator(
      kMutator,
      server("[{name: ray-head, image: vllm, ports: [{containerPort: 6379, name: gcs-server}, "
             "{containerPort: 8265, name: dashboard}, {containerPort: 10001, name: client}, "
             "{containerPort: 8000, name: serve}], resources: {limits: {nvidia.com/gpu: 1}}}]"),
      realtime());
  EXPECT_EQ(run.changes,
            (std::vector<std::string>{
                "added readiness probe tcp on port 8000 to container ray-head",
                "added startup probe tcp on port 8000 to container ray-head, 1800s to start",
            }));
  expectAppliedAndIdempotent(kMutator, run, realtime());

  const auto profiles = profilesFromYaml(R"(
apiVersion: aiadmit.dev/v1
kind: Profile
metadata: {name: http}
spec:
  class: realtime
  probes: {readiness: {httpGet: {path: /v1/health/ready}}, startup: {httpGet: {path: /v1/health/live}}}
)");
  const Profile& http = *profiles->find("http");
  const MutationRun nim = runMutator(
      kMutator,
      server(
          "[{name: nim, image: nim, ports: [{containerPort: 8001, name: grpc}, "
          "{containerPort: 8000, name: http-openai}], resources: {limits: {nvidia.com/gpu: 1}}}]"),
      http);
  EXPECT_EQ(toJson(*at(*nim.after, "/spec/template/spec/containers/0/readinessProbe/httpGet")),
            R"({"path":"/v1/health/ready","port":8000,"scheme":"HTTP"})");
  expectAppliedAndIdempotent(kMutator, nim, http);
}

// A vLLM server over several nodes in one StatefulSet: its ranks read their
// ordinal, rank 0 serves and the others join it. A probe on the template
// would never pass on those others, so none is added and a notice says what
// to add. Beside it, the same StatefulSet whose Pods do not read their
// ordinal: each serves, and each is probed.
TEST(RealtimeProbesMutator, TheRanksOfOneServerGetANoticeInsteadOfProbes) {
  auto statefulSet = [](const std::string& rankLabel) {
    return R"(
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: vllm, annotations: {aiadmit.dev/workload: realtime}}
spec:
  replicas: 2
  serviceName: vllm
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai
        env: [{name: RANK, valueFrom: {fieldRef: {fieldPath: "metadata.labels[')" +
           rankLabel + R"(']"}}}]
        ports: [{containerPort: 6379, name: gcs-server}, {containerPort: 8000, name: http}]
        resources: {limits: {nvidia.com/gpu: 8}}
)";
  };
  const MutationRun run =
      runMutator(kMutator, statefulSet("apps.kubernetes.io/pod-index"), realtime());
  EXPECT_FALSE(run.changed) << run.patch();
  EXPECT_EQ(run.notices, (std::vector<std::string>{"no probes added, as its Pods are ranks "
                                                   "(\"RANK\"): add probes that pass on every "
                                                   "rank"}));
  expectAppliedAndIdempotent(kMutator, run, realtime());

  const MutationRun each =
      runMutator(kMutator, statefulSet("statefulset.kubernetes.io/pod-name"), realtime());
  EXPECT_EQ(each.changes.size(), 2u);
  EXPECT_TRUE(each.notices.empty());
  EXPECT_EQ(
      at(*each.after, "/spec/template/spec/containers/0/readinessProbe/tcpSocket/port")->GetInt(),
      8000);
  expectAppliedAndIdempotent(kMutator, each, realtime());
}

TEST(RealtimeProbesMutator, AUdpOnlyServerGetsNoProbe) {
  const MutationRun run = runMutator(
      kMutator, server("[{name: s, image: x, ports: [{containerPort: 5353, protocol: UDP}]}]"),
      realtime());
  EXPECT_FALSE(run.changed) << run.patch();
}

TEST(RealtimeProbesMutator, NoPortToProbeMeansNoProbe) {
  const MutationRun run = runMutator(kMutator, server("[{name: s, image: x}]"), realtime());
  EXPECT_FALSE(run.changed) << run.patch();
}

TEST(RealtimeProbesMutator, OnlyRealtimeWorkloadsGetProbes) {
  const MutationRun run = runMutator(kMutator,
                                     server("[{name: s, image: x, ports: [{containerPort: 8000}]}]",
                                            "{aiadmit.dev/workload: batch}"),
                                     realtime());
  EXPECT_FALSE(run.changed) << run.patch();
}

TEST(RealtimeProbesMutator, ProfileTurnsItOff) {
  const auto profiles = profilesFromYaml(kHttpProfiles);
  const std::string manifest = server("[{name: s, image: x, ports: [{containerPort: 8000}]}]");
  EXPECT_FALSE(runMutator(kMutator, manifest, *profiles->find("switched-off")).changed);
  EXPECT_FALSE(runMutator(kMutator, manifest, *profiles->find("disabled")).changed);
  EXPECT_FALSE(runMutator(kMutator, manifest, training()).changed);
}

}  // namespace
}  // namespace aiadmit
