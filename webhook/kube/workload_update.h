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

// On UPDATE: each part of `mutated` that the kind fixes at creation ends as
// the old object has it, or as the request sent it. aiadmit may restore what
// it wrote at creation and a reapply dropped (kubectl replaces a custom
// resource's lists whole), which keeps the part as the API server and the
// operator's webhook require; it never writes anything new there. Returns
// the escaped pointers of the parts set back to the request's.
std::vector<std::string> keepFixedParts(const WorkloadType& type, const JsonValue& old,
                                        const JsonValue& sent, JsonValue& mutated,
                                        JsonAllocator& alloc);

}  // namespace aiadmit
