#pragma once

#include "mutators/mutator.h"

namespace aiadmit {

// The profile's scheduling defaults, each only where the workload has not
// chosen: priorityClassName and schedulerName on the pod spec, labels and
// annotations (a Kueue queue, a Volcano group) on the object and on every
// template below it, so that what controllers create carries them too. All
// levels get one value: the workload's own when it has one at any level.
//
// Two fields are never absent by the time a webhook sees them, and are read
// the way the API server leaves them:
// - schedulerName is defaulted to "default-scheduler" before admission, so
//   that value counts as not chosen;
// - a bare Pod's priority is resolved from its priorityClassName (or the
//   global default) before admission. A class added afterwards would not
//   change the priority the scheduler uses, so a Pod that already carries a
//   resolved priority gets no class. Pods created from a template that has
//   the class are resolved with it.
//
// Where the kind's row names the operator's own scheduler or priority field
// (WorkloadType::scheduling), a field of the object's spec that the operator
// gives every Pod (a Volcano Job's spec.priorityClassName and
// spec.schedulerName) gets the profile's value instead of the templates, once
// for the workload. A field it only reads (KubeRay's labels, a Kubeflow
// job's schedulingPolicy.priorityClass) is not written; when it holds a class
// the profile allows, the templates get that class, not the profile's.
//
// A priority class the cluster view says does not exist is not injected
// (the API server would refuse every Pod that names it); a notice says so.
// A view that cannot tell, or none, leaves the profile's class to be set.
struct SchedulingMutator final : Mutator {
  SchedulingMutator();
};

}  // namespace aiadmit
