// What the pipeline does with an UPDATE, read through the row's UpdateRules
// (webhook/model/workload_update.h): a controller's update is never refused
// and gets back only what it dropped of aiadmit's writes, a scale is no
// rollout, and a part fixed at creation is only restored.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "webhook/engine/assessment.h"
#include "webhook/engine/engine.h"

namespace aiadmit {

// An UPDATE that changes only what controllers change without a rollout: a
// scale, the suspend flag, a queue controller's placement of a suspended
// workload. It is never refused, and mutated only to restore
// (MutationScope::RestoresOnly).
bool isControllersUpdate(const AdmissionSubject& subject, const Assessment& assessment);

// How much of its mutation an admission keeps.
enum class MutationScope {
  // None: a Pod's UPDATE, what a controller aiadmit did not judge made
  // (Assessment::fromUnjudgedController).
  None,
  // A CREATE, or an UPDATE of what the user changed: all of it, but for the
  // parts the kind fixes at creation, which are only restored
  // (keepFixedParts).
  Whole,
  // A controller's update (isControllersUpdate): only what puts back what
  // aiadmit wrote and the update dropped (keepOnlyRestores). For a queue
  // controller that is nothing; for a reapply of the file to a suspended
  // workload, which changes the same fields, it is what the reapply dropped.
  RestoresOnly,
};
MutationScope mutationScope(const AdmissionSubject& subject, const Assessment& assessment);

// An UPDATE that left the templates as they were but for their scale (a
// label on the object, replicas): a changed template would make the
// controller replace every Pod, which for a model server means reloading the
// model on each replica.
bool templateUnchanged(const AdmissionSubject& subject, const Assessment& assessment);

// After the mutators ran on an UPDATE, what of their edits of `mutated` the
// update keeps in `scope` (Whole or RestoresOnly), with the change lines and
// notices that say so: the lines of a template where something was left out
// are dropped, and a notice names each place left as sent; a controller's
// update gets one line per place restored and no notice. `firstChange[i]` is
// where the lines of assessment.views[i] begin in eval.changes. Returns
// whether anything of aiadmit's stays.
bool keepWhatTheUpdateMay(MutationScope scope, const AdmissionSubject& subject,
                          const Assessment& assessment, const std::vector<size_t>& firstChange,
                          JsonDocument& mutated, Evaluation& eval);

}  // namespace aiadmit
