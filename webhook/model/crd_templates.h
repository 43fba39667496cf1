// Where a custom resource keeps its Pods, read from its CRD's schema alone:
// the fields shaped like a PodTemplateSpec (an object whose `spec` is a
// PodSpec) or a bare PodSpec (an object whose `containers` are objects with
// a name and an image), through nested objects, arrays (`*`) and maps
// (`*`, additionalProperties), as Kyverno's autogen finds them in the
// built-in controllers. What `aiadmit workload-types suggest` writes a
// WorkloadType document from.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "webhook/codec/json.h"

namespace aiadmit {

struct FoundTemplate {
  // Pointer pattern of the PodSpec ("/spec/template/spec",
  // "/spec/replicatedJobs/*/template/spec/template/spec").
  std::string spec;
  std::string metadata;  // of the Pods' labels and annotations ("" when none)
  // "{key}" or "{.FIELD}" after a wildcard, else the field that holds it.
  std::string role;
  // Pointer of the Pod count beside the template ("replicas" relative to the
  // last wildcard's item, or absolute), with the schema's default.
  std::string replicas;
  std::optional<int64_t> replicasDefault;
};

struct FoundKind {
  std::string group;
  std::string kind;
  std::string plural;
  bool namespaced = true;
  std::vector<std::string> versions;  // served, in the CRD's order
  std::string schemaVersion;          // the version whose schema was read (the storage one)
  std::vector<FoundTemplate> templates;
  // Fields whose schema keeps whatever they hold
  // (x-kubernetes-preserve-unknown-fields, no properties): a pod template
  // there cannot be seen from the schema.
  std::vector<std::string> opaque;
};

// False, with `why`, for what is no CustomResourceDefinition of
// apiextensions.k8s.io/v1 with a schema.
bool findTemplates(const JsonValue& crd, FoundKind& out, std::string& why);

}  // namespace aiadmit
