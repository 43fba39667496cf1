// How an UPDATE changes a workload, read through its row's UpdateRules: a
// scale, or a queue controller's suspend and placement, is not a rollout, and
// the parts an operator's webhook fixes at creation are not aiadmit's to edit.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "webhook/kube/json.h"
#include "webhook/kube/workload_type.h"

namespace aiadmit {

// Whether `after` differs from `before` only in what controllers change
// without a rollout: the row's scale fields, its suspend flag and, while
// `before` is suspended, the templates' scheduling directives (node selector,
// affinity, tolerations, scheduling gates, the Pods' labels and annotations),
// which Kubernetes and JobSet let a queue controller write then. The object's
// labels and aiadmit.dev/ annotations must be as they were.
bool changesOnlyControllerFields(const WorkloadType& type, const JsonValue& before,
                                 const JsonValue& after);

// Whether the values are equal but for what a pattern of `ignored` (absolute
// pointer patterns, `*` for any key or index) matches; `at` is the escaped
// pointer of both values in their objects.
bool sameIgnoring(const JsonValue* before, const JsonValue* after, std::string_view at,
                  const std::vector<std::string>& ignored);

// Whether the escaped pointer lies at or under a match of the pattern.
bool pointerWithin(std::string_view pointer, std::string_view pattern);

// Whether the template whose spec is at `specPointer` lies in a part of the
// kind fixed at creation (UpdateRules::immutable).
bool inImmutablePart(const WorkloadType& type, std::string_view specPointer);

}  // namespace aiadmit
