#include "mutators/scheduling.h"

#include <optional>
#include <string>

#include "mutators/template_parts.h"
#include "webhook/kube/cluster_view.h"

namespace aiadmit {

namespace {

constexpr std::string_view kApiDefaultScheduler = "default-scheduler";
// Where the install keeps the PriorityClasses of the shipped profiles.
constexpr std::string_view kPriorityClassesComponent = "manifests/components/priority-classes";

bool setPriorityClass(MutationContext& context) {
  const std::string& wanted = context.profile.scheduling.priorityClassName;
  if (wanted.empty() || !context.mayInject(kInjectPriority)) return false;
  const JsonValue* spec = context.view().spec;
  if (!stringMember(spec, "priorityClassName").empty()) return false;
  if (context.kind == WorkloadKind::Pod && !isUnset(member(spec, "priority"))) return false;
  // The API server refuses a Pod whose class does not exist: injecting it
  // would turn an admissible workload into one whose every Pod is refused.
  // Only a definite "no" counts; a view that cannot tell keeps the profile.
  if (context.cluster != nullptr && context.cluster->hasPriorityClass(wanted) == Presence::No) {
    context.notice("no PriorityClass " + wanted + ", not set; see " +
                   std::string(kPriorityClassesComponent));
    return false;
  }
  setString(context.podSpec(), "priorityClassName", wanted, context.alloc);
  context.report("set priorityClassName " + wanted);
  return true;
}

bool setSchedulerName(MutationContext& context) {
  const std::string& wanted = context.profile.scheduling.schedulerName;
  if (wanted.empty() || !context.mayInject(kInjectScheduler)) return false;
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

}  // namespace

bool SchedulingMutator::mutate(MutationContext& context) const {
  if (!context.profile.mutations.scheduling) return false;
  const Scheduling& scheduling = context.profile.scheduling;
  bool changed = setPriorityClass(context);
  changed = setSchedulerName(context) || changed;
  changed = addMetadataEntries(context, "labels", "label", scheduling.labels) || changed;
  changed =
      addMetadataEntries(context, "annotations", "annotation", scheduling.annotations) || changed;
  return changed;
}

}  // namespace aiadmit
