// Why GPU work waits while GPUs sit idle (`aiadmit explain`): the Pending
// Pods that ask for accelerators and the Kueue Workloads not admitted, each
// with one cause and one fix, and the idle GPUs of every pool beside them.
// Read from the objects a snapshot or the API lists (Pods, Nodes, Events,
// ResourceSlices, ResourceClaims, DeviceClasses, DeviceTaintRules, PodGroups,
// PriorityClasses, Kueue's LocalQueues, ClusterQueues and Workloads), with
// the scheduler's filters redone for what decides GPU placement: a node's
// allocatable count, its NoSchedule and NoExecute taints, the Pod's
// nodeSelector and required node affinity, the taints of DRA devices, and
// what the bound Pods and allocated claims already hold.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "webhook/cluster/cluster_view.h"
#include "webhook/codec/json.h"
#include "webhook/codec/yaml_json.h"

namespace aiadmit {

// Lasting causes first: the order in which a Pod's causes are looked for,
// and the order of the groups that tie on GPUs.
enum class WaitCause {
  NoNodeCanHold,       // no node of any pool can ever hold it
  ClaimUnallocatable,  // a ResourceClaim the scheduler cannot allocate
  UntoleratedTaint,    // the nodes that fit carry a taint it does not tolerate
  SelectorExcludes,    // its nodeSelector or affinity excludes every node that fits
  DeviceTainted,       // the free devices it could have carry a taint its claim does not tolerate
  Quota,               // Kueue holds it: its queue's quota
  GangPartial,         // part of its gang is placed, the rest waits
  Fragmented,          // the pool's idle GPUs would hold it, but no one node has enough
  PoolFull,            // it fits, but the GPUs are in use now
  Unknown,             // nothing aiadmit reads explains it
};
// "no-node-can-hold", "claim-unallocatable", ... as `-o json` and the
// metrics name them.
std::string_view causeName(WaitCause cause);

// What the scheduler (or, for a queued workload, Kueue) said of it, and
// whether that names the same cause.
struct SchedulerWord {
  // "scheduler", or "kueue" for a Workload Kueue holds.
  std::string source = "scheduler";
  // The condition the words are from, as the object writes it: PodScheduled
  // (a Pod), PodGroupInitiallyScheduled or PodGroupScheduled (a PodGroup of
  // Kubernetes' own), QuotaReserved or Admitted (a Kueue Workload); all three
  // empty when they are a FailedScheduling event's, or when nothing was said.
  std::string condition;
  std::string status;  // "False"
  std::string reason;  // "Unschedulable"; Kueue's "Pending", "Inadmissible", ...
  // The condition's message, else the last FailedScheduling event's.
  std::string message;
  std::optional<bool> agrees;  // nullopt when it said nothing
};

struct WaitingWorkload {
  std::string kind;  // "Pod", "Job", "JobSet", "PodGroup", "Deployment", ...
  std::string namespaceName;
  std::string name;
  int64_t gpus = 0;  // accelerators (devices included) its waiting Pods or queued pod sets ask for
  int pods = 0;      // its Pods that wait (a queued workload's pod count)
  WaitCause cause = WaitCause::Unknown;
  std::string reason;  // what stops it, in one sentence
  std::string fix;     // what to do about it
  std::string pool;    // the pool it waits for; "" when none
  std::string since;   // when it began to wait (RFC 3339), "" when unknown
  SchedulerWord scheduler;
  std::vector<std::string> podNames;  // the Pods that wait, sorted
};

// One pool of GPU nodes: named by its node-group label (GKE node pool, EKS
// node group, Karpenter NodePool, AKS agent pool), else by its instance type.
struct PoolIdle {
  std::string pool;
  int nodes = 0;
  int64_t gpus = 0;  // allocatable accelerators plus node-local DRA accelerator devices
  // Less what bound, non-terminal Pods request and allocated claims hold,
  // and less the free devices a device taint keeps requests off.
  int64_t idleGpus = 0;
  int64_t taintedGpus = 0;  // free devices a NoSchedule or NoExecute device taint keeps off
  // Idle GPUs on the nodes where none of the Pods that wait for room in this
  // pool (gang-partial, fragmented, pool-full, unknown) fits now: each asks
  // more of one node than it has idle. 0 when no such Pod waits.
  int64_t unusableIdleGpus = 0;
  int waitingPods = 0;  // Pods of the explained scope that wait for this pool
  std::map<WaitCause, int> waitingByCause;
};

struct WaitingReport {
  // Grouped by cause, the groups by GPUs waiting (most first), each group's
  // workloads likewise, then by namespace and name.
  std::vector<WaitingWorkload> waiting;
  std::vector<PoolIdle> idle;  // by name
};

// The objects explain reads, parsed once and kept alive for the report.
struct WaitingInput {
  std::vector<ManifestDocument> documents;
  // Nodes, slices, classes, claims, DeviceTaintRules, LocalQueues, and the
  // GPU Pods and Kueue Workloads that `pods` and `workloads` point into.
  std::shared_ptr<const ClusterView> view;
  std::vector<const JsonValue*> pods;
  std::vector<const JsonValue*> workloads;
  // Only in a snapshot: they make the words, never the cause.
  std::vector<const JsonValue*> events;
  std::vector<const JsonValue*> clusterQueues;
  std::string error;  // "NAME:LINE: message" when the input could not be read
};
// A stream of objects or Lists (YAML or JSON), as `kubectl get
// pods,nodes,events,resourceslices,resourceclaims,deviceclasses,
// devicetaintrules,podgroups.scheduling.k8s.io,priorityclasses,localqueues,
// clusterqueues,workloads -A -o yaml` prints it.
WaitingInput readWaitingInput(std::string_view text, const std::string& name);
// The same from a live view that holds Pods and Workloads (serve's watch).
WaitingInput waitingInputOf(std::shared_ptr<const ClusterView> view);

struct WaitingScope {
  std::vector<std::string> namespaces;  // empty: every namespace
  // Workload or Pod names; empty: all.
  std::vector<std::string> names;
};

// The report for the workloads of `scope`; the pools are the cluster's.
WaitingReport explainWaiting(const WaitingInput& input, const WaitingScope& scope);

// The pool a node belongs to, as PoolIdle names it.
std::string poolOfNode(const ClusterNode& node);
// The label that names it: the first of the node-group labels the node
// carries, as key and value; both empty when it carries none.
std::pair<std::string, std::string> poolLabelOf(const ClusterNode& node);

}  // namespace aiadmit
