// The semantics the rules stand on, checked directly: node label
// requirements as the scheduler reads them, a Pod's node selection against a
// pool, GPU counting per Pod, quantities compared by value, and which
// resource names are accelerators.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "tests/support/test_support.h"
#include "validators/validator.h"
#include "webhook/codec/text.h"
#include "webhook/model/pod_reader.h"
#include "webhook/model/quantity.h"
#include "webhook/model/resources.h"
#include "webhook/model/scheduling.h"
#include "webhook/policy/accelerators.h"

namespace aiadmit {
namespace {

using testing::parseJson;

// Requirements over one key, from the JSON of a matchExpressions item.
class Requirements {
 public:
  LabelRequirement operator()(const std::string& expression) {
    documents_.push_back(parseJson(expression));
    LabelRequirement r;
    EXPECT_TRUE(LabelRequirement::fromJson(*documents_.back(), r)) << expression;
    return r;
  }

 private:
  std::vector<std::shared_ptr<JsonDocument>> documents_;
};

TEST(LabelRequirements, CompatibleWhenSomeNodeSatisfiesBoth) {
  Requirements req;
  const auto in = req(R"({"key":"a","operator":"In","values":["x","y"]})");
  EXPECT_TRUE(compatible(in, req(R"({"key":"a","operator":"In","values":["y","z"]})")));
  EXPECT_FALSE(compatible(in, req(R"({"key":"a","operator":"In","values":["z"]})")));
  EXPECT_FALSE(compatible(in, req(R"({"key":"a","operator":"NotIn","values":["x","y"]})")));
  EXPECT_TRUE(compatible(in, req(R"({"key":"a","operator":"NotIn","values":["x"]})")));
  EXPECT_TRUE(compatible(in, req(R"({"key":"a","operator":"Exists"})")));
  EXPECT_FALSE(compatible(in, req(R"({"key":"a","operator":"DoesNotExist"})")));
  // NotIn also matches nodes without the label.
  EXPECT_TRUE(compatible(req(R"({"key":"a","operator":"NotIn","values":["x"]})"),
                         req(R"({"key":"a","operator":"DoesNotExist"})")));
}

TEST(LabelRequirements, GreaterAndLessCompareIntegers) {
  Requirements req;
  const auto gt4 = req(R"({"key":"gpus","operator":"Gt","values":["4"]})");
  EXPECT_TRUE(compatible(gt4, req(R"({"key":"gpus","operator":"In","values":["8"]})")));
  EXPECT_FALSE(compatible(gt4, req(R"({"key":"gpus","operator":"In","values":["2","four"]})")));
  EXPECT_FALSE(compatible(gt4, req(R"({"key":"gpus","operator":"Lt","values":["5"]})")));
  EXPECT_TRUE(compatible(gt4, req(R"({"key":"gpus","operator":"Lt","values":["6"]})")));
  // 5 and 6 are excluded, 7 is left.
  EXPECT_TRUE(compatible(gt4, req(R"({"key":"gpus","operator":"NotIn","values":["5","6"]})")));
  EXPECT_TRUE(implies(req(R"({"key":"gpus","operator":"Gt","values":["6"]})"), gt4));
  EXPECT_FALSE(implies(gt4, req(R"({"key":"gpus","operator":"Gt","values":["6"]})")));
}

TEST(LabelRequirements, ImplicationMeansEveryMatchingNode) {
  Requirements req;
  const auto pool = req(R"({"key":"accelerator","operator":"In","values":["nvidia"]})");
  EXPECT_TRUE(implies(req(R"({"key":"accelerator","operator":"In","values":["nvidia"]})"), pool));
  EXPECT_FALSE(
      implies(req(R"({"key":"accelerator","operator":"In","values":["nvidia","amd"]})"), pool));
  EXPECT_FALSE(implies(req(R"({"key":"accelerator","operator":"Exists"})"), pool));
  EXPECT_TRUE(implies(req(R"({"key":"accelerator","operator":"In","values":["nvidia"]})"),
                      req(R"({"key":"accelerator","operator":"Exists"})")));
  // A requirement nothing satisfies implies nothing.
  EXPECT_FALSE(implies(req(R"({"key":"accelerator","operator":"In","values":[]})"), pool));
}

TEST(LabelRequirements, DescribedAsKubectlPrintsSelectors) {
  Requirements req;
  EXPECT_EQ(describeRequirement(LabelRequirement::equals("accelerator", "nvidia")),
            "accelerator=nvidia");
  EXPECT_EQ(describeRequirement(req(R"({"key":"a","operator":"In","values":["x","y"]})")),
            "a in (x, y)");
  EXPECT_EQ(describeRequirement(req(R"({"key":"a","operator":"NotIn","values":["x"]})")), "a!=x");
  EXPECT_EQ(describeRequirement(req(R"({"key":"a","operator":"DoesNotExist"})")), "!a");
  EXPECT_EQ(describeRequirement(req(R"({"key":"a","operator":"Exists"})")), "a");
  EXPECT_EQ(describeRequirement(req(R"({"key":"n","operator":"Gt","values":["4"]})")), "n>4");
  LabelRequirement invalid;
  EXPECT_FALSE(LabelRequirement::fromJson(*parseJson(R"({"key":"a","operator":"Near"})"), invalid));
}

Placement seedPool() {
  Placement pool;
  pool.nodeSelector = {{"accelerator", "nvidia"}};
  pool.requiredNodeAffinity = {{"nvidia.com/gpu.present", "Exists", {}}};
  pool.tolerations = {{"accelerator", "Equal", "gpu", "NoSchedule", std::nullopt}};
  return pool;
}

PoolRelation relation(const std::string& podSpec) {
  return relatePodToPool(parseJson(podSpec).get(), seedPool()).relation;
}

std::string affinity(const std::string& terms) {
  return R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":)" +
         terms + "}}}}";
}

TEST(PodAgainstPool, NodeSelector) {
  EXPECT_EQ(relation(R"({"nodeSelector":{"accelerator":"nvidia"}})"), PoolRelation::Selects);
  EXPECT_EQ(relation(R"({"nodeSelector":{"accelerator":"amd"}})"), PoolRelation::Excludes);
  EXPECT_EQ(relation(R"({"nodeSelector":{"zone":"a"}})"), PoolRelation::Unrelated);
  EXPECT_EQ(relation(R"({})"), PoolRelation::Unrelated);
  // The verdict points into the PodSpec and the pool, which must outlive it.
  const auto podSpec = parseJson(R"({"nodeSelector":{"zone":"a","accelerator":"amd"}})");
  const Placement pool = seedPool();
  const PoolVerdict verdict = relatePodToPool(podSpec.get(), pool);
  EXPECT_EQ(verdict.site.fieldPath(), "nodeSelector");
  EXPECT_EQ(verdict.site.key, "accelerator");
  EXPECT_EQ(describeRequirement(verdict.site.poolRequirement), "accelerator=nvidia");
}

TEST(PodAgainstPool, ATermThatNamesThePoolsKeyMustKeepWithinIt) {
  Placement pool;
  pool.requiredNodeAffinity = {{"gpu.nvidia.com/class", "In", {"H100", "H200"}}};
  const auto beyond = [&](const std::string& podSpec) {
    const auto spec = parseJson(podSpec);
    const auto site = firstTermBeyondPool(spec.get(), pool);
    return site ? site->fieldPath() : std::string();
  };
  const std::string within =
      R"({"matchExpressions":[{"key":"gpu.nvidia.com/class","operator":"In","values":["H100"]}]})";
  const std::string wider =
      R"({"matchExpressions":[{"key":"zone","operator":"Exists"},)"
      R"({"key":"gpu.nvidia.com/class","operator":"In","values":["A100","H100"]}]})";
  const std::string silent = R"({"matchExpressions":[{"key":"zone","operator":"Exists"}]})";
  EXPECT_EQ(beyond(affinity("[" + within + "]")), "");
  EXPECT_EQ(beyond(affinity("[" + silent + "]")), "") << "the mutator adds the requirement";
  EXPECT_EQ(beyond(affinity("[" + within + "," + wider + "]")),
            "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
            "nodeSelectorTerms[1].matchExpressions[1]");
  // A nodeSelector holds for every term: it keeps the wider term in the pool.
  std::string selected = affinity("[" + wider + "]");
  selected.insert(1, R"("nodeSelector":{"gpu.nvidia.com/class":"H200"},)");
  EXPECT_EQ(beyond(selected), "");
}

TEST(PodAgainstPool, AffinityTermsAreOred) {
  const std::string selects =
      R"({"matchExpressions":[{"key":"accelerator","operator":"In","values":["nvidia"]}]})";
  const std::string excludes =
      R"({"matchExpressions":[{"key":"nvidia.com/gpu.present","operator":"DoesNotExist"}]})";
  const std::string elsewhere =
      R"({"matchExpressions":[{"key":"zone","operator":"In","values":["a"]}]})";
  EXPECT_EQ(relation(affinity("[" + selects + "]")), PoolRelation::Selects);
  EXPECT_EQ(relation(affinity("[" + selects + "," + selects + "]")), PoolRelation::Selects);
  // Aimed at the pool only if every term selects it.
  EXPECT_EQ(relation(affinity("[" + selects + "," + elsewhere + "]")), PoolRelation::Unrelated);
  // Excluded only if every term excludes it.
  EXPECT_EQ(relation(affinity("[" + excludes + "," + elsewhere + "]")), PoolRelation::Unrelated);
  EXPECT_EQ(relation(affinity("[" + excludes + "," + excludes + "]")), PoolRelation::Excludes);
  // An empty term matches no node; a matchFields term says nothing of labels.
  EXPECT_EQ(relation(affinity("[{}]")), PoolRelation::Excludes);
  EXPECT_EQ(relation(affinity(
                R"([{"matchFields":[{"key":"metadata.name","operator":"In","values":["n1"]}]}])")),
            PoolRelation::Unrelated);

  const auto twoExpressions =
      parseJson(affinity(R"([{"matchExpressions":[{"key":"zone","operator":"Exists"},)"
                         R"({"key":"accelerator","operator":"NotIn","values":["nvidia"]}]}])"));
  const PoolVerdict single = relatePodToPool(twoExpressions.get(), seedPool());
  EXPECT_EQ(single.relation, PoolRelation::Excludes);
  EXPECT_EQ(single.site.fieldPath(),
            "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
            "nodeSelectorTerms[0].matchExpressions[1]");
  EXPECT_EQ(describeRequirement(single.site.podRequirement), "accelerator!=nvidia");
}

TEST(PodAgainstPool, SelectorAndAffinityTogether) {
  // The nodeSelector's exclusion wins over an affinity that selects.
  EXPECT_EQ(
      relation(
          R"({"nodeSelector":{"accelerator":"amd"},)" +
          affinity(
              R"([{"matchExpressions":[{"key":"accelerator","operator":"In","values":["nvidia"]}]}])")
              .substr(1)),
      PoolRelation::Excludes);
}

TEST(PodAgainstPool, Tolerations) {
  const Placement pool = seedPool();
  auto spec = [](const std::string& tolerations) {
    return parseJson(R"({"tolerations":)" + tolerations + "}");
  };
  EXPECT_EQ(
      explicitPoolToleration(member(spec(R"([{"operator":"Exists"}])").get(), "tolerations"), pool),
      -1);
  EXPECT_EQ(
      explicitPoolToleration(
          member(
              spec(R"([{"key":"x","operator":"Exists"},{"key":"accelerator","operator":"Exists"}])")
                  .get(),
              "tolerations"),
          pool),
      1);
  EXPECT_EQ(
      explicitPoolToleration(
          member(spec(R"([{"key":"accelerator","value":"tpu"}])").get(), "tolerations"), pool),
      -1);
  EXPECT_NE(firstUntoleratedPoolTaint(member(spec("[]").get(), "tolerations"), pool), nullptr);
  EXPECT_EQ(firstUntoleratedPoolTaint(
                member(spec(R"([{"operator":"Exists"}])").get(), "tolerations"), pool),
            nullptr);
  Placement soft = pool;
  soft.tolerations[0].effect = "PreferNoSchedule";
  EXPECT_EQ(firstUntoleratedPoolTaint(nullptr, soft), nullptr)
      << "a preference does not keep Pods off";
}

int64_t gpus(const std::string& podSpec) {
  const auto spec = parseJson(podSpec);
  return PodReader(nullptr, nullptr, spec.get()).podRequest("nvidia.com/gpu");
}

bool isAcceleratorResource(std::string_view name, const Profile* profile) {
  return ProfileAcceleratorNames(profile).isAccelerator(name);
}

TEST(PodGpus, CountedAsTheSchedulerCounts) {
  EXPECT_EQ(gpus(R"({"containers":[{"resources":{"limits":{"nvidia.com/gpu":2}}},
                                   {"resources":{"limits":{"nvidia.com/gpu":"3"}}}]})"),
            5);
  // Requests win over limits; limits stand in for absent requests.
  EXPECT_EQ(
      gpus(
          R"({"containers":[{"resources":{"requests":{"nvidia.com/gpu":1},"limits":{"nvidia.com/gpu":2}}}]})"),
      1);
  // Init containers run one at a time, before the others.
  EXPECT_EQ(gpus(R"({"initContainers":[{"resources":{"limits":{"nvidia.com/gpu":4}}},
                                       {"resources":{"limits":{"nvidia.com/gpu":6}}}],
                    "containers":[{"resources":{"limits":{"nvidia.com/gpu":2}}}]})"),
            6);
  // Sidecars keep running beside everything started after them.
  EXPECT_EQ(
      gpus(
          R"({"initContainers":[{"restartPolicy":"Always","resources":{"limits":{"nvidia.com/gpu":1}}},
                                       {"resources":{"limits":{"nvidia.com/gpu":8}}}],
                    "containers":[{"resources":{"limits":{"nvidia.com/gpu":2}}}]})"),
      9);
  EXPECT_EQ(gpus(R"({"containers":[{"resources":{"limits":{"nvidia.com/gpu":"500m"}}}]})"), 0);
  EXPECT_EQ(gpus(R"({"containers":[{"resources":{"limits":{"nvidia.com/gpu":"1000m"}}}]})"), 1);
  EXPECT_EQ(gpus(R"({})"), 0);
}

TEST(QuantityValues, SameAmountWhateverTheSpelling) {
  auto same = [](const char* a, const char* b) {
    return Quantity::parse(a)->sameValue(*Quantity::parse(b));
  };
  EXPECT_TRUE(same("1", "1000m"));
  EXPECT_TRUE(same("1", "1e0"));
  EXPECT_TRUE(same("0.5", "500m"));
  EXPECT_TRUE(same("1Ki", "1024"));
  EXPECT_TRUE(same("1.5Ki", "1536"));
  EXPECT_TRUE(same("0", "-0"));
  EXPECT_TRUE(same("1k", "1e3"));
  EXPECT_FALSE(same("1", "2"));
  EXPECT_FALSE(same("1", "-1"));
  EXPECT_FALSE(same("1Ki", "1k"));
  EXPECT_FALSE(same("1", "1000001u"));
  JsonDocument doc;
  doc.Parse(R"([1, "1", 1.0, 2, -3, 18446744073709551615])");
  EXPECT_TRUE(Quantity::fromJson(doc[0])->sameValue(*Quantity::fromJson(doc[1])));
  EXPECT_TRUE(Quantity::fromJson(doc[0])->sameValue(*Quantity::fromJson(doc[2])));
  EXPECT_FALSE(Quantity::fromJson(doc[0])->sameValue(*Quantity::fromJson(doc[3])));
  EXPECT_EQ(Quantity::fromJson(doc[4])->wholeValue(), -3);
  EXPECT_TRUE(Quantity::fromJson(doc[5])->isWholeNumber());
}

TEST(AcceleratorNames, AcceleratorsAndTheirMisspellings) {
  Profile profile;
  profile.gpu.allowedResources = {"nvidia.com/gpu", "nvidia.com/mig-1g.10gb"};
  for (const char* name :
       {"nvidia.com/gpu", "nvidia.com/gpus", "nvidia/gpu", "gpu", "nvidia.com/GPU", "amd.com/gpu",
        "nvidia.com/mig-1g.5gb", "google.com/tpu", "aws.amazon.com/neuroncore", "habana.ai/gaudi",
        "nvidia.com/gp", "nvidia.com/gpu.shared"}) {
    EXPECT_TRUE(isAcceleratorResource(name, &profile)) << name;
  }
  for (const char* name :
       {"cpu", "memory", "ephemeral-storage", "hugepages-2Mi", "nvidia.com/rdma_shared_device_a",
        "nvidia.com/hostdev", "example.com/outputs", "smarter-devices/fuse", "rdma/ib"}) {
    EXPECT_FALSE(isAcceleratorResource(name, &profile)) << name;
  }
  EXPECT_FALSE(isAcceleratorResource("nvidia.com/gp", nullptr)) << "near misses need a profile";
}

TEST(AcceleratorNames, SharedGpus) {
  for (const char* name : {"nvidia.com/mig-1g.10gb", "nvidia.com/gpu.shared",
                           "nvidia.com/sharedgpu", "nvidia.com/gpumem", "nvidia.com/gpucores"}) {
    EXPECT_TRUE(isSharedGpuResource(name)) << name;
  }
  for (const char* name : {"nvidia.com/gpu", "amd.com/gpu", "google.com/tpu"}) {
    EXPECT_FALSE(isSharedGpuResource(name)) << name;
  }
  EXPECT_TRUE(isSharedGpuNodeLabel("cloud.google.com/gke-gpu-sharing-strategy", "time-sharing"));
  EXPECT_TRUE(isSharedGpuNodeLabel("nvidia.com/gpu.sharing-strategy", "mps"));
  EXPECT_FALSE(isSharedGpuNodeLabel("nvidia.com/gpu.sharing-strategy", "none"));
  EXPECT_FALSE(isSharedGpuNodeLabel("cloud.google.com/gke-accelerator", "nvidia-l4"));
}

TEST(Suggestions, ClosestByEditDistance) {
  EXPECT_EQ(editDistance("nvidia.com/gpus", "nvidia.com/gpu"), 1u);
  EXPECT_EQ(editDistance("nvidia/gpu", "nvidia.com/gpu"), 4u);
  EXPECT_EQ(editDistance("NVIDIA.com/GPU", "nvidia.com/gpu"), 0u);
  EXPECT_EQ(editDistance("", "abc"), 3u);
  EXPECT_EQ(editDistance(std::string(300, 'a'), std::string(298, 'a')), 2u);
  const std::vector<std::string_view> offered{"nvidia.com/gpu", "nvidia.com/mig-1g.10gb"};
  EXPECT_EQ(closestName("gpu", offered).name, "nvidia.com/gpu");
  EXPECT_EQ(closestName("nvidia.com/mig-1g.5gb", offered).name, "nvidia.com/mig-1g.10gb");
  EXPECT_EQ(closestName("x", {}).name, "");
}

TEST(Warnings, FitTheApiServersLimitAndKeepTheFix) {
  Violation v{"spec.jobTemplate.spec.template.spec.containers[0].resources.limits",
              "a long problem", "a fix",
              "GPU server \"triton\" has no memory limit; set limits.memory", AIA015};
  EXPECT_EQ(v.format(),
            "[AIA015] spec.jobTemplate.spec.template.spec.containers[0].resources.limits: a long "
            "problem; a fix");
  EXPECT_EQ(v.warning(),
            "aiadmit: [AIA015] containers[0].resources.limits: GPU server \"triton\" has no memory "
            "limit; set limits.memory");
  EXPECT_TRUE(v.warningKeepsField());
  v.brief = std::string(100, 'x');
  EXPECT_FALSE(v.warningKeepsField());
  EXPECT_EQ(v.warning(), "aiadmit: [AIA015] " + v.brief) << "the field goes before the words do";
  // "aiadmit: [AIA015] " (18) + "containers[0].resources.limits: " (32) + 70 = 120.
  v.brief = std::string(70, 'y');
  EXPECT_EQ(v.warning().size(), kMaxWarningLength);
  EXPECT_TRUE(v.warningKeepsField());
}

}  // namespace
}  // namespace aiadmit
