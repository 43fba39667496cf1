#include "webhook/engine/updates.h"

#include <algorithm>

#include "webhook/codec/json_pointer.h"
#include "webhook/codec/text.h"
#include "webhook/codec/warnings.h"
#include "webhook/model/workload_update.h"

namespace aiadmit {

bool isControllersUpdate(const AdmissionSubject& subject, const Assessment& assessment) {
  return subject.operation == Operation::Update && subject.oldObject != nullptr &&
         assessment.type != nullptr &&
         changesOnlyControllerFields(*assessment.type, *subject.oldObject, *subject.object);
}

MutationScope mutationScope(const AdmissionSubject& subject, const Assessment& assessment) {
  if (assessment.type == nullptr || assessment.fromUnjudgedController) return MutationScope::None;
  if (subject.operation == Operation::Create) return MutationScope::Whole;
  if (!assessment.type->updates.editedOnUpdate) return MutationScope::None;
  return isControllersUpdate(subject, assessment) ? MutationScope::RestoresOnly
                                                  : MutationScope::Whole;
}

bool templateUnchanged(const AdmissionSubject& subject, const Assessment& assessment) {
  if (subject.operation != Operation::Update || subject.oldObject == nullptr) return false;
  const Resolution before = resolveTemplates(*assessment.type, *subject.oldObject);
  const std::vector<ResolvedTemplate>& after = assessment.resolution.templates;
  if (!before.ok() || before.templates.size() != after.size()) return false;
  const std::vector<std::string>& scale = assessment.type->updates.scale;
  for (size_t i = 0; i < after.size(); ++i) {
    const ResolvedTemplate& old = before.templates[i];
    if (old.specPointer != after[i].specPointer ||
        !sameIgnoring(old.spec, after[i].spec, old.specPointer, scale) ||
        !sameIgnoring(old.metadata, after[i].metadata, old.metadataPointer, scale)) {
      return false;
    }
  }
  return true;
}

namespace {

// How many leading tokens the two escaped pointers share.
size_t sharedTokens(std::string_view a, std::string_view b) {
  const std::vector<std::string> left = pointerTokens(a);
  const std::vector<std::string> right = pointerTokens(b);
  size_t shared = 0;
  while (shared < left.size() && shared < right.size() && left[shared] == right[shared]) ++shared;
  return shared;
}

// The templates a left-out place belongs to: those nearest to it (a
// replicated job's Job settings belong to that job's template; a whole list
// of templates to all of them).
std::vector<bool> templatesOf(std::string_view place, const Assessment& assessment) {
  std::vector<size_t> shared;
  size_t nearest = 0;
  for (const PodTemplateView& view : assessment.views) {
    shared.push_back(view.place != nullptr ? sharedTokens(view.place->specPointer, place) : 0);
    nearest = std::max(nearest, shared.back());
  }
  std::vector<bool> of;
  for (size_t tokens : shared) of.push_back(nearest > 0 && tokens == nearest);
  return of;
}

// A line about a place: "<role>: <verb> <path in its template> <tail>" for
// a place in a template (the role only when there are several templates, as
// the mutators' lines say it), else "<verb> <field path> <tail>", fitted to
// the warning line under `profile`.
std::string placeLine(std::string_view verb, std::string_view place, std::string_view tail,
                      const JsonValue& root, const Assessment& assessment,
                      std::string_view profile) {
  const std::string path = fieldPathOf(root, place);
  std::string role;
  std::string name = path;
  for (const PodTemplateView& view : assessment.views) {
    const ResolvedTemplate* at = view.place;
    if (at == nullptr) continue;
    const auto within = [&](const std::string& prefix) {
      return !prefix.empty() && path.rfind(prefix + ".", 0) == 0;
    };
    if (!within(at->specFieldPath) && !within(at->metadataFieldPath)) continue;
    const bool inSpec = within(at->specFieldPath);
    const size_t prefix = (inSpec ? at->specFieldPath : at->metadataFieldPath).size() + 1;
    name = (inSpec ? "" : "template ") + path.substr(prefix);
    if (assessment.views.size() > 1) role = at->role + ": ";
    break;
  }
  return fittedProfileLine(concat(role, verb, " ", name, tail), profile);
}

// The change lines of the templates where keepFixedParts left out what
// aiadmit would have written are not all in the patch: they are dropped, and
// a notice names each place left as sent.
void forgetChangesIn(const std::vector<std::string>& leftOut, const JsonValue& root,
                     const Assessment& assessment, const std::vector<size_t>& firstChange,
                     Evaluation& eval) {
  std::vector<bool> forget(assessment.views.size(), false);
  for (const std::string& place : leftOut) {
    const std::vector<bool> of = templatesOf(place, assessment);
    for (size_t i = 0; i < of.size(); ++i) forget[i] = forget[i] || of[i];
  }
  for (size_t i = assessment.views.size(); i-- > 0;) {
    const size_t end = i + 1 < firstChange.size() ? firstChange[i + 1] : eval.changes.size();
    if (forget[i] && i < firstChange.size() && firstChange[i] <= end) {
      eval.changes.erase(eval.changes.begin() + static_cast<std::ptrdiff_t>(firstChange[i]),
                         eval.changes.begin() + static_cast<std::ptrdiff_t>(end));
    }
  }
  for (const std::string& place : leftOut) {
    eval.notices.push_back(
        placeLine("left", place, " as sent: fixed once created", root, assessment, eval.profile));
  }
}

}  // namespace

bool keepWhatTheUpdateMay(MutationScope scope, const AdmissionSubject& subject,
                          const Assessment& assessment, const std::vector<size_t>& firstChange,
                          JsonDocument& mutated, Evaluation& eval) {
  const JsonValue& sent = *subject.object;
  if (scope == MutationScope::RestoresOnly) {
    const Restoration restoration =
        keepOnlyRestores(*subject.oldObject, sent, mutated, mutated.GetAllocator());
    eval.changes.clear();
    eval.notices.clear();
    for (const std::string& place : restoration.restored) {
      eval.changes.push_back(placeLine("restored", place, ", which the update dropped", sent,
                                       assessment, eval.profile));
    }
    return !restoration.restored.empty();
  }
  const Restoration restoration =
      keepFixedParts(*assessment.type, *subject.oldObject, sent, mutated, mutated.GetAllocator());
  forgetChangesIn(restoration.leftOut, sent, assessment, firstChange, eval);
  return true;
}

}  // namespace aiadmit
