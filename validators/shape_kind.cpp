#include "validators/shape_kind.h"

namespace aiadmit {

void ShapeKindValidator::check(const ValidationContext& context,
                               std::vector<Violation>& out) const {
  const WorkloadClass declared = context.classification.workloadClass;
  const bool runsToCompletion =
      declared == WorkloadClass::Training || declared == WorkloadClass::Batch;
  const bool servesForever = context.kind == WorkloadKind::Deployment ||
                             context.kind == WorkloadKind::StatefulSet ||
                             context.kind == WorkloadKind::ReplicaSet;
  const std::string_view kind = kindName(context.kind);
  const std::string_view annotation =
      context.pod.annotation(kWorkloadAnnotation) ? kWorkloadAnnotation : kClassAnnotation;
  auto field = [&] { return annotationFieldPath(context, annotation); };

  if (runsToCompletion && servesForever) {
    out.push_back({AIA002, field(),
                   std::string(className(declared)) + " runs to completion, but a " +
                       std::string(kind) + " restarts its Pods forever",
                   "run it as a Job, or declare it realtime if it serves traffic",
                   std::string(className(declared)) + " as a " + std::string(kind) +
                       " restarts forever; run it as a Job"});
  } else if (declared == WorkloadClass::Realtime && isJobLike(context.kind)) {
    out.push_back(
        {AIA002, field(),
         "realtime serves until stopped, but a " + std::string(kind) + " runs to completion",
         "run it as a Deployment or StatefulSet, or declare it batch",
         "realtime as a " + std::string(kind) + " stops serving; use a Deployment"});
  }
}

}  // namespace aiadmit
