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

// "<role>: <line>" when the workload has several templates: each is edited
// in turn, and the line says which one it is about.
std::string forTemplate(const MutationContext& context, std::string line) {
  if (context.severalTemplates && context.place != nullptr)
    line = context.place->role + ": " + line;
  return line;
}

// `line` shortened so that the warning the engine makes of it,
// "aiadmit: <line> (profile <name>)", fits the API server's 120-character line.
std::string fitted(const Profile& profile, std::string line) {
  const size_t frame =
      kWarningPrefix.size() + kProfileOpen.size() + profile.name.size() + kProfileClose.size();
  // Profile names are at most 63 characters, so there is always room left.
  const size_t budget = kMaxWarningLength > frame + kEllipsis.size() + 16
                            ? kMaxWarningLength - frame
                            : kEllipsis.size() + 16;
  if (line.size() > budget) {
    cutUtf8(line, budget - kEllipsis.size());
    line += kEllipsis;
  }
  return line;
}

}  // namespace

JsonValue& MutationContext::podSpec() {
  if (place != nullptr) {
    JsonValue* spec = ensureObjectAt(object, place->specPointer, alloc);
    // resolveTemplates yields only templates whose spec is an object, and no
    // mutator replaces one.
    if (spec != nullptr) return *spec;
  }
  // A template the object lacks: the path the row's slot gives it (no
  // wildcards), each step made an object.
  JsonValue* value = &object;
  const TemplateSlot* own = slot();
  for (const std::string& token : pointerTokens(own != nullptr ? own->spec : "/spec")) {
    value = &ensureObject(*value, token, alloc);
  }
  return *value;
}

void MutationContext::report(std::string change) {
  reportForWorkload(forTemplate(*this, std::move(change)));
}

void MutationContext::reportForWorkload(std::string change) {
  changes.push_back(fitted(profile, std::move(change)));
}

void MutationContext::notice(std::string text) {
  notices.push_back(fitted(profile, forTemplate(*this, std::move(text))));
}

}  // namespace aiadmit
