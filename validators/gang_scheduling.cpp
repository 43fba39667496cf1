#include "validators/gang_scheduling.h"

#include <algorithm>

namespace aiadmit {

namespace {

int64_t integerMember(const JsonValue* object, std::string_view key, int64_t fallback) {
  const JsonValue* value = member(object, key);
  return value != nullptr && value->IsInt64() ? value->GetInt64() : fallback;
}

bool hasLabel(const JsonValue* metadata, std::string_view key) {
  return !stringOf(member(member(metadata, "labels"), key)).empty();
}

struct Workers {
  int64_t count = 1;
  std::string field;
  std::string why;  // "parallelism 4"
};

// How many GPU Pods of this run must be up together: the Pods of a Job that
// run at the same time (parallelism, at most completions; an Indexed Job runs
// its indexes one at a time unless parallelism says otherwise); the replicas
// of a controller.
Workers workersOf(const ValidationContext& context) {
  Workers workers;
  if (isJobLike(context.kind)) {
    const JsonValue* job = context.view.jobSpec;
    const int64_t parallelism = integerMember(job, "parallelism", 1);
    const int64_t completions = integerMember(job, "completions", parallelism);
    const int64_t together = std::min(parallelism, std::max<int64_t>(completions, 1));
    if (together > 1) {
      workers = {together, jobSpecFieldPath(context.kind, "parallelism"),
                 "parallelism " + std::to_string(together)};
    }
  } else if (context.kind != WorkloadKind::Pod) {
    const int64_t replicas = integerMember(member(&context.object, "spec"), "replicas", 1);
    if (replicas > 1) {
      workers = {replicas, "spec.replicas", "replicas " + std::to_string(replicas)};
    }
  }
  return workers;
}

}  // namespace

void GangSchedulingValidator::check(const ValidationContext& context,
                                    std::vector<Violation>& out) const {
  const Profile* profile = context.profile;
  if (profile == nullptr || !profile->scheduling.gang.required) return;
  if (context.classification.workloadClass != WorkloadClass::Training) return;
  const GangScheduling& gang = profile->scheduling.gang;
  const std::string_view schedulerName = stringMember(context.view.spec, "schedulerName");
  if (!gang.schedulerName.empty() && schedulerName == gang.schedulerName) return;
  if (!gang.queueLabel.empty() && (hasLabel(member(&context.object, "metadata"), gang.queueLabel) ||
                                   hasLabel(context.view.metadata, gang.queueLabel))) {
    return;
  }
  const Workers workers = workersOf(context);
  if (workers.count <= 1 || !context.pod.asksForAccelerator()) return;

  std::string fix;
  std::string means;  // the same, in a few words
  if (!gang.schedulerName.empty()) {
    fix = "set schedulerName: " + gang.schedulerName + " in the pod template";
    means = "schedulerName " + gang.schedulerName;
  }
  if (!gang.queueLabel.empty()) {
    fix += (fix.empty() ? "add" : ", or add") + std::string(" the label ") + gang.queueLabel;
    means += (means.empty() ? "label " : " or label ") + gang.queueLabel;
  }
  const std::string workerCount = std::to_string(workers.count) + " GPU workers";
  out.push_back({AIA010, workers.field,
                 workerCount + " (" + workers.why +
                     ") without gang scheduling can start in part and hold GPUs idle",
                 std::move(fix), workerCount + " need gang scheduling: " + means});
}

}  // namespace aiadmit
