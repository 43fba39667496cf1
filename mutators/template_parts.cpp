#include "mutators/template_parts.h"

namespace aiadmit {

JsonValue* mainContainer(MutationContext& context) {
  JsonValue* containers = member(context.existingPodSpec(), "containers");
  if (!isArray(containers) || containers->Empty()) return nullptr;
  const std::string_view named = workloadAnnotation(context.view(), kGpuContainerAnnotation);
  if (named.empty()) return (*containers)[0].IsObject() ? &(*containers)[0] : nullptr;
  for (JsonValue& container : containers->GetArray()) {
    if (stringMember(&container, "name") == named) return &container;
  }
  return nullptr;
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
