// CRD defaulting as kube-apiserver does it before admission: the real CRDs of
// ../shared/crds give a RayJob and a Volcano Job the defaults the API server
// writes into them, nested defaults appear only where their parent exists,
// list items and map values are defaulted, values that are present (or null
// where null is allowed) are kept, and the limits on schema depth, schema
// size and work per object hold.
#include "webhook/model/crd_defaults.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/support/test_support.h"
#include "webhook/codec/json_pointer.h"
#include "webhook/codec/yaml_json.h"

namespace aiadmit {
namespace {

using aiadmit::testing::yamlObject;

constexpr const char* kSharedCrds = AIADMIT_SOURCE_DIR "/../shared/crds";

// The set of the CRDs in `files` of ../shared/crds.
std::shared_ptr<const CrdDefaults> sharedCrds(const std::vector<std::string>& files) {
  CrdDefaults::Builder builder;
  for (const std::string& file : files) {
    std::vector<ManifestDocument> documents;
    std::string error;
    const std::string text = aiadmit::testing::readFile(std::string(kSharedCrds) + "/" + file);
    EXPECT_TRUE(parseManifests(text, documents, &error)) << file << ": " << error;
    for (const ManifestDocument& document : documents) {
      EXPECT_TRUE(builder.add(*document.json, &error)) << file << ": " << error;
    }
  }
  return std::move(builder).build();
}

// A CRD of example.com/v1 Widget with `schema` (JSON) as its openAPIV3Schema.
std::string widgetCrd(const std::string& schema, const std::string& version = "v1",
                      bool served = true) {
  return R"({"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
    "metadata":{"name":"widgets.example.com"},
    "spec":{"group":"example.com","names":{"kind":"Widget","plural":"widgets"},
      "scope":"Namespaced","versions":[{"name":")" +
         version + R"(","served":)" + (served ? "true" : "false") +
         R"(,"storage":true,"schema":{"openAPIV3Schema":)" + schema + "}}]}}";
}

std::shared_ptr<const CrdDefaults> widgetSet(const std::string& schema,
                                             CrdDefaultLimits limits = {}) {
  CrdDefaults::Builder builder(limits);
  std::string error;
  EXPECT_TRUE(builder.add(*yamlObject(widgetCrd(schema)), &error)) << error;
  return std::move(builder).build();
}

// The spec of a Widget after defaulting, compact JSON.
std::string defaultedSpec(const CrdDefaults& crds, const std::string& spec) {
  const auto object =
      yamlObject(R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},)"
                 R"("spec":)" +
                 spec + "}");
  EXPECT_EQ(crds.apply(*object, object->GetAllocator()).outcome, DefaultingOutcome::Applied);
  return toJson((*object)["spec"]);
}

std::string at(const JsonValue& object, std::string_view pointer) {
  const JsonValue* value = valueAt(object, pointer);
  return value == nullptr ? "<absent>" : toJson(*value);
}

constexpr char kRayJob[] = R"(apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: train
spec:
  entrypoint: python train.py
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers:
          - name: ray-head
            image: rayproject/ray:2.41.0
            ports:
            - containerPort: 6379
            - containerPort: 8265
              protocol: UDP
    workerGroupSpecs:
    - groupName: gpu
      replicas: 2
      rayStartParams: {}
      template:
        spec:
          containers:
          - name: ray-worker
            image: rayproject/ray:2.41.0
)";

// A CRD file is one definition, or kubectl's List of them (`kubectl get crd
// -o yaml`), which may hold other kinds and Lists of its own.
TEST(CrdDefaults, DefinitionsAreReadAloneAndFromLists) {
  const std::string crd =
      "{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, "
      "metadata: {name: NAME}}";
  const auto named = [&](const char* name) {
    std::string text = crd;
    return text.replace(text.find("NAME"), 4, name);
  };
  const auto alone = yamlObject("definition: " + named("a.example.com") + "\n");
  ASSERT_EQ(CrdDefaults::definitionsIn((*alone)["definition"]).size(), 1u);
  const auto list = yamlObject("apiVersion: v1\nkind: List\nitems:\n- " + named("a.example.com") +
                               "\n- {apiVersion: v1, kind: Pod}\n- {kind: "
                               "CustomResourceDefinitionList, items: [" +
                               named("b.example.com") + "]}\n");
  std::vector<std::string> names;
  for (const JsonValue* found : CrdDefaults::definitionsIn(*list)) {
    names.emplace_back(stringOf(valueAt(*found, "/metadata/name")));
  }
  EXPECT_EQ(names, (std::vector<std::string>{"a.example.com", "b.example.com"}));
  EXPECT_TRUE(CrdDefaults::definitionsIn(*yamlObject("apiVersion: v1\nkind: Pod\n")).empty());
  // A List whose items are no list is no list of definitions.
  EXPECT_TRUE(CrdDefaults::definitionsIn(*yamlObject("kind: List\nitems: {}\n")).empty());
}

TEST(CrdDefaults, RayJobGetsTheDefaultsOfItsCrd) {
  const auto crds = sharedCrds({"ray.io_rayjobs.yaml"});
  const auto rayJob = yamlObject(kRayJob);
  const DefaultingResult result = crds->apply(*rayJob, rayJob->GetAllocator());
  ASSERT_EQ(result.outcome, DefaultingOutcome::Applied);

  // The Job-level settings that KubeRay's CRD defaults, and one it does not.
  EXPECT_EQ(at(*rayJob, "/spec/backoffLimit"), "0");
  EXPECT_EQ(at(*rayJob, "/spec/ttlSecondsAfterFinished"), "0");
  EXPECT_EQ(at(*rayJob, "/spec/submissionMode"), "\"K8sJobMode\"");
  EXPECT_EQ(at(*rayJob, "/spec/shutdownAfterJobFinishes"), "<absent>");
  // A worker group, an item of workerGroupSpecs, gets its own defaults; the
  // replicas it states are kept.
  EXPECT_EQ(at(*rayJob, "/spec/rayClusterSpec/workerGroupSpecs/0/replicas"), "2");
  EXPECT_EQ(at(*rayJob, "/spec/rayClusterSpec/workerGroupSpecs/0/minReplicas"), "0");
  EXPECT_EQ(at(*rayJob, "/spec/rayClusterSpec/workerGroupSpecs/0/maxReplicas"), "2147483647");
  EXPECT_EQ(at(*rayJob, "/spec/rayClusterSpec/workerGroupSpecs/0/numOfHosts"), "1");
  EXPECT_EQ(at(*rayJob, "/spec/rayClusterSpec/workerGroupSpecs/0/priority"), "0");
  // Each port of the pod template: TCP where none is given, UDP kept.
  const std::string ports = "/spec/rayClusterSpec/headGroupSpec/template/spec/containers/0/ports";
  EXPECT_EQ(at(*rayJob, ports + "/0/protocol"), "\"TCP\"");
  EXPECT_EQ(at(*rayJob, ports + "/1/protocol"), "\"UDP\"");
  // Objects the RayJob leaves out are not created for their defaults.
  EXPECT_EQ(at(*rayJob, "/spec/rayClusterSpec/networkPolicy"), "<absent>");
  EXPECT_EQ(at(*rayJob, "/spec/deletionStrategy"), "<absent>");
  EXPECT_EQ(at(*rayJob, "/status"), "<absent>");
  EXPECT_EQ(result.defaultsSet, 8u);
  EXPECT_EQ(result.nullsDropped, 0u);
}

TEST(CrdDefaults, RayJobNestedDefaultAppliesOnceItsParentExists) {
  const auto crds = sharedCrds({"ray.io_rayjobs.yaml"});
  const auto rayJob = yamlObject(std::string(kRayJob) + "    networkPolicy: {}\n" +
                                 "  backoffLimit: 4\n  ttlSecondsAfterFinished: 600\n");
  ASSERT_EQ(crds->apply(*rayJob, rayJob->GetAllocator()).outcome, DefaultingOutcome::Applied);
  EXPECT_EQ(at(*rayJob, "/spec/rayClusterSpec/networkPolicy"), R"({"mode":"DenyAll"})");
  EXPECT_EQ(at(*rayJob, "/spec/backoffLimit"), "4");
  EXPECT_EQ(at(*rayJob, "/spec/ttlSecondsAfterFinished"), "600");
}

TEST(CrdDefaults, RayJobOfAnOlderServedVersionGetsThatVersionsDefaults) {
  const auto crds = sharedCrds({"ray.io_rayjobs.yaml"});
  std::string yaml = kRayJob;
  yaml.replace(yaml.find("ray.io/v1"), 9, "ray.io/v1alpha1");
  const auto rayJob = yamlObject(yaml);
  ASSERT_EQ(crds->apply(*rayJob, rayJob->GetAllocator()).outcome, DefaultingOutcome::Applied);
  // v1alpha1 has no backoffLimit, and defaults only the TTL.
  EXPECT_EQ(at(*rayJob, "/spec/backoffLimit"), "<absent>");
  EXPECT_EQ(at(*rayJob, "/spec/ttlSecondsAfterFinished"), "0");
}

constexpr char kVolcanoJob[] = R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: mpi
spec:
  minAvailable: 3
  schedulerName: volcano
  policies: null
  tasks:
  - name: mpimaster
    replicas: 1
    template:
      spec:
        containers:
        - name: mpimaster
          image: mindspore:1.0
  - name: mpiworker
    replicas: 2
    partitionPolicy:
      totalPartitions: 2
      partitionSize: 1
    template:
      spec:
        containers:
        - name: mpiworker
          image: mindspore:1.0
          ports:
          - containerPort: 22
)";

TEST(CrdDefaults, VolcanoJobGetsMaxRetryQueueAndTaskDefaults) {
  const auto crds = sharedCrds({"batch.volcano.sh_jobs.yaml"});
  const auto job = yamlObject(kVolcanoJob);
  const DefaultingResult result = crds->apply(*job, job->GetAllocator());
  ASSERT_EQ(result.outcome, DefaultingOutcome::Applied);
  EXPECT_EQ(at(*job, "/spec/maxRetry"), "3");
  EXPECT_EQ(at(*job, "/spec/queue"), "\"default\"");
  EXPECT_EQ(at(*job, "/spec/minAvailable"), "3");
  EXPECT_EQ(at(*job, "/spec/networkTopology"), "<absent>");
  // Only the task that has a partitionPolicy gets its minPartitions.
  EXPECT_EQ(at(*job, "/spec/tasks/0/partitionPolicy"), "<absent>");
  EXPECT_EQ(at(*job, "/spec/tasks/1/partitionPolicy/minPartitions"), "0");
  EXPECT_EQ(at(*job, "/spec/tasks/1/template/spec/containers/0/ports/0/protocol"), "\"TCP\"");
  // policies is not nullable and has no default: the API server drops the null.
  EXPECT_EQ(at(*job, "/spec/policies"), "<absent>");
  EXPECT_EQ(result.nullsDropped, 1u);
}

TEST(CrdDefaults, VolcanoJobKeepsWhatItStates) {
  const auto crds = sharedCrds({"batch.volcano.sh_jobs.yaml"});
  std::string yaml = kVolcanoJob;
  yaml.replace(yaml.find("  policies: null\n"), 17, "  maxRetry: 0\n  queue: research\n");
  const auto job = yamlObject(yaml);
  ASSERT_EQ(crds->apply(*job, job->GetAllocator()).outcome, DefaultingOutcome::Applied);
  EXPECT_EQ(at(*job, "/spec/maxRetry"), "0");
  EXPECT_EQ(at(*job, "/spec/queue"), "\"research\"");
}

TEST(CrdDefaults, EveryCrdOfTheSharedSetIsRead) {
  const auto crds = sharedCrds(
      {"batch.volcano.sh_jobs.yaml", "jobset.x-k8s.io_jobsets.yaml", "kubeflow.org_mpijobs.yaml",
       "kubeflow.org_pytorchjobs.yaml", "leaderworkerset.x-k8s.io_leaderworkersets.yaml",
       "ray.io_rayclusters.yaml", "ray.io_rayjobs.yaml", "ray.io_rayservices.yaml",
       "serving.kserve.io_inferenceservices.yaml", "trainer.kubeflow.org_trainjobs.yaml"});
  EXPECT_TRUE(crds->describes("ray.io", "v1", "RayJob"));
  EXPECT_TRUE(crds->describes("ray.io", "v1alpha1", "RayJob"));
  EXPECT_TRUE(crds->describes("batch.volcano.sh", "v1alpha1", "Job"));
  EXPECT_TRUE(crds->describes("kubeflow.org", "v1", "PyTorchJob"));
  EXPECT_FALSE(crds->describes("batch", "v1", "Job"));
  EXPECT_GE(crds->size(), 10u);
}

TEST(CrdDefaults, ObjectsOfOtherKindsAndVersionsAreLeftAlone) {
  const auto crds = sharedCrds({"ray.io_rayjobs.yaml"});
  for (const std::string apiVersion : {"ray.io/v2", "batch/v1", "example.com/v1"}) {
    std::string yaml = kRayJob;
    yaml.replace(yaml.find("ray.io/v1"), 9, apiVersion);
    const auto object = yamlObject(yaml);
    const std::string before = toJson(*object);
    EXPECT_EQ(crds->apply(*object, object->GetAllocator()).outcome, DefaultingOutcome::NoSchema);
    EXPECT_EQ(toJson(*object), before) << apiVersion;
  }
}

constexpr char kNestedSchema[] = R"({"type":"object","properties":{
  "spec":{"type":"object","properties":{
    "size":{"type":"integer","default":1},
    "note":{"type":"string","nullable":true,"default":"none"},
    "limits":{"type":"object","default":{},"properties":{
      "cpu":{"type":"string","default":"1"},
      "extra":{"type":"object","properties":{"x":{"type":"integer","default":7}}}}},
    "shape":{"type":"object","default":{"kind":"box"},"properties":{
      "kind":{"type":"string"},"sides":{"type":"integer","default":4}}},
    "parts":{"type":"array","items":{"type":"object","default":{"name":"spare"},"properties":{
      "name":{"type":"string"},"count":{"type":"integer","default":1}}}},
    "labels":{"type":"object","additionalProperties":{"type":"object","properties":{
      "weight":{"type":"integer","default":10}}}},
    "free":{"type":"object","additionalProperties":true}}}}})";

TEST(CrdDefaults, DefaultsAreDefaultedAsTheApiServerDoes) {
  const auto crds = widgetSet(kNestedSchema);
  // A default object takes the defaults of its own properties (cpu, sides),
  // but nothing is created under it that the default leaves out (extra).
  // Defaults are added in the order of their names.
  EXPECT_EQ(defaultedSpec(*crds, "{}"),
            R"({"limits":{"cpu":"1"},"note":"none","shape":{"kind":"box","sides":4},"size":1})");
}

TEST(CrdDefaults, ListItemsAndMapValuesAreDefaulted) {
  const auto crds = widgetSet(kNestedSchema);
  EXPECT_EQ(
      defaultedSpec(*crds, R"({"size":3,"note":null,"limits":{"extra":{}},"shape":{"sides":6},)"
                           R"("parts":[{"name":"a"},null,{"name":"b","count":5}],)"
                           R"("labels":{"x":{},"y":{"weight":2}},"free":{"any":{"weight":null}}})"),
      R"({"size":3,"note":null,"limits":{"extra":{"x":7},"cpu":"1"},"shape":{"sides":6},)"
      R"("parts":[{"name":"a","count":1},{"name":"spare","count":1},{"name":"b","count":5}],)"
      R"("labels":{"x":{"weight":10},"y":{"weight":2}},"free":{"any":{"weight":null}}})");
}

TEST(CrdDefaults, NullsTheSchemaForbidsTakeTheDefaultOrAreDropped) {
  const auto crds = widgetSet(kNestedSchema);
  EXPECT_EQ(defaultedSpec(*crds, R"({"size":null,"limits":{"cpu":null,"extra":null},)"
                                 R"("labels":{"x":null},"unknown":null})"),
            R"({"size":1,"limits":{"cpu":"1"},"labels":{},"unknown":null,"note":"none",)"
            R"("shape":{"kind":"box","sides":4}})");
}

TEST(CrdDefaults, ServedVersionsOnlyAndALaterCrdReplacesAnEarlierOne) {
  CrdDefaults::Builder builder;
  std::string error;
  ASSERT_TRUE(builder.add(*yamlObject(widgetCrd(kNestedSchema, "v2", false)), &error)) << error;
  ASSERT_TRUE(builder.add(*yamlObject(widgetCrd(kNestedSchema)), &error)) << error;
  ASSERT_TRUE(builder.add(
      *yamlObject(
          widgetCrd(R"({"type":"object","properties":{"spec":{"type":"object","properties":{)"
                    R"("size":{"type":"integer","default":2}}}}})")),
      &error))
      << error;
  const auto crds = std::move(builder).build();
  EXPECT_FALSE(crds->describes("example.com", "v2", "Widget"));
  EXPECT_EQ(defaultedSpec(*crds, "{}"), R"({"size":2})");
}

TEST(CrdDefaults, RefusesWhatIsNotAV1Crd) {
  CrdDefaults::Builder builder;
  std::string error;
  EXPECT_FALSE(builder.add(*yamlObject("{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}"), &error));
  EXPECT_NE(error.find("not a CustomResourceDefinition"), std::string::npos) << error;
  std::string v1beta1 = widgetCrd(kNestedSchema);
  v1beta1.replace(v1beta1.find("apiextensions.k8s.io/v1"), 23, "apiextensions.k8s.io/v1beta1");
  EXPECT_FALSE(builder.add(*yamlObject(v1beta1), &error));
  EXPECT_NE(error.find("only apiextensions.k8s.io/v1 is read"), std::string::npos) << error;
  EXPECT_FALSE(builder.add(*yamlObject(widgetCrd(R"({"type":"object","properties":[]})")), &error));
  EXPECT_NE(error.find("openAPIV3Schema.properties: is an object"), std::string::npos) << error;
  EXPECT_EQ(std::move(builder).build()->size(), 0u);
}

// A schema of `levels` nested objects, each `{"a": ...}`.
std::string deepSchema(int levels) {
  std::string schema = R"({"type":"integer","default":1})";
  for (int i = 0; i < levels; ++i) {
    schema = R"({"type":"object","default":{},"properties":{"a":)" + schema + "}}";
  }
  return schema;
}

TEST(CrdDefaults, SchemaDepthAndSizeAreBounded) {
  std::string error;
  CrdDefaults::Builder shallow(CrdDefaultLimits{8, 1000, 1000});
  EXPECT_TRUE(shallow.add(*yamlObject(widgetCrd(deepSchema(8))), &error)) << error;
  EXPECT_FALSE(shallow.add(*yamlObject(widgetCrd(deepSchema(9))), &error));
  EXPECT_NE(error.find("nests deeper than 8 levels"), std::string::npos) << error;

  CrdDefaults::Builder small(CrdDefaultLimits{64, 12, 1000});
  EXPECT_TRUE(small.add(*yamlObject(widgetCrd(deepSchema(10))), &error)) << error;
  EXPECT_FALSE(small.add(*yamlObject(widgetCrd(deepSchema(1))), &error));
  EXPECT_NE(error.find("more than 12 schema nodes"), std::string::npos) << error;
}

TEST(CrdDefaults, WorkPerObjectIsBoundedAndLeavesTheObjectAsWritten) {
  // Every element of the list takes a default of three values, and is walked.
  const std::string schema =
      R"({"type":"object","properties":{"spec":{"type":"object","properties":{)"
      R"("parts":{"type":"array","items":{"type":"object","properties":{)"
      R"("tags":{"type":"array","default":["a","b"]}}}}}}}})";
  std::string parts;
  for (int i = 0; i < 100; ++i) parts += i == 0 ? "{}" : ",{}";
  const std::string spec = R"({"parts":[)" + parts + "]}";

  const auto roomy = widgetSet(schema, CrdDefaultLimits{64, 1000, 1000});
  EXPECT_NE(defaultedSpec(*roomy, spec).find(R"({"tags":["a","b"]})"), std::string::npos);

  const auto tight = widgetSet(schema, CrdDefaultLimits{64, 1000, 300});
  const auto object = yamlObject(
      R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":)" + spec +
      "}");
  const std::string before = toJson(*object);
  const DefaultingResult result = tight->apply(*object, object->GetAllocator());
  EXPECT_EQ(result.outcome, DefaultingOutcome::LimitReached);
  EXPECT_EQ(result.defaultsSet, 0u);
  EXPECT_EQ(toJson(*object), before);
}

}  // namespace
}  // namespace aiadmit
