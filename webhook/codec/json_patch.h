// The one place where a mutated copy becomes an RFC 6902 JSON Patch against
// the object that was sent. Mutators never build patch operations.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "webhook/codec/json.h"
#include "webhook/codec/json_pointer.h"

namespace aiadmit {

// Operations that turn `before` into `after`, as a JSON array; "" when they are
// equal. Objects are compared key by key and arrays index by index, so adding
// one key or appending one list item is one small operation. Keys are escaped
// per RFC 6901 ("nvidia.com/gpu" -> "nvidia.com~1gpu"). `paths`, when given,
// receives each operation's path in patch order.
std::string diffToJsonPatch(const JsonValue& before, const JsonValue& after,
                            std::vector<std::string>* paths = nullptr);

}  // namespace aiadmit
