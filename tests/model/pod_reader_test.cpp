// The pod reader: the one answer to what a pod template asks for, which
// container is the main one and what the aiadmit annotations say.
#include "webhook/model/pod_reader.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "tests/support/test_support.h"

namespace aiadmit {
namespace {

using testing::parseJson;

struct Read {
  std::shared_ptr<JsonDocument> document;
  PodReader pod;
};

// A Deployment with `podSpec` and the given annotations on the object and template.
Read deployment(const std::string& podSpec, const std::string& objectAnnotations = "{}",
                const std::string& templateAnnotations = "{}") {
  auto document = parseJson(R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":)"
                            R"({"name":"d","annotations":)" +
                            objectAnnotations +
                            R"(},"spec":{"template":{"metadata":)"
                            R"({"annotations":)" +
                            templateAnnotations + R"(},"spec":)" + podSpec + "}}}");
  const PodTemplateView view = testing::firstTemplateOf(*document);
  return {document, PodReader::of(view)};
}

std::string_view mainName(const PodReader& pod) {
  const MainContainer main = pod.mainContainer();
  return main.container == nullptr ? "<none>" : main.container->name;
}

constexpr const char* kSidecarFirst =
    R"({"containers":[{"name":"log-shipper","ports":[{"containerPort":24224}]},
                      {"name":"vllm","ports":[{"containerPort":8000}],
                       "resources":{"limits":{"nvidia.com/gpu":1}}}]})";

TEST(PodReader, TheMainContainerIsTheOneThatAsksForTheAccelerator) {
  const Read read = deployment(kSidecarFirst);
  EXPECT_EQ(mainName(read.pod), "vllm");
  EXPECT_EQ(read.pod.mainContainer().basis, MainContainerBasis::Accelerator);
}

TEST(PodReader, TheAnnotationChoosesAmongContainersWithoutAccelerators) {
  const std::string spec = R"({"containers":[{"name":"a"},{"name":"b"}]})";
  EXPECT_EQ(mainName(deployment(spec).pod), "a");
  EXPECT_EQ(deployment(spec).pod.mainContainer().basis, MainContainerBasis::First);
  const Read named = deployment(spec, R"({"aiadmit.dev/gpu-container":"b"})");
  EXPECT_EQ(mainName(named.pod), "b");
  EXPECT_EQ(named.pod.mainContainer().basis, MainContainerBasis::Annotation);
}

TEST(PodReader, TheAnnotationChoosesAmongSeveralGpuContainers) {
  const std::string spec = R"({"containers":[
      {"name":"a","resources":{"limits":{"nvidia.com/gpu":1}}},
      {"name":"b","resources":{"limits":{"nvidia.com/gpu":1}}}]})";
  EXPECT_EQ(mainName(deployment(spec).pod), "a");
  EXPECT_EQ(mainName(deployment(spec, "{}", R"({"aiadmit.dev/gpu-container":"b"})").pod), "b");
}

TEST(PodReader, AnAnnotationNamingNoContainerIsReportedNotReplaced) {
  const Read typo = deployment(R"({"containers":[{"name":"trainer"}]})",
                               R"({"aiadmit.dev/gpu-container":"traner"})");
  EXPECT_EQ(typo.pod.unknownGpuContainer().value_or(""), "traner");
  EXPECT_EQ(typo.pod.mainContainer().container, nullptr);
  // An init container is never the main one, even by name.
  const Read init =
      deployment(R"({"initContainers":[{"name":"fetch"}],"containers":[{"name":"c"}]})",
                 R"({"aiadmit.dev/gpu-container":"fetch"})");
  EXPECT_EQ(init.pod.unknownGpuContainer().value_or(""), "fetch");
  EXPECT_FALSE(deployment(kSidecarFirst).pod.unknownGpuContainer());
}

TEST(PodReader, TheTemplateAnnotationWinsOverTheObjects) {
  const Read read = deployment(R"({"containers":[]})", R"({"aiadmit.dev/workload":"batch"})",
                               R"({"aiadmit.dev/workload":"training"})");
  EXPECT_EQ(read.pod.annotation("aiadmit.dev/workload").value_or(""), "training");
  EXPECT_EQ(read.pod.annotationSite("aiadmit.dev/workload"), AnnotationSite::Template);
  EXPECT_EQ(read.pod.objectAnnotation("aiadmit.dev/workload").value_or(""), "batch");
  const Read objectOnly = deployment(R"({"containers":[]})", R"({"aiadmit.dev/gpus":"2"})");
  EXPECT_EQ(objectOnly.pod.annotation("aiadmit.dev/gpus").value_or(""), "2");
  EXPECT_EQ(objectOnly.pod.annotationSite("aiadmit.dev/gpus"), AnnotationSite::Object);
  EXPECT_EQ(objectOnly.pod.annotationSite("aiadmit.dev/profile"), AnnotationSite::None);
  // A value that is not a string is no annotation the API server would keep.
  EXPECT_FALSE(deployment(R"({})", R"({"aiadmit.dev/gpus":2})").pod.annotation("aiadmit.dev/gpus"));
}

TEST(PodReader, ContainersInStartOrderWithSidecarsMarked) {
  const Read read = deployment(R"({"initContainers":[{"name":"proxy","restartPolicy":"Always"},
                                                     {"name":"fetch"}, "not a container"],
                                   "containers":[{"name":"main"}]})");
  ASSERT_EQ(read.pod.containers().size(), 3u);
  EXPECT_EQ(read.pod.containers()[0].name, "proxy");
  EXPECT_TRUE(read.pod.containers()[0].sidecar);
  EXPECT_FALSE(read.pod.containers()[1].sidecar);
  EXPECT_EQ(read.pod.containers()[2].list, ContainerList::Containers);
  EXPECT_EQ(inContainer(read.pod, read.pod.containers()[2]), " in container \"main\"");
  EXPECT_EQ(inContainer(deployment(R"({"containers":[{"name":"solo"}]})").pod,
                        deployment(R"({"containers":[{"name":"solo"}]})").pod.containers()[0]),
            "");
}

TEST(PodReader, AcceleratorsByLookAndPositiveAmounts) {
  const Read read = deployment(R"({"containers":[
      {"name":"zero","resources":{"limits":{"nvidia.com/gpu":0}}},
      {"name":"typo","resources":{"requests":{"nvidia.com/gpus":"1"}}},
      {"name":"rdma","resources":{"limits":{"rdma/ib":1}}}]})");
  const auto first = read.pod.firstAccelerator();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->container->name, "typo") << "0 asks for nothing";
  EXPECT_FALSE(read.pod.asksForAccelerator(read.pod.containers()[0])) << "0 asks for nothing";
  EXPECT_TRUE(read.pod.asksForAccelerator(read.pod.containers()[1]));
  EXPECT_FALSE(read.pod.asksForAccelerator(read.pod.containers()[2]));
  EXPECT_EQ(mainName(read.pod), "typo");
  int entries = 0;
  read.pod.forEachAccelerator([&](const ResourceEntry&) { ++entries; });
  EXPECT_EQ(entries, 1);
}

// A 0 in any spelling is a container without the resource, as the API
// server, kube-scheduler and the device plugin take it: no accelerator is
// asked for, yet the Pod has named one and said how many it wants. A
// negative, fractional or unreadable amount is still an entry, for AIA004.
TEST(PodReader, AZeroInAnySpellingAsksForNoAccelerator) {
  for (const std::string zero : {"0", "\"0\"", "\"0m\"", "\"-0\"", "\"0e3\""}) {
    SCOPED_TRACE(zero);
    const Read read = deployment(R"({"containers":[{"name":"cpu","resources":{"limits":)"
                                 R"({"nvidia.com/gpu":)" +
                                 zero + R"(},"requests":{"nvidia.com/gpu":)" + zero + "}}}]}");
    EXPECT_FALSE(read.pod.firstAccelerator());
    EXPECT_FALSE(read.pod.asksForAccelerator());
    EXPECT_FALSE(read.pod.asksForGpus());
    EXPECT_TRUE(read.pod.namesAccelerator());
    EXPECT_EQ(read.pod.podRequest("nvidia.com/gpu"), 0);
  }
  for (const std::string wrong : {"-1", "\"0.5\"", "\"one\""}) {
    SCOPED_TRACE(wrong);
    const Read read = deployment(R"({"containers":[{"name":"c","resources":{"limits":)"
                                 R"({"nvidia.com/gpu":)" +
                                 wrong + "}}}]}");
    int entries = 0;
    read.pod.forEachAccelerator([&](const ResourceEntry&) { ++entries; });
    EXPECT_EQ(entries, 1);
    EXPECT_TRUE(read.pod.firstAccelerator());
  }
  EXPECT_FALSE(deployment(R"({"containers":[{"name":"c","resources":{"limits":{"cpu":0}}}]})")
                   .pod.namesAccelerator());
}

// Each entry is judged by the reader's names, and every walk gives the same
// answer.
TEST(PodReader, EveryWalkJudgesTheEntriesAlikeHoweverManyNamesThereAre) {
  std::string resources;
  std::vector<std::string> expected;
  for (int n = 0; n < 12; ++n) {
    const std::string name = n % 3 == 0 ? "example.com/gpu-" + std::to_string(n)
                                        : "example.com/disk-" + std::to_string(n);
    resources += (n == 0 ? "\"" : ",\"") + name + "\":1";
    if (n % 3 == 0) expected.push_back(name);
  }
  const Read read =
      deployment(R"({"containers":[{"name":"c","resources":{"limits":{)" + resources + "}}}]}");
  for (int walk = 0; walk < 3; ++walk) {
    std::vector<std::string> found;
    read.pod.forEachAccelerator(
        [&](const ResourceEntry& entry) { found.emplace_back(entry.name); });
    EXPECT_EQ(found, expected) << "walk " << walk;
    int judged = 0;
    read.pod.forEachResource([&](const ResourceEntry& entry) {
      EXPECT_EQ(read.pod.isAccelerator(entry), AcceleratorNames::byLook().isAccelerator(entry.name))
          << entry.name;
      ++judged;
    });
    EXPECT_EQ(judged, 12);
  }
  EXPECT_TRUE(read.pod.asksForAccelerator());
}

TEST(PodReader, RequestsCountedAsTheSchedulerCountsThem) {
  const Read read = deployment(R"({"initContainers":[
      {"name":"side","restartPolicy":"Always","resources":{"limits":{"nvidia.com/gpu":1}}},
      {"name":"warm","resources":{"limits":{"nvidia.com/gpu":8}}}],
    "containers":[{"name":"a","resources":{"requests":{"nvidia.com/gpu":1},"limits":{"nvidia.com/gpu":2}}},
                  {"name":"b","resources":{"limits":{"nvidia.com/gpu":"99999999999999999999"}}}]})");
  // Requests win over limits; a count beyond int64 saturates instead of wrapping.
  EXPECT_EQ(PodReader::containerRequest(*read.pod.containers()[2].json, "nvidia.com/gpu"), 1);
  EXPECT_EQ(read.pod.podRequest("nvidia.com/gpu"), std::numeric_limits<int64_t>::max());
  const Read small = deployment(R"({"initContainers":[
      {"name":"side","restartPolicy":"Always","resources":{"limits":{"nvidia.com/gpu":1}}},
      {"name":"warm","resources":{"limits":{"nvidia.com/gpu":8}}}],
    "containers":[{"name":"a","resources":{"limits":{"nvidia.com/gpu":2}}}]})");
  EXPECT_EQ(small.pod.podRequest("nvidia.com/gpu"), 9)
      << "the init container runs beside the sidecar";
}

TEST(PodReader, OnlyTcpPortsCanBeProbed) {
  const auto udp = parseJson(R"({"ports":[{"containerPort":53,"protocol":"UDP"}]})");
  EXPECT_FALSE(PodReader::firstTcpPort(*udp));
  EXPECT_TRUE(PodReader::declaresPort(*udp));
  const auto mixed = parseJson(
      R"({"ports":[{"containerPort":53,"protocol":"UDP"},{"containerPort":8000},{"containerPort":9}]})");
  EXPECT_EQ(PodReader::firstTcpPort(*mixed).value_or(0), 8000);
  const auto bad = parseJson(R"({"ports":[{"containerPort":70000},{"containerPort":"80"}]})");
  EXPECT_FALSE(PodReader::firstTcpPort(*bad));
}

// Probes go where the server serves: a port named for HTTP serving before
// one named for gRPC, both before the first port, which is often a
// runtime's own (Ray's GCS) or one for metrics. The ports as the charts and
// operators' samples name them.
TEST(PodReader, TheServingPortIsTheOneNamedForServing) {
  struct Case {
    const char* what;
    const char* ports;
    int port;
  };
  const Case cases[] = {
      {"KubeRay's head",
       R"([{"containerPort":6379,"name":"gcs-server"},)"
       R"({"containerPort":8265,"name":"dashboard"},)"
       R"({"containerPort":10001,"name":"client"},)"
       R"({"containerPort":8000,"name":"serve"}])",
       8000},
      {"NIM",
       R"([{"containerPort":8001,"name":"grpc"},{"containerPort":8000,"name":"http-openai"}])",
       8000},
      {"Triton",
       R"([{"containerPort":8002,"name":"metrics"},{"containerPort":8001,"name":"grpc"},)"
       R"({"containerPort":8000,"name":"http"}])",
       8000},
      {"TGI", R"([{"containerPort":8000,"name":"web"}])", 8000},
      {"KServe's gRPC runtime",
       R"([{"containerPort":9091,"name":"mpi"},)"
       R"({"containerPort":9000,"name":"h2c"}])",
       9000},
      {"metrics before an unnamed port",
       R"([{"containerPort":9090,"name":"http-metrics"},)"
       R"({"containerPort":8080}])",
       8080},
      {"no name for serving",
       R"([{"containerPort":6379,"name":"gcs-server"},{"containerPort":8000}])", 6379},
      {"only metrics", R"([{"containerPort":9090,"name":"metrics"}])", 9090},
      {"a name that only begins so",
       R"([{"containerPort":22,"name":"apiary"},)"
       R"({"containerPort":7000,"name":"httpd"},)"
       R"({"containerPort":8000,"name":"api-server"}])",
       8000},
      {"a UDP port named http",
       R"([{"containerPort":53,"name":"http","protocol":"UDP"},)"
       R"({"containerPort":8000}])",
       8000},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const auto container = parseJson(std::string(R"({"ports":)") + c.ports + "}");
    EXPECT_EQ(PodReader::servingPort(*container).value_or(0), c.port);
  }
  EXPECT_FALSE(
      PodReader::servingPort(*parseJson(R"({"ports":[{"containerPort":53,"protocol":"UDP"}]})")));
  EXPECT_FALSE(PodReader::servingPort(*parseJson(R"({"name":"c"})")));
}

// The ranks of a multi-node server in one StatefulSet tell themselves apart
// by their ordinal, read through the Downward API; several Pods that do are
// the ranks of one server, a Pod alone or Pods that do not are not.
TEST(PodReader, PodsThatReadTheirOrdinalAreRanksOfOneServer) {
  // Whether a StatefulSet of `replicas` whose container reads `fieldPath`
  // (beside `more` containers) is the ranks of one server, and how it says so.
  auto ranks = [](int replicas, const std::string& fieldPath, const std::string& more = "") {
    const auto object = testing::parseJson(
        R"({"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"s"},)"
        R"("spec":{"replicas":)" +
        std::to_string(replicas) + R"(,"template":{"spec":{"containers":[)" + more +
        R"({"name":"vllm","env":[{"name":"HOST","valueFrom":{"fieldRef":{"fieldPath":"status.podIP"}}},)"
        R"({"name":"RANK","valueFrom":{"fieldRef":{"fieldPath":")" +
        fieldPath + R"("}}}]}]}}}})");
    const WorkloadType& type = *kubernetesKindOf("apps", "StatefulSet");
    const Resolution resolution = resolveTemplates(type, *object);
    EXPECT_EQ(resolution.templates.size(), 1u);
    const PodTemplateView view = PodTemplateView::at(*object, type, resolution.templates.at(0));
    const PodReader pod = PodReader::of(view);
    EXPECT_TRUE(pod.podIndexReader().has_value() ||
                fieldPath != "metadata.labels['apps.kubernetes.io/pod-index']");
    return ranksOfOneServer(view, pod).value_or("<none>");
  };
  const std::string ordinal = "metadata.labels['apps.kubernetes.io/pod-index']";
  EXPECT_EQ(ranks(2, ordinal), "\"RANK\"");
  EXPECT_EQ(ranks(3, ordinal, R"({"name":"proxy"},)"), "\"RANK\" in container \"vllm\"");
  EXPECT_EQ(ranks(1, ordinal), "<none>") << "a Pod alone serves itself";
  EXPECT_EQ(ranks(2, "metadata.name"), "<none>");
}

TEST(PodReader, PlacementIsWhereThePodMayLandNeverNarrower) {
  const Read read =
      deployment(R"({"nodeSelector":{"accelerator":"nvidia"},)"
                 R"("tolerations":[{"key":"accelerator","value":"gpu","effect":"NoSchedule"},)"
                 R"({"key":"spot","operator":"Exists"}],)"
                 R"("affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":)"
                 R"({"nodeSelectorTerms":[{"matchExpressions":)"
                 R"([{"key":"gpu.product","operator":"In","values":["H100","A100"]}]}]}}},)"
                 R"("containers":[{"name":"main"}]})");
  const Placement placement = read.pod.placement();
  EXPECT_EQ(placement.nodeSelector,
            (std::map<std::string, std::string>{{"accelerator", "nvidia"}}));
  ASSERT_EQ(placement.tolerations.size(), 2u);
  EXPECT_EQ(placement.tolerations[0].op, "Equal") << "the API's default operator";
  EXPECT_EQ(placement.tolerations[0].value, "gpu");
  EXPECT_EQ(placement.tolerations[1].op, "Exists");
  ASSERT_EQ(placement.requiredNodeAffinity.size(), 1u);
  EXPECT_EQ(placement.requiredNodeAffinity[0].key, "gpu.product");
  EXPECT_EQ(placement.requiredNodeAffinity[0].values, (std::vector<std::string>{"H100", "A100"}));

  // Several terms are ORed: none is kept, so more nodes match, never fewer.
  const Read ored =
      deployment(R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":)"
                 R"({"nodeSelectorTerms":[{"matchExpressions":[{"key":"a","operator":"Exists"}]},)"
                 R"({"matchExpressions":[{"key":"b","operator":"Exists"}]}]}}},)"
                 R"("containers":[{"name":"main"}]})");
  EXPECT_TRUE(ored.pod.placement().requiredNodeAffinity.empty());
}

TEST(PodReader, ClaimsAreReadThroughTheDraReader) {
  const Read read =
      deployment(R"({"resourceClaims":[{"name":"gpu","resourceClaimTemplateName":"gpu-claim"}],)"
                 R"("containers":[{"name":"main","resources":{"claims":[{"name":"gpu"}],)"
                 R"("limits":{"deviceclass.resource.kubernetes.io/gpu.nvidia.com":"2"}}}]})");
  const PodClaims& claims = read.pod.claims();
  ASSERT_EQ(claims.sources.size(), 1u);
  EXPECT_EQ(claims.sources[0].resourceClaimTemplateName, "gpu-claim");
  ASSERT_EQ(claims.deviceClassRequests.size(), 1u);
  EXPECT_EQ(claims.deviceClassRequests[0].deviceClassName, "gpu.nvidia.com");
  EXPECT_EQ(claims.deviceClassRequests[0].count, 2);
  EXPECT_EQ(&read.pod.claims(), &claims) << "read once";
  EXPECT_TRUE(read.pod.claimsDevices());
}

}  // namespace
}  // namespace aiadmit
