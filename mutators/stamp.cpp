#include "mutators/stamp.h"

#include <algorithm>

#include "mutators/template_parts.h"

namespace aiadmit {

namespace {

bool setAnnotation(MutationContext& context, const MetadataLocation& where, std::string_view key,
                   std::string_view value) {
  const JsonValue* annotations = member(findMetadata(context.object, where), "annotations");
  const JsonValue* current = member(annotations, key);
  if (current != nullptr && stringOf(current) == value && current->IsString()) return false;
  JsonValue& metadata = ensureMetadata(context.object, where, context.alloc);
  setString(ensureObject(metadata, "annotations", context.alloc), key, value, context.alloc);
  return true;
}

}  // namespace

bool StampMutator::mutate(MutationContext& context) const {
  if (!context.profile.mutations.stamp) return false;
  const std::string_view workloadClass = className(context.classification.workloadClass);
  const std::string& profile = context.profile.name;
  bool changed = false;
  std::span<const MetadataLocation> locations = metadataLocations(context.kind);
  // The object's own metadata comes first; the templates stay as they were.
  if (context.templateUnchanged) locations = locations.first(std::min<size_t>(locations.size(), 1));
  for (const MetadataLocation& where : locations) {
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
