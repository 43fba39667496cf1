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

namespace {

// One of each of `Validators`, in the order given.
template <class Base, class... Validators>
std::vector<std::unique_ptr<const Base>> oneOfEach() {
  std::vector<std::unique_ptr<const Base>> list;
  (list.push_back(std::make_unique<Validators>()), ...);
  return list;
}

}  // namespace

const std::vector<std::unique_ptr<const Validator>>& allValidators() {
  static const auto validators = oneOfEach<Validator,
                                           WorkloadAnnotationValidator,           // AIA001
                                           AnnotationValuesValidator,             // AIA001
                                           ShapeKindValidator,                    // AIA002
                                           AcceleratorNameValidator,              // AIA003
                                           GpuQuantityValidator,                  // AIA004
                                           GpuLimitsMatchValidator,               // AIA005
                                           GpusPerNodeValidator,                  // AIA006
                                           PoolWithoutGpuValidator,               // AIA007
                                           PoolConflictValidator,                 // AIA008
                                           ReadinessProbeValidator,               // AIA009
                                           GangSchedulingValidator,               // AIA010
                                           PriorityClassValidator,                // AIA011
                                           OperatorPriorityClassValidator,        // AIA011
                                           GpuNamespaceValidator,                 // AIA012
                                           GpuSharingValidator,                   // AIA013
                                           RestartPolicyValidator,                // AIA014
                                           MemoryLimitValidator,                  // AIA015
                                           ClusterCapacityValidator,              // AIA016
                                           PriorityClassExistsValidator,          // AIA017
                                           OperatorPriorityClassExistsValidator,  // AIA017
                                           LocalQueueExistsValidator,             // AIA018
                                           ClaimReferencesValidator               // AIA019
                                           >();
  return validators;
}

const std::vector<std::unique_ptr<const ClaimValidator>>& allClaimValidators() {
  static const auto validators = oneOfEach<ClaimValidator,
                                           ClaimAnnotationsValidator,        // AIA001
                                           ClaimDeviceClassExistsValidator,  // AIA019
                                           ClaimDeviceClassesValidator,      // AIA020
                                           ClaimDeviceCapacityValidator      // AIA020
                                           >();
  return validators;
}

}  // namespace aiadmit
