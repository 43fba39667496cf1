// The profile's run-to-completion limits for training and batch Jobs, and for
// the Jobs a CronJob creates (its jobTemplate): backoffLimit,
// activeDeadlineSeconds and ttlSecondsAfterFinished, each when absent.
//
// activeDeadlineSeconds only on a class the developer declared
// (aiadmit.dev/workload, or a profile named by aiadmit.dev/profile): a
// deadline ends the run when it passes, and on a class aiadmit inferred it
// would end a training run that the kind took for batch, or that a sign of
// training only guessed. A notice says it was left out and how to get it.
// backoffLimit and the TTL end nothing that still runs: they apply to any class.
//
// The API server sets a Job's backoffLimit to 6 before admission when the
// manifest leaves it out, so on a Job that value counts as absent (unless
// backoffLimitPerIndex is set, which makes backoffLimit mean something else):
// the row says so (JobSettingPointers::serverBackoffLimit). A CronJob's
// jobTemplate is not defaulted and is read as sent.
#include "mutators/mutator.h"

#include "mutators/template_parts.h"
#include "webhook/codec/json_pointer.h"

namespace aiadmit {

namespace {

// Where a template's Pods keep their Job-level settings, as the row names
// them: a Job's spec, a CronJob's jobTemplate.spec, a PyTorchJob's
// runPolicy, a Volcano Job's maxRetry.
JobSettingPointers settingsOf(const MutationContext& context) {
  if (context.place != nullptr) return context.place->jobSettings;
  const TemplateSlot* slot = context.slot();
  return slot != nullptr ? slot->jobSettings : JobSettingPointers{};
}

// The API server writes its backoffLimit (a Job's 6) into every object that
// leaves it out, so that value is taken as unset; backoffLimitPerIndex means
// the user chose.
bool isServerDefault(const MutationContext& context, const JobSettingPointers& settings,
                     const JsonValue* backoffLimit) {
  if (!settings.serverBackoffLimit || backoffLimit == nullptr) return false;
  if (!settings.backoffLimitPerIndex.empty() &&
      !isUnset(valueAt(context.object, settings.backoffLimitPerIndex))) {
    return false;
  }
  return backoffLimit->IsInt64() && backoffLimit->GetInt64() == *settings.serverBackoffLimit;
}

// "spec.runPolicy.backoffLimit" as the message names it for a custom
// resource; "Job backoffLimit" for a Job or CronJob.
std::string settingName(const MutationContext& context, std::string_view pointer) {
  const size_t slash = pointer.rfind('/');
  const std::string_view field = pointer.substr(slash + 1);
  if (!context.type.customResource) return "Job " + std::string(field);
  return fieldPathOf(context.object, pointer);
}

bool setField(MutationContext& context, std::string_view pointer, int64_t value) {
  const size_t slash = pointer.rfind('/');
  if (slash == std::string_view::npos) return false;
  JsonValue* parent = ensureObjectAt(context.object, pointer.substr(0, slash), context.alloc);
  if (parent == nullptr) return false;
  const std::vector<std::string> tokens = pointerTokens(pointer);
  setMember(*parent, tokens.back(), JsonValue(value), context.alloc);
  context.reportForWorkload("set " + settingName(context, pointer) + "=" + std::to_string(value));
  return true;
}

bool setWhenUnset(MutationContext& context, const std::string& pointer,
                  const std::optional<int64_t>& wanted) {
  if (!wanted || pointer.empty() || !isUnset(valueAt(context.object, pointer))) return false;
  return setField(context, pointer, *wanted);
}

// The profile's deadline on a declared class; on an inferred one, a notice
// that it was left out and why.
bool setDeadline(MutationContext& context, const std::string& pointer,
                 const std::optional<int64_t>& deadline) {
  if (!deadline || pointer.empty() || !isUnset(valueAt(context.object, pointer))) return false;
  if (context.classification.declared()) return setField(context, pointer, *deadline);
  const std::string field = pointerTokens(pointer).back();
  context.noticeForWorkload("left out " + field + "=" + std::to_string(*deadline) +
                            ": class inferred; declare it in " + std::string(kWorkloadAnnotation));
  return false;
}

bool setJobDefaults(MutationContext& context) {
  const WorkloadClass workloadClass = context.classification.workloadClass;
  if (workloadClass != WorkloadClass::Training && workloadClass != WorkloadClass::Batch) {
    return false;
  }
  const JobSettingPointers settings = settingsOf(context);
  if (!settings.any()) return false;
  const JobDefaults& defaults = context.profile.jobDefaults;
  bool changed = false;

  if (defaults.backoffLimit && !settings.backoffLimit.empty()) {
    const JsonValue* current = valueAt(context.object, settings.backoffLimit);
    if (isUnset(current) || (*defaults.backoffLimit != settings.serverBackoffLimit &&
                             isServerDefault(context, settings, current))) {
      changed = setField(context, settings.backoffLimit, *defaults.backoffLimit);
    }
  }
  changed = setDeadline(context, settings.activeDeadlineSeconds, defaults.activeDeadlineSeconds) ||
            changed;
  changed =
      setWhenUnset(context, settings.ttlSecondsAfterFinished, defaults.ttlSecondsAfterFinished) ||
      changed;
  return changed;
}

}  // namespace

extern const MutatorDeclaration kJobDefaultsMutator{
    "job-defaults", {{"jobDefaults"}}, kNoTemplatePart, Runs::OnWorkloads, setJobDefaults};

}  // namespace aiadmit
