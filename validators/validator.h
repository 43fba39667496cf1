// A validator checks one rule of the catalogue against the final object, the
// one the API server will store, and reports violations. The engine applies
// the profile's action (deny, warn, off) and formats the answer. Each is a
// declaration (ValidatorDeclaration) in its own .cpp, listed under its rule
// in validators/registry.cpp.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "webhook/cluster/cluster_ref.h"
#include "webhook/cluster/cluster_view.h"
#include "webhook/codec/json.h"
#include "webhook/codec/text.h"
#include "webhook/codec/warnings.h"
#include "webhook/model/pod_reader.h"
#include "webhook/model/scheduling.h"
#include "webhook/model/workload.h"
#include "webhook/policy/classify.h"
#include "webhook/policy/profile.h"
#include "webhook/policy/profile_set.h"
#include "webhook/policy/rules.h"

namespace aiadmit {

struct Violation {
  std::string field;    // kubectl field path: spec.template.spec.containers[0].resources.limits
  std::string problem;  // what is wrong, and what it leads to
  std::string fix;      // how to fix it
  // Problem and fix in a few words, for admission warnings, which the API
  // server keeps short: `"nvidia.com/gpus" is not offered; did you mean ...`.
  std::string brief;
  // The rule broken: set by the engine from the row of the registry that
  // lists the check (runCheck), so a check never states it.
  RuleId rule{};
  // The profile whose rule actions apply, for objects that have no selected
  // profile (AIA007 on objects that are not AI workloads); null otherwise.
  const Profile* profile = nullptr;
  // The template it was found on, in a workload of several templates or a
  // custom resource (set by the engine): its role and the field path of its
  // PodSpec. warning() names the role and gives the field relative to it.
  std::string role{};
  std::string templateField{};
  // The object whose absence from the cluster view the violation rests on
  // (AIA017-AIA019): before it denies, the server asks the API whether the
  // object exists after all, and drops the violation unless the answer is No.
  std::optional<ClusterRef> absent{};
  // The API could not say whether `absent` exists: the violation warns at most.
  bool unconfirmed = false;
  // The answer may become yes on its own (a node that matches may be added
  // by an autoscaler or an admin): the violation warns at most.
  bool mayChange = false;
  // It denies only under the profile of a class aiadmit guessed beyond the
  // kind, not as the kind's class (set by the engine,
  // webhook/engine/guessed_class.h): it warns at most.
  bool restsOnGuess = false;

  // "[AIA004] spec.containers[0].resources.limits: <problem>; <fix>"
  std::string format() const;
  // "aiadmit: [AIA004] containers[0].resources.limits: <brief>", the field
  // relative to the PodSpec ("Worker: containers[0]..." with a role); without
  // the field when the line would exceed
  // kMaxWarningLength (fitWarnings cuts what is still too long).
  std::string warning() const;
  // Whether warning() keeps the field path: the line fits with it.
  bool warningKeepsField() const;
  bool operator==(const Violation&) const = default;
};

// One pod template of the workload as the validators read it: where it is
// and its pod, read with the profile's accelerator names.
struct TemplateReading {
  PodTemplateView view;
  PodReader pod;
};

struct ValidationContext {
  const JsonValue& object;
  // The template being checked: each in turn for a declaration's
  // eachTemplate, the workload's primary template for its onceForWorkload.
  PodTemplateView view;
  // The pod template, read with the profile's accelerator names.
  const PodReader& pod;
  const Classification& classification;
  // The selected profile; null for objects that are not AI workloads (only
  // validators that apply to unclassified objects run then) or when no
  // profile applies.
  const Profile* profile;
  const ProfileSet& profiles;
  // How the profile was selected: its error says why aiadmit.dev/profile
  // names a profile that cannot apply.
  const ProfileSelection& selection;
  std::string_view namespaceName;
  Operation operation;
  // What the cluster holds, when a view of it is known (`check --cluster`, or
  // `serve` with its watcher); null otherwise. Rules on it act only on a
  // present answer (Presence::No, a counted capacity), never on Unknown.
  const ClusterView* cluster = nullptr;
  // Every template of the workload, in the table's order.
  std::span<const TemplateReading> templates = {};
  // A bare Pod, or a controller's object: the default actions of some rules
  // differ between the two (webhook/policy/rules.h).
  RuleTarget target = RuleTarget::Controller;
};

// A check: it appends a Violation for each problem it finds.
using Check = void (*)(const ValidationContext& context, std::vector<Violation>& out);

// A validator: the checks of one rule, stated once in its own .cpp as a
// constant that validators/registry.cpp lists in its rule's row:
//
//   extern const ValidatorDeclaration kGpuQuantityValidator{
//       .name = "gpu-quantity", .eachTemplate = checkGpuQuantity};
//
// A rule may judge each pod template on its own (GPUs per Pod, a container's
// limits), the workload as a whole once (all GPU workers together, the class
// against the kind, the operator's own fields), or both.
struct ValidatorDeclaration {
  std::string_view name;  // "gpu-quantity"
  // Most rules only concern AI workloads; AIA007 also looks at the rest.
  bool appliesToUnclassified = false;
  // Run once for each template, with that template in the context.
  Check eachTemplate = nullptr;
  // Run once, with the workload's primary template in the context and every
  // template in `templates`.
  Check onceForWorkload = nullptr;
};
// A declaration is a constant that needs no code to run before main, so the
// registry may be read while other files' constants are initialised.
static_assert(std::is_trivially_destructible_v<ValidatorDeclaration>);

// Runs `check` of a declaration listed under `rule` and gives each violation
// it appends that rule; returns where they begin in `out`.
template <class Context>
size_t runCheck(RuleId rule, void (*check)(const Context&, std::vector<Violation>&),
                const Context& context, std::vector<Violation>& out) {
  const size_t first = out.size();
  check(context, out);
  for (size_t i = first; i < out.size(); ++i) out[i].rule = rule;
  return first;
}

// "spec.template.spec.containers[1]" for the container at `index` of `list`.
std::string containerFieldPath(const PodTemplateView& view, ContainerList list, size_t index);

// "spec.template.metadata.annotations[aiadmit.dev/workload]" where the pod
// reader found the annotation: the pod template when it carries it (its value
// wins), else the object's own metadata.
std::string annotationFieldPath(const ValidationContext& context, std::string_view key);

// A priority class a workload names, and the kubectl field path it is named at.
struct NamedPriorityClass {
  std::string_view name;
  std::string field;
  // Named in the operator's own field (a Volcano Job's
  // spec.priorityClassName, KubeRay's ray.io/priority-class-name label, a
  // Kubeflow job's runPolicy.schedulingPolicy.priorityClass), which ranks the
  // workload's Pods or their gang group; else in a pod template.
  bool byOperator = false;
};
// The context's template's priorityClassName ("spec.template.spec.priorityClassName").
NamedPriorityClass templatePriorityClass(const ValidationContext& context);
// The operator's priority field of the context's workload
// ("metadata.labels[ray.io/priority-class-name]"); an empty name when the kind
// has no such field or the object leaves it unset.
NamedPriorityClass operatorPriorityClass(const ValidationContext& context);

// A rule on the priority classes a workload names: `judge` sees each
// template's, and once the operator's (the field is the object's and no
// template's).
using PriorityClassJudge = void (*)(const ValidationContext& context, NamedPriorityClass named,
                                    std::vector<Violation>& out);
template <PriorityClassJudge judge>
constexpr ValidatorDeclaration priorityClassDeclaration(std::string_view name) {
  return {.name = name,
          .eachTemplate =
              [](const ValidationContext& context, std::vector<Violation>& out) {
                judge(context, templatePriorityClass(context), out);
              },
          .onceForWorkload =
              [](const ValidationContext& context, std::vector<Violation>& out) {
                judge(context, operatorPriorityClass(context), out);
              }};
}

// The node labels and taints of a profile's pool, for messages:
// "accelerator=nvidia, taint accelerator=gpu:NoSchedule".
std::string describePool(const Placement& placement);

}  // namespace aiadmit
