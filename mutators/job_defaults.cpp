#include "mutators/job_defaults.h"

#include "mutators/template_parts.h"

namespace aiadmit {

namespace {

constexpr int64_t kApiDefaultBackoffLimit = 6;

bool isApiDefaultBackoffLimit(const MutationContext& context, const JsonValue* jobSpec) {
  if (context.kind != WorkloadKind::Job) return false;
  if (!isUnset(member(jobSpec, "backoffLimitPerIndex"))) return false;
  const JsonValue* backoffLimit = member(jobSpec, "backoffLimit");
  return backoffLimit->IsInt64() && backoffLimit->GetInt64() == kApiDefaultBackoffLimit;
}

bool setField(MutationContext& context, std::string_view field, int64_t value) {
  JsonValue& jobSpec = ensureJobSpec(context.object, context.kind, context.alloc);
  setMember(jobSpec, field, JsonValue(value), context.alloc);
  context.report("set Job " + std::string(field) + "=" + std::to_string(value));
  return true;
}

}  // namespace

bool JobDefaultsMutator::mutate(MutationContext& context) const {
  if (!context.profile.mutations.jobDefaults || !isJobLike(context.kind)) return false;
  const WorkloadClass workloadClass = context.classification.workloadClass;
  if (workloadClass != WorkloadClass::Training && workloadClass != WorkloadClass::Batch) {
    return false;
  }
  const JobDefaults& defaults = context.profile.jobDefaults;
  bool changed = false;

  if (defaults.backoffLimit) {
    const JsonValue* jobSpec = context.view().jobSpec;
    const JsonValue* current = member(jobSpec, "backoffLimit");
    if (isUnset(current) || (*defaults.backoffLimit != kApiDefaultBackoffLimit &&
                             isApiDefaultBackoffLimit(context, jobSpec))) {
      changed = setField(context, "backoffLimit", *defaults.backoffLimit);
    }
  }
  if (defaults.activeDeadlineSeconds &&
      isUnset(member(context.view().jobSpec, "activeDeadlineSeconds"))) {
    changed =
        setField(context, "activeDeadlineSeconds", *defaults.activeDeadlineSeconds) || changed;
  }
  if (defaults.ttlSecondsAfterFinished &&
      isUnset(member(context.view().jobSpec, "ttlSecondsAfterFinished"))) {
    changed =
        setField(context, "ttlSecondsAfterFinished", *defaults.ttlSecondsAfterFinished) || changed;
  }
  return changed;
}

}  // namespace aiadmit
