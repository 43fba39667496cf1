// A second `kubectl apply` of an unchanged file, through both webhooks, with
// the objects the API server hands aiadmit as they were recorded on the real
// control plane (tests/e2e/reapply_e2e_test.cpp applies them there): the
// object stored at creation, then the patch kubectl sends (a JSON merge
// patch for a custom resource, a strategic merge patch for a Job; a
// server-side apply merges the file into the stored object), applied as the
// API server applies it. What aiadmit wrote at creation is restored and the
// update admitted, running or held by Kueue; Kueue's own updates get
// nothing of aiadmit's.
#include <gtest/gtest.h>

#include "mutators/mutator.h"
#include "tests/support/test_support.h"
#include "webhook/codec/json_pointer.h"
#include "webhook/codec/yaml_json.h"
#include "webhook/engine/engine.h"
#include "webhook/policy/profile_loader.h"

namespace aiadmit {
namespace {

using namespace testing;

std::shared_ptr<const ProfileSet> shipped() {
  ProfileLoadResult loaded = loadProfileDirectory(sourceDir() + "/profiles", mutationSwitches());
  for (const ProfileError& error : loaded.errors) ADD_FAILURE() << error.format();
  return loaded.set;
}

std::shared_ptr<JsonDocument> objectOf(const std::string& yamlOrJson) {
  std::vector<ManifestDocument> documents;
  std::string error;
  EXPECT_TRUE(parseManifests(yamlOrJson, documents, &error)) << error;
  return documents.empty() ? std::make_shared<JsonDocument>() : documents[0].json;
}

// RFC 7386, as the API server applies kubectl's patch of a custom resource:
// objects merged member by member, null removing one, anything else (a
// list) replacing what is there.
void mergePatch(JsonValue& target, const JsonValue& patch, JsonAllocator& alloc) {
  if (!patch.IsObject() || !target.IsObject()) {
    target.CopyFrom(patch, alloc);
    return;
  }
  for (auto it = patch.MemberBegin(); it != patch.MemberEnd(); ++it) {
    const std::string_view key(it->name.GetString(), it->name.GetStringLength());
    JsonValue* existing = member(&target, key);
    if (it->value.IsNull()) {
      if (existing != nullptr) target.RemoveMember(it->name);
    } else if (existing != nullptr && it->value.IsObject()) {
      mergePatch(*existing, it->value, alloc);
    } else {
      setMember(target, key, JsonValue(it->value, alloc), alloc);
    }
  }
}

// A strategic merge patch as the API server applies the ones kubectl sends
// a Job: maps merged, a list of named objects (containers) merged by name,
// any other list (tolerations: no merge key) replaced; `$` directives only
// order what they name.
void strategicMergePatch(JsonValue& target, const JsonValue& patch, JsonAllocator& alloc) {
  for (auto it = patch.MemberBegin(); it != patch.MemberEnd(); ++it) {
    const std::string_view key(it->name.GetString(), it->name.GetStringLength());
    if (key.front() == '$') continue;
    JsonValue* existing = member(&target, key);
    const bool byName = it->value.IsArray() && !it->value.Empty() && it->value[0].IsObject() &&
                        member(&it->value[0], "name") != nullptr;
    if (existing != nullptr && it->value.IsObject()) {
      strategicMergePatch(*existing, it->value, alloc);
    } else if (existing != nullptr && existing->IsArray() && byName) {
      for (const JsonValue& entry : it->value.GetArray()) {
        JsonValue* same =
            const_cast<JsonValue*>(elementWith(existing, "name", stringMember(&entry, "name")));
        if (same != nullptr) strategicMergePatch(*same, entry, alloc);
      }
    } else {
      setMember(target, key, JsonValue(it->value, alloc), alloc);
    }
  }
}

struct Admitted {
  AdmissionOutcome mutation = AdmissionOutcome::allowed();
  AdmissionOutcome validation = AdmissionOutcome::allowed();
  std::shared_ptr<JsonDocument> stored = std::make_shared<JsonDocument>();
};

// What the API server stores of `object` after both webhooks, as a CREATE
// (old: null) or an UPDATE of `old`.
Admitted admit(const Engine& engine, const JsonValue& object, const JsonValue* old) {
  Admitted admitted;
  AdmissionSubject subject = AdmissionSubject::ofObject(object, "ml");
  if (old != nullptr) {
    subject.operation = Operation::Update;
    subject.oldObject = old;
  }
  auto mutated = std::make_shared<JsonDocument>();
  admitted.mutation = engine.mutate(subject, {.mutated = mutated.get()}).outcome;
  admitted.stored->CopyFrom(admitted.mutation.patch().empty() ? object : *mutated,
                            admitted.stored->GetAllocator());
  subject.object = admitted.stored.get();
  admitted.validation = engine.validate(subject).outcome;
  return admitted;
}

bool anyWarningWith(const AdmissionOutcome& outcome, std::string_view text) {
  for (const std::string& warning : outcome.warnings()) {
    if (warning.find(text) != std::string::npos) return true;
  }
  return false;
}

// What aiadmit writes into a pod template, as the object holds it.
void expectSamePlacement(const JsonValue& stored, const JsonValue& reapplied,
                         const std::string& pod) {
  for (const char* part :
       {"/spec/tolerations", "/spec/nodeSelector", "/spec/priorityClassName", "/spec/volumes",
        "/spec/containers/0/volumeMounts", "/metadata/annotations"}) {
    const JsonValue* before = valueAt(stored, pod + part);
    ASSERT_NE(before, nullptr) << part << " was not written at creation";
    const JsonValue* after = valueAt(reapplied, pod + part);
    ASSERT_NE(after, nullptr) << part << " was lost";
    EXPECT_EQ(*after, *before) << part;
  }
}

// -------------------------------------------------------------- JobSet

// The file: one replicated job of one GPU Pod, with a toleration of its own.
std::string jobSetFile(const std::string& jobSpec, const std::string& metadata = "") {
  return R"({"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
    "metadata": {"name": "train")" +
         metadata + R"(}, "spec": {"replicatedJobs": [{"name": "workers", "replicas": 1,
    "template": {"spec": {)" +
         jobSpec + R"("parallelism": 1, "completions": 1, "backoffLimit": 0,
      "template": {"spec": {"restartPolicy": "Never",
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "containers": [{"name": "main", "image": "registry.example/work:1",
          "resources": {"limits": {"nvidia.com/gpu": 1, "memory": "8Gi"}}}]}}}}}]}})";
}

constexpr const char* kIndexed = R"("completionMode": "Indexed", )";
constexpr const char* kQueued = R"(, "labels": {"kueue.x-k8s.io/queue-name": "held"})";

// The JobSet as the API server hands it to aiadmit at creation: the CRD's
// default groupName, and JobSet's webhook's defaults written back from its
// Go types (a template's empty metadata, the quantity as "1", the
// completion mode, the policies); Kueue's webhook suspends a queued one.
std::shared_ptr<JsonDocument> jobSetAsCreated(const std::string& file, bool queued) {
  auto object = objectOf(file);
  JsonAllocator& alloc = object->GetAllocator();
  const auto defaults = objectOf(std::string(R"({"spec": {
    "network": {"enableDNSHostnames": true, "publishNotReadyAddresses": true},
    "startupPolicy": {"startupPolicyOrder": "AnyOrder"}, "successPolicy": {"operator": "All"},
    "replicatedJobs": [{"name": "workers", "groupName": "default", "replicas": 1,
      "template": {"metadata": {}, "spec": {"completionMode": "Indexed", "parallelism": 1,
        "completions": 1, "backoffLimit": 0, "template": {"metadata": {}, "spec": {
          "restartPolicy": "Never",
          "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
          "containers": [{"name": "main", "image": "registry.example/work:1",
            "resources": {"limits": {"nvidia.com/gpu": "1", "memory": "8Gi"}}}]}}}}}])") +
                                 (queued ? R"(, "suspend": true)" : "") + "}}");
  mergePatch(*object, *defaults, alloc);
  return object;
}

// The patch of `kubectl apply` of the same file, as kubectl sent it: the
// file's replicated jobs, whole.
std::string jobSetMergePatch(const std::string& jobSpec) {
  return R"({"spec":{"replicatedJobs":[{"name":"workers","replicas":1,"template":{"spec":{"backoffLimit":0,)" +
         jobSpec +
         R"("completions":1,"parallelism":1,"template":{"spec":{"containers":[{"image":"registry.example/work:1","name":"main","resources":{"limits":{"memory":"8Gi","nvidia.com/gpu":1}}}],"restartPolicy":"Never","tolerations":[{"effect":"NoSchedule","key":"nvidia.com/gpu","operator":"Exists"}]}}}}}]}})";
}

constexpr const char* kIndexedInPatch = R"("completionMode":"Indexed",)";

// The stored JobSet with kubectl's merge patch applied, and the CRD's
// default groupName written into the file's replicated job.
std::shared_ptr<JsonDocument> mergePatched(const JsonValue& stored, const std::string& patch) {
  auto sent = std::make_shared<JsonDocument>();
  sent->CopyFrom(stored, sent->GetAllocator());
  mergePatch(*sent, *objectOf(patch), sent->GetAllocator());
  JsonValue* job = const_cast<JsonValue*>(valueAt(*sent, "/spec/replicatedJobs/0"));
  if (job != nullptr && member(job, "groupName") == nullptr) {
    setString(*job, "groupName", "default", sent->GetAllocator());
  }
  return sent;
}

const std::string kJobSetPod = "/spec/replicatedJobs/0/template/spec/template";

struct JobSetCase {
  const char* name;
  bool queued;
};

void PrintTo(const JobSetCase& param, std::ostream* out) {
  *out << param.name;
}

class ReappliedJobSet : public ::testing::TestWithParam<JobSetCase> {};

TEST_P(ReappliedJobSet, GetsWhatAiadmitWroteBackAndIsAdmitted) {
  const Engine engine(shipped());
  const bool queued = GetParam().queued;
  const std::string file = jobSetFile(kIndexed, queued ? kQueued : "");
  const Admitted created = admit(engine, *jobSetAsCreated(file, queued), nullptr);
  ASSERT_EQ(created.mutation.decision(), Decision::Patched) << created.mutation.message();
  ASSERT_TRUE(created.validation.isAllowed()) << created.validation.message();

  const auto sent = mergePatched(*created.stored, jobSetMergePatch(kIndexedInPatch));
  const Admitted again = admit(engine, *sent, created.stored.get());
  ASSERT_EQ(again.mutation.decision(), Decision::Patched) << again.mutation.message();
  EXPECT_FALSE(anyWarningWith(again.mutation, "as sent")) << again.mutation.warnings().front();
  EXPECT_TRUE(again.validation.isAllowed()) << again.validation.message();
  expectSamePlacement(*created.stored, *again.stored, kJobSetPod);
  // JobSet's empty template metadata and the file's quantity are no change
  // to JobSet's check, which compares its Go types: aiadmit writes neither.
  EXPECT_EQ(valueAt(*again.stored, "/spec/replicatedJobs/0/template/metadata"), nullptr);
  EXPECT_EQ(toJson(*valueAt(*again.stored, kJobSetPod + "/spec/containers/0/resources/limits")),
            R"({"memory":"8Gi","nvidia.com/gpu":1})");
  // Applied once more, the restored object needs nothing.
  const Admitted third = admit(engine, *again.stored, created.stored.get());
  EXPECT_EQ(third.mutation.patch(), "");
}

INSTANTIATE_TEST_SUITE_P(ClientSide, ReappliedJobSet,
                         ::testing::Values(JobSetCase{"Running", false},
                                           JobSetCase{"HeldByKueue", true}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(ReappliedJobSet, AsItsExamplesWriteItGetsAiadmitsWritesBackAndNotJobSets) {
  // No completion mode in the file: JobSet's webhook wrote it at creation,
  // the reapply drops it, and JobSet refuses that on its own. aiadmit
  // restores its own writes and refuses nothing; it writes no default of
  // JobSet's.
  const Engine engine(shipped());
  const std::string file = jobSetFile("");
  const Admitted created = admit(engine, *jobSetAsCreated(file, false), nullptr);
  ASSERT_EQ(created.mutation.decision(), Decision::Patched);
  const auto sent = mergePatched(*created.stored, jobSetMergePatch(""));
  const Admitted again = admit(engine, *sent, created.stored.get());
  EXPECT_TRUE(again.validation.isAllowed()) << again.validation.message();
  expectSamePlacement(*created.stored, *again.stored, kJobSetPod);
  EXPECT_EQ(valueAt(*again.stored, "/spec/replicatedJobs/0/template/spec/completionMode"), nullptr);
}

TEST(ReappliedJobSet, ServerSideGetsTheTolerationBackThatTheFilesAtomicListReplaced) {
  // A server-side apply keeps what the file leaves out but sets what the
  // file owns as the file has it: an atomic list (the tolerations) and the
  // quantity as the file spells it (a custom resource is not decoded into
  // types).
  const Engine engine(shipped());
  const Admitted created = admit(engine, *jobSetAsCreated(jobSetFile(kIndexed), false), nullptr);
  auto sent = std::make_shared<JsonDocument>();
  sent->CopyFrom(*created.stored, sent->GetAllocator());
  const auto fileList =
      objectOf(R"([{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}])");
  const_cast<JsonValue*>(valueAt(*sent, kJobSetPod + "/spec/tolerations"))
      ->CopyFrom(*fileList, sent->GetAllocator());
  setMember(
      *const_cast<JsonValue*>(valueAt(*sent, kJobSetPod + "/spec/containers/0/resources/limits")),
      "nvidia.com/gpu", JsonValue(1), sent->GetAllocator());
  const Admitted again = admit(engine, *sent, created.stored.get());
  EXPECT_FALSE(anyWarningWith(again.mutation, "as sent"));
  EXPECT_TRUE(again.validation.isAllowed()) << again.validation.message();
  expectSamePlacement(*created.stored, *again.stored, kJobSetPod);
}

// ----------------------------------------------------------------- Job

const std::string kJobFile = R"({"apiVersion": "batch/v1", "kind": "Job",
  "metadata": {"name": "batch", "labels": {"kueue.x-k8s.io/queue-name": "held"}},
  "spec": {"suspend": true, "template": {"spec": {"restartPolicy": "Never",
    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    "containers": [{"name": "main", "image": "registry.example/work:1",
      "resources": {"limits": {"nvidia.com/gpu": "1", "memory": "8Gi"}}}]}}}})";

// kubectl's strategic merge patch of the same Job file (whose GPU count is
// the number 1): the container by name, with the file's quantity, and the
// tolerations, a list without a merge key, whole.
constexpr const char* kJobPatch =
    R"({"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"main"}],"containers":[{"name":"main","resources":{"limits":{"nvidia.com/gpu":1}}}],"tolerations":[{"effect":"NoSchedule","key":"nvidia.com/gpu","operator":"Exists"}]}}}})";

std::shared_ptr<JsonDocument> jobReapplied(const JsonValue& stored) {
  auto sent = std::make_shared<JsonDocument>();
  sent->CopyFrom(stored, sent->GetAllocator());
  strategicMergePatch(*sent, *objectOf(kJobPatch), sent->GetAllocator());
  // The API server decodes the Job into its types: the quantity is "1" again.
  setString(
      *const_cast<JsonValue*>(valueAt(*sent, "/spec/template/spec/containers/0/resources/limits")),
      "nvidia.com/gpu", "1", sent->GetAllocator());
  return sent;
}

// The Job as stored: held by Kueue, or running (`suspend` false).
std::shared_ptr<JsonDocument> storedJob(const Engine& engine, bool suspended) {
  auto file = objectOf(kJobFile);
  setMember(*const_cast<JsonValue*>(valueAt(*file, "/spec")), "suspend", JsonValue(suspended),
            file->GetAllocator());
  const Admitted created = admit(engine, *file, nullptr);
  EXPECT_EQ(created.mutation.decision(), Decision::Patched) << created.mutation.message();
  return created.stored;
}

TEST(ReappliedJob, RunningGetsTheTolerationBackInItsFixedTemplate) {
  const Engine engine(shipped());
  const auto stored = storedJob(engine, false);
  const Admitted again = admit(engine, *jobReapplied(*stored), stored.get());
  ASSERT_EQ(again.mutation.decision(), Decision::Patched) << again.mutation.message();
  EXPECT_TRUE(again.validation.isAllowed()) << again.validation.message();
  EXPECT_EQ(*again.stored, *stored);
}

TEST(ReappliedJob, HeldByKueueGetsItBackThoughOnlyItsSchedulingChanged) {
  // While suspended, Kueue may write a template's scheduling directives, so
  // the reapply's change looks like Kueue's: aiadmit restores only what the
  // update dropped of its own writes, and says so.
  const Engine engine(shipped());
  const auto stored = storedJob(engine, true);
  const Admitted again = admit(engine, *jobReapplied(*stored), stored.get());
  ASSERT_EQ(again.mutation.decision(), Decision::Patched) << again.mutation.message();
  EXPECT_TRUE(anyWarningWith(again.mutation,
                             "aiadmit: restored tolerations, which the update "
                             "dropped (profile batch)"));
  EXPECT_EQ(*again.stored, *stored);
}

TEST(ReappliedJob, KueuesStartAndItsRestoreOfTheTemplateGetNoPatchAndNoWord) {
  const Engine engine(shipped());
  const auto stored = storedJob(engine, true);
  // Kueue starts it with its flavor's node labels and the podset's labels.
  auto started = std::make_shared<JsonDocument>();
  started->CopyFrom(*stored, started->GetAllocator());
  strategicMergePatch(*started, *objectOf(R"({"spec": {"suspend": false, "template": {
      "metadata": {"labels": {"kueue.x-k8s.io/podset": "main"}},
      "spec": {"nodeSelector": {"cloud.google.com/gke-nodepool": "a100"}}}}})"),
                      started->GetAllocator());
  const Admitted start = admit(engine, *started, stored.get());
  EXPECT_EQ(start.mutation.decision(), Decision::Allowed);
  EXPECT_TRUE(start.mutation.warnings().empty()) << start.mutation.warnings().front();
  // Stopping it, Kueue suspends it, then restores the template its Workload
  // recorded: the one aiadmit wrote.
  auto stopped = std::make_shared<JsonDocument>();
  stopped->CopyFrom(*started, stopped->GetAllocator());
  setMember(*const_cast<JsonValue*>(valueAt(*stopped, "/spec")), "suspend", JsonValue(true),
            stopped->GetAllocator());
  const Admitted restore = admit(engine, *stored, stopped.get());
  EXPECT_EQ(restore.mutation.decision(), Decision::Allowed);
  EXPECT_TRUE(restore.mutation.warnings().empty()) << restore.mutation.warnings().front();
}

}  // namespace
}  // namespace aiadmit
