// Any object through the workload-type table's resolver: no crash, the
// bounds hold (at most 256 templates, and an error instead of more), every
// resolved pointer names the value the resolver handed out, every count is
// unknown or not negative, and resolving twice gives the same templates.
// Seeds: ../shared/corpus/manifests, tests/fuzz/seeds/workload_type.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "webhook/codec/yaml_json.h"
#include "webhook/engine/admission.h"
#include "webhook/model/workload_type.h"

namespace {

void check(bool condition) {
  if (!condition) std::abort();
}

void checkObject(const aiadmit::JsonValue& object) {
  const auto table = aiadmit::WorkloadTypeTable::builtIn();
  const aiadmit::WorkloadType* type = table->findForObject(object);
  if (type == nullptr) return;
  const aiadmit::Resolution first = aiadmit::resolveTemplates(*type, object);
  check(first.templates.size() <= aiadmit::ResolveLimits{}.maxTemplates);
  for (const aiadmit::ResolvedTemplate& resolved : first.templates) {
    check(aiadmit::valueAt(object, resolved.specPointer) == resolved.spec);
    check(resolved.spec != nullptr && resolved.spec->IsObject());
    check(!resolved.replicas || *resolved.replicas >= 0);
    if (!resolved.metadataPointer.empty()) {
      const aiadmit::JsonValue* metadata = aiadmit::valueAt(object, resolved.metadataPointer);
      check(resolved.metadata ==
            (metadata != nullptr && metadata->IsObject() ? metadata : nullptr));
    }
    check(aiadmit::fieldPathOf(object, resolved.specPointer) == resolved.specFieldPath);
  }
  const aiadmit::Resolution second = aiadmit::resolveTemplates(*type, object);
  check(second.error == first.error && second.templates.size() == first.templates.size());
  for (size_t i = 0; i < first.templates.size(); ++i) {
    check(second.templates[i].specPointer == first.templates[i].specPointer);
    check(second.templates[i].role == first.templates[i].role);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') {
    aiadmit::JsonDocument document;
    if (aiadmit::parseJsonInSitu(text.data(), text.size(), aiadmit::kMaxJsonNesting, document)
            .empty()) {
      checkObject(document);
    }
    return 0;
  }
  std::vector<aiadmit::ManifestDocument> documents;
  std::string error;
  if (!aiadmit::parseManifests(text, documents, &error)) return 0;
  for (const aiadmit::ManifestDocument& document : documents) checkObject(*document.json);
  return 0;
}
