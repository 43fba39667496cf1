// How an UPDATE changes a workload, read through its row's UpdateRules: a
// scale, or a queue controller's suspend and placement, is not a rollout, and
// the parts an operator's webhook fixes at creation are not aiadmit's to edit.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "webhook/codec/json.h"
#include "webhook/model/workload_type.h"

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

// What aiadmit's edit of an UPDATE keeps where it may only restore: the
// escaped pointers where it put back what the old object holds and the
// request dropped, and those where it left out what it would have written.
struct Restoration {
  std::vector<std::string> restored;
  std::vector<std::string> leftOut;
};

// On UPDATE: in each part of `mutated` that the kind fixes at creation,
// aiadmit's edits of the request's `sent` stay only where they put back what
// the old object holds. kubectl replaces a custom resource's lists whole (a
// client-side apply's merge patch) and an atomic list with the file's (a
// strategic merge patch, a server-side apply), so a reapply of the same file
// drops what aiadmit wrote at creation; restoring it keeps the part as the
// API server and the operator's webhook require. Anything else aiadmit would
// write there is left out: nothing new is written into the part, and nothing
// the request changed is changed back. Values are compared as stored and as
// an operator's Go types read them (an empty member is an absent one, a
// quantity is its value), so the empty template metadata an operator's
// webhook wrote at creation, and a reapply drops, is no difference.
Restoration keepFixedParts(const WorkloadType& type, const JsonValue& old, const JsonValue& sent,
                           JsonValue& mutated, JsonAllocator& alloc);

// The same for the whole object: a controller's update (changesOnlyControllerFields)
// keeps of aiadmit's edits only what the update dropped of the old object's
// values. A queue controller's placement only adds to a suspended
// workload's scheduling directives and restores the template its Workload
// recorded, which holds what aiadmit wrote at creation, so for it nothing
// stays; a reapply of the file to a suspended workload, which looks the same
// but drops what aiadmit wrote, gets it back.
Restoration keepOnlyRestores(const JsonValue& old, const JsonValue& sent, JsonValue& mutated,
                             JsonAllocator& alloc);

}  // namespace aiadmit
