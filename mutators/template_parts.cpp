#include "mutators/template_parts.h"

namespace aiadmit {

JsonValue* mainContainer(MutationContext& context) {
  const PodReader pod = context.pod();
  const MainContainer main = pod.mainContainer();
  // The reader looks at the copy being edited: its containers are the copy's.
  return main.container == nullptr ? nullptr : const_cast<JsonValue*>(main.container->json);
}

namespace {

constexpr MetadataLocation kObject{{"metadata"}, 1};
constexpr MetadataLocation kPodTemplate{{"spec", "template", "metadata"}, 3};
constexpr MetadataLocation kJobTemplate{{"spec", "jobTemplate", "metadata"}, 3};
constexpr MetadataLocation kCronJobPodTemplate{
    {"spec", "jobTemplate", "spec", "template", "metadata"}, 5};

constexpr MetadataLocation kPodLocations[] = {kObject};
constexpr MetadataLocation kControllerLocations[] = {kObject, kPodTemplate};
constexpr MetadataLocation kCronJobLocations[] = {kObject, kJobTemplate, kCronJobPodTemplate};

}  // namespace

std::span<const MetadataLocation> metadataLocations(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::Pod:
      return kPodLocations;
    case WorkloadKind::CronJob:
      return kCronJobLocations;
    case WorkloadKind::Other:
      return {};
    default:
      return kControllerLocations;
  }
}

const JsonValue* findMetadata(const JsonValue& object, const MetadataLocation& where) {
  const JsonValue* node = &object;
  for (std::string_view key : where.keys()) node = member(node, key);
  return node;
}

JsonValue& ensureMetadata(JsonValue& object, const MetadataLocation& where, JsonAllocator& alloc) {
  JsonValue* node = &object;
  for (std::string_view key : where.keys()) node = &ensureObject(*node, key, alloc);
  return *node;
}

bool addMetadataEntryIfAbsent(JsonValue& object, const MetadataLocation& where,
                              std::string_view field, std::string_view key, std::string_view value,
                              JsonAllocator& alloc) {
  const JsonValue* entries = member(findMetadata(object, where), field);
  if (member(entries, key) != nullptr) return false;
  JsonValue& metadata = ensureMetadata(object, where, alloc);
  setString(ensureObject(metadata, field, alloc), key, value, alloc);
  return true;
}

bool isUnset(const JsonValue* value) {
  return value == nullptr || value->IsNull();
}

}  // namespace aiadmit
