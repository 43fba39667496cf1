// tests/schema/validate_crd.mjs, the check of custom resources against their
// real CRD (../shared/crds) as the API server's strict field validation
// does: every custom resource of the shared corpus that has a CRD there
// validates as it is (or fails exactly as the API server would refuse it),
// and an unknown field, a wrong type or a missing required field is refused.
// A small CRD written here exercises what the real ones barely use:
// preserve-unknown-fields, int-or-string, embedded resources, nullable,
// formats and list maps.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "tests/support/test_support.h"
#include "webhook/codec/json.h"

namespace aiadmit {
namespace {

using aiadmit::testing::CommandResult;
using aiadmit::testing::corpusDir;
using aiadmit::testing::runCommand;
using aiadmit::testing::sharedCrds;
using aiadmit::testing::sourceDir;
using aiadmit::testing::TempDir;
using aiadmit::testing::validateCustomResources;
using aiadmit::testing::writeFile;

TEST(CrdSchema, EveryCorpusCustomResourceValidatesAgainstItsCrd) {
  std::vector<std::string> objects;
  for (const auto& object : aiadmit::testing::corpusObjects()) {
    const auto json = aiadmit::testing::parseJson(object.json);
    const std::string_view apiVersion = stringMember(json.get(), "apiVersion");
    if (apiVersion.substr(0, apiVersion.find('/')).find('.') == std::string_view::npos) continue;
    objects.push_back(object.json);
  }
  ASSERT_EQ(objects.size(), 12u);
  const std::map<std::string, std::string> expected = {
      {"RayJob/ephemeral-gpu-job", "ok"},
      {"RayJob/rayjob-pytorch-mnist", "ok"},
      {"RayJob/pytorch-text-classifier-", "ok"},
      {"LeaderWorkerSet/tensorrt", "ok"},
      {"LLMInferenceService/qwen3-coder-tool-calling", "ok"},
      {"PaddleJob/paddle-simple-gpu", "ok"},
      {"PyTorchJob/pytorch-deepspeed-demo", "ok"},
      {"PyTorchJob/elastic-example-imagenet", "ok"},
      {"Job/mindspore-gpu", "ok"},
      // The LWS example is from a later commit than the CRD: the API server
      // with that CRD refuses it, and so does the check.
      {"LeaderWorkerSet/vllm",
       "spec.networkConfig.subdomainPolicy: Required value; unknown field "
       "\"spec.networkConfig.leaderServicePort\""},
      // No CRD in ../shared/crds: Volcano's CronJob, and the KFService of
      // KServe's former serving.kubeflow.org API.
      {"CronJob/volcano-cronjob-example",
       "no served CRD version for batch.volcano.sh/v1alpha1 CronJob"},
      {"KFService/tensorflow-gpu",
       "no served CRD version for serving.kubeflow.org/v1alpha1 KFService"},
  };
  EXPECT_EQ(validateCustomResources(objects), expected);
}

const char* kPyTorchJob = R"({"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob",
  "metadata":{"name":"NAME","labels":{"team":"vision"}},
  "spec":{"runPolicy":null,"pytorchReplicaSpecs":{"Worker":{"replicas":REPLICAS,
    "template":{"metadata":{"labels":{"app":"train"}},"spec":{"containers":[{"name":"torch",
      "image":"pytorch/pytorch:2.4.0-cuda12.1-cudnn9-runtime",
      "resources":{"limits":{"nvidia.com/gpu":GPUS,"memory":"64Gi"}}EXTRA}]}}}}}})";

std::string pytorchJob(const std::string& name, const std::string& replicas,
                       const std::string& gpus, const std::string& extra = "") {
  std::string json = kPyTorchJob;
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"NAME", name}, {"REPLICAS", replicas}, {"GPUS", gpus}, {"EXTRA", extra}}) {
    json.replace(json.find(key), key.size(), value);
  }
  return json;
}

TEST(CrdSchema, RefusesUnknownFieldsWrongTypesAndMissingRequiredFields) {
  const std::map<std::string, std::string> results = validateCustomResources({
      pytorchJob("valid", "2", "8"),
      pytorchJob("quoted-gpus", "2", "\"8\""),
      pytorchJob("unknown-field", "2", "8", R"(,"gpus":8)"),
      pytorchJob("wrong-type", "\"two\"", "8"),
      pytorchJob("not-int32", "4294967296", "8"),
      pytorchJob("bad-quantity", "2", "\"eight\""),
      R"({"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{"name":"no-specs"},
          "spec":{"runPolicy":{}}})",
      R"({"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob",
          "metadata":{"name":"meta","owner":"me"},"spec":{"pytorchReplicaSpecs":{}}})",
      R"({"apiVersion":"kubeflow.org/v2","kind":"PyTorchJob","metadata":{"name":"v2"}})",
      R"({"apiVersion":"ray.io/v1","kind":"RayCluster","metadata":{"name":"no-head"},
          "spec":{"workerGroupSpecs":[{"groupName":"w","minReplicas":0,"maxReplicas":1,
            "template":{"spec":{"containers":[{"name":"ray","image":"rayproject/ray:2.9.0"}]}}}]}})",
      R"({"apiVersion":"jobset.x-k8s.io/v1alpha2","kind":"JobSet","metadata":{"name":"twice"},
          "spec":{"replicatedJobs":[{"name":"w","template":{"spec":{"template":{"spec":{
            "containers":[{"name":"a","image":"busybox"}]}}}}},{"name":"w","template":{"spec":{
            "template":{"spec":{"containers":[{"name":"a","image":"busybox"}]}}}}}]}})",
  });
  const std::string worker = "spec.pytorchReplicaSpecs.Worker";
  const std::string limits = worker + ".template.spec.containers[0].resources.limits";
  const std::map<std::string, std::string> expected = {
      {"PyTorchJob/valid", "ok"},
      {"PyTorchJob/quoted-gpus", "ok"},
      {"PyTorchJob/unknown-field",
       "unknown field \"" + worker + ".template.spec.containers[0].gpus\""},
      {"PyTorchJob/wrong-type", worker + ".replicas: must be integer"},
      {"PyTorchJob/not-int32", worker + ".replicas: must match format \"int32\""},
      {"PyTorchJob/bad-quantity",
       limits + "[nvidia.com/gpu]: must match pattern \"" +
           "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-"
           "9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$\""},
      {"PyTorchJob/no-specs", "spec.pytorchReplicaSpecs: Required value"},
      {"PyTorchJob/meta", "unknown field \"metadata.owner\""},
      {"PyTorchJob/v2", "no served CRD version for kubeflow.org/v2 PyTorchJob"},
      {"RayCluster/no-head", "spec.headGroupSpec: Required value"},
      {"JobSet/twice", "spec.replicatedJobs: duplicate entries for key [\"w\"]"},
  };
  EXPECT_EQ(results, expected);
}

// A CRD with each marker the API server treats specially.
const char* kWidgetCrd = R"(apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec:
            type: object
            required: [size]
            properties:
              size:
                x-kubernetes-int-or-string: true
                anyOf: [{type: integer}, {type: string}]
              config:
                type: object
                x-kubernetes-preserve-unknown-fields: true
                properties:
                  mode: {type: string, enum: [fast, safe]}
              child:
                type: object
                x-kubernetes-embedded-resource: true
                x-kubernetes-preserve-unknown-fields: true
              note: {type: string, nullable: true}
              count: {type: integer, format: int64, minimum: 1}
              at: {type: string, format: date-time}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    port: {type: integer, format: int32}
  - name: v0
    served: false
    storage: false
    schema:
      openAPIV3Schema: {type: object}
)";

std::string widget(const std::string& name, const std::string& spec) {
  return R"({"apiVersion":"example.com/VERSION","kind":"Widget","metadata":{"name":")" + name +
         R"("},"spec":)" + spec + "}";
}

TEST(CrdSchema, FollowsTheApiServerOnEachSchemaMarker) {
  TempDir crds;
  writeFile(crds.file("example.com_widgets.yaml"), kWidgetCrd);
  auto v1 = [](std::string json) {
    json.replace(json.find("VERSION"), 7, "v1");
    return json;
  };
  std::string unserved = widget("unserved", "{}");
  unserved.replace(unserved.find("VERSION"), 7, "v0");
  const std::map<std::string, std::string> results = validateCustomResources(
      {v1(widget("int", R"({"size":3})")), v1(widget("string", R"({"size":"3Gi"})")),
       v1(widget("bool-size", R"({"size":true})")),
       v1(widget("preserved", R"({"size":1,"config":{"mode":"fast","anything":{"x":1}}})")),
       v1(widget("known-in-preserved", R"({"size":1,"config":{"mode":"slow"}})")),
       v1(widget(
           "embedded",
           R"({"size":1,"child":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{}}})")),
       v1(widget("embedded-meta", R"({"size":1,"child":{"metadata":{"nme":"c"}}})")),
       v1(widget("nullable", R"({"size":1,"note":null})")),
       v1(widget("pruned-null", R"({"size":1,"count":null})")),
       v1(widget("int64", R"({"size":1,"count":0})")),
       v1(widget("date-time", R"({"size":1,"at":"yesterday"})")),
       v1(widget("list-map",
                 R"({"size":1,"ports":[{"name":"a","port":1},{"name":"a","port":2}]})")),
       v1(widget("no-size", R"({"note":"x"})")),
       v1(widget("unknown", R"({"size":1,"colour":"red"})")), unserved},
      crds.path());
  const std::map<std::string, std::string> expected = {
      {"Widget/int", "ok"},
      {"Widget/string", "ok"},
      {"Widget/bool-size", "spec.size: must be integer or string"},
      {"Widget/preserved", "ok"},
      {"Widget/known-in-preserved", "spec.config.mode: must be equal to one of the allowed values"},
      {"Widget/embedded", "ok"},
      {"Widget/embedded-meta", "unknown field \"spec.child.metadata.nme\""},
      {"Widget/nullable", "ok"},
      {"Widget/pruned-null", "ok"},
      {"Widget/int64", "spec.count: must be >= 1"},
      {"Widget/date-time", "spec.at: must match format \"date-time\""},
      {"Widget/list-map", "spec.ports: duplicate entries for key [\"a\"]"},
      {"Widget/no-size", "spec.size: Required value"},
      {"Widget/unknown", "unknown field \"spec.colour\""},
      {"Widget/unserved", "no served CRD version for example.com/v0 Widget"},
  };
  EXPECT_EQ(results, expected);
}

}  // namespace
}  // namespace aiadmit
