// Objects for tests: YAML as kubectl reads it, and the CRD schema nodes the
// workload-type table's pointers name.
#include <gtest/gtest.h>

#include "tests/support/test_support.h"
#include "webhook/codec/yaml_json.h"

namespace aiadmit::testing {

std::shared_ptr<JsonDocument> yamlObject(const std::string& yaml) {
  std::vector<ManifestDocument> documents;
  std::string error;
  EXPECT_TRUE(parseManifests(yaml, documents, &error)) << error;
  if (documents.empty()) return std::make_shared<JsonDocument>();
  return documents.front().json;
}

const JsonValue* crdSchemaAt(const JsonValue* schema, const std::string& pointer) {
  size_t start = pointer.empty() || pointer[0] != '/' ? 0 : 1;
  while (schema != nullptr && start <= pointer.size() && !pointer.empty()) {
    const size_t slash = pointer.find('/', start);
    const std::string token =
        pointer.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (token == "*") {
      const JsonValue* next = member(schema, "additionalProperties");
      schema = next != nullptr ? next : member(schema, "items");
    } else {
      const JsonValue* property = member(member(schema, "properties"), token);
      schema = property != nullptr ? property : member(schema, "additionalProperties");
    }
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return schema;
}

PodTemplateView firstTemplateOf(const JsonValue& object) {
  const WorkloadType* type = kubernetesKindOf(
      splitApiVersion(stringMember(&object, "apiVersion")).group, stringMember(&object, "kind"));
  if (type == nullptr) {
    PodTemplateView view;
    view.object = &object;
    return view;
  }
  return PodTemplateView::ofFirstSlot(object, *type);
}

}  // namespace aiadmit::testing
