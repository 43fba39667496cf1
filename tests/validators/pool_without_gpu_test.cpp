// AIA007 through the engine's /validate path: placement on the GPU pool by a Pod that asks for no
// GPU. Manifests that break the rule and near misses that must pass, each under profiles that deny,
// warn and switch every rule off.
#include "tests/support/validator_harness.h"

namespace aiadmit {
namespace {

using namespace testing;

const std::vector<RuleCase> kCases = {
    {"SelectorWithoutGpu", "default",
     R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelector: {accelerator: nvidia}
      containers: [{name: web, image: nginx}]
)",
     "spec.template.spec.nodeSelector"},
    {"TolerationWithoutGpu", "default",
     R"(apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  tolerations: [{key: accelerator, operator: Exists}]
  containers: [{name: web, image: nginx}]
)",
     "spec.tolerations[0]"},
    {"EveryAffinityTermSelectsThePool", "default",
     R"(apiVersion: batch/v1
kind: Job
metadata: {name: prep}
spec:
  template:
    spec:
      restartPolicy: Never
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions: [{key: accelerator, operator: In, values: [nvidia]}]
            - matchExpressions: [{key: zone, operator: In, values: [a]}, {key: accelerator, operator: In, values: [nvidia]}]
      containers: [{name: prep, image: p}]
)",
     "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
     ".nodeSelectorTerms"},
    {"OneAffinityTermElsewhere", "default",
     R"(apiVersion: batch/v1
kind: Job
metadata: {name: prep}
spec:
  template:
    spec:
      restartPolicy: Never
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions: [{key: accelerator, operator: In, values: [nvidia]}]
            - matchExpressions: [{key: pool, operator: In, values: [cpu]}]
      containers: [{name: prep, image: p}]
)",
     ""},
    {"DaemonSetPodServesTheNode", "default",
     R"(apiVersion: v1
kind: Pod
metadata:
  name: dcgm-exporter-x7k2p
  ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: dcgm-exporter, uid: 2c7d9e4a-1b2c-4d5e-8f90-a1b2c3d4e5f6, controller: true}]
spec:
  nodeSelector: {accelerator: nvidia}
  tolerations: [{key: accelerator, operator: Exists}]
  containers: [{name: exporter, image: dcgm-exporter}]
)",
     ""},
    {"WildcardTolerationAimsNowhere", "default",
     R"(apiVersion: v1
kind: Pod
metadata: {name: agent}
spec:
  tolerations: [{operator: Exists}]
  containers: [{name: agent, image: fluent-bit}]
)",
     ""},
    {"GpuByDynamicResourceAllocation", "default",
     R"(apiVersion: v1
kind: Pod
metadata: {name: dra}
spec:
  nodeSelector: {accelerator: nvidia}
  tolerations: [{key: accelerator, operator: Exists}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: gpu-claim}]
  containers: [{name: main, image: busybox, resources: {claims: [{name: gpu}]}}]
)",
     ""}};

AIADMIT_RULE_ACTIONS_TEST(AIA007, kCases);

}  // namespace
}  // namespace aiadmit
