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
    kOperatorPriorityClassValidator, kGpuNamespaceValidator, kGpuSharingValidator,
    kRestartPolicyValidator, kMemoryLimitValidator, kClusterCapacityValidator,
    kPriorityClassExistsValidator, kOperatorPriorityClassExistsValidator,
    kLocalQueueExistsValidator, kClaimReferencesValidator;
extern const ClaimValidatorDeclaration kClaimAnnotationsValidator, kClaimDeviceClassExistsValidator,
    kClaimDeviceClassesValidator, kClaimDeviceCapacityValidator;

namespace {

constexpr RuleRow kRules[] = {
    {.rule = {AIA001, RuleAction::Deny, "an aiadmit.dev annotation aiadmit cannot use",
              std::nullopt, RuleSubject::Workload},
     .checks = {&kWorkloadAnnotationValidator, &kAnnotationValuesValidator},
     .claimChecks = {&kClaimAnnotationsValidator}},
    {.rule = {AIA002, RuleAction::Deny, "shape against kind", std::nullopt, RuleSubject::Workload,
              RulePremise::Class},
     .checks = {&kShapeKindValidator}},
    {.rule = {AIA003, RuleAction::Deny, "misspelt accelerator name"},
     .checks = {&kAcceleratorNameValidator}},
    {.rule = {AIA004, RuleAction::Deny, "GPU quantity that is negative or not a whole number"},
     .checks = {&kGpuQuantityValidator}},
    {.rule = {AIA005, RuleAction::Deny, "extended-resource requests that differ from limits"},
     .checks = {&kGpuLimitsMatchValidator}},
    {.rule = {AIA006, RuleAction::Deny, "more GPUs than a node has"},
     .checks = {&kGpusPerNodeValidator}},
    {.rule = {AIA007, RuleAction::Deny, "aimed at the GPU pool without asking for a GPU",
              std::nullopt, RuleSubject::Workload},
     .checks = {&kPoolWithoutGpuValidator}},
    {.rule = {AIA008, RuleAction::Deny, "selection that contradicts the pool"},
     .checks = {&kPoolConflictValidator}},
    {.rule = {AIA009, RuleAction::Deny, "model server without a readiness probe", std::nullopt,
              RuleSubject::Workload, RulePremise::Class},
     .checks = {&kReadinessProbeValidator}},
    {.rule = {AIA010, RuleAction::Deny, "distributed training without gang scheduling",
              std::nullopt, RuleSubject::Workload},
     .checks = {&kGangSchedulingValidator}},
    {.rule = {AIA011, RuleAction::Deny, "priority class not allowed", std::nullopt,
              RuleSubject::Workload},
     .checks = {&kPriorityClassValidator, &kOperatorPriorityClassValidator}},
    {.rule = {AIA012, RuleAction::Deny, "GPUs in a namespace that may not use them"},
     .checks = {&kGpuNamespaceValidator}},
    {.rule = {AIA013, RuleAction::Deny, "shared GPUs where the profile forbids sharing"},
     .checks = {&kGpuSharingValidator}},
    {.rule = {AIA014, RuleAction::Deny, "training or batch Pod that restarts Always", std::nullopt,
              RuleSubject::Workload, RulePremise::Class},
     .checks = {&kRestartPolicyValidator}},
    {.rule = {AIA015, RuleAction::Warn, "model server without a memory limit", std::nullopt,
              RuleSubject::Workload, RulePremise::Class},
     .checks = {&kMemoryLimitValidator}},
    // Rules on the cluster view: they act only on what the cluster is known
    // to hold (webhook/cluster/cluster_view.h) and say nothing without one. What
    // does not exist yet may exist a moment later (one `kubectl apply` of a
    // file holding both, Helm's or a GitOps tool's order), and controllers
    // retry until it does: AIA017-AIA019 warn on controllers' objects.
    {.rule = {RuleId{16}, RuleAction::Deny, "accelerators no node of the cluster can hold"},
     .checks = {&kClusterCapacityValidator}},
    {.rule = {AIA017, RuleAction::Deny, "priority class that does not exist", RuleAction::Warn},
     .checks = {&kPriorityClassExistsValidator, &kOperatorPriorityClassExistsValidator}},
    {.rule = {AIA018, RuleAction::Deny, "Kueue LocalQueue that does not exist", RuleAction::Warn},
     .checks = {&kLocalQueueExistsValidator}},
    {.rule = {AIA019, RuleAction::Deny, "claim template or device class that does not exist",
              RuleAction::Warn},
     .checks = {&kClaimReferencesValidator},
     .claimChecks = {&kClaimDeviceClassExistsValidator}},
    // Rules on DRA claim objects (ResourceClaim, ResourceClaimTemplate) alone.
    {.rule = {RuleId{20}, RuleAction::Deny,
              "device request a profile does not allow or no node can hold"},
     .claimChecks = {&kClaimDeviceClassesValidator, &kClaimDeviceCapacityValidator}},
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
