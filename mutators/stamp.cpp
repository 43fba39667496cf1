// Records the decision on the workload: aiadmit.dev/class and
// aiadmit.dev/profile on the object and on every template below it, so that
// the ReplicaSets, Jobs and Pods that controllers create from it are
// recognised with the same class and profile, and need no further patch.
// These annotations are aiadmit's own: a stale value is brought up to date.
// On an UPDATE that left the template unchanged, only the object is stamped.
#include "mutators/mutator.h"

#include <algorithm>

#include "mutators/template_parts.h"
#include "webhook/model/annotations.h"

namespace aiadmit {

namespace {

bool setAnnotation(JsonValue& object, std::string_view where, std::string_view key,
                   std::string_view value, JsonAllocator& alloc) {
  const JsonValue* annotations = member(findMetadata(object, where), "annotations");
  const JsonValue* current = member(annotations, key);
  if (current != nullptr && stringOf(current) == value && current->IsString()) return false;
  JsonValue* metadata = ensureMetadata(object, where, alloc);
  if (metadata == nullptr) return false;
  setString(ensureObject(*metadata, "annotations", alloc), key, value, alloc);
  return true;
}

bool setAnnotation(MutationContext& context, std::string_view where, std::string_view key,
                   std::string_view value) {
  return setAnnotation(context.object, where, key, value, context.alloc);
}

bool stampDecision(MutationContext& context) {
  const std::string_view workloadClass = className(context.classification.workloadClass);
  const std::string& profile = context.profile.name;
  bool objectChanged = false;
  bool templateChanged = false;
  std::vector<std::string> locations = metadataLocations(context);
  // Only the object's own metadata then; the templates stay as they were.
  if (context.templateUnchanged) {
    std::erase_if(locations, [](const std::string& where) { return where != kObjectMetadata; });
  }
  for (const std::string& where : locations) {
    bool& changed = where == kObjectMetadata ? objectChanged : templateChanged;
    changed = setAnnotation(context, where, kClassAnnotation, workloadClass) || changed;
    changed = setAnnotation(context, where, kProfileAnnotation, profile) || changed;
  }
  const std::string stamped = "stamped " + annotationSetting(kClassAnnotation, workloadClass) +
                              " and " + std::string(kProfileAnnotation);
  // The object's own metadata belongs to no template: its change names no role.
  if (templateChanged) {
    context.report(stamped);
  } else if (objectChanged) {
    context.reportForWorkload(stamped);
  }
  return objectChanged || templateChanged;
}

}  // namespace

bool recordPendingClass(JsonValue& object, const Resolution& resolution,
                        WorkloadClass workloadClass, JsonAllocator& alloc) {
  const std::string_view value = className(workloadClass);
  bool changed = setAnnotation(object, kObjectMetadata, kClassAnnotation, value, alloc);
  for (const ResolvedTemplate& place : resolution.templates) {
    for (const std::string* where : {&place.intermediateMetadataPointer, &place.metadataPointer}) {
      if (where->empty() || *where == kObjectMetadata) continue;
      changed = setAnnotation(object, *where, kClassAnnotation, value, alloc) || changed;
    }
  }
  return changed;
}

extern const MutatorDeclaration kStampMutator{
    "stamp", {{"stamp"}}, kInjectStamps, Runs::AlsoOnUnchangedTemplates, stampDecision};

}  // namespace aiadmit
