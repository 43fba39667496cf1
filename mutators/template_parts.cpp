#include "mutators/template_parts.h"

#include "webhook/codec/json_pointer.h"

namespace aiadmit {

JsonValue* mainContainer(MutationContext& context) {
  const PodReader pod = context.pod();
  const MainContainer main = pod.mainContainer();
  // The reader looks at the copy being edited: its containers are the copy's.
  return main.container == nullptr ? nullptr : const_cast<JsonValue*>(main.container->json);
}

std::vector<std::string> metadataLocations(const MutationContext& context) {
  std::vector<std::string> locations;
  const TemplateSlot* slot = context.slot();
  if (slot == nullptr) return locations;
  const bool pod = context.type.objectIsPod;
  if (pod || !context.madeByController) locations.emplace_back(kObjectMetadata);
  if (pod) return locations;
  // What the object makes before the Pods (a CronJob's Jobs), then the Pods.
  const std::string& between = context.place != nullptr ? context.place->intermediateMetadataPointer
                                                        : slot->intermediateMetadata;
  if (!between.empty()) locations.push_back(between);
  const std::string& own =
      context.place != nullptr ? context.place->metadataPointer : slot->metadata;
  if (!own.empty() && own != kObjectMetadata) locations.push_back(own);
  return locations;
}

const JsonValue* findMetadata(const JsonValue& object, std::string_view pointer) {
  return valueAt(object, pointer);
}

JsonValue* ensureMetadata(JsonValue& object, std::string_view pointer, JsonAllocator& alloc) {
  return ensureObjectAt(object, pointer, alloc);
}

bool addMetadataEntryIfAbsent(JsonValue& object, std::string_view pointer, std::string_view field,
                              std::string_view key, std::string_view value, JsonAllocator& alloc) {
  const JsonValue* entries = member(findMetadata(object, pointer), field);
  if (member(entries, key) != nullptr) return false;
  JsonValue* metadata = ensureMetadata(object, pointer, alloc);
  if (metadata == nullptr) return false;
  setString(ensureObject(*metadata, field, alloc), key, value, alloc);
  return true;
}

bool isUnset(const JsonValue* value) {
  return value == nullptr || value->IsNull();
}

}  // namespace aiadmit
