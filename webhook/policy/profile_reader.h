// Reading one Profile document: every field of profiles/README.md, checked
// strictly (unknown fields, wrong types, values out of range, sections that
// can never take effect), each error with file, line, column and field.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "webhook/policy/profile.h"
#include "webhook/policy/yaml_fields.h"

namespace YAML {
class Node;
}

namespace aiadmit {

struct DocumentName {
  std::string name;
  SourceLocation location;
};

// The frame every aiadmit document shares: apiVersion aiadmit.dev/v1 and
// metadata (a required name, a valid `noun` such as "profile name"; labels
// and annotations checked as the API server checks them).
void readDocumentHeader(yaml_fields::Reader& reader, const YAML::Node& document,
                        std::string_view noun, DocumentName& out);

// Appends the profile to `out` when the document has no error; records every
// error in the reader either way. spec.mutations takes the keys of `switches`.
void readProfileDocument(yaml_fields::Reader& reader, const YAML::Node& document,
                         const std::string& file, std::span<const MutationSwitch> switches,
                         std::vector<Profile>& out);

}  // namespace aiadmit
