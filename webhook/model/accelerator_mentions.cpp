#include "webhook/model/accelerator_mentions.h"

#include <algorithm>
#include <cctype>

#include "webhook/codec/json_pointer.h"
#include "webhook/codec/text.h"
#include "webhook/model/quantity.h"
#include "webhook/model/resources.h"

namespace aiadmit {

namespace {

constexpr int kMaxDepth = 64;

bool positive(const JsonValue& value) {
  const std::optional<Quantity> quantity = Quantity::fromJson(value);
  return quantity && !quantity->isZero() && !quantity->isNegative();
}

// A field named for a count of GPUs or TPUs ("gpu", "numGpus"): names with
// "gpu" inside that say something else ("gpuMemoryUtilization") are not.
bool countField(std::string_view key) {
  const std::string name = lowercase(key);
  static constexpr std::string_view kNames[] = {"gpu",      "gpus",      "numgpus", "num_gpus",
                                                "gpucount", "gpu_count", "tpu",     "tpus"};
  return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

// A value that asks for some: a count, or {name, quantity} / {count}.
std::optional<std::string> askedBy(std::string_view key, const JsonValue& value) {
  const bool resourceName = key.find('/') != std::string_view::npos && looksLikeAccelerator(key);
  if (!resourceName && !countField(key)) return std::nullopt;
  if (positive(value)) return std::string(key);
  if (!resourceName && value.IsObject()) {
    for (const std::string_view count : {"quantity", "count"}) {
      const JsonValue* amount = member(&value, count);
      if (amount != nullptr && positive(*amount)) {
        const std::string_view named = stringMember(&value, "name");
        return std::string(named.empty() ? key : named);
      }
    }
  }
  return std::nullopt;
}

std::optional<AcceleratorMention> find(const JsonValue& value, std::string& pointer, int depth) {
  if (depth > kMaxDepth) return std::nullopt;
  const size_t length = pointer.size();
  if (value.IsObject()) {
    for (const auto& entry : value.GetObject()) {
      const std::string_view key(entry.name.GetString(), entry.name.GetStringLength());
      appendEscapedPointerToken(pointer, key);
      if (std::optional<std::string> name = askedBy(key, entry.value)) {
        return AcceleratorMention{pointer, std::move(*name)};
      }
      if (auto found = find(entry.value, pointer, depth + 1)) return found;
      pointer.resize(length);
    }
  } else if (value.IsArray()) {
    for (rapidjson::SizeType i = 0; i < value.Size(); ++i) {
      pointer += "/" + std::to_string(i);
      if (auto found = find(value[i], pointer, depth + 1)) return found;
      pointer.resize(length);
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<AcceleratorMention> findAcceleratorMention(const JsonValue& object) {
  const JsonValue* spec = member(&object, "spec");
  if (spec == nullptr) return std::nullopt;
  std::string pointer = "/spec";
  return find(*spec, pointer, 0);
}

}  // namespace aiadmit
