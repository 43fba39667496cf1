// An enum's values with what each stands for (its name in a log, a metric
// label, a profile), written once as a table that serves both directions,
// instead of a switch for one way and a chain of ifs for the other.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <type_traits>

namespace aiadmit {

template <class Enum, class Value = std::string_view>
struct EnumEntry {
  Enum key;
  Value value;
};

// What `table` gives `key`; `fallback` for a key the table leaves out.
template <class Enum, class Value, size_t N>
constexpr Value valueIn(const EnumEntry<Enum, Value> (&table)[N], Enum key,
                        std::type_identity_t<Value> fallback) {
  for (const EnumEntry<Enum, Value>& entry : table) {
    if (entry.key == key) return entry.value;
  }
  return fallback;
}

// The first key `table` gives `value`; nullopt when none does.
template <class Enum, class Value, size_t N>
constexpr std::optional<Enum> keyIn(const EnumEntry<Enum, Value> (&table)[N],
                                    std::type_identity_t<Value> value) {
  for (const EnumEntry<Enum, Value>& entry : table) {
    if (entry.value == value) return entry.key;
  }
  return std::nullopt;
}

}  // namespace aiadmit
