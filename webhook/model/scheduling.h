// Scheduling semantics shared by mutators and validators, the way
// kube-scheduler reads them (k8s.io/api/core/v1 toleration helpers,
// k8s.io/component-helpers/scheduling/corev1/nodeaffinity).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "webhook/codec/json.h"

namespace aiadmit {

struct Toleration {
  std::string key{};
  std::string op = "Equal";  // Equal | Exists
  std::string value{};
  std::string effect{};  // "" (all) | NoSchedule | PreferNoSchedule | NoExecute
  std::optional<int64_t> tolerationSeconds{};
};

struct NodeSelectorRequirement {
  std::string key;
  std::string op;  // In | NotIn | Exists | DoesNotExist | Gt | Lt
  std::vector<std::string> values;
};

// A node pool: the node labels and taints that identify it.
struct Placement {
  std::map<std::string, std::string> nodeSelector;
  // One required node affinity term, added when the pod has no required terms.
  std::vector<NodeSelectorRequirement> requiredNodeAffinity;
  std::vector<Toleration> tolerations;
};

// Whether the toleration `existing` (from a manifest) tolerates everything
// that `wanted` (from a profile) tolerates: an empty key with Exists tolerates
// every taint, an empty effect every effect, Exists every value.
bool tolerationCovers(const JsonValue& existing, const Toleration& wanted);

// Whether any toleration in `tolerations` (a PodSpec's list) covers `wanted`.
bool anyTolerationCovers(const JsonValue* tolerations, const Toleration& wanted);

// A PodSpec (or RuntimeClass scheduling) toleration list item as written;
// an absent operator is Equal, as the API defaults it.
Toleration tolerationFromJson(const JsonValue& item);

// The toleration as a PodSpec list item.
JsonValue tolerationToJson(const Toleration& toleration, JsonAllocator& alloc);
// The requirement as a matchExpressions item (a profile's requiredNodeAffinity
// entry has the same shape).
JsonValue requirementToJson(const NodeSelectorRequirement& requirement, JsonAllocator& alloc);

// "accelerator=gpu:NoSchedule", "accelerator:NoSchedule" (Exists), "*" (all).
std::string describeToleration(const Toleration& toleration);

// ---------------------------------------------------------------------------
// Node labels: what a nodeSelector entry, a node affinity expression or a
// profile's placement asks of one label of a node.

enum class LabelOperator { In, NotIn, Exists, DoesNotExist, Gt, Lt };

// The values of a requirement without copying them: a JSON array of strings,
// a profile's list, or the one value of a nodeSelector entry.
class LabelValues {
 public:
  LabelValues() = default;
  explicit LabelValues(std::string_view single) : single_(single), count_(1) {}
  explicit LabelValues(const std::vector<std::string>& list) : list_(&list), count_(list.size()) {}
  // Non-string items of a JSON array read as "" (the API server refuses them).
  explicit LabelValues(const JsonValue* array);

  size_t size() const { return count_; }
  std::string_view operator[](size_t index) const;
  bool contains(std::string_view value) const;

 private:
  std::string_view single_;
  const std::vector<std::string>* list_ = nullptr;
  const JsonValue* array_ = nullptr;
  size_t count_ = 0;
};

struct LabelRequirement {
  std::string_view key;
  LabelOperator op = LabelOperator::Exists;
  LabelValues values;

  // `key: value` of a nodeSelector.
  static LabelRequirement equals(std::string_view key, std::string_view value);
  // A matchExpressions item; false when it is not one the API server accepts.
  static bool fromJson(const JsonValue& expression, LabelRequirement& out);
  static LabelRequirement fromProfile(const NodeSelectorRequirement& requirement);

  // Whether a node whose label `key` is absent (present=false) or has `value`
  // satisfies the requirement.
  bool matches(bool present, std::string_view value) const;
};

// Whether some node can satisfy both requirements (same key assumed).
bool compatible(const LabelRequirement& a, const LabelRequirement& b);
// Whether every node that satisfies `a` also satisfies `b` (same key assumed).
bool implies(const LabelRequirement& a, const LabelRequirement& b);

// "accelerator=nvidia", "accelerator in (a, b)", "!accelerator", "gpus>4":
// the label-selector notation kubectl prints.
std::string describeRequirement(const LabelRequirement& requirement);

// ---------------------------------------------------------------------------
// A PodSpec's required node affinity: the one place that knows where its terms
// are, for those that read them and the pool placement that adds to them.

// The PodSpec-relative field path of the terms.
inline constexpr std::string_view kRequiredNodeSelectorTermsPath =
    "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms";
// spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution
// .nodeSelectorTerms, whatever JSON it is; nullptr when a step is missing or is
// no object (also for a null podSpec).
const JsonValue* requiredNodeSelectorTerms(const JsonValue* podSpec);
JsonValue* requiredNodeSelectorTerms(JsonValue* podSpec);
// The terms array, with the objects on the way to it and the array itself
// made when they are missing.
JsonValue& ensureRequiredNodeSelectorTerms(JsonValue& podSpec, JsonAllocator& alloc);

// ---------------------------------------------------------------------------
// A Pod's node selection (nodeSelector and required node affinity) against the
// node pool of a profile (its placement's nodeSelector and required node
// affinity, which every node of the pool satisfies).

enum class PoolRelation {
  Unrelated,  // the selection says nothing about the pool
  Selects,    // every node the selection allows is a node of the pool
  Excludes,   // no node of the pool satisfies the selection
};

// Which part of the PodSpec decided a relation, for field paths.
struct SelectionSite {
  enum class Part { None, NodeSelector, NodeAffinity } part = Part::None;
  std::string_view key;  // the label key in nodeSelector or in the expression
  // Affinity: the term and expression that decided, or -1 when several terms
  // did together (every term excludes the pool, or every term selects it).
  int term = -1;
  int expression = -1;
  // The Pod's requirement that decided and the pool's on the same key, for
  // messages; keys are empty when several terms decided together.
  LabelRequirement podRequirement;
  LabelRequirement poolRequirement;

  // "nodeSelector", "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution
  // .nodeSelectorTerms[0].matchExpressions[1]", relative to the PodSpec.
  std::string fieldPath() const;
};

struct PoolVerdict {
  PoolRelation relation = PoolRelation::Unrelated;
  SelectionSite site;
};

// Node affinity terms are ORed: the selection excludes the pool when its
// nodeSelector does or when every term does; it selects the pool when nothing
// excludes it and its nodeSelector implies a pool label or every term does.
// Only the pool's positive requirements (=, in, exists, gt, lt) identify it.
PoolVerdict relatePodToPool(const JsonValue* podSpec, const Placement& pool);

// The first expression of a required node affinity term that names the key
// of one of the pool's required node affinity requirements and yet lets the
// term reach nodes outside the pool: no expression of the term on that key
// implies the pool's requirement, and neither does the Pod's nodeSelector
// (which every term must satisfy too). Terms that do not name the key get the
// pool's requirement from the mutator; an empty term matches no node.
std::optional<SelectionSite> firstTermBeyondPool(const JsonValue* podSpec, const Placement& pool);

// Whether the placement says anything about nodes (labels or taints).
bool placementDefinesPool(const Placement& pool);

// The first pool toleration whose taint keeps Pods off the pool (NoSchedule,
// NoExecute or any effect) and that `tolerations` does not cover; nullptr when
// the Pod tolerates every such taint.
const Toleration* firstUntoleratedPoolTaint(const JsonValue* tolerations, const Placement& pool);

// The index of the first toleration in `tolerations` that names a pool taint
// by key and covers it; -1 when none does. A wildcard (empty key, Exists)
// tolerates every taint without aiming at any pool, so it does not count.
int explicitPoolToleration(const JsonValue* tolerations, const Placement& pool);

// The PodGroup of Kubernetes' own that the Pods of `podSpec` belong to:
// spec.schedulingGroup.podGroupName (1.36+), else the Workload that
// spec.workloadRef names (1.35); "" when neither. The scheduler places such
// Pods as their group's policy says, and refuses a group whose Pods' priority
// differs from the group's.
std::string_view podGroupOf(const JsonValue* podSpec);

}  // namespace aiadmit
