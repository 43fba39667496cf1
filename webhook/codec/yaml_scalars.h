// What a plain YAML scalar means, as kubectl reads manifests (YAML 1.1:
// null, booleans such as yes/no, integers with underscores, floats), shared
// by the manifest reader and the YAML writer, which quotes any string that
// would read back as something else.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "webhook/codec/json.h"

namespace aiadmit {

// The merge key `<<`.
inline constexpr std::string_view kMergeKey = "<<";
// yaml-cpp reads a simple key (`key:`) of at most this many characters.
inline constexpr size_t kMaxSimpleKey = 1000;

JsonValue resolvePlainScalar(const std::string& text, JsonAllocator& alloc);

}  // namespace aiadmit
