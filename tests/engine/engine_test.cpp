// Pipeline decisions that concern no single mutator or validator.
#include <gtest/gtest.h>
#include <rapidjson/pointer.h>

#include "tests/support/test_support.h"
#include "webhook/codec/warnings.h"
#include "webhook/codec/yaml_json.h"

namespace aiadmit {
namespace {

using namespace testing;

std::string jsonOf(const std::string& yaml) {
  std::vector<ManifestDocument> documents;
  std::string error;
  EXPECT_TRUE(parseManifests(yaml, documents, &error)) << error;
  return documents.empty() ? "{}" : toJson(*documents[0].json);
}

const std::string kGpuJob = jsonOf(R"(
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml, annotations: {aiadmit.dev/workload: training}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: t, image: i, resources: {limits: {nvidia.com/gpu: 1}}}]
)");

std::string deploymentWithProfile(const std::string& annotations) {
  return jsonOf(R"(
apiVersion: apps/v1
kind: Deployment
metadata: {name: server, namespace: ml, annotations: {)" +
                annotations + R"(}}
spec:
  selector: {matchLabels: {app: s}}
  template:
    metadata: {labels: {app: s}}
    spec:
      containers:
        - name: s
          image: i
          ports: [{containerPort: 8000}]
          resources: {limits: {nvidia.com/gpu: 1, memory: 8Gi}}
)");
}

TEST(Engine, AJobsPodTemplateIsNotMutatedOnUpdate) {
  WebhookServer server;
  const ReviewResponse created =
      parseReviewResponse(server.post("/mutate", makeReview(kGpuJob, "CREATE", "c")).body);
  EXPECT_FALSE(created.patch.empty()) << "created Jobs get the profile";
  // The API server refuses changes to a Job's template: an UPDATE of a Job
  // made before aiadmit (or before a profile change) must not gain a patch.
  const ReviewResponse updated =
      parseReviewResponse(server.post("/mutate", makeReview(kGpuJob, "UPDATE", "u", kGpuJob)).body);
  EXPECT_TRUE(updated.allowed);
  EXPECT_TRUE(updated.patch.empty()) << updated.patch;
}

TEST(Engine, AStampedProfileThatNoLongerExistsIsReplacedNotDenied) {
  WebhookServer server;
  // What aiadmit wrote on an object before the profile was renamed.
  const std::string stamped =
      deploymentWithProfile("aiadmit.dev/class: realtime, aiadmit.dev/profile: realtime-2025");
  const ReviewResponse validated = parseReviewResponse(
      server.post("/validate", makeReview(stamped, "UPDATE", "v", stamped)).body);
  EXPECT_TRUE(validated.allowed) << validated.message;

  // The next update that changes what aiadmit reads (a label on the object)
  // brings the record up to date.
  std::string relabelled = stamped;
  const std::string name = "\"name\":\"server\",";
  relabelled.replace(relabelled.find(name), name.size(), name + "\"labels\":{\"team\":\"ml\"},");
  const ReviewResponse mutated = parseReviewResponse(
      server.post("/mutate", makeReview(relabelled, "UPDATE", "m", stamped)).body);
  ASSERT_FALSE(mutated.patch.empty());
  const std::string patched = applyPatch(relabelled, mutated.patch);
  const auto doc = parseJson(patched);
  EXPECT_EQ(
      stringMember(member(member(doc.get(), "metadata"), "annotations"), "aiadmit.dev/profile"),
      "realtime");
}

TEST(Engine, AProfileTheDeveloperNamedThatDoesNotExistIsDenied) {
  WebhookServer server;
  const std::string named = deploymentWithProfile("aiadmit.dev/profile: realtime-2025");
  const ReviewResponse validated =
      parseReviewResponse(server.post("/validate", makeReview(named, "CREATE", "v")).body);
  EXPECT_FALSE(validated.allowed);
  EXPECT_NE(validated.message.find("realtime-2025"), std::string::npos) << validated.message;
}

// A Deployment as it was stored before aiadmit was installed: nothing stamped.
std::string deploymentWithReplicas(int replicas) {
  return jsonOf(R"(
apiVersion: apps/v1
kind: Deployment
metadata: {name: server, namespace: ml}
spec:
  replicas: )" + std::to_string(replicas) +
                R"(
  selector: {matchLabels: {app: s}}
  template:
    metadata: {labels: {app: s}}
    spec:
      priorityClassName: ai-realtime
      nodeSelector: {accelerator: nvidia}
      tolerations: [{key: accelerator, operator: Equal, value: gpu, effect: NoSchedule}]
      containers:
        - name: s
          image: i
          ports: [{containerPort: 8000}]
          readinessProbe: {tcpSocket: {port: 8000}}
          startupProbe: {tcpSocket: {port: 8000}, failureThreshold: 180}
          resources: {limits: {nvidia.com/gpu: 1, memory: 8Gi}}
)");
}

TEST(Engine, AScaleOnlyUpdateNeverChangesThePodTemplate) {
  WebhookServer server;
  const std::string before = deploymentWithReplicas(2);
  const std::string after = deploymentWithReplicas(3);
  const ReviewResponse response =
      parseReviewResponse(server.post("/mutate", makeReview(after, "UPDATE", "s", before)).body);
  ASSERT_TRUE(response.allowed);
  // A scale is the controller's (an autoscaler's, kubectl scale's): it is
  // never a rollout, and aiadmit writes nothing, not even its record.
  EXPECT_EQ(response.patch, "");

  // A label changed with it is the user's: the object records the decision,
  // and the template still does not change, since a changed pod template
  // makes the controller replace every replica.
  std::string relabelled = after;
  const std::string name = "\"name\":\"server\",";
  relabelled.replace(relabelled.find(name), name.size(), name + "\"labels\":{\"team\":\"ml\"},");
  const ReviewResponse labelled = parseReviewResponse(
      server.post("/mutate", makeReview(relabelled, "UPDATE", "l", before)).body);
  ASSERT_FALSE(labelled.patch.empty()) << "the object itself records the decision";
  EXPECT_EQ(labelled.patch.find("/spec/template"), std::string::npos) << labelled.patch;
  const auto patched = parseJson(applyPatch(relabelled, labelled.patch));
  const JsonValue* annotations = member(member(patched.get(), "metadata"), "annotations");
  EXPECT_EQ(stringMember(annotations, "aiadmit.dev/class"), "realtime");
  EXPECT_EQ(stringMember(annotations, "aiadmit.dev/profile"), "realtime");
  EXPECT_EQ(*member(patched.get(), "spec"), *member(parseJson(after).get(), "spec"));

  // Sent again with the same template, the recorded object needs nothing more.
  const std::string recorded = toJson(*patched);
  const ReviewResponse again = parseReviewResponse(
      server.post("/mutate", makeReview(recorded, "UPDATE", "s2", before)).body);
  EXPECT_EQ(again.patch, "");
}

TEST(Engine, AnUpdateThatChangesThePodTemplateIsMutated) {
  WebhookServer server;
  const std::string before = deploymentWithReplicas(2);
  std::string after = before;
  const std::string image = R"("image":"i")";
  after.replace(after.find(image), image.size(), R"("image":"i:2")");
  const ReviewResponse response =
      parseReviewResponse(server.post("/mutate", makeReview(after, "UPDATE", "t", before)).body);
  ASSERT_TRUE(response.allowed);
  const auto patched = parseJson(applyPatch(after, response.patch));
  EXPECT_EQ(
      stringOf(member(member(member(member(member(patched.get(), "spec"), "template"), "metadata"),
                             "annotations"),
                      "aiadmit.dev/class")),
      "realtime");
}

TEST(Engine, ANewWorkloadAnnotationReplacesTheStampsOfTheOldClass) {
  WebhookServer server;
  const std::string stampedBatch = R"(aiadmit.dev/class: batch, aiadmit.dev/profile: batch)";
  const auto cronJob = [&](const std::string& templateAnnotations) {
    return jsonOf(R"(
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: ml, annotations: {)" +
                  stampedBatch + R"(}}
spec:
  schedule: "@daily"
  jobTemplate:
    metadata: {annotations: {)" +
                  stampedBatch + R"(}}
    spec:
      template:
        metadata: {annotations: {)" +
                  templateAnnotations + R"(}}
        spec:
          restartPolicy: Never
          containers: [{name: t, image: i, resources: {limits: {nvidia.com/gpu: 1}}}]
)");
  };
  const std::string before = cronJob(stampedBatch);
  const std::string after = cronJob(stampedBatch + ", aiadmit.dev/workload: training");

  const ReviewResponse validated =
      parseReviewResponse(server.post("/validate", makeReview(after, "UPDATE", "v", before)).body);
  EXPECT_TRUE(validated.allowed) << validated.message;

  const ReviewResponse mutated =
      parseReviewResponse(server.post("/mutate", makeReview(after, "UPDATE", "m", before)).body);
  ASSERT_TRUE(mutated.allowed) << mutated.message;
  ASSERT_FALSE(mutated.patch.empty());
  const auto patched = parseJson(applyPatch(after, mutated.patch));
  for (const char* pointer : {"/metadata/annotations", "/spec/jobTemplate/metadata/annotations",
                              "/spec/jobTemplate/spec/template/metadata/annotations"}) {
    SCOPED_TRACE(pointer);
    const JsonValue* annotations = rapidjson::Pointer(pointer).Get(*patched);
    EXPECT_EQ(stringMember(annotations, "aiadmit.dev/class"), "training");
    EXPECT_EQ(stringMember(annotations, "aiadmit.dev/profile"), "training");
  }
  const ReviewResponse revalidated = parseReviewResponse(
      server.post("/validate", makeReview(toJson(*patched), "UPDATE", "r", before)).body);
  EXPECT_TRUE(revalidated.allowed) << revalidated.message;
}

TEST(Engine, MutateAndValidateWarningsTogetherFitWhatTheApiServerKeeps) {
  // 26 GPU servers with long names: each gets a limit (mutate) and has no
  // memory limit (AIA015 warns on validate).
  std::string containers;
  for (int i = 0; i < 26; ++i) {
    std::string name = "server-" + std::to_string(i) + "-";
    name.resize(60, 'x');
    containers += "  - {name: " + name +
                  ", image: i, ports: [{containerPort: 8000}], resources: {requests: "
                  "{nvidia.com/gpu: 1}}}\n";
  }
  const std::string pod = jsonOf(R"(
apiVersion: v1
kind: Pod
metadata: {name: wide, namespace: ml, annotations: {aiadmit.dev/workload: realtime}}
spec:
  containers:
)" + containers);
  WebhookServer server;
  const ReviewResponse mutated =
      parseReviewResponse(server.post("/mutate", makeReview(pod, "CREATE", "m")).body);
  ASSERT_TRUE(mutated.allowed);
  const std::string stored = applyPatch(pod, mutated.patch);
  const ReviewResponse validated =
      parseReviewResponse(server.post("/validate", makeReview(stored, "CREATE", "v")).body);

  // The API server keeps 4096 characters of one request's warnings, from
  // every webhook together: both of aiadmit's must fit, each with its
  // closing "N more" line.
  size_t total = 0;
  for (const auto* response : {&mutated, &validated}) {
    ASSERT_FALSE(response->warnings.empty());
    for (const std::string& warning : response->warnings) total += warning.size();
    EXPECT_NE(response->warnings.back().find("more warnings not shown"), std::string::npos)
        << response->warnings.back();
  }
  EXPECT_LE(total, kMaxWarningsTotal);
  EXPECT_NE(validated.warnings.front().find("[AIA015]"), std::string::npos);
}

}  // namespace
}  // namespace aiadmit
