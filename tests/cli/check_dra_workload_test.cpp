// `aiadmit check` on workloads that get their GPUs through dynamic resource
// allocation, through the real binary: a Job of the corpus whose claim
// template is in the same input is a GPU workload, aimed at the pool and given
// no extended-resource GPU besides its claim; one whose template is not known
// stays unclassified and says why. Every patch is applied by kubectl and the
// result validated against the Kubernetes schema.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/test_support.h"
#include "webhook/codec/yaml_json.h"

namespace aiadmit {
namespace {

using namespace testing;

const char* kKueueJob =
    "kubernetes-sigs__kueue__site__static__examples__dra__gpu-job-admitted.yaml";

// The claim template of Kueue's DRA example (site/static/examples/dra/
// gpu-quota-setup.yaml), which the Job names: one device of gpu.example.com,
// in the v1beta1 shape.
const char* kKueueClaimTemplate = R"(apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaimTemplate
metadata:
  name: gpu-claim
  namespace: default
spec:
  spec:
    devices:
      requests:
      - name: gpu
        deviceClassName: gpu.example.com
        allocationMode: ExactCount
        count: 1
)";

struct CheckRun {
  CommandResult result;
  std::shared_ptr<JsonDocument> report;
};

CheckRun checkJson(const TempDir& dir, const std::string& input) {
  writeFile(dir.file("input.yaml"), input);
  CheckRun run;
  // The class of Kueue's example driver is one the profiles allow.
  const std::string profiles =
      profilesAllowingDeviceClasses(dir, {"gpu.nvidia.com", "mig.nvidia.com", "gpu.example.com"});
  run.result = runCommand(
      {binaryPath(), "check", "--profiles", profiles, "-o", "json", dir.file("input.yaml")});
  run.report = parseJson(run.result.out);
  return run;
}

// The record of the object of `kind`.
const JsonValue* recordOf(const JsonDocument& report, std::string_view kind) {
  const JsonValue* objects = member(&report, "objects");
  if (!isArray(objects)) return nullptr;
  for (const JsonValue& record : objects->GetArray()) {
    if (stringMember(&record, "kind") == kind) return &record;
  }
  return nullptr;
}

std::vector<std::string> strings(const JsonValue* list) {
  std::vector<std::string> out;
  if (!isArray(list)) return out;
  for (const JsonValue& item : list->GetArray()) out.emplace_back(stringOf(&item));
  return out;
}

bool anyContains(const std::vector<std::string>& lines, std::string_view text) {
  for (const std::string& line : lines) {
    if (line.find(text) != std::string::npos) return true;
  }
  return false;
}

std::string yamlToJson(const std::string& yaml) {
  std::vector<ManifestDocument> documents;
  std::string error;
  EXPECT_TRUE(parseManifests(yaml, documents, &error)) << error;
  EXPECT_EQ(documents.size(), 1u) << yaml;
  return documents.empty() ? "{}" : toJson(*documents[0].json);
}

std::string corpusJob() {
  for (const CorpusObject& object : corpusObjects()) {
    if (object.file == kKueueJob) return object.json;
  }
  ADD_FAILURE() << "no " << kKueueJob << " in the corpus";
  return "{}";
}

TEST(CheckDraWorkload, AKueueJobWithItsClaimTemplateIsAGpuWorkloadOnThePool) {
  TempDir dir;
  const std::string manifest = readFile(corpusDir() + "/manifests/" + kKueueJob);
  const CheckRun run = checkJson(dir, std::string(kKueueClaimTemplate) + "---\n" + manifest);
  EXPECT_EQ(run.result.exitCode, 0) << run.result.out << run.result.err;
  const JsonValue* job = recordOf(*run.report, "Job");
  ASSERT_NE(job, nullptr) << run.result.out;
  EXPECT_EQ(stringMember(job, "class"), "batch");
  EXPECT_NE(stringMember(job, "reason")
                .find("claims a gpu.example.com device (claim gpu of container main)"),
            std::string_view::npos)
      << stringMember(job, "reason");
  EXPECT_EQ(stringMember(job, "profile"), "batch");

  const std::vector<std::string> injected = strings(member(job, "injected"));
  EXPECT_TRUE(anyContains(injected, "added toleration accelerator=gpu:NoSchedule"))
      << run.result.out;
  EXPECT_TRUE(anyContains(injected, "added node selector accelerator=nvidia")) << run.result.out;
  // Its GPU is the claim's: no nvidia.com/gpu from the profile's defaultCount.
  EXPECT_FALSE(anyContains(injected, "nvidia.com/gpu")) << run.result.out;

  const std::string patch = toJson(*member(job, "patch"));
  EXPECT_EQ(patch.find("nvidia.com~1gpu"), std::string::npos) << patch;
  const std::string patched = applyPatch(corpusJob(), patch);
  ASSERT_FALSE(patched.empty());
  const auto object = parseJson(patched);
  const JsonValue* containers =
      member(member(member(member(object.get(), "spec"), "template"), "spec"), "containers");
  ASSERT_TRUE(isArray(containers));
  EXPECT_EQ(member(member(member(&(*containers)[0], "resources"), "limits"), "nvidia.com/gpu"),
            nullptr);
  const CommandResult schema = validateSchemas({patched});
  EXPECT_EQ(schema.exitCode, 0) << schema.out << schema.err;
}

TEST(CheckDraWorkload, WithoutItsClaimTemplateTheJobIsNotClassifiedAndSaysWhy) {
  TempDir dir;
  const CheckRun run = checkJson(dir, readFile(corpusDir() + "/manifests/" + kKueueJob));
  EXPECT_EQ(run.result.exitCode, 0) << run.result.out << run.result.err;
  const JsonValue* job = recordOf(*run.report, "Job");
  ASSERT_NE(job, nullptr) << run.result.out;
  EXPECT_EQ(stringMember(job, "class"), "none");
  EXPECT_NE(stringMember(job, "reason")
                .find("claim gpu: ResourceClaimTemplate gpu-claim is not known, so no GPU is "
                      "assumed"),
            std::string_view::npos)
      << stringMember(job, "reason");
  EXPECT_FALSE(member(job, "mutated")->GetBool());
}

TEST(CheckDraWorkload, AKep5004PodIsClassifiedWithoutAnyLookup) {
  TempDir dir;
  const std::string pod = R"(apiVersion: v1
kind: Pod
metadata:
  name: mig-runner
  namespace: default
spec:
  restartPolicy: Never
  containers:
  - name: cuda
    image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04
    resources:
      limits:
        deviceclass.resource.kubernetes.io/mig.nvidia.com: "1"
)";
  const CheckRun run = checkJson(dir, pod);
  const JsonValue* record = recordOf(*run.report, "Pod");
  ASSERT_NE(record, nullptr) << run.result.out;
  EXPECT_EQ(stringMember(record, "class"), "batch") << run.result.out;
  EXPECT_NE(stringMember(record, "reason")
                .find("claims a mig.nvidia.com device "
                      "(deviceclass.resource.kubernetes.io/mig.nvidia.com of container cuda)"),
            std::string_view::npos)
      << stringMember(record, "reason");
  const std::vector<std::string> injected = strings(member(record, "injected"));
  EXPECT_TRUE(anyContains(injected, "added toleration accelerator=gpu:NoSchedule"))
      << run.result.out;
  EXPECT_FALSE(anyContains(injected, "nvidia.com/gpu")) << run.result.out;
  const std::string patched = applyPatch(yamlToJson(pod), toJson(*member(record, "patch")));
  ASSERT_FALSE(patched.empty());
  const CommandResult schema = validateSchemas({patched});
  EXPECT_EQ(schema.exitCode, 0) << schema.out << schema.err;
}

std::string gpuClaimTemplate(const std::string& name, int count) {
  return "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata:\n  name: " + name +
         "\n  namespace: default\nspec:\n  spec:\n    devices:\n      requests:\n      - name: "
         "gpu\n"
         "        exactly:\n          deviceClassName: gpu.nvidia.com\n          count: " +
         std::to_string(count) + "\n";
}

// A Job whose one container gets its GPUs from a claim made of `claimTemplate`.
std::string claimingJob(const std::string& claimTemplate, int parallelism,
                        const std::string& annotations) {
  return R"(apiVersion: batch/v1
kind: Job
metadata:
  name: finetune
  namespace: default
  annotations: )" +
         annotations + R"(
spec:
  parallelism: )" +
         std::to_string(parallelism) + R"(
  completions: )" +
         std::to_string(parallelism) + R"(
  template:
    spec:
      restartPolicy: Never
      resourceClaims:
      - name: gpus
        resourceClaimTemplateName: )" +
         claimTemplate + R"(
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          claims:
          - name: gpus
)";
}

std::vector<std::string> denials(const JsonValue* record) {
  std::vector<std::string> out;
  const JsonValue* list = member(record, "denials");
  if (!isArray(list)) return out;
  for (const JsonValue& denial : list->GetArray()) {
    out.emplace_back(stringMember(&denial, "message"));
  }
  return out;
}

TEST(CheckDraWorkload, ClaimedGpusCountAgainstTheProfilesGpusPerNode) {
  TempDir dir;
  const CheckRun run =
      checkJson(dir, gpuClaimTemplate("twelve", 12) + "---\n" + claimingJob("twelve", 1, "{}"));
  EXPECT_EQ(run.result.exitCode, 1) << run.result.out << run.result.err;
  const std::vector<std::string> refused = denials(recordOf(*run.report, "Job"));
  EXPECT_TRUE(anyContains(refused,
                          "[AIA006] spec.template.spec.resourceClaims[0]: the Pod asks for 12 GPUs "
                          "(12 by claim gpus of class gpu.nvidia.com) but the largest node of the "
                          "GPU pool has 8"))
      << run.result.out;

  TempDir fits;
  const CheckRun eight =
      checkJson(fits, gpuClaimTemplate("eight", 8) + "---\n" + claimingJob("eight", 1, "{}"));
  EXPECT_EQ(eight.result.exitCode, 0) << eight.result.out << eight.result.err;
}

// The shipped profiles, with training requiring gang scheduling by Kueue.
std::string gangProfiles(const TempDir& dir) {
  for (const char* name : {"batch.yaml", "realtime.yaml"}) {
    writeFile(dir.file(name), readFile(sourceDir() + "/profiles/" + name));
  }
  std::string training = readFile(sourceDir() + "/profiles/training.yaml");
  const std::string scheduling = "\n  scheduling:\n";
  const size_t at = training.find(scheduling);
  EXPECT_NE(at, std::string::npos);
  if (at != std::string::npos) {
    training.insert(at + scheduling.size(),
                    "    gangScheduling:\n      required: true\n"
                    "      queueLabel: kueue.x-k8s.io/queue-name\n");
  }
  writeFile(dir.file("training.yaml"), training);
  return dir.path();
}

TEST(CheckDraWorkload, WorkersThatClaimGpusNeedGangScheduling) {
  TempDir profiles;
  const std::string profilesDir = gangProfiles(profiles);
  TempDir dir;
  const std::string training = "{aiadmit.dev/workload: training}";
  writeFile(dir.file("input.yaml"),
            gpuClaimTemplate("one", 1) + "---\n" + claimingJob("one", 4, training));
  const CommandResult run = runCommand(
      {binaryPath(), "check", "--profiles", profilesDir, "-o", "json", dir.file("input.yaml")});
  EXPECT_EQ(run.exitCode, 1) << run.out << run.err;
  const auto report = parseJson(run.out);
  EXPECT_TRUE(anyContains(denials(recordOf(*report, "Job")),
                          "[AIA010] spec.parallelism: 4 GPU workers (parallelism 4) without gang "
                          "scheduling"))
      << run.out;

  // A claim whose template is not known is not taken for GPUs.
  writeFile(dir.file("unknown.yaml"), claimingJob("elsewhere", 4, training));
  const CommandResult unknown = runCommand(
      {binaryPath(), "check", "--profiles", profilesDir, "-o", "json", dir.file("unknown.yaml")});
  EXPECT_EQ(unknown.out.find("AIA010"), std::string::npos) << unknown.out;
}

}  // namespace
}  // namespace aiadmit

namespace aiadmit {
namespace {

using namespace testing;

// A claim template in the input is judged as the validating webhook judges
// it: a class the profile does not allow is refused under AIA020, with the
// class it was probably meant to be.
TEST(CheckDraWorkload, AClaimTemplateOfTheInputIsValidatedLikeTheWebhookDoes) {
  TempDir dir;
  writeFile(dir.file("template.yaml"), R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: gpus, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.comm, count: 2}
)");
  const CommandResult run = runCommand(
      {binaryPath(), "check", "--profiles", sourceDir() + "/profiles", dir.file("template.yaml")});
  EXPECT_EQ(run.exitCode, 1) << run.out << run.err;
  EXPECT_NE(run.out.find("resourceclaimtemplate/gpus (ns ml)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("[AIA020] spec.spec.devices.requests[0].exactly.deviceClassName: "),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("did you mean \"gpu.nvidia.com\"?"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("1 object: 0 admitted (0 mutated), 1 denied"), std::string::npos)
      << run.out;
}

// A Pod that names a ResourceClaim someone else made (resourceClaimName),
// as a shared GPU claim is used: the claim of the same input says what it
// holds, as a claim template does.
const char* kSharedClaim = R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: shared-gpu
  namespace: default
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.nvidia.com
        count: 2
)";

const char* kPodNamingTheClaim = R"(apiVersion: v1
kind: Pod
metadata:
  name: notebook
  namespace: default
spec:
  restartPolicy: Always
  resourceClaims:
  - name: gpus
    resourceClaimName: shared-gpu
  containers:
  - name: jupyter
    image: quay.io/jupyter/pytorch-notebook:cuda12-latest
    resources:
      claims:
      - name: gpus
)";

TEST(CheckDraWorkload, APodNamingAClaimOfTheInputIsAGpuWorkload) {
  TempDir dir;
  const CheckRun run = checkJson(dir, std::string(kSharedClaim) + "---\n" + kPodNamingTheClaim);
  const JsonValue* pod = recordOf(*run.report, "Pod");
  ASSERT_NE(pod, nullptr) << run.result.out;
  // A notebook that declares no port is not taken for a server.
  EXPECT_EQ(stringMember(pod, "class"), "batch") << run.result.out;
  EXPECT_NE(stringMember(pod, "reason")
                .find("claims 2 gpu.nvidia.com devices (claim gpus of container jupyter)"),
            std::string_view::npos)
      << stringMember(pod, "reason");
  const std::vector<std::string> injected = strings(member(pod, "injected"));
  EXPECT_TRUE(anyContains(injected, "added toleration accelerator=gpu:NoSchedule"))
      << run.result.out;
  EXPECT_FALSE(anyContains(injected, "nvidia.com/gpu")) << run.result.out;
}

TEST(CheckDraWorkload, WithoutTheClaimItNamesThePodIsNotClassifiedAndSaysWhy) {
  TempDir dir;
  const CheckRun run = checkJson(dir, kPodNamingTheClaim);
  EXPECT_EQ(run.result.exitCode, 0) << run.result.out << run.result.err;
  const JsonValue* pod = recordOf(*run.report, "Pod");
  ASSERT_NE(pod, nullptr) << run.result.out;
  EXPECT_EQ(stringMember(pod, "class"), "none");
  EXPECT_NE(stringMember(pod, "reason")
                .find("claim gpus: ResourceClaim shared-gpu is not known, so no GPU is assumed"),
            std::string_view::npos)
      << stringMember(pod, "reason");
  EXPECT_FALSE(member(pod, "mutated")->GetBool());
}

}  // namespace
}  // namespace aiadmit
