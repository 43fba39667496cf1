#include "validators/validator.h"

namespace aiadmit {

namespace {

// AIA002: the declared shape must suit the kind. A Deployment restarts
// finished training forever; a Job stops serving when its Pods exit.
void checkShapeKind(const ValidationContext& context, std::vector<Violation>& out) {
  const WorkloadClass declared = context.classification.workloadClass;
  const bool runsToCompletion =
      declared == WorkloadClass::Training || declared == WorkloadClass::Batch;
  if (context.view.type == nullptr) return;
  // How the kind runs is the workload-type table's: a RayService or an
  // InferenceService serves forever, a PyTorchJob or a JobSet finishes.
  const Lifecycle lifecycle = context.view.type->lifecycle;
  const bool servesForever = lifecycle == Lifecycle::LongRunning;
  const bool finishes = lifecycle == Lifecycle::RunsToCompletion;
  const std::string_view kind = context.view.type->kind;
  const std::string_view annotation =
      context.pod.annotation(kWorkloadAnnotation) ? kWorkloadAnnotation : kClassAnnotation;
  auto field = [&] { return annotationFieldPath(context, annotation); };

  if (runsToCompletion && servesForever) {
    out.push_back({field(),
                   std::string(className(declared)) + " runs to completion, but a " +
                       std::string(kind) + " restarts its Pods forever",
                   "run it as a Job, or declare it realtime if it serves traffic",
                   std::string(className(declared)) + " as a " + std::string(kind) +
                       " restarts forever; run it as a Job"});
  } else if (declared == WorkloadClass::Realtime && finishes) {
    out.push_back(
        {field(),
         "realtime serves until stopped, but a " + std::string(kind) + " runs to completion",
         "run it as a Deployment or StatefulSet, or declare it batch",
         "realtime as a " + std::string(kind) + " stops serving; use a Deployment"});
  }
}

}  // namespace

extern const ValidatorDeclaration kShapeKindValidator{.name = "shape-kind",
                                                      .onceForWorkload = checkShapeKind};

}  // namespace aiadmit
