#include "webhook/engine/updates.h"

#include <algorithm>

#include "webhook/kube/json_pointer.h"
#include "webhook/kube/workload_update.h"

namespace aiadmit {

bool isControllersUpdate(const AdmissionSubject& subject, const Assessment& assessment) {
  return subject.operation == Operation::Update && subject.oldObject != nullptr &&
         assessment.type != nullptr &&
         changesOnlyControllerFields(*assessment.type, *subject.oldObject, *subject.object);
}

bool isMutable(const AdmissionSubject& subject, const Assessment& assessment) {
  if (assessment.type == nullptr || assessment.fromUnjudgedController) return false;
  if (subject.operation == Operation::Create) return true;
  if (!assessment.type->updates.editedOnUpdate) return false;
  return !isControllersUpdate(subject, assessment);
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

void forgetChangesIn(const std::vector<std::string>& setBack, const JsonValue& root,
                     const Assessment& assessment, const std::vector<size_t>& firstChange,
                     Evaluation& eval) {
  for (size_t i = assessment.views.size(); i-- > 0;) {
    const ResolvedTemplate* place = assessment.views[i].place;
    const size_t end = i + 1 < firstChange.size() ? firstChange[i + 1] : eval.changes.size();
    const bool inPart = place != nullptr &&
                        std::any_of(setBack.begin(), setBack.end(), [&](const std::string& part) {
                          return pointerWithin(place->specPointer, part);
                        });
    if (inPart && i < firstChange.size() && firstChange[i] <= end) {
      eval.changes.erase(eval.changes.begin() + static_cast<std::ptrdiff_t>(firstChange[i]),
                         eval.changes.begin() + static_cast<std::ptrdiff_t>(end));
    }
  }
  for (const std::string& part : setBack) {
    eval.notices.push_back("left " + fieldPathOf(root, part) +
                           " as sent: it cannot change once created");
  }
}

}  // namespace aiadmit
