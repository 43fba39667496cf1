// The rule catalogue with its checks: one row per rule, in ID order, with its
// ID, its default action (and the one for controllers' objects when it
// differs), its title (docs/rules.md heads the rule with it), its subject
// and its premise (webhook/policy/rules.h says what each means), and the
// declarations that check it, each defined in its own .cpp. IDs are never
// reused or renumbered.
#include "validators/registry.h"

#include <algorithm>
#include <array>
#include <cstddef>

namespace aiadmit {

extern const ValidatorDeclaration kWorkloadAnnotationValidator, kAnnotationValuesValidator,
    kShapeKindValidator, kAcceleratorNameValidator, kGpuQuantityValidator, kGpuLimitsMatchValidator,
    kGpusPerNodeValidator, kPoolWithoutGpuValidator, kPoolConflictValidator,
    kReadinessProbeValidator, kGangSchedulingValidator, kPriorityClassValidator,
    kGpuNamespaceValidator, kGpuSharingValidator, kRestartPolicyValidator, kMemoryLimitValidator,
    kClusterCapacityValidator, kPriorityClassExistsValidator, kLocalQueueExistsValidator,
    kClaimReferencesValidator;
extern const ClaimValidatorDeclaration kClaimAnnotationsValidator, kClaimDeviceClassExistsValidator,
    kClaimDeviceClassesValidator, kClaimDeviceCapacityValidator;

namespace {

using enum RuleAction;
using enum RuleSubject;
using enum RulePremise;

// Each row: {ID, default action, title, default for controllers' objects when
// it differs, subject, premise}, the checks on a workload, the checks on DRA
// claim objects.
constexpr RuleRow kRules[] = {
    {{AIA001, Deny, "an aiadmit.dev annotation aiadmit cannot use", {}, Workload},
     {&kWorkloadAnnotationValidator, &kAnnotationValuesValidator},
     {&kClaimAnnotationsValidator}},
    {{AIA002, Deny, "shape against kind", {}, Workload, Class}, {&kShapeKindValidator}},
    {{AIA003, Deny, "misspelt accelerator name"}, {&kAcceleratorNameValidator}},
    {{AIA004, Deny, "GPU quantity that is negative or not a whole number"},
     {&kGpuQuantityValidator}},
    {{AIA005, Deny, "extended-resource requests that differ from limits"},
     {&kGpuLimitsMatchValidator}},
    {{AIA006, Deny, "more GPUs than a node has"}, {&kGpusPerNodeValidator}},
    {{AIA007, Deny, "aimed at the GPU pool without asking for a GPU", {}, Workload},
     {&kPoolWithoutGpuValidator}},
    {{AIA008, Deny, "selection that contradicts the pool"}, {&kPoolConflictValidator}},
    {{AIA009, Deny, "model server without a readiness probe", {}, Workload, Class},
     {&kReadinessProbeValidator}},
    {{AIA010, Deny, "distributed training without gang scheduling", {}, Workload},
     {&kGangSchedulingValidator}},
    {{AIA011, Deny, "priority class not allowed", {}, Workload}, {&kPriorityClassValidator}},
    {{AIA012, Deny, "GPUs in a namespace that may not use them"}, {&kGpuNamespaceValidator}},
    {{AIA013, Deny, "shared GPUs where the profile forbids sharing"}, {&kGpuSharingValidator}},
    {{AIA014, Deny, "training or batch Pod that restarts Always", {}, Workload, Class},
     {&kRestartPolicyValidator}},
    {{AIA015, Warn, "model server without a memory limit", {}, Workload, Class},
     {&kMemoryLimitValidator}},
    // Rules on the cluster view: they act only on what the cluster is known
    // to hold (webhook/cluster/cluster_view.h) and say nothing without one. What
    // does not exist yet may exist a moment later (one `kubectl apply` of a
    // file holding both, Helm's or a GitOps tool's order), and controllers
    // retry until it does: AIA017-AIA019 warn on controllers' objects.
    {{RuleId{16}, Deny, "accelerators no node of the cluster can hold"},
     {&kClusterCapacityValidator}},
    {{AIA017, Deny, "priority class that does not exist", Warn}, {&kPriorityClassExistsValidator}},
    {{AIA018, Deny, "Kueue LocalQueue that does not exist", Warn}, {&kLocalQueueExistsValidator}},
    {{AIA019, Deny, "claim template or device class that does not exist", Warn},
     {&kClaimReferencesValidator},
     {&kClaimDeviceClassExistsValidator}},
    // Rules on DRA claim objects (ResourceClaim, ResourceClaimTemplate) alone.
    {{RuleId{20}, Deny, "device request a profile does not allow or no node can hold"},
     {},
     {&kClaimDeviceClassesValidator, &kClaimDeviceCapacityValidator}},
};

static_assert(
    [] {
      for (size_t i = 0; i < std::size(kRules); ++i) {
        if (kRules[i].rule.id.number != kFirstRule + static_cast<int>(i)) return false;
      }
      return true;
    }(),
    "the catalogue lists every rule once, in ID order");
static_assert(std::size(kRules) <= kRuleCapacity, "raise kRuleCapacity in webhook/policy/rules.h");

// The rows' facts alone, which the policy layer reads.
constexpr auto kCatalogue = [] {
  std::array<RuleInfo, std::size(kRules)> catalogue{};
  for (size_t i = 0; i < catalogue.size(); ++i) catalogue[i] = kRules[i].rule;
  return catalogue;
}();

}  // namespace

std::span<const RuleRow> ruleRows() {
  return kRules;
}

std::span<const RuleInfo> ruleCatalogue() {
  return kCatalogue;
}

}  // namespace aiadmit
