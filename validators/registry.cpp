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
    {.rule = {.id = AIA001,
              .defaultAction = RuleAction::Deny,
              .title = "an aiadmit.dev annotation aiadmit cannot use",
              .subject = RuleSubject::Workload},
     .checks = {&kWorkloadAnnotationValidator, &kAnnotationValuesValidator},
     .claimChecks = {&kClaimAnnotationsValidator}},
    {.rule = {.id = AIA002,
              .defaultAction = RuleAction::Deny,
              .title = "shape against kind",
              .subject = RuleSubject::Workload,
              .premise = RulePremise::Class},
     .checks = {&kShapeKindValidator}},
    {.rule = {.id = AIA003,
              .defaultAction = RuleAction::Deny,
              .title = "misspelt accelerator name"},
     .checks = {&kAcceleratorNameValidator}},
    {.rule = {.id = AIA004,
              .defaultAction = RuleAction::Deny,
              .title = "GPU quantity that is negative or not a whole number"},
     .checks = {&kGpuQuantityValidator}},
    {.rule = {.id = AIA005,
              .defaultAction = RuleAction::Deny,
              .title = "extended-resource requests that differ from limits"},
     .checks = {&kGpuLimitsMatchValidator}},
    {.rule = {.id = AIA006,
              .defaultAction = RuleAction::Deny,
              .title = "more GPUs than a node has"},
     .checks = {&kGpusPerNodeValidator}},
    {.rule = {.id = AIA007,
              .defaultAction = RuleAction::Deny,
              .title = "aimed at the GPU pool without asking for a GPU",
              .subject = RuleSubject::Workload},
     .checks = {&kPoolWithoutGpuValidator}},
    {.rule = {.id = AIA008,
              .defaultAction = RuleAction::Deny,
              .title = "selection that contradicts the pool"},
     .checks = {&kPoolConflictValidator}},
    {.rule = {.id = AIA009,
              .defaultAction = RuleAction::Deny,
              .title = "model server without a readiness probe",
              .subject = RuleSubject::Workload,
              .premise = RulePremise::Class},
     .checks = {&kReadinessProbeValidator}},
    {.rule = {.id = AIA010,
              .defaultAction = RuleAction::Deny,
              .title = "distributed training without gang scheduling",
              .subject = RuleSubject::Workload},
     .checks = {&kGangSchedulingValidator}},
    {.rule = {.id = AIA011,
              .defaultAction = RuleAction::Deny,
              .title = "priority class not allowed",
              .subject = RuleSubject::Workload},
     .checks = {&kPriorityClassValidator, &kOperatorPriorityClassValidator}},
    {.rule = {.id = AIA012,
              .defaultAction = RuleAction::Deny,
              .title = "GPUs in a namespace that may not use them"},
     .checks = {&kGpuNamespaceValidator}},
    {.rule = {.id = AIA013,
              .defaultAction = RuleAction::Deny,
              .title = "shared GPUs where the profile forbids sharing"},
     .checks = {&kGpuSharingValidator}},
    {.rule = {.id = AIA014,
              .defaultAction = RuleAction::Deny,
              .title = "training or batch Pod that restarts Always",
              .subject = RuleSubject::Workload,
              .premise = RulePremise::Class},
     .checks = {&kRestartPolicyValidator}},
    {.rule = {.id = AIA015,
              .defaultAction = RuleAction::Warn,
              .title = "model server without a memory limit",
              .subject = RuleSubject::Workload,
              .premise = RulePremise::Class},
     .checks = {&kMemoryLimitValidator}},
    // Rules on the cluster view: they act only on what the cluster is known
    // to hold (webhook/cluster/cluster_view.h) and say nothing without one. What
    // does not exist yet may exist a moment later (one `kubectl apply` of a
    // file holding both, Helm's or a GitOps tool's order), and controllers
    // retry until it does: AIA017-AIA019 warn on controllers' objects.
    {.rule = {RuleId{16}, RuleAction::Deny, "accelerators no node of the cluster can hold"},
     .checks = {&kClusterCapacityValidator}},
    {.rule = {.id = AIA017,
              .defaultAction = RuleAction::Deny,
              .title = "priority class that does not exist",
              .controllerDefault = RuleAction::Warn},
     .checks = {&kPriorityClassExistsValidator, &kOperatorPriorityClassExistsValidator}},
    {.rule = {.id = AIA018,
              .defaultAction = RuleAction::Deny,
              .title = "Kueue LocalQueue that does not exist",
              .controllerDefault = RuleAction::Warn},
     .checks = {&kLocalQueueExistsValidator}},
    {.rule = {.id = AIA019,
              .defaultAction = RuleAction::Deny,
              .title = "claim template or device class that does not exist",
              .controllerDefault = RuleAction::Warn},
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
