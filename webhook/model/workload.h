// What kind of object a request carries and where its pod template lives.
#pragma once

#include <string>
#include <string_view>

#include "webhook/codec/json.h"
#include "webhook/model/workload_type.h"

namespace aiadmit {

// The operation of an admission request.
enum class Operation { Create, Update, Delete, Connect, Unknown };
std::string_view operationName(Operation operation);

// Read-only view of one pod template of an object: the template a
// ResolvedTemplate names, or, when the object lacks it, the place its row's
// slot gives it. Members are nullptr where absent.
struct PodTemplateView {
  const JsonValue* object = nullptr;
  const JsonValue* metadata = nullptr;  // the Pod's or the template's metadata
  const JsonValue* spec = nullptr;      // the PodSpec
  // The row of the object's kind and the slot of this template; null only
  // for a view made of no row.
  const WorkloadType* type = nullptr;
  const TemplateSlot* slot = nullptr;
  // Where the template is in the object, its role and its Pod count; null
  // when the object lacks the template.
  const ResolvedTemplate* place = nullptr;

  // The template `place` names in `object` (the object it was resolved on,
  // or a copy of it that is being edited).
  static PodTemplateView at(const JsonValue& object, const WorkloadType& type,
                            const ResolvedTemplate& place);
  // The first template of `type` where its slot puts it, whether or not
  // `object` holds it, with no place: a Pod without spec is still read as
  // one, since its annotations may declare it. Only for slots without
  // wildcards (Kubernetes' own kinds).
  static PodTemplateView ofFirstSlot(const JsonValue& object, const WorkloadType& type);

  // kubectl field paths: "spec.template.spec", "spec.pytorchReplicaSpecs.Worker.template.spec".
  std::string specFieldPath() const;
  std::string metadataFieldPath() const;
  // "worker", "head"; "pod" for the template of a Kubernetes kind.
  std::string_view role() const;
  // Whether the template's shape lets aiadmit inject this
  // (TemplateSlot::injectable); every injection for a template the object lacks.
  bool allows(Injection injection) const {
    return place == nullptr || place->slot == nullptr || (place->slot->injectable & injection) != 0;
  }
  // Whether the kind is a custom resource (its role names a part of it).
  bool isCustomResource() const { return type != nullptr && type->customResource; }
  // Whether the object is its own Pod (WorkloadType::objectIsPod).
  bool objectIsPod() const { return type != nullptr && type->objectIsPod; }
};

enum class ContainerList { Containers, InitContainers };
std::string_view containerListName(ContainerList list);

}  // namespace aiadmit
