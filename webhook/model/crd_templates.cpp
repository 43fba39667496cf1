#include "webhook/model/crd_templates.h"

#include <algorithm>
#include <cctype>

#include "webhook/codec/json_pointer.h"
#include "webhook/codec/text.h"

namespace aiadmit {

namespace {

const JsonValue* propertyOf(const JsonValue* schema, std::string_view name) {
  return member(member(schema, "properties"), name);
}

bool hasProperty(const JsonValue* schema, std::string_view name) {
  return propertyOf(schema, name) != nullptr;
}

// A PodSpec: `containers` is a list of objects with a name and an image.
bool isPodSpec(const JsonValue* schema) {
  const JsonValue* containers = propertyOf(schema, "containers");
  if (stringMember(containers, "type") != "array") return false;
  const JsonValue* container = member(containers, "items");
  return hasProperty(container, "name") && hasProperty(container, "image");
}

bool isPodTemplateSpec(const JsonValue* schema) {
  return isPodSpec(propertyOf(schema, "spec"));
}

bool keepsUnknownFields(const JsonValue* schema) {
  const JsonValue* preserve = member(schema, "x-kubernetes-preserve-unknown-fields");
  return preserve != nullptr && preserve->IsBool() && preserve->GetBool() &&
         !isObject(member(schema, "properties"));
}

// A field whose name says it may hold Pods.
bool mayHoldPods(std::string_view field) {
  const std::string name = lowercase(field);
  return name.find("template") != std::string::npos || name.find("pod") != std::string::npos ||
         name == "spec";
}

// Where the walk is: the pointer, the field it came through, and the item
// the last wildcard matched (its pointer and schema), if any.
struct Place {
  std::string pointer;
  std::string field;
  std::string itemPointer;
  const JsonValue* item = nullptr;
  const JsonValue* parent = nullptr;  // the object schema that holds this field
  std::string parentPointer;
};

class TemplateWalk {
 public:
  TemplateWalk(FoundKind& out, std::string fallbackRole)
      : out_(out), fallbackRole_(std::move(fallbackRole)) {}

  void visit(const JsonValue* schema, const Place& place) {
    if (!isObject(schema)) return;
    if (isPodTemplateSpec(schema)) {
      record(place, place.pointer + "/spec",
             hasProperty(schema, "metadata") ? place.pointer + "/metadata" : "");
      Place spec = place;
      spec.pointer += "/spec";
      visitProperties(propertyOf(schema, "spec"), spec);
      return;
    }
    if (isPodSpec(schema)) {
      record(place, place.pointer, "");
      // A PodSpec of an operator's may hold another (KServe's multi-node
      // predictor and its workerSpec).
      visitProperties(schema, place);
      return;
    }
    if (keepsUnknownFields(schema) && mayHoldPods(place.field)) {
      out_.opaque.push_back(place.pointer);
    }
    visitProperties(schema, place);
    if (const JsonValue* items = member(schema, "items"); isObject(items)) {
      visit(items, wildcard(place, items));
    }
    if (const JsonValue* values = member(schema, "additionalProperties"); isObject(values)) {
      visit(values, wildcard(place, values));
    }
  }

 private:
  void visitProperties(const JsonValue* schema, const Place& place) {
    const JsonValue* properties = member(schema, "properties");
    if (!isObject(properties)) return;
    for (const auto& property : properties->GetObject()) {
      const std::string_view name(property.name.GetString(), property.name.GetStringLength());
      Place next = place;
      appendEscapedPointerToken(next.pointer, name);
      next.field = std::string(name);
      next.parent = schema;
      next.parentPointer = place.pointer;
      visit(&property.value, next);
    }
  }

  static Place wildcard(const Place& place, const JsonValue* item) {
    Place next = place;
    next.pointer += "/*";
    next.itemPointer = next.pointer;
    next.item = item;
    next.parent = nullptr;
    return next;
  }

  void record(const Place& place, std::string spec, std::string metadata) {
    FoundTemplate found;
    found.spec = std::move(spec);
    found.metadata = std::move(metadata);
    found.role = roleOf(place);
    findReplicas(place, found);
    out_.templates.push_back(std::move(found));
  }

  std::string roleOf(const Place& place) const {
    if (place.item != nullptr) {
      for (const std::string_view field : {"name", "groupName"}) {
        if (stringMember(propertyOf(place.item, field), "type") == "string") {
          return "{." + std::string(field) + "}";
        }
      }
      return "{key}";
    }
    // The nearest field above the template that names it.
    std::string_view pointer = place.pointer;
    while (!pointer.empty()) {
      const size_t slash = pointer.rfind('/');
      const std::string_view field = pointer.substr(slash + 1);
      if (field != "template" && field != "spec" && field != "podTemplate") {
        return std::string(field);
      }
      pointer = pointer.substr(0, slash);
    }
    return fallbackRole_;
  }

  // `replicas` beside the template, else in the item the last wildcard
  // matched: relative to that item when there is one.
  static void findReplicas(const Place& place, FoundTemplate& found) {
    const auto take = [&](const JsonValue* holder, const std::string& holderPointer) {
      const JsonValue* replicas = propertyOf(holder, "replicas");
      if (stringMember(replicas, "type") != "integer") return false;
      const std::string pointer = holderPointer + "/replicas";
      found.replicas =
          place.item == nullptr ? pointer : pointer.substr(place.itemPointer.size() + 1);
      const JsonValue* fallback = member(replicas, "default");
      if (fallback != nullptr && fallback->IsInt64()) found.replicasDefault = fallback->GetInt64();
      return true;
    };
    if (place.parent != nullptr && take(place.parent, place.parentPointer)) return;
    if (place.item != nullptr) take(place.item, place.itemPointer);
  }

  FoundKind& out_;
  std::string fallbackRole_;
};

const JsonValue* storageVersion(const JsonValue* versions, FoundKind& out) {
  const JsonValue* chosen = nullptr;
  for (const JsonValue& version : versions->GetArray()) {
    const JsonValue* served = member(&version, "served");
    if (served != nullptr && served->IsBool() && served->GetBool()) {
      out.versions.emplace_back(stringMember(&version, "name"));
    }
    const JsonValue* storage = member(&version, "storage");
    if (chosen == nullptr || (storage != nullptr && storage->IsBool() && storage->GetBool())) {
      chosen = &version;
    }
  }
  return chosen;
}

}  // namespace

bool findTemplates(const JsonValue& crd, FoundKind& out, std::string& why) {
  if (stringMember(&crd, "kind") != "CustomResourceDefinition" ||
      stringMember(&crd, "apiVersion") != "apiextensions.k8s.io/v1") {
    why = "not a CustomResourceDefinition of apiextensions.k8s.io/v1";
    return false;
  }
  const JsonValue* spec = member(&crd, "spec");
  const JsonValue* names = member(spec, "names");
  out.group = std::string(stringMember(spec, "group"));
  out.kind = std::string(stringMember(names, "kind"));
  out.plural = std::string(stringMember(names, "plural"));
  out.namespaced = stringMember(spec, "scope") != "Cluster";
  const JsonValue* versions = member(spec, "versions");
  if (out.group.empty() || out.kind.empty() || out.plural.empty() || !isArray(versions) ||
      versions->GetArray().Empty()) {
    why = "spec.group, spec.names.kind, spec.names.plural and spec.versions are required";
    return false;
  }
  const JsonValue* version = storageVersion(versions, out);
  out.schemaVersion = std::string(stringMember(version, "name"));
  const JsonValue* schema = member(member(version, "schema"), "openAPIV3Schema");
  if (!isObject(schema)) {
    why = "version " + out.schemaVersion + " has no openAPIV3Schema";
    return false;
  }
  Place root;
  root.field = "spec";
  root.pointer = "/spec";
  root.parent = schema;
  root.parentPointer = "";
  const JsonValue* specSchema = propertyOf(schema, "spec");
  if (specSchema == nullptr) {
    out.opaque.push_back("/spec");
    return true;
  }
  TemplateWalk(out, lowercase(out.kind)).visit(specSchema, root);
  return true;
}

}  // namespace aiadmit
