// What the pipeline knows of one object before any mutator or validator
// runs: its row of the workload-type table, the templates that row finds in
// it, each template's view and pod, the workload's class and its profile.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "webhook/model/pod_reader.h"
#include "webhook/model/workload.h"
#include "webhook/model/workload_type.h"
#include "webhook/policy/classify.h"
#include "webhook/policy/profile_set.h"

namespace aiadmit {

struct AdmissionSubject;

struct Assessment {
  const WorkloadType* type = nullptr;  // null: not a kind that carries Pods
  Resolution resolution;
  // One view per pod template, in the table's order. Their `place` points
  // into `resolution`, so an Assessment is moved, never copied.
  std::vector<PodTemplateView> views;
  std::vector<PodReader> pods;  // by look, one per view, claims resolved in the cluster view
  WorkloadClassification workload;
  // The accelerator the workload asks for, which places it in its vendor's pool.
  AcceleratorAsk ask;
  ProfileSelection selection;  // empty for objects that are not AI workloads
  // A controller made the object (madeByController, with an owner the
  // subject believes): it is judged and mutated as its controller's, not as
  // a workload of its own.
  bool madeByController = false;
  // The controller that made it is a kind of the table, and neither the
  // object nor its templates carry any aiadmit annotation: aiadmit never
  // judged that controller's template (it was created before the namespace
  // opted in), and nobody asked it to. Opting in changes nothing that runs:
  // such objects are admitted as they come, unpatched and never refused;
  // the controller itself is judged when it is next applied. A child that
  // carries aiadmit's stamp or a developer's aiadmit.dev annotation gets the
  // placement its GPU role lacks.
  bool fromUnjudgedController = false;
  // "NIMService.apps.nvidia.com": the controller that made it is a kind no
  // row describes, nor one of Kubernetes' own (core, apps, batch). Such
  // objects get what their role needs to run; the workload they belong to
  // is judged by nobody, and serve counts them by that kind.
  std::string unknownController;

  Assessment() = default;
  Assessment(Assessment&&) = default;
  Assessment& operator=(Assessment&&) = default;
  Assessment(const Assessment&) = delete;
  Assessment& operator=(const Assessment&) = delete;

  const Classification& classification() const { return workload.classification; }
  // The template whose labels and annotations select the profile.
  const PodTemplateView* primary() const;
};

// The row of the subject's kind in `table`; null when none serves it.
const WorkloadType* workloadTypeOf(const AdmissionSubject& subject, const WorkloadTypeTable& table);

// `cluster`, when given, resolves the templates' DRA claims (their claim
// templates and DeviceClasses) for classification; it is read, never waited on.
// `asClass`, when given, is the class an AI workload is judged as instead of
// its own, with the profile that class selects: its kind's, which a guess's
// verdicts are held against (webhook/engine/guessed_class.h).
Assessment assess(const JsonValue& object, const AdmissionSubject& subject,
                  const ProfileSet& profiles, const ClusterView* cluster = nullptr,
                  std::optional<WorkloadClass> asClass = std::nullopt);

// "Worker ×8", "head ×1", "worker ×?" (a count the object does not say).
std::string describeTemplate(const PodTemplateView& view);

// Whether an ownerReference with controller: true says a controller made it.
bool madeByController(const JsonValue& object);
// The group and kind of the ownerReference with controller: true; empty
// when there is none.
std::pair<std::string_view, std::string_view> controllerGroupKind(const JsonValue& object);

}  // namespace aiadmit
