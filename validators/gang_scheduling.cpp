#include "validators/validator.h"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "webhook/codec/json_pointer.h"

namespace aiadmit {

namespace {

bool hasLabel(const JsonValue* metadata, std::string_view key) {
  return !stringOf(member(member(metadata, "labels"), key)).empty();
}

struct Workers {
  int64_t count = 1;
  std::string field;
  std::string why;  // "parallelism 4"
};

int64_t integerAt(const JsonValue& object, const std::string& pointer, int64_t fallback) {
  const JsonValue* value = valueAt(object, pointer);
  return value != nullptr && value->IsInt64() ? value->GetInt64() : fallback;
}

// How many GPU Pods of a Kubernetes kind must be up together: its template's
// count (a controller's replicas, a Job's parallelism), at most the Pods
// that must finish where the row names them (a Job's completions: an
// Indexed Job runs its indexes one at a time unless parallelism says
// otherwise). A bare Pod is one.
Workers builtInWorkers(const ValidationContext& context) {
  Workers workers;
  const TemplateSlot* slot = context.view.slot;
  if (slot == nullptr || !slot->replicas || slot->replicas->empty()) return workers;
  const ReplicaFactor& factor = slot->replicas->front();
  int64_t together = integerAt(context.object, factor.pointer, factor.defaultValue.value_or(1));
  if (!slot->completions.empty()) {
    const int64_t completions = integerAt(context.object, slot->completions, together);
    together = std::min(together, std::max<int64_t>(completions, 1));
  }
  if (together > 1) {
    const std::vector<std::string> tokens = pointerTokens(factor.pointer);
    workers = {together, fieldPathOf(context.object, factor.pointer),
               tokens.back() + " " + std::to_string(together)};
  }
  return workers;
}

// The GPU Pods of a custom resource: each template that asks for an
// accelerator (by extended resource or DRA claim), times its Pod count ("Worker ×8"); the field is
// the largest role's template. A role whose count the object does not say is left out.
Workers customResourceWorkers(const ValidationContext& context) {
  Workers workers;
  workers.count = 0;
  int64_t largest = 0;
  for (const TemplateReading& reading : context.templates) {
    if (reading.view.place == nullptr || !reading.view.place->replicas) continue;
    const int64_t pods = *reading.view.place->replicas;
    if (pods <= 0 || !reading.pod.asksForGpus()) continue;
    workers.count = pods > std::numeric_limits<int64_t>::max() - workers.count
                        ? std::numeric_limits<int64_t>::max()
                        : workers.count + pods;
    if (!workers.why.empty()) workers.why += ", ";
    workers.why += std::string(reading.view.role()) + " ×" + std::to_string(pods);
    if (pods > largest) {
      largest = pods;
      workers.field = reading.view.specFieldPath();
    }
  }
  return workers;
}

// GPUs by extended resource or by DRA claim.
bool asksForGpus(const ValidationContext& context) {
  for (const TemplateReading& reading : context.templates) {
    if (reading.pod.asksForGpus()) return true;
  }
  return context.pod.asksForGpus();
}

// Whether the workload asks for the gang scheduler: on a template, or on the
// custom resource itself (a Volcano Job's spec.schedulerName).
bool usesScheduler(const ValidationContext& context, std::string_view schedulerName) {
  if (stringMember(context.view.spec, "schedulerName") == schedulerName) return true;
  if (context.view.isCustomResource() &&
      stringMember(member(&context.object, "spec"), "schedulerName") == schedulerName) {
    return true;
  }
  for (const TemplateReading& reading : context.templates) {
    if (reading.pod.asksForGpus() &&
        stringMember(reading.view.spec, "schedulerName") == schedulerName) {
      return true;
    }
  }
  return false;
}

// Whether any value matches the pointer pattern `tokens` (from `at`), `*`
// matching every member or element.
bool presentAt(const JsonValue* value, const std::vector<std::string>& tokens, size_t at) {
  if (value == nullptr) return false;
  if (at == tokens.size()) return true;
  if (tokens[at] != "*") return presentAt(childAt(value, tokens[at]), tokens, at + 1);
  if (value->IsObject()) {
    for (const auto& item : value->GetObject()) {
      if (presentAt(&item.value, tokens, at + 1)) return true;
    }
  } else if (value->IsArray()) {
    for (const JsonValue& item : value->GetArray()) {
      if (presentAt(&item, tokens, at + 1)) return true;
    }
  }
  return false;
}

// Whether any of the pointer patterns matches a value of `object`.
bool anyPresent(const JsonValue& object, const std::vector<std::string>& patterns) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& pattern) {
    return presentAt(&object, pointerTokens(pattern), 0);
  });
}

// The operator gang-schedules the Pods itself: its own scheduler field names
// the profile's gang scheduler (a Volcano Job's spec.schedulerName, KubeRay's
// ray.io/scheduler-name label), or a field it gang-schedules by is present
// (a Kubeflow job's runPolicy.schedulingPolicy, a Volcano Job's minAvailable,
// JobSet's exclusive topology). The operator's queue field (Volcano's
// spec.queue) is that scheduler's queue once the scheduler field names it,
// which the first check already holds; alone it proves nothing, since
// Volcano's CRD defaults it to "default".
bool operatorGangSchedules(const ValidationContext& context, const GangScheduling& gang) {
  if (context.view.type == nullptr) return false;
  const SchedulingFields& fields = context.view.type->scheduling;
  if (!gang.schedulerName.empty() && !fields.schedulerName.empty() &&
      stringOf(valueAt(context.object, fields.schedulerName)) == gang.schedulerName) {
    return true;
  }
  return anyPresent(context.object, fields.gang);
}

// Kubernetes' own gang (1.35+): the Pods of a GPU template belong to a
// PodGroup (spec.schedulingGroup.podGroupName since 1.36, spec.workloadRef in
// 1.35), which kube-scheduler places as a whole when its policy is a gang, or
// the controller makes one with a gang policy for them (a Job's
// spec.scheduling.schedulingPolicy.gang). A group named in a template may not
// exist yet, and its policy is the group's: what the developer declared is
// taken at its word.
bool nativeGang(const ValidationContext& context) {
  for (const TemplateReading& reading : context.templates) {
    if (!reading.pod.asksForGpus()) continue;
    if (!podGroupOf(reading.view.spec).empty()) return true;
  }
  return context.view.type != nullptr &&
         anyPresent(context.object, context.view.type->scheduling.nativeGang);
}

// Where the fix names the scheduler: the operator's own field when the kind
// has one (it gives the scheduler to every Pod), else the pod template.
std::string schedulerFix(const ValidationContext& context, const std::string& schedulerName) {
  const WorkloadType* type = context.view.type;
  if (type != nullptr && !type->scheduling.schedulerName.empty() &&
      context.view.isCustomResource()) {
    return "set " + fieldPathOf(context.object, type->scheduling.schedulerName) + ": " +
           schedulerName;
  }
  return "set schedulerName: " + schedulerName + " in the pod template";
}

// How to make the Pods a gang of Kubernetes' own: a Job asks its controller
// for one; any other kind names a PodGroup in its pod template.
std::string nativeGangFix(const ValidationContext& context) {
  const WorkloadType* type = context.view.type;
  if (type != nullptr && !type->scheduling.nativeGang.empty()) {
    return "set " + fieldPathOf(context.object, type->scheduling.nativeGang.front()) +
           ".minCount (Kubernetes 1.36+, WorkloadWithJob)";
  }
  return "name a PodGroup whose schedulingPolicy is a gang in the pod template's "
         "schedulingGroup.podGroupName (Kubernetes 1.36+, GenericWorkload)";
}

// AIA010: distributed GPU training without gang scheduling can start in
// part and hold GPUs while the rest waits, where the profile requires it. A
// GPU worker asks for GPUs by extended resource or by DRA claim.
void checkGangScheduling(const ValidationContext& context, std::vector<Violation>& out) {
  const Profile* profile = context.profile;
  if (profile == nullptr || !profile->scheduling.gang.required) return;
  if (context.classification.workloadClass != WorkloadClass::Training) return;
  const GangScheduling& gang = profile->scheduling.gang;
  if (!gang.schedulerName.empty() && usesScheduler(context, gang.schedulerName)) return;
  if (operatorGangSchedules(context, gang)) return;
  if (gang.native && nativeGang(context)) return;
  if (!gang.queueLabel.empty() && (hasLabel(member(&context.object, "metadata"), gang.queueLabel) ||
                                   hasLabel(context.view.metadata, gang.queueLabel))) {
    return;
  }
  const Workers workers =
      context.view.isCustomResource() ? customResourceWorkers(context) : builtInWorkers(context);
  if (workers.count <= 1 || !asksForGpus(context)) return;

  std::string fix;
  std::string means;  // the same, in a few words
  if (!gang.schedulerName.empty()) {
    fix = schedulerFix(context, gang.schedulerName);
    means = "schedulerName " + gang.schedulerName;
  }
  if (!gang.queueLabel.empty()) {
    fix += (fix.empty() ? "add" : ", or add") + std::string(" the label ") + gang.queueLabel;
    means += (means.empty() ? "label " : " or label ") + gang.queueLabel;
  }
  // A profile that recognises Kubernetes' own gang alone: the fix is one.
  if (fix.empty()) {
    fix = nativeGangFix(context);
    means = "a PodGroup with a gang policy";
  }
  const std::string workerCount = std::to_string(workers.count) + " GPU workers";
  out.push_back({workers.field,
                 workerCount + " (" + workers.why +
                     ") without gang scheduling can start in part and hold GPUs idle",
                 std::move(fix), workerCount + " need gang scheduling: " + means});
}

}  // namespace

extern const ValidatorDeclaration kGangSchedulingValidator{.name = "gang-scheduling",
                                                           .onceForWorkload = checkGangScheduling};

}  // namespace aiadmit
