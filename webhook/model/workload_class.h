// The class of an AI workload, as a typed value: the workload-type table's
// rows name the class a kind has when the workload does not say, and the
// policy layer decides what a class means (which profile it selects, which
// shapes AIA002 refuses on which lifecycle, webhook/policy/classify).
#pragma once

#include <optional>
#include <string_view>

namespace aiadmit {

enum class WorkloadClass { None, Training, Batch, Realtime };

// "training", "batch", "realtime"; "none" for None.
std::string_view className(WorkloadClass workloadClass);
// A class a profile, an annotation or a WorkloadType document names; None
// has no name to parse.
std::optional<WorkloadClass> parseClass(std::string_view text);

}  // namespace aiadmit
