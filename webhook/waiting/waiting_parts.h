// What explain's steps hand each other (webhook/waiting/waiting_*.cpp): the facts
// of one Pod, of the nodes as the scheduler fills them, and the workloads
// they add up to.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "webhook/waiting/waiting.h"

namespace aiadmit::waiting {

// The workload a Pod is part of: the object a user made (a JobSet, not its
// Jobs; a Deployment, not its ReplicaSet), or the PodGroup of Kubernetes' own
// that it names, and whether it needs all of its Pods at once.
struct WorkloadKey {
  std::string kind;
  std::string name;
  bool gang = false;
  // A PodGroup of Kubernetes' own (kind "PodGroup"): the scheduler places
  // its Pods as the group's policy says.
  bool native = false;
  // The group's record when the input holds it, and whether the input lists
  // PodGroups at all (then a group it lacks does not exist). A 1.35 Pod
  // names a pod group of a Workload (spec.workloadRef), which has none.
  const PodGroupRecord* podGroup = nullptr;
  bool podGroupsListed = false;
};
// (namespace, kind, name) of a workload.
using WorkloadId = std::tuple<std::string, std::string, std::string>;

struct PodFacts {
  const JsonValue* json = nullptr;
  const JsonValue* spec = nullptr;
  std::string namespaceName;
  std::string name;
  std::string nodeName;
  bool terminal = false;  // Succeeded or Failed: holds nothing
  // Extended accelerator resources the Pod needs on one node, as the
  // scheduler sums them.
  std::map<std::string, int64_t> accelerators;
  int64_t claimedDevices = 0;  // accelerator devices of its DRA claims
  int64_t gpus = 0;            // all of them: its accelerators and devices
  int64_t priority = 0;
  bool preemptsNever = false;
  std::string priorityClassName;
  WorkloadKey workload;
  std::string since;               // RFC 3339: when it began to wait
  std::vector<std::string> gates;  // spec.schedulingGates
  SchedulerWord scheduler;
  // "ns/name" of the ResourceClaims it uses (by name, or made from a template).
  std::vector<std::string> claimKeys;
  // "ns/name" of a claim made for it from a ResourceClaimTemplate -> the
  // template's name: where a fix to the claim's spec belongs.
  std::map<std::string, std::string> claimTemplates;
};

// What the Pods bound to a set of nodes hold.
struct NodeSetUse {
  int64_t total = 0;                      // the nodes' accelerators
  int64_t inUse = 0;                      // what bound Pods request of them
  std::map<int64_t, int64_t> byPriority;  // GPUs held, by the holders' priority
  std::string holders;                    // by namespace and priority, most first
};

// A taint that keeps requests off a device for now (NoSchedule or
// NoExecute), and who set it.
struct DeviceTaintOf {
  const DeviceTaint* taint = nullptr;
  std::string_view rule;   // the DeviceTaintRule; "" when the driver publishes it
  std::string_view slice;  // the ResourceSlice that lists the device
};

// A DRA device of an accelerator driver that is local to one node.
struct NodeDevice {
  std::string_view driver;
  std::string_view pool;
  std::string_view name;
  bool allocated = false;
  std::vector<DeviceTaintOf> taints;  // only those that keep requests off it
};

// The Pods of the input that ask for GPUs or hold them, and what each node
// has left.
struct Occupancy {
  std::vector<PodFacts> pods;  // every non-terminal Pod that asks for an accelerator
  // By node: what bound Pods request of each accelerator resource.
  std::map<std::string, std::map<std::string, int64_t>> used;
  // By node: the bound Pods (indexes into `pods`).
  std::map<std::string, std::vector<size_t>> holders;
  // DRA devices allocated to claims.
  std::set<AllocatedDevice> allocatedDevices;
  // By node name: the accelerator devices local to it (webhook/waiting/waiting_devices.h).
  std::map<std::string, std::vector<NodeDevice>, std::less<>> devices;
  // "ns/name" of the ResourceClaims the view holds.
  std::map<std::string, const ClaimRecord*> claims;
  // A workload's GPU Pods that are placed, and their GPUs.
  std::map<WorkloadId, std::pair<int, int64_t>> placed;
  // A native PodGroup's Pods that ask for no GPU, placed and waiting: the
  // scheduler counts them toward its minCount all the same.
  std::map<WorkloadId, std::pair<int, int>> withoutGpus;
  // Filled as the causes are judged (the one thing judging writes).
  mutable std::map<std::vector<const ClusterNode*>, NodeSetUse> nodeSetUse;
};

// One Pod's cause, with the words for it.
struct PodVerdict {
  WaitCause cause = WaitCause::Unknown;
  std::string reason;
  std::string fix;
  std::string pool;
};

// Whether the scheduler's (or Kueue's) message names `cause`.
std::optional<bool> messageAgrees(std::string_view message, WaitCause cause);

// How much of `resource` the node has allocatable, and how much of it the
// Pods bound to it request.
int64_t allocatableOf(const ClusterNode& node, const std::string& resource);
int64_t usedOn(const Occupancy& occupancy, const ClusterNode& node, const std::string& resource);

// "1 GPU", "4 GPUs".
std::string gpuCount(int64_t gpus);
// The workload `pod` is part of.
WorkloadId workloadIdOf(const PodFacts& pod);
// Whether the scope takes the namespace (names are matched by the caller).
bool inScope(const WaitingScope& scope, std::string_view namespaceName);

}  // namespace aiadmit::waiting
