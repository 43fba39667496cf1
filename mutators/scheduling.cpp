#include "mutators/scheduling.h"

#include "mutators/template_parts.h"

namespace aiadmit {

namespace {

constexpr std::string_view kApiDefaultScheduler = "default-scheduler";

bool setPriorityClass(MutationContext& context) {
  const std::string& wanted = context.profile.scheduling.priorityClassName;
  if (wanted.empty()) return false;
  const JsonValue* spec = context.view().spec;
  if (!stringMember(spec, "priorityClassName").empty()) return false;
  if (context.kind == WorkloadKind::Pod && !isUnset(member(spec, "priority"))) return false;
  setString(context.podSpec(), "priorityClassName", wanted, context.alloc);
  context.report("set priorityClassName " + wanted);
  return true;
}

bool setSchedulerName(MutationContext& context) {
  const std::string& wanted = context.profile.scheduling.schedulerName;
  if (wanted.empty()) return false;
  const std::string_view current = stringMember(context.view().spec, "schedulerName");
  if (current == wanted) return false;
  if (!current.empty() && current != kApiDefaultScheduler) return false;
  setString(context.podSpec(), "schedulerName", wanted, context.alloc);
  context.report("set schedulerName " + wanted +
                 (current.empty() ? "" : " in place of " + std::string(current)));
  return true;
}

bool addMetadataEntries(MutationContext& context, std::string_view field, std::string_view singular,
                        const std::map<std::string, std::string>& entries) {
  bool changed = false;
  for (const auto& [key, value] : entries) {
    bool added = false;
    for (const MetadataLocation& where : metadataLocations(context.kind)) {
      added = addMetadataEntryIfAbsent(context.object, where, field, key, value, context.alloc) ||
              added;
    }
    if (!added) continue;
    context.report("added " + std::string(singular) + " " + key + "=" + value);
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
