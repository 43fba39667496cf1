// Every rule the webhook checks, in rule order so that messages list
// violations deterministically.
#include "validators/accelerator_name.h"
#include "validators/annotation_values.h"
#include "validators/claim_annotations.h"
#include "validators/claim_device_capacity.h"
#include "validators/claim_device_class_exists.h"
#include "validators/claim_device_classes.h"
#include "validators/claim_references.h"
#include "validators/claim_validator.h"
#include "validators/cluster_capacity.h"
#include "validators/gang_scheduling.h"
#include "validators/gpu_limits_match.h"
#include "validators/gpu_namespace.h"
#include "validators/gpu_quantity.h"
#include "validators/gpu_sharing.h"
#include "validators/gpus_per_node.h"
#include "validators/local_queue_exists.h"
#include "validators/memory_limit.h"
#include "validators/pool_conflict.h"
#include "validators/pool_without_gpu.h"
#include "validators/priority_class.h"
#include "validators/priority_class_exists.h"
#include "validators/readiness_probe.h"
#include "validators/restart_policy.h"
#include "validators/shape_kind.h"
#include "validators/validator.h"
#include "validators/workload_annotation.h"

namespace aiadmit {

const std::vector<std::unique_ptr<const Validator>>& allValidators() {
  static const std::vector<std::unique_ptr<const Validator>> validators = [] {
    std::vector<std::unique_ptr<const Validator>> list;
    list.push_back(std::make_unique<WorkloadAnnotationValidator>());           // AIA001
    list.push_back(std::make_unique<AnnotationValuesValidator>());             // AIA001
    list.push_back(std::make_unique<ShapeKindValidator>());                    // AIA002
    list.push_back(std::make_unique<AcceleratorNameValidator>());              // AIA003
    list.push_back(std::make_unique<GpuQuantityValidator>());                  // AIA004
    list.push_back(std::make_unique<GpuLimitsMatchValidator>());               // AIA005
    list.push_back(std::make_unique<GpusPerNodeValidator>());                  // AIA006
    list.push_back(std::make_unique<PoolWithoutGpuValidator>());               // AIA007
    list.push_back(std::make_unique<PoolConflictValidator>());                 // AIA008
    list.push_back(std::make_unique<ReadinessProbeValidator>());               // AIA009
    list.push_back(std::make_unique<GangSchedulingValidator>());               // AIA010
    list.push_back(std::make_unique<PriorityClassValidator>());                // AIA011
    list.push_back(std::make_unique<OperatorPriorityClassValidator>());        // AIA011
    list.push_back(std::make_unique<GpuNamespaceValidator>());                 // AIA012
    list.push_back(std::make_unique<GpuSharingValidator>());                   // AIA013
    list.push_back(std::make_unique<RestartPolicyValidator>());                // AIA014
    list.push_back(std::make_unique<MemoryLimitValidator>());                  // AIA015
    list.push_back(std::make_unique<ClusterCapacityValidator>());              // AIA016
    list.push_back(std::make_unique<PriorityClassExistsValidator>());          // AIA017
    list.push_back(std::make_unique<OperatorPriorityClassExistsValidator>());  // AIA017
    list.push_back(std::make_unique<LocalQueueExistsValidator>());             // AIA018
    list.push_back(std::make_unique<ClaimReferencesValidator>());              // AIA019
    return list;
  }();
  return validators;
}

const std::vector<std::unique_ptr<const ClaimValidator>>& allClaimValidators() {
  static const std::vector<std::unique_ptr<const ClaimValidator>> validators = [] {
    std::vector<std::unique_ptr<const ClaimValidator>> list;
    list.push_back(std::make_unique<ClaimAnnotationsValidator>());        // AIA001
    list.push_back(std::make_unique<ClaimDeviceClassExistsValidator>());  // AIA019
    list.push_back(std::make_unique<ClaimDeviceClassesValidator>());      // AIA020
    list.push_back(std::make_unique<ClaimDeviceCapacityValidator>());     // AIA020
    return list;
  }();
  return validators;
}

}  // namespace aiadmit
