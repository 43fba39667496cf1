// Writing a JSON value as YAML, for `check` and `profiles init`.
#pragma once

#include <string>

#include "webhook/codec/json.h"

namespace aiadmit {

// One YAML document for a JSON value, readable back by kubectl to the same
// value: strings that would read as numbers, booleans, null or a merge key are
// quoted.
std::string toYaml(const JsonValue& value);

}  // namespace aiadmit
