// Manifests as `aiadmit check` reads them (a key set twice kept as kubectl
// keeps it): YAML to JSON and back to YAML never crashes, and what it writes
// sets each key once and reads back to the same value.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "webhook/codec/yaml_json.h"
#include "webhook/codec/yaml_write.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  constexpr auto kKeep = aiadmit::DuplicateKeys::Keep;
  std::vector<aiadmit::ManifestDocument> documents;
  aiadmit::ManifestError error;
  if (!aiadmit::parseManifests(text, documents, error, kKeep)) return 0;
  for (const auto& document : documents) {
    const std::string yaml = aiadmit::toYaml(*document.json);
    std::vector<aiadmit::ManifestDocument> again;
    if (!aiadmit::parseManifests(yaml, again, error, kKeep) || again.size() != 1) __builtin_trap();
    if (!again[0].duplicateKeys.empty()) __builtin_trap();
    if (*again[0].json != *document.json) __builtin_trap();
  }
  return 0;
}
