#include "mutators/mutator.h"

#include "webhook/kube/json_pointer.h"
#include "webhook/kube/warnings.h"

namespace aiadmit {

namespace {

constexpr std::string_view kWarningPrefix = "aiadmit: ";
constexpr std::string_view kProfileOpen = " (profile ";
constexpr std::string_view kProfileClose = ")";
constexpr std::string_view kEllipsis = "...";

// Cuts `text` to at most `size` bytes without splitting a UTF-8 sequence.
void cutUtf8(std::string& text, size_t size) {
  while (size > 0 && (static_cast<unsigned char>(text[size]) & 0xC0) == 0x80) --size;
  text.resize(size);
}

}  // namespace

JsonValue& MutationContext::podSpec() {
  if (place == nullptr) return ensurePodSpec(object, kind, alloc);
  JsonValue* spec = ensureObjectAt(object, place->specPointer, alloc);
  // resolveTemplates yields only templates whose spec is an object, and no
  // mutator replaces one.
  return spec != nullptr ? *spec : ensureObject(object, "spec", alloc);
}

void MutationContext::report(std::string change) {
  // Each template of a workload is edited in turn: say which one changed.
  if (severalTemplates && place != nullptr) change = place->role + ": " + change;
  reportForWorkload(std::move(change));
}

void MutationContext::reportForWorkload(std::string change) {
  const size_t frame =
      kWarningPrefix.size() + kProfileOpen.size() + profile.name.size() + kProfileClose.size();
  // Profile names are at most 63 characters, so there is always room left.
  const size_t budget = kMaxWarningLength > frame + kEllipsis.size() + 16
                            ? kMaxWarningLength - frame
                            : kEllipsis.size() + 16;
  if (change.size() > budget) {
    cutUtf8(change, budget - kEllipsis.size());
    change += kEllipsis;
  }
  changes.push_back(std::move(change));
}

}  // namespace aiadmit
