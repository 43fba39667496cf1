#include "webhook/model/workload.h"

#include <algorithm>
#include <cctype>

namespace aiadmit {

std::string_view operationName(Operation operation) {
  switch (operation) {
    case Operation::Create:
      return "CREATE";
    case Operation::Update:
      return "UPDATE";
    case Operation::Delete:
      return "DELETE";
    case Operation::Connect:
      return "CONNECT";
    case Operation::Unknown:
      break;
  }
  return "UNKNOWN";
}

PodTemplateView PodTemplateView::at(const JsonValue& object, const WorkloadType& type,
                                    const ResolvedTemplate& place) {
  PodTemplateView view;
  view.object = &object;
  view.type = &type;
  view.slot = place.slot;
  view.place = &place;
  view.spec = valueAt(object, place.specPointer);
  if (!place.metadataPointer.empty()) {
    view.metadata = valueAt(object, place.metadataPointer);
    if (view.metadata != nullptr && !view.metadata->IsObject()) view.metadata = nullptr;
  }
  return view;
}

PodTemplateView PodTemplateView::ofFirstSlot(const JsonValue& object, const WorkloadType& type) {
  PodTemplateView view;
  view.object = &object;
  view.type = &type;
  if (type.templates.empty()) return view;
  view.slot = &type.templates.front();
  view.spec = valueAt(object, view.slot->spec);
  if (!view.slot->metadata.empty()) view.metadata = valueAt(object, view.slot->metadata);
  return view;
}

std::string PodTemplateView::specFieldPath() const {
  if (place != nullptr) return place->specFieldPath;
  return slot != nullptr && object != nullptr ? fieldPathOf(*object, slot->spec) : "spec";
}

std::string PodTemplateView::metadataFieldPath() const {
  if (place != nullptr && !place->metadataFieldPath.empty()) return place->metadataFieldPath;
  if (slot != nullptr && object != nullptr && !slot->metadata.empty()) {
    return fieldPathOf(*object, slot->metadata);
  }
  return "metadata";
}

std::string_view PodTemplateView::role() const {
  if (place != nullptr) return place->role;
  return slot != nullptr ? std::string_view(slot->role) : std::string_view("pod");
}

std::string_view containerListName(ContainerList list) {
  return list == ContainerList::Containers ? "containers" : "initContainers";
}

}  // namespace aiadmit
