// The profile's scheduling defaults, each only where the workload has not
// chosen: priorityClassName and schedulerName on the pod spec, labels and
// annotations (a Kueue queue, a Volcano group) on the object and on every
// template below it, so that what controllers create carries them too. All
// levels get one value: the workload's own when it has one at any level.
//
// Two fields are never absent by the time a webhook sees them, and are read
// the way the API server leaves them:
// - schedulerName is defaulted to "default-scheduler" before admission, so
//   that value counts as not chosen;
// - a bare Pod's priority is resolved from its priorityClassName (or the
//   global default) before admission. A class added afterwards would not
//   change the priority the scheduler uses, so a Pod that already carries a
//   resolved priority gets no class. Pods created from a template that has
//   the class are resolved with it.
//
// Where the kind's row names the operator's own scheduler or priority field
// (WorkloadType::scheduling), a field of the object's spec that the operator
// gives every Pod (a Volcano Job's spec.priorityClassName and
// spec.schedulerName) gets the profile's value instead of the templates, once
// for the workload. A field it only reads (KubeRay's labels, a Kubeflow
// job's schedulingPolicy.priorityClass) is not written; when it holds a class
// the profile allows, the templates get that class, not the profile's.
//
// A priority class the cluster view says does not exist is not injected
// (the API server would refuse every Pod that names it); a notice says so.
// A view that cannot tell, or none, leaves the profile's class to be set.
#include "mutators/mutator.h"

#include <optional>
#include <string>
#include <vector>

#include "mutators/template_parts.h"
#include "webhook/cluster/cluster_view.h"
#include "webhook/codec/json_pointer.h"
#include "webhook/model/workload_update.h"

namespace aiadmit {

namespace {

constexpr std::string_view kApiDefaultScheduler = "default-scheduler";
// Where the install keeps the PriorityClasses of the shipped profiles.
constexpr std::string_view kPriorityClassesComponent = "manifests/components/priority-classes";

// The row's field for the scheduler or the priority class (SchedulingFields).
// Written instead of the templates only when it is the operator's own spec
// field that it gives every Pod (Volcano's): a label works only where the
// operator runs with the integration that reads it (KubeRay's batch
// scheduler), and a field inside a gang pattern (Kubeflow's
// schedulingPolicy.priorityClass) names only the PodGroup's class, and
// writing it would claim gang scheduling the workload does not have.
struct OperatorField {
  std::string pointer;  // "" when the kind has none
  bool writable = false;
  std::string_view value;  // the workload's, "" when unset
};

OperatorField operatorField(const MutationContext& context, std::string SchedulingFields::*which) {
  const SchedulingFields& fields = context.type.scheduling;
  OperatorField field{fields.*which, false, {}};
  if (field.pointer.empty()) return field;
  const std::vector<std::string> tokens = pointerTokens(field.pointer);
  field.writable = tokens.size() == 2 && tokens[0] == "spec";
  for (const std::string& pattern : fields.gang) {
    if (pointerWithin(field.pointer, pattern)) field.writable = false;
  }
  field.value = stringOf(valueAt(context.object, field.pointer));
  return field;
}

// Whether a template of the workload names `key` in its pod spec.
bool aTemplateNames(const MutationContext& context, std::string_view key) {
  for (const ResolvedTemplate& place : resolveTemplates(context.type, context.object).templates) {
    if (!stringMember(place.spec, key).empty()) return true;
  }
  return false;
}

// A notice about the workload as a whole, which names no template.
void noticeForWorkload(const MutationContext& context, std::string text) {
  MutationContext whole = context;  // shares the notices
  whole.severalTemplates = false;
  whole.notice(std::move(text));
}

// The API server refuses a Pod whose class does not exist: injecting it would
// turn an admissible workload into one whose every Pod is refused. Only a
// definite "no" counts; a view that cannot tell keeps the profile's class.
bool clusterLacks(const MutationContext& context, const std::string& name) {
  return context.cluster != nullptr && context.cluster->hasPriorityClass(name) == Presence::No;
}

std::string lacksNotice(const std::string& name) {
  return "no PriorityClass " + name + ", not set; see " + std::string(kPriorityClassesComponent);
}

// Sets the string at the operator's field (its parent is the object's spec).
void setAt(MutationContext& context, const std::string& pointer, const std::string& value) {
  JsonValue* parent = ensureObjectAt(context.object, "/spec", context.alloc);
  if (parent == nullptr) return;
  setString(*parent, pointerTokens(pointer).back(), value, context.alloc);
  context.reportForWorkload("set " + fieldPathOf(context.object, pointer) + " " + value);
}

// The profile's class at the operator's own field, once for the workload (on
// its main template) and only where no template names one, so the Pods and
// their group never get different classes.
bool setOperatorPriorityClass(MutationContext& context, const OperatorField& field,
                              const std::string& wanted) {
  if (!field.value.empty() || !context.primaryTemplate) return false;
  if (aTemplateNames(context, "priorityClassName")) return false;
  if (clusterLacks(context, wanted)) {
    noticeForWorkload(context, lacksNotice(wanted));
    return false;
  }
  setAt(context, field.pointer, wanted);
  return true;
}

bool setPriorityClass(MutationContext& context) {
  std::string wanted = context.profile.scheduling.priorityClassName;
  if (wanted.empty() || !context.mayInject(kInjectPriority)) return false;
  const OperatorField field = operatorField(context, &SchedulingFields::priorityClassName);
  if (field.writable) return setOperatorPriorityClass(context, field, wanted);
  // A field the operator reads but aiadmit does not write: the templates get
  // its class, never one that contradicts it (nothing when the profile does
  // not allow it: AIA011 says so).
  const bool own = !field.value.empty();
  if (own) {
    if (!context.profile.allowsPriorityClass(field.value)) return false;
    wanted = std::string(field.value);
  }
  const JsonValue* spec = context.view().spec;
  if (!stringMember(spec, "priorityClassName").empty()) return false;
  if (context.type.objectIsPod && !isUnset(member(spec, "priority"))) return false;
  // The Pods of a PodGroup take its priority (spec.priorityClassName of the
  // group): with any other the scheduler places none of them.
  if (const std::string_view group = podGroupOf(spec); !group.empty()) {
    context.notice("priorityClassName left to PodGroup " + std::string(group) +
                   ", whose priority its Pods must have");
    return false;
  }
  if (clusterLacks(context, wanted)) {
    context.notice(lacksNotice(wanted));
    return false;
  }
  setString(context.podSpec(), "priorityClassName", wanted, context.alloc);
  context.report("set priorityClassName " + wanted + (own ? " as the workload has it" : ""));
  return true;
}

bool setSchedulerName(MutationContext& context) {
  const std::string& wanted = context.profile.scheduling.schedulerName;
  if (wanted.empty() || !context.mayInject(kInjectScheduler)) return false;
  const OperatorField field = operatorField(context, &SchedulingFields::schedulerName);
  if (field.writable) {
    // What the workload names there is its choice (no API server defaults
    // a custom resource's field); templates that name one keep it.
    if (!field.value.empty() || !context.primaryTemplate) return false;
    setAt(context, field.pointer, wanted);
    return true;
  }
  const std::string_view current = stringMember(context.view().spec, "schedulerName");
  if (current == wanted) return false;
  if (!current.empty() && current != kApiDefaultScheduler) return false;
  setString(context.podSpec(), "schedulerName", wanted, context.alloc);
  context.report("set schedulerName " + wanted +
                 (current.empty() ? "" : " in place of " + std::string(current)));
  return true;
}

// The value the workload already gives `key` at some level, when all levels
// that have it agree; nullopt when none has it. `conflict` is set when levels
// disagree: then no level gets a value, the workload's or the profile's.
std::optional<std::string_view> workloadValue(MutationContext& context, std::string_view field,
                                              std::string_view key, bool& conflict) {
  std::optional<std::string_view> found;
  conflict = false;
  for (const std::string& where : metadataLocations(context)) {
    const JsonValue* value = member(member(findMetadata(context.object, where), field), key);
    if (value == nullptr) continue;
    const std::string_view text = stringOf(value);
    if (found && *found != text) conflict = true;
    if (!found) found = text;
  }
  return found;
}

// A label or annotation describes the whole workload, and its consumer reads
// it at one level (Kueue the queue on a Job, a Deployment or a Pod; every
// controller copies its template's onto what it creates). Every level gets
// the same value: the workload's own when it has one anywhere, else the
// profile's; never a value that contradicts another level.
bool addMetadataEntries(MutationContext& context, std::string_view field, std::string_view singular,
                        const std::map<std::string, std::string>& entries) {
  bool changed = false;
  if (!context.mayInject(kInjectStamps)) return false;
  for (const auto& [key, profileValue] : entries) {
    bool conflict = false;
    const auto own = workloadValue(context, field, key, conflict);
    if (conflict) continue;
    const std::string value(own.value_or(profileValue));
    bool added = false;
    for (const std::string& where : metadataLocations(context)) {
      added = addMetadataEntryIfAbsent(context.object, where, field, key, value, context.alloc) ||
              added;
    }
    if (!added) continue;
    context.report("added " + std::string(singular) + " " + key + "=" + value +
                   (own ? " as the workload has it" : ""));
    changed = true;
  }
  return changed;
}

bool setSchedulingDefaults(MutationContext& context) {
  const Scheduling& scheduling = context.profile.scheduling;
  bool changed = setPriorityClass(context);
  changed = setSchedulerName(context) || changed;
  changed = addMetadataEntries(context, "labels", "label", scheduling.labels) || changed;
  changed =
      addMetadataEntries(context, "annotations", "annotation", scheduling.annotations) || changed;
  return changed;
}

}  // namespace

extern const MutatorDeclaration kSchedulingMutator{
    "scheduling",
    {{"scheduling"}},
    kInjectPriority | kInjectScheduler | kInjectStamps,
    Runs::OnWorkloads,
    setSchedulingDefaults};

}  // namespace aiadmit
