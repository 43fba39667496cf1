// `aiadmit check` on custom resources of kinds no row describes: one that
// asks for an accelerator anywhere in its spec is named as not judged, with
// where it asks and what to add; beside it the near misses that are only
// skipped (a GPU field that is no count, a count of zero, a ConfigMap, a
// kind of Kubernetes' own). Not judged is no denial: the exit stays 0.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/check_harness.h"
#include "tests/support/test_support.h"

namespace aiadmit {
namespace {

using namespace testing;
using nlohmann::json;

constexpr char kInHouse[] = R"(apiVersion: ml.example.com/v1
kind: ModelServer
metadata: {name: llama}
spec:
  replicas: 2
  resources:
    limits: {nvidia.com/gpu: "1", memory: 64Gi}
---
apiVersion: ml.example.com/v1
kind: Pipeline
metadata: {name: etl}
spec:
  stages:
  - name: embed
    gpu: {name: amd.com/gpu, quantity: 2}
---
apiVersion: ml.example.com/v1
kind: ModelServer
metadata: {name: tuned}
spec:
  engine: {gpuMemoryUtilization: 0.9, tensorParallelSize: 2}
---
apiVersion: ml.example.com/v1
kind: ModelServer
metadata: {name: idle}
spec:
  resources:
    limits: {nvidia.com/gpu: 0}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {gpu: "1"}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: llama}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: llama}
  maxReplicas: 4
  metrics:
  - type: External
    external:
      metric: {name: gpu}
      target: {type: Value, value: "1"}
)";

TEST(CheckNotJudged, ACustomResourceThatAsksForGpusIsNamedWithWhatToAdd) {
  TempDir dir;
  writeFile(dir.file("in-house.yaml"), kInHouse);
  const CommandResult text = check({dir.file("in-house.yaml")});
  EXPECT_EQ(text.exitCode, 0) << text.err;
  EXPECT_NE(text.out.find("in-house.yaml:1: ModelServer/llama: not judged: it asks for "
                          "nvidia.com/gpu at /spec/resources/limits/nvidia.com~1gpu, and no "
                          "WorkloadType names ModelServer.ml.example.com: add one (aiadmit "
                          "workload-types suggest on its CRD"),
            std::string::npos)
      << text.out;
  EXPECT_NE(
      text.out.find("Pipeline/etl: not judged: it asks for amd.com/gpu at /spec/stages/0/gpu"),
      std::string::npos)
      << text.out;
  for (const char* nearMiss :
       {"ModelServer/tuned", "ModelServer/idle", "settings", "HorizontalPodAutoscaler"}) {
    EXPECT_EQ(text.out.find(nearMiss), std::string::npos) << nearMiss << "\n" << text.out;
  }
  EXPECT_NE(text.out.find("6 skipped (not a kind that runs Pods, 2 of them not judged)"),
            std::string::npos)
      << text.out;

  const CommandResult machine = check({"-o", "json", dir.file("in-house.yaml")});
  const json report = json::parse(machine.out);
  EXPECT_EQ(report["summary"]["notJudged"], 2);
  size_t named = 0;
  for (const json& skipped : report["skipped"]) {
    if (!skipped.contains("notJudged")) continue;
    ++named;
    EXPECT_EQ(skipped["apiVersion"], "ml.example.com/v1");
    EXPECT_FALSE(skipped["notJudged"]["at"].get<std::string>().empty());
  }
  EXPECT_EQ(named, 2u);
}

}  // namespace
}  // namespace aiadmit
