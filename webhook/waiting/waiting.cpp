// explain's input and report: the objects read once, the Pods that wait made
// into workloads with one cause each, and the pools' idle GPUs beside them.
#include "webhook/waiting/waiting.h"

#include <algorithm>

#include "webhook/cluster/cluster_snapshot.h"
#include "webhook/codec/enum_table.h"
#include "webhook/codec/json_pointer.h"
#include "webhook/model/resources.h"
#include "webhook/waiting/waiting_devices.h"
#include "webhook/waiting/waiting_gang.h"
#include "webhook/waiting/waiting_judge.h"
#include "webhook/waiting/waiting_parts.h"
#include "webhook/waiting/waiting_pods.h"
#include "webhook/waiting/waiting_queue.h"

namespace aiadmit {

namespace {

using enum WaitCause;
// The names `-o json` and the metrics give the causes.
constexpr EnumEntry<WaitCause> kCauseNames[] = {
    {NoNodeCanHold, "no-node-can-hold"},
    {ClaimUnallocatable, "claim-unallocatable"},
    {UntoleratedTaint, "untolerated-taint"},
    {SelectorExcludes, "selector-excludes"},
    {DeviceTainted, "device-tainted"},
    {Quota, "quota"},
    {GangPartial, "gang-partial"},
    {Fragmented, "fragmented"},
    {PoolFull, "pool-full"},
    {Unknown, "unknown"},
};

// Node-group labels, most specific first: GKE node pools, EKS managed node
// groups and eksctl's, Karpenter NodePools, AKS agent pools; the instance
// type when a node carries none of them.
constexpr std::string_view kPoolLabels[] = {
    "cloud.google.com/gke-nodepool",    "eks.amazonaws.com/nodegroup",
    "alpha.eksctl.io/nodegroup-name",   "karpenter.sh/nodepool",
    "kubernetes.azure.com/agentpool",   "agentpool",
    "node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type",
};

void classify(WaitingInput& input, const JsonValue& object) {
  const std::string_view kind = stringMember(&object, "kind");
  const std::string_view group = splitApiVersion(stringMember(&object, "apiVersion")).group;
  if ((group.empty() || group == "events.k8s.io") && kind == "Event") {
    input.events.push_back(&object);
  }
  if (group == "kueue.x-k8s.io" && kind == "ClusterQueue") input.clusterQueues.push_back(&object);
}

void takeWorkloads(WaitingInput& input) {
  for (const PodRecord& pod : input.view->pods()) input.pods.push_back(pod.object.get());
  for (const QueueWorkloadRecord& workload : input.view->queueWorkloads()) {
    input.workloads.push_back(workload.object.get());
  }
}

bool isGpuNode(const ClusterNode& node, int64_t devices) {
  if (devices > 0) return true;
  for (const auto& [resource, count] : node.allocatable) {
    if (count > 0 && looksLikeAccelerator(resource)) return true;
  }
  return false;
}

// A Pod that waits, its cause, and the pools its cause names ("a100, h100").
struct WaitingPod {
  const waiting::PodFacts* pod = nullptr;
  WaitCause cause = WaitCause::Unknown;
  std::string pools;
};

// Whether the Pod waits for GPUs of the nodes of its pools to free up:
// they are open to it, and only what is in use there stands in its way.
bool waitsForRoom(WaitCause cause) {
  return cause == WaitCause::GangPartial || cause == WaitCause::Fragmented ||
         cause == WaitCause::PoolFull || cause == WaitCause::Unknown;
}

// By pool: the Pods that wait for it.
using Waiters = std::map<std::string, std::vector<const waiting::PodFacts*>>;

// The device taints its claims' requests tolerate, all together: the
// devices it could be given.
std::vector<Toleration> claimTolerations(const waiting::PodFacts& pod,
                                         const waiting::Occupancy& occupancy) {
  std::vector<Toleration> tolerations;
  for (const std::string& claimKey : pod.claimKeys) {
    const auto claim = occupancy.claims.find(claimKey);
    if (claim == occupancy.claims.end()) continue;
    for (const DeviceRequest& request : claim->second->spec.requests) {
      for (const DeviceAlternative& alternative : request.alternatives) {
        tolerations.insert(tolerations.end(), alternative.tolerations.begin(),
                           alternative.tolerations.end());
      }
    }
  }
  return tolerations;
}

// Whether the Pod would fit on `node` as its GPUs are used now: its
// extended resources, and its claims' devices among those free there.
bool fitsNow(const waiting::PodFacts& pod, const ClusterNode& node,
             const waiting::Occupancy& occupancy) {
  for (const auto& [resource, count] : pod.accelerators) {
    if (waiting::allocatableOf(node, resource) - waiting::usedOn(occupancy, node, resource) <
        count) {
      return false;
    }
  }
  return pod.claimedDevices == 0 ||
         waiting::usableDevices(occupancy, node, claimTolerations(pod, occupancy)) >=
             pod.claimedDevices;
}

// One node's part of its pool's GPUs.
void addNode(PoolIdle& pool, const ClusterNode& node, const waiting::Occupancy& occupancy,
             const std::vector<const waiting::PodFacts*>& waiters) {
  const waiting::NodeDevices devices = waiting::nodeDevices(occupancy, node);
  ++pool.nodes;
  int64_t idle = 0;
  for (const auto& [resource, count] : node.allocatable) {
    if (!looksLikeAccelerator(resource)) continue;
    pool.gpus += count;
    idle += std::max<int64_t>(0, count - waiting::usedOn(occupancy, node, resource));
  }
  pool.gpus += devices.total;
  idle += std::max<int64_t>(0, devices.total - devices.allocated - devices.tainted);
  pool.idleGpus += idle;
  pool.taintedGpus += devices.tainted;
  const bool anyFits = std::any_of(waiters.begin(), waiters.end(),
                                   [&](const auto* pod) { return fitsNow(*pod, node, occupancy); });
  if (!waiters.empty() && !anyFits) pool.unusableIdleGpus += idle;
}

std::vector<PoolIdle> idlePools(const WaitingInput& input, const waiting::Occupancy& occupancy,
                                const Waiters& waiters) {
  static const std::vector<const waiting::PodFacts*> kNone;
  std::map<std::string, PoolIdle> pools;
  for (const ClusterNode& node : input.view->nodes()) {
    if (!isGpuNode(node, waiting::nodeDevices(occupancy, node).total)) continue;
    const std::string name = poolOfNode(node);
    PoolIdle& pool = pools[name];
    pool.pool = name;
    const auto waiting = waiters.find(name);
    addNode(pool, node, occupancy, waiting == waiters.end() ? kNone : waiting->second);
  }
  std::vector<PoolIdle> out;
  for (auto& [name, pool] : pools) out.push_back(std::move(pool));
  return out;
}

bool named(const WaitingScope& scope, const WaitingWorkload& workload) {
  if (scope.names.empty()) return true;
  for (const std::string& name : scope.names) {
    if (name == workload.name) return true;
    if (std::find(workload.podNames.begin(), workload.podNames.end(), name) !=
        workload.podNames.end()) {
      return true;
    }
  }
  return false;
}

// A workload of waiting Pods, and its Pods with the pools they wait for.
struct PodWorkload {
  WaitingWorkload workload;
  std::vector<WaitingPod> pods;
};

// A native PodGroup's waiting Pods, judged together where the group decides
// their cause; the scheduler's word on the group beside it.
void judgeAsGroup(PodWorkload& entry, const waiting::Occupancy& occupancy,
                  const ClusterView& view) {
  WaitingWorkload& workload = entry.workload;
  const waiting::WorkloadKey& group = entry.pods.front().pod->workload;
  std::vector<const waiting::PodFacts*> pods;
  for (const WaitingPod& waiting : entry.pods) pods.push_back(waiting.pod);
  const waiting::PodVerdict current{workload.cause, workload.reason, workload.fix, workload.pool};
  if (const std::optional<waiting::PodVerdict> verdict =
          waiting::judgeNativeGroup(pods, current, occupancy, view)) {
    workload.cause = verdict->cause;
    workload.reason = verdict->reason;
    workload.fix = verdict->fix;
    workload.pool = verdict->pool;
    for (WaitingPod& waiting : entry.pods) {
      waiting.cause = verdict->cause;
      waiting.pools = verdict->pool;
    }
    workload.scheduler.agrees =
        waiting::gangMessageAgrees(workload.scheduler.message, workload.cause);
  }
  if (std::optional<SchedulerWord> word = waiting::podGroupWord(group, workload.cause)) {
    workload.scheduler = std::move(*word);
  }
}

// The Pods that wait, one workload each: the cause of its Pod whose cause
// comes first (the most lasting), the GPUs and Pods of all of them; a native
// PodGroup's as the group decides.
std::vector<PodWorkload> waitingPods(const WaitingInput& input, const WaitingScope& scope,
                                     const waiting::Occupancy& occupancy) {
  std::map<waiting::WorkloadId, PodWorkload> byWorkload;
  for (const waiting::PodFacts& pod : occupancy.pods) {
    if (!pod.nodeName.empty() || !waiting::inScope(scope, pod.namespaceName)) continue;
    if (std::find(pod.gates.begin(), pod.gates.end(), "kueue.x-k8s.io/admission") !=
        pod.gates.end()) {
      continue;  // its Workload speaks for it
    }
    const waiting::PodVerdict verdict = waiting::judgePod(pod, occupancy, *input.view);
    PodWorkload& entry = byWorkload[waiting::workloadIdOf(pod)];
    entry.pods.push_back({&pod, verdict.cause, verdict.pool});
    WaitingWorkload& workload = entry.workload;
    const bool first = workload.pods == 0;
    if (first || verdict.cause < workload.cause) {
      workload.cause = verdict.cause;
      workload.reason = verdict.reason;
      workload.fix = verdict.fix;
      workload.pool = verdict.pool;
      workload.scheduler = pod.scheduler;
      workload.scheduler.agrees = waiting::messageAgrees(pod.scheduler.message, verdict.cause);
    }
    if (first || (!pod.since.empty() && pod.since < workload.since)) workload.since = pod.since;
    workload.kind = pod.workload.kind;
    workload.namespaceName = pod.namespaceName;
    workload.name = pod.workload.name;
    workload.gpus += pod.gpus;
    ++workload.pods;
    workload.podNames.push_back(pod.name);
  }
  std::vector<PodWorkload> out;
  for (auto& [key, entry] : byWorkload) {
    if (entry.pods.front().pod->workload.native) judgeAsGroup(entry, occupancy, *input.view);
    std::sort(entry.workload.podNames.begin(), entry.workload.podNames.end());
    out.push_back(std::move(entry));
  }
  return out;
}

// Each pool of ", "-separated `pools`.
template <typename Visit>
void forEachPool(const std::string& pools, Visit visit) {
  size_t start = 0;
  while (start < pools.size()) {
    const size_t end = std::min(pools.find(", ", start), pools.size());
    visit(pools.substr(start, end - start));
    start = end + 2;
  }
}

// Groups by cause, the groups by their GPUs (then in cause order), and the
// workloads of a group by GPUs, namespace and name.
void rank(std::vector<WaitingWorkload>& waiting) {
  std::map<WaitCause, int64_t> groupGpus;
  for (const WaitingWorkload& workload : waiting) groupGpus[workload.cause] += workload.gpus;
  std::sort(waiting.begin(), waiting.end(), [&](const auto& a, const auto& b) {
    if (a.cause != b.cause) {
      const int64_t ga = groupGpus[a.cause];
      const int64_t gb = groupGpus[b.cause];
      return ga != gb ? ga > gb : a.cause < b.cause;
    }
    if (a.gpus != b.gpus) return a.gpus > b.gpus;
    return std::tie(a.namespaceName, a.name, a.kind) < std::tie(b.namespaceName, b.name, b.kind);
  });
}

}  // namespace

std::string_view causeName(WaitCause cause) {
  return valueIn(kCauseNames, cause, "unknown");
}

std::pair<std::string, std::string> poolLabelOf(const ClusterNode& node) {
  for (const std::string_view key : kPoolLabels) {
    const auto label = node.labels.find(std::string(key));
    if (label != node.labels.end() && !label->second.empty()) return *label;
  }
  return {};
}

std::string poolOfNode(const ClusterNode& node) {
  std::string name = poolLabelOf(node).second;
  return name.empty() ? "(no pool label)" : name;
}

WaitingInput readWaitingInput(std::string_view text, const std::string& name) {
  WaitingInput input;
  const ClusterSnapshot snapshot = readClusterSnapshot(text, name);
  if (!snapshot.error.empty()) {
    input.error = snapshot.error;
    return input;
  }
  input.view = snapshot.view;
  ManifestError parseError;
  if (!parseManifests(text, input.documents, parseError)) {
    input.error = name + ":" + std::to_string(parseError.line) + ": " + parseError.message;
    return input;
  }
  for (const ManifestDocument& document : input.documents) {
    const JsonValue& root = *document.json;
    const JsonValue* items = member(&root, "items");
    if (!isArray(items)) {
      classify(input, root);
      continue;
    }
    for (const JsonValue& item : items->GetArray()) {
      if (item.IsObject()) classify(input, item);
    }
  }
  takeWorkloads(input);
  return input;
}

WaitingInput waitingInputOf(std::shared_ptr<const ClusterView> view) {
  WaitingInput input;
  input.view = std::move(view);
  if (input.view != nullptr) takeWorkloads(input);
  return input;
}

WaitingReport explainWaiting(const WaitingInput& input, const WaitingScope& scope) {
  WaitingReport report;
  if (input.view == nullptr) return report;
  const waiting::Occupancy occupancy = waiting::readOccupancy(input);
  Waiters waiters;
  for (PodWorkload& entry : waitingPods(input, scope, occupancy)) {
    if (!named(scope, entry.workload)) continue;
    for (const WaitingPod& waiting : entry.pods) {
      if (!waitsForRoom(waiting.cause)) continue;
      forEachPool(waiting.pools,
                  [&](const std::string& pool) { waiters[pool].push_back(waiting.pod); });
    }
    report.waiting.push_back(std::move(entry.workload));
  }
  for (WaitingWorkload& workload : waiting::queuedWorkloads(input, scope)) {
    if (named(scope, workload)) report.waiting.push_back(std::move(workload));
  }
  rank(report.waiting);
  report.idle = idlePools(input, occupancy, waiters);
  // A workload that may use several pools ("a100, h100") waits for each.
  for (const WaitingWorkload& workload : report.waiting) {
    forEachPool(workload.pool, [&](const std::string& name) {
      for (PoolIdle& pool : report.idle) {
        if (pool.pool != name) continue;
        pool.waitingPods += workload.pods;
        pool.waitingByCause[workload.cause] += workload.pods;
      }
    });
  }
  return report;
}

}  // namespace aiadmit
