#include "mutators/mutator.h"

#include <algorithm>

#include "webhook/codec/json_pointer.h"
#include "webhook/codec/warnings.h"

namespace aiadmit {

namespace {

// "<role>: <line>" when the workload has several templates: each is edited
// in turn, and the line says which one it is about.
std::string forTemplate(const MutationContext& context, std::string line) {
  if (context.severalTemplates && context.place != nullptr)
    line = context.place->role + ": " + line;
  return line;
}

// `line` shortened so that the warning the engine makes of it
// (profileWarning) fits the API server's 120-character line.
std::string fitted(const Profile& profile, const std::string& line) {
  return fittedProfileLine(line, profile.name);
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

void MutationContext::noticeForWorkload(std::string text) {
  std::string line = fitted(profile, text);
  if (std::find(notices.begin(), notices.end(), line) == notices.end()) {
    notices.push_back(std::move(line));
  }
}

bool MutatorDeclaration::runsOn(const MutationContext& context) const {
  if (context.templateUnchanged && runs != Runs::AlsoOnUnchangedTemplates) return false;
  if (context.madeByController && runs != Runs::AlsoOnControllersObjects) return false;
  const auto switchedOn = [&](const MutationSwitch& declared) {
    return context.profile.mutations.on(declared.key);
  };
  return (switches.empty() || std::any_of(switches.begin(), switches.end(), switchedOn)) &&
         (injects == kNoTemplatePart || (injects & context.injectableParts()) != 0);
}

}  // namespace aiadmit
