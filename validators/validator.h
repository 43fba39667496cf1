// A validator checks one rule of the catalogue against the final object, the
// one the API server will store, and reports violations. The engine applies
// the profile's action (deny, warn, off) and formats the answer.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
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
  RuleId rule;
  std::string field;    // kubectl field path: spec.template.spec.containers[0].resources.limits
  std::string problem;  // what is wrong, and what it leads to
  std::string fix;      // how to fix it
  // Problem and fix in a few words, for admission warnings, which the API
  // server keeps short: `"nvidia.com/gpus" is not offered; did you mean ...`.
  std::string brief;
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
  // The template being checked. Validators of Scope::Template run once for
  // each template of the workload; those of Scope::Workload once, with the
  // workload's primary template here and every template in `templates`.
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

class Validator {
 public:
  virtual ~Validator() = default;
  virtual RuleId rule() const = 0;
  // Most rules only concern AI workloads; AIA007 also looks at the rest.
  virtual bool appliesToUnclassified() const { return false; }
  // Template: the rule judges each pod template on its own (GPUs per Pod, a
  // container's limits). Workload: it judges the workload as a whole (all
  // GPU workers together, the class against the kind).
  enum class Scope { Template, Workload };
  virtual Scope scope() const { return Scope::Template; }
  virtual void check(const ValidationContext& context, std::vector<Violation>& out) const = 0;
};

// The base of a validator of `Rule` in `RuleScope`: its class then declares
// only check() (and appliesToUnclassified() for the rule that needs it).
template <RuleId Rule, Validator::Scope RuleScope = Validator::Scope::Template>
class RuleValidator : public Validator {
 public:
  RuleId rule() const final { return Rule; }
  Scope scope() const final { return RuleScope; }
};

// All validators, in rule order (validators/registry.cpp).
const std::vector<std::unique_ptr<const Validator>>& allValidators();

// "spec.template.spec.containers[1]" for the container at `index` of `list`.
std::string containerFieldPath(const PodTemplateView& view, ContainerList list, size_t index);

// "spec.template.metadata.annotations[aiadmit.dev/workload]" where the pod
// reader found the annotation: the pod template when it carries it (its value
// wins), else the object's own metadata.
std::string annotationFieldPath(const ValidationContext& context, std::string_view key);

// The node labels and taints of a profile's pool, for messages:
// "accelerator=nvidia, taint accelerator=gpu:NoSchedule".
std::string describePool(const Placement& placement);

}  // namespace aiadmit
