// What the pipeline does with an UPDATE, read through the row's UpdateRules
// (webhook/kube/workload_update.h): a controller's update is left alone, a
// scale is no rollout, and a part fixed at creation is only restored.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "webhook/engine/assessment.h"
#include "webhook/engine/engine.h"

namespace aiadmit {

// An UPDATE that changes only what controllers change without a rollout: a
// scale, the suspend flag, a queue controller's placement of a suspended
// workload. It is never mutated and never refused.
bool isControllersUpdate(const AdmissionSubject& subject, const Assessment& assessment);

// Whether the request's object may be mutated at all: never what a
// controller aiadmit did not judge made (Assessment::fromUnjudgedController).
bool isMutable(const AdmissionSubject& subject, const Assessment& assessment);

// An UPDATE that left the templates as they were but for their scale (a
// label on the object, replicas): a changed template would make the
// controller replace every Pod, which for a model server means reloading the
// model on each replica.
bool templateUnchanged(const AdmissionSubject& subject, const Assessment& assessment);

// The change lines of the templates in parts set back to the request's
// (keepFixedParts) are not in the patch: they are dropped, and a notice says
// the part was left as sent. `firstChange[i]` is where the lines of
// assessment.views[i] begin in eval.changes.
void forgetChangesIn(const std::vector<std::string>& setBack, const JsonValue& root,
                     const Assessment& assessment, const std::vector<size_t>& firstChange,
                     Evaluation& eval);

}  // namespace aiadmit
