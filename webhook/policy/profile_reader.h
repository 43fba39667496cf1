// Reading one Profile document: every field of profiles/README.md, checked
// strictly (unknown fields, wrong types, values out of range, sections that
// can never take effect), each error with file, line, column and field.
#pragma once

#include <string>
#include <vector>

#include "webhook/policy/profile.h"
#include "webhook/policy/yaml_fields.h"

namespace YAML {
class Node;
}

namespace aiadmit {

// Appends the profile to `out` when the document has no error; records every
// error in the reader either way.
void readProfileDocument(yaml_fields::Reader& reader, const YAML::Node& document,
                         const std::string& file, std::vector<Profile>& out);

}  // namespace aiadmit
