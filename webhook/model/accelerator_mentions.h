// Where an object that no row of the workload-type table describes asks for
// an accelerator: a resource name of one (nvidia.com/gpu, google.com/tpu,
// amd.com/gpu, ...) with a count above zero anywhere in its spec, or a field
// named for GPUs or TPUs with one (Dynamo's `limits.gpu: "1"`, Spark's
// `gpu: {name, quantity}`). What `check` reports as not judged: such a
// kind's Pods would run GPUs aiadmit never saw.
#pragma once

#include <optional>
#include <string>

#include "webhook/codec/json.h"

namespace aiadmit {

struct AcceleratorMention {
  std::string pointer;  // "/spec/services/worker/resources/limits/gpu"
  std::string name;     // "nvidia.com/gpu", or the field's name ("gpu")
};

// The first mention under the object's spec, in document order.
std::optional<AcceleratorMention> findAcceleratorMention(const JsonValue& object);

}  // namespace aiadmit
