#include "mutators/stamp.h"

#include <algorithm>

#include "mutators/template_parts.h"

namespace aiadmit {

namespace {

bool setAnnotation(MutationContext& context, std::string_view where, std::string_view key,
                   std::string_view value) {
  const JsonValue* annotations = member(findMetadata(context.object, where), "annotations");
  const JsonValue* current = member(annotations, key);
  if (current != nullptr && stringOf(current) == value && current->IsString()) return false;
  JsonValue* metadata = ensureMetadata(context.object, where, context.alloc);
  if (metadata == nullptr) return false;
  setString(ensureObject(*metadata, "annotations", context.alloc), key, value, context.alloc);
  return true;
}

}  // namespace

bool StampMutator::mutate(MutationContext& context) const {
  if (!context.profile.mutations.stamp || !context.mayInject(kInjectStamps)) return false;
  const std::string_view workloadClass = className(context.classification.workloadClass);
  const std::string& profile = context.profile.name;
  bool changed = false;
  std::vector<std::string> locations = metadataLocations(context);
  // Only the object's own metadata then; the templates stay as they were.
  if (context.templateUnchanged) {
    std::erase_if(locations, [](const std::string& where) { return where != kObjectMetadata; });
  }
  for (const std::string& where : locations) {
    changed = setAnnotation(context, where, kClassAnnotation, workloadClass) || changed;
    changed = setAnnotation(context, where, kProfileAnnotation, profile) || changed;
  }
  if (changed) {
    context.report("stamped aiadmit.dev/class=" + std::string(workloadClass) +
                   " and aiadmit.dev/profile");
  }
  return changed;
}

}  // namespace aiadmit
