// All mutators together, through the real server: the fixed order, one patch
// that kubectl applies and that a second pass leaves empty, what controllers
// create from mutated templates, Pod UPDATEs, dry runs and warning limits.
#include "tests/support/mutator_harness.h"
#include "webhook/codec/yaml_json.h"

namespace aiadmit {
namespace {

using namespace testing;

std::string json(const std::string& yaml) {
  return toJson(*manifest(yaml));
}

ReviewResponse mutate(const WebhookServer& server, const std::string& objectJson,
                      std::string_view operation = "CREATE", const std::string& oldJson = "") {
  static int counter = 0;
  const HttpResponse http = server.post(
      "/mutate", makeReview(objectJson, operation, "p-" + std::to_string(++counter), oldJson));
  EXPECT_EQ(http.status, 200) << http.body;
  return parseReviewResponse(http.body);
}

// Applies the response's patch with kubectl; the result sent again gets no patch.
std::string applyAndResend(const WebhookServer& server, const std::string& objectJson,
                           const ReviewResponse& response) {
  EXPECT_FALSE(response.patch.empty());
  const std::string mutated = applyPatch(objectJson, response.patch);
  EXPECT_FALSE(mutated.empty());
  EXPECT_EQ(mutate(server, mutated).patch, "") << "not idempotent";
  return mutated;
}

TEST(MutatorPipeline, MutatorsRunInTheDocumentedOrder) {
  std::vector<std::string_view> names;
  for (const auto& mutator : allMutators()) names.push_back(mutator->name);
  EXPECT_EQ(names, (std::vector<std::string_view>{
                       "gpu-limits", "pool-tolerations", "pool-placement", "trainjob-placement",
                       "scheduling", "realtime-probes", "job-defaults", "shared-memory", "stamp"}));
}

TEST(MutatorPipeline, GpusAskedByAnnotationFeedThePoolAndSharedMemory) {
  WebhookServer server;
  const std::string job = json(R"(
apiVersion: batch/v1
kind: Job
metadata:
  name: pretrain
  annotations: {aiadmit.dev/workload: training, aiadmit.dev/gpus: "4"}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: trainer, image: trainer:1}]
)");
  const ReviewResponse response = mutate(server, job);
  ASSERT_TRUE(response.allowed);
  const std::string mutated = applyAndResend(server, job, response);
  const auto result = parseJson(mutated);
  const JsonValue& spec = *at(*result, "/spec/template/spec");
  EXPECT_EQ(stringOf(at(spec, "/containers/0/resources/limits/nvidia.com~1gpu")), "4");
  EXPECT_EQ(stringOf(at(spec, "/tolerations/0/key")), "accelerator");
  EXPECT_EQ(stringOf(at(spec, "/nodeSelector/accelerator")), "nvidia");
  EXPECT_EQ(stringOf(at(spec, "/priorityClassName")), "ai-training");
  EXPECT_EQ(stringOf(at(spec, "/containers/0/volumeMounts/0/mountPath")), "/dev/shm");
  EXPECT_EQ(stringOf(at(spec, "/volumes/0/emptyDir/medium")), "Memory");
  EXPECT_EQ(at(*result, "/spec/backoffLimit")->GetInt(), 3);
  EXPECT_EQ(stringOf(at(*result, "/spec/template/metadata/annotations/aiadmit.dev~1class")),
            "training");
  EXPECT_EQ(
      response.warnings,
      (std::vector<std::string>{
          "aiadmit: class training: declared by annotation aiadmit.dev/workload=training on the "
          "object",
          "aiadmit: added limit nvidia.com/gpu=4 to container trainer per annotation "
          "aiadmit.dev/gpus (profile training)",
          "aiadmit: added toleration accelerator=gpu:NoSchedule (profile training)",
          "aiadmit: added node selector accelerator=nvidia (profile training)",
          "aiadmit: set priorityClassName ai-training (profile training)",
          "aiadmit: set Job backoffLimit=3 (profile training)",
          "aiadmit: set Job activeDeadlineSeconds=604800 (profile training)",
          "aiadmit: set Job ttlSecondsAfterFinished=86400 (profile training)",
          "aiadmit: mounted memory-backed /dev/shm (sizeLimit 64Gi) in container trainer for 4 "
          "GPUs (profile training)",
          "aiadmit: stamped aiadmit.dev/class=training and aiadmit.dev/profile (profile training)",
      }));
  const CommandResult schema = validateSchemas({mutated});
  EXPECT_EQ(schema.exitCode, 0) << schema.out;
}

TEST(MutatorPipeline, JobsAndPodsCreatedFromAMutatedCronJobNeedNoPatch) {
  WebhookServer server;
  const std::string cronJob = json(R"(
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly-eval, namespace: ml}
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: eval
            image: eval:1
            resources: {requests: {nvidia.com/gpu: 2}}
)");
  const std::string mutated = applyAndResend(server, cronJob, mutate(server, cronJob));
  const auto cron = parseJson(mutated);

  // The CronJob controller makes a Job of the job template ...
  JsonDocument job;
  job.SetObject();
  auto& alloc = job.GetAllocator();
  setString(job, "apiVersion", "batch/v1", alloc);
  setString(job, "kind", "Job", alloc);
  JsonValue metadata(*at(*cron, "/spec/jobTemplate/metadata"), alloc);
  setString(metadata, "name", "nightly-eval-28930000", alloc);
  setString(metadata, "namespace", "ml", alloc);
  job.AddMember("metadata", metadata, alloc);
  JsonValue jobSpec(*at(*cron, "/spec/jobTemplate/spec"), alloc);
  jobSpec.AddMember("completions", 1, alloc);
  jobSpec.AddMember("parallelism", 1, alloc);
  job.AddMember("spec", jobSpec, alloc);
  EXPECT_EQ(mutate(server, toJson(job)).patch, "");

  // ... and the Job controller a Pod of its template, defaulted by the API server.
  JsonDocument pod;
  pod.SetObject();
  setString(pod, "apiVersion", "v1", pod.GetAllocator());
  setString(pod, "kind", "Pod", pod.GetAllocator());
  JsonValue podMetadata(*at(job, "/spec/template/metadata"), pod.GetAllocator());
  setString(podMetadata, "name", "nightly-eval-28930000-x7k2p", pod.GetAllocator());
  pod.AddMember("metadata", podMetadata, pod.GetAllocator());
  JsonValue podSpec(*at(job, "/spec/template/spec"), pod.GetAllocator());
  podSpec.AddMember("schedulerName", "default-scheduler", pod.GetAllocator());
  podSpec.AddMember("priority", 100, pod.GetAllocator());
  pod.AddMember("spec", podSpec, pod.GetAllocator());
  EXPECT_EQ(mutate(server, toJson(pod)).patch, "");

  const CommandResult schema = validateSchemas({mutated, toJson(job), toJson(pod)});
  EXPECT_EQ(schema.exitCode, 0) << schema.out;
}

const char* kGpuPod = R"(
apiVersion: v1
kind: Pod
metadata: {name: server, annotations: {aiadmit.dev/workload: realtime}}
spec:
  containers:
  - name: server
    image: server:1
    ports: [{containerPort: 8000}]
    resources: {limits: {nvidia.com/gpu: 1}}
)";

TEST(MutatorPipeline, APodUpdateIsNeverMutatedButControllerTemplatesAre) {
  WebhookServer server;
  const std::string pod = json(kGpuPod);
  const ReviewResponse update = mutate(server, pod, "UPDATE", pod);
  EXPECT_TRUE(update.allowed);
  EXPECT_EQ(update.patch, "");

  const std::string deployment = json(R"(
apiVersion: apps/v1
kind: Deployment
metadata: {name: server}
spec:
  selector: {matchLabels: {app: server}}
  template:
    metadata: {labels: {app: server}}
    spec:
      containers: [{name: server, image: server:2, ports: [{containerPort: 8000}],
                    resources: {limits: {nvidia.com/gpu: 1}}}]
)");
  // A new image is a rollout anyway: the template gets what the profile says.
  std::string previous = deployment;
  previous.replace(previous.find("server:2"), 8, "server:1");
  const ReviewResponse templateUpdate = mutate(server, deployment, "UPDATE", previous);
  EXPECT_NE(templateUpdate.patch, "");
  applyAndResend(server, deployment, templateUpdate);
}

TEST(MutatorPipeline, ADryRunGetsExactlyTheSameAnswer) {
  WebhookServer server;
  const std::string review = makeReview(json(kGpuPod), "CREATE", "dry-run-uid");
  std::string dryRun = review;
  const size_t at = dryRun.rfind(R"("dryRun":false)");
  ASSERT_NE(at, std::string::npos);
  dryRun.replace(at, 14, R"("dryRun":true)");
  const HttpResponse real = server.post("/mutate", review);
  const HttpResponse dry = server.post("/mutate", dryRun);
  EXPECT_EQ(real.status, 200);
  EXPECT_EQ(dry.body, real.body);
  EXPECT_NE(parseReviewResponse(real.body).patch, "");
}

TEST(MutatorPipeline, WarningsStayWithinWhatTheApiServerKeeps) {
  // A profile with the longest name a profile may have, and a pod whose 60
  // containers, with the longest names, each ask for a GPU without a limit.
  TempDir profiles;
  const std::string longName(63, 'p');
  writeFile(profiles.file("long.yaml"), R"(
apiVersion: aiadmit.dev/v1
kind: Profile
metadata: {name: )" + longName + R"(}
spec:
  class: batch
  gpu: {gpusPerNode: 64}
  placement: {nodeSelector: {accelerator: nvidia}}
  scheduling: {priorityClassName: ai-batch}
)");
  WebhookServer::Options options;
  options.profilesDir = profiles.path();
  WebhookServer server(options);

  std::string containers;
  for (int i = 0; i < 60; ++i) {
    std::string name = "c";
    name.append(std::to_string(i));
    name.resize(63, 'x');
    containers += "  - {name: ";
    containers += name;
    containers += ", image: x, resources: {requests: {nvidia.com/gpu: 1}}}\n";
  }
  const std::string pod = json(R"(
apiVersion: v1
kind: Pod
metadata: {name: wide}
spec:
  restartPolicy: Never
  containers:
)" + containers);
  const ReviewResponse response = mutate(server, pod);
  ASSERT_TRUE(response.allowed);
  size_t total = 0;
  for (const std::string& warning : response.warnings) {
    EXPECT_LE(warning.size(), 120u) << warning;
    total += warning.size();
  }
  EXPECT_LE(total, 4096u);
  ASSERT_GT(response.warnings.size(), 2u);
  // Shortened change lines keep the profile they came from.
  EXPECT_NE(response.warnings[1].find("... (profile " + longName + ")"), std::string::npos)
      << response.warnings[1];
  EXPECT_NE(response.warnings.back().find("more warnings not shown"), std::string::npos);
  const std::string mutated = applyAndResend(server, pod, response);
  EXPECT_EQ(parseJson(mutated)
                ->
                operator[]("spec")["containers"][59]["resources"]["limits"]["nvidia.com/gpu"]
                .GetInt(),
            1);
}

TEST(MutatorPipeline, ChangeSummariesAreShortenedWithoutSplittingCharacters) {
  JsonDocument object;
  object.SetObject();
  Classification classification;
  Profile profile;
  profile.name = "training";
  std::vector<std::string> changes;
  std::vector<std::string> notices;
  const WorkloadType& pod = *WorkloadTypeTable::builtIn()->findGroupKind("", "Pod");
  MutationContext context{
      object, object.GetAllocator(), pod, classification, profile, "default", changes, notices};
  context.report("short");
  std::string longChange = "added label team=";
  for (int i = 0; i < 60; ++i) longChange += "\u00e9";  // two bytes each
  context.report(longChange);
  ASSERT_EQ(changes.size(), 2u);
  // A notice becomes a warning of the same form, shortened alike.
  context.notice(longChange);
  EXPECT_EQ(notices, std::vector<std::string>{changes[1]});
  EXPECT_EQ(changes[0], "short");
  const std::string warning = "aiadmit: " + changes[1] + " (profile training)";
  EXPECT_LE(warning.size(), 120u);
  EXPECT_GE(warning.size(), 118u);
  EXPECT_EQ(changes[1].substr(changes[1].size() - 3), "...");
  // The cut falls between characters: every byte before "..." completes one.
  const std::string kept = changes[1].substr(0, changes[1].size() - 3);
  EXPECT_EQ((kept.size() - std::string("added label team=").size()) % 2, 0u);
}

TEST(MutatorPipeline, AnObjectThatIsNotAnAiWorkloadIsLeftUntouched) {
  WebhookServer server;
  const ReviewResponse response = mutate(server, json(R"(
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx:1, ports: [{containerPort: 80}]}]
)"));
  EXPECT_TRUE(response.allowed);
  EXPECT_EQ(response.patch, "");
  EXPECT_TRUE(response.warnings.empty());
}

// A GPU count of 0 is no GPU (how Helm charts switch one off): a Volcano
// Job whose only GPU entry is 0 is no AI workload and passes untouched.
// Declared training, it is one, and the 0 is what its worker asked for:
// neither look gives a template gpu.defaultCount, nor takes the other one for
// the main template on the second look because of aiadmit's own stamps.
TEST(MutatorPipeline, AGpuCountOfZeroGetsNoDefaultGpuOnEitherLook) {
  WebhookServer server;
  const std::string job = R"(
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: mindspore)";
  const std::string spec = R"(}
spec:
  minAvailable: 3
  schedulerName: volcano
  tasks:
  - {replicas: 1, name: master, template: {spec: {restartPolicy: OnFailure,
      containers: [{name: master, image: m}]}}}
  - {replicas: 2, name: worker, template: {spec: {restartPolicy: OnFailure,
      containers: [{name: worker, image: w, resources: {limits: {nvidia.com/gpu: "0"}}}]}}}
)";
  const ReviewResponse untouched = mutate(server, json(job + spec));
  EXPECT_TRUE(untouched.allowed);
  EXPECT_EQ(untouched.patch, "") << "a Job that asks for no GPU got a patch";

  const std::string declared = json(job + ", annotations: {aiadmit.dev/workload: training}" + spec);
  const ReviewResponse first = mutate(server, declared);
  EXPECT_TRUE(first.allowed);
  const auto mutated = parseJson(applyAndResend(server, declared, first));
  EXPECT_EQ(at(*mutated, "/spec/tasks/0/template/spec/containers/0/resources"), nullptr)
      << "a default GPU nobody asked for: " << toJson(*mutated);
  const JsonValue* zero =
      at(*mutated, "/spec/tasks/1/template/spec/containers/0/resources/limits/nvidia.com~1gpu");
  ASSERT_NE(zero, nullptr);
  EXPECT_EQ(toJson(*zero), "\"0\"");
}

}  // namespace
}  // namespace aiadmit
