// The rows of the workload-type table for the kinds aiadmit knows without a
// WorkloadType document: the core kinds and the AI operators' custom resources.
#pragma once

#include <vector>

#include "webhook/model/workload_type.h"

namespace aiadmit {

// The built-in rows (the table's source).
std::vector<WorkloadType> builtInWorkloadTypes();

}  // namespace aiadmit
