// One waiting Pod's cause, found as kube-scheduler's filters would reject it
// (NodeResourcesFit for extended resources, TaintToleration, NodeAffinity,
// DynamicResources), the lasting reasons before the ones that pass on their
// own: no node can hold it, its claim cannot be allocated, a taint, its
// node selection; then its gang, the pool being full.
#include <algorithm>

#include "webhook/model/dra.h"
#include "webhook/model/pod_reader.h"
#include "webhook/model/resources.h"
#include "webhook/waiting/waiting_claims.h"
#include "webhook/waiting/waiting_judge.h"

namespace aiadmit::waiting {

std::string poolsOf(const std::vector<const ClusterNode*>& nodes) {
  std::set<std::string> pools;
  for (const ClusterNode* node : nodes) pools.insert(poolOfNode(*node));
  std::string out;
  for (const std::string& pool : pools) out += (out.empty() ? "" : ", ") + pool;
  return out;
}

namespace {

bool taintTolerated(const NodeTaint& taint, const JsonValue* tolerations) {
  Toleration wanted;
  wanted.key = taint.key;
  wanted.value = taint.value;
  wanted.effect = taint.effect;
  return anyTolerationCovers(tolerations, wanted);
}

// The first NoSchedule or NoExecute taint the Pod does not tolerate; those
// of node conditions and cordons (node.kubernetes.io/) pass on their own and
// count only with `transient`.
const NodeTaint* untoleratedTaint(const ClusterNode& node, const JsonValue* spec, bool transient) {
  const JsonValue* tolerations = member(spec, "tolerations");
  for (const NodeTaint& taint : node.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    const bool passing = taint.key.rfind("node.kubernetes.io/", 0) == 0;
    if (passing != transient) continue;
    if (!taintTolerated(taint, tolerations)) return &taint;
  }
  return nullptr;
}

bool termMatches(const JsonValue& term, const ClusterNode& node) {
  bool any = false;
  const JsonValue* expressions = member(&term, "matchExpressions");
  if (isArray(expressions)) {
    for (const JsonValue& expression : expressions->GetArray()) {
      LabelRequirement requirement;
      if (!LabelRequirement::fromJson(expression, requirement)) return false;
      const auto label = node.labels.find(std::string(requirement.key));
      const bool present = label != node.labels.end();
      if (!requirement.matches(present, present ? label->second : "")) return false;
      any = true;
    }
  }
  const JsonValue* fields = member(&term, "matchFields");
  if (isArray(fields)) {
    for (const JsonValue& field : fields->GetArray()) {
      LabelRequirement requirement;
      if (!LabelRequirement::fromJson(field, requirement)) return false;
      if (requirement.key != "metadata.name" || !requirement.matches(true, node.name)) {
        return false;
      }
      any = true;
    }
  }
  return any;  // an empty term matches no node
}

bool nodeSelectorMatches(const JsonValue* spec, const ClusterNode& node) {
  const JsonValue* selector = member(spec, "nodeSelector");
  if (!isObject(selector)) return true;
  for (const auto& entry : selector->GetObject()) {
    const auto label = node.labels.find(std::string(stringOf(&entry.name)));
    if (label == node.labels.end() || label->second != stringOf(&entry.value)) return false;
  }
  return true;
}

bool affinityMatches(const JsonValue* spec, const ClusterNode& node) {
  const JsonValue* terms = requiredNodeSelectorTerms(spec);
  if (!isArray(terms)) return true;
  for (const JsonValue& term : terms->GetArray()) {
    if (termMatches(term, node)) return true;
  }
  return false;
}

std::string describeNodeSelector(const JsonValue* spec) {
  std::string out;
  const JsonValue* selector = member(spec, "nodeSelector");
  if (!isObject(selector)) return out;
  for (const auto& entry : selector->GetObject()) {
    out += (out.empty() ? "" : ", ") + std::string(stringOf(&entry.name)) + "=" +
           std::string(stringOf(&entry.value));
  }
  return out;
}

struct NodeSets {
  std::vector<const ClusterNode*> fit;       // enough of every accelerator, ever
  std::vector<const ClusterNode*> selected;  // of those, the ones its selection allows
  std::vector<const ClusterNode*> eligible;  // of those, the ones whose taints it tolerates
};

NodeSets nodeSets(const PodFacts& pod, const ClusterView& view) {
  NodeSets sets;
  for (const ClusterNode& node : view.nodes()) {
    bool fits = true;
    for (const auto& [resource, count] : pod.accelerators) {
      fits = fits && allocatableOf(node, resource) >= count;
    }
    if (!fits) continue;
    sets.fit.push_back(&node);
    if (!nodeSelectorMatches(pod.spec, node) || !affinityMatches(pod.spec, node)) continue;
    sets.selected.push_back(&node);
    if (untoleratedTaint(node, pod.spec, false) == nullptr) sets.eligible.push_back(&node);
  }
  return sets;
}

// The node of `nodes` with the most of `resource`; null when there is none.
const ClusterNode* largestFor(const std::vector<const ClusterNode*>& nodes,
                              const std::string& resource) {
  const ClusterNode* largest = nullptr;
  for (const ClusterNode* node : nodes) {
    if (largest == nullptr || allocatableOf(*node, resource) > allocatableOf(*largest, resource)) {
      largest = node;
    }
  }
  return largest;
}

// The nodes its node selection allows and whose taints it tolerates, fit or not.
std::vector<const ClusterNode*> aimedAt(const PodFacts& pod, const ClusterView& view) {
  std::vector<const ClusterNode*> nodes;
  for (const ClusterNode& node : view.nodes()) {
    if (nodeSelectorMatches(pod.spec, node) && affinityMatches(pod.spec, node) &&
        untoleratedTaint(node, pod.spec, false) == nullptr) {
      nodes.push_back(&node);
    }
  }
  return nodes;
}

std::optional<PodVerdict> noNodeHolds(const PodFacts& pod, const ClusterView& view) {
  std::vector<const ClusterNode*> all;
  for (const ClusterNode& node : view.nodes()) all.push_back(&node);
  const std::vector<const ClusterNode*> aimed = aimedAt(pod, view);
  for (const auto& [resource, count] : pod.accelerators) {
    const ClusterNode* largest = largestFor(all, resource);
    const int64_t most = largest == nullptr ? 0 : allocatableOf(*largest, resource);
    if (most >= count) continue;
    PodVerdict verdict{WaitCause::NoNodeCanHold, "", "", ""};
    if (most == 0) {
      verdict.reason = "no node offers " + resource + ", and the Pod asks for " +
                       std::to_string(count) + " of it";
      verdict.fix =
          "ask for an accelerator resource the nodes offer (kubectl get nodes -o "
          "jsonpath='{.items[*].status.allocatable}'), or add nodes that offer " +
          resource;
      return verdict;
    }
    const ClusterNode* own = largestFor(aimed, resource);
    verdict.pool = poolOfNode(own != nullptr ? *own : *largest);
    verdict.reason = "it asks for " + std::to_string(count) + " " + resource +
                     " in one Pod; the most any node has is " + std::to_string(most) + " (" +
                     largest->name + ", pool " + poolOfNode(*largest) + ")";
    if (own != nullptr && poolOfNode(*own) != poolOfNode(*largest)) {
      verdict.reason += ", and the most a node of pool " + verdict.pool + " has is " +
                        std::to_string(allocatableOf(*own, resource));
    }
    verdict.fix = "ask for at most " + std::to_string(most) + " " + resource +
                  " per Pod (spread the work over more Pods or workers), or add a node pool "
                  "whose nodes have " +
                  std::to_string(count);
    return verdict;
  }
  return std::nullopt;
}

PodVerdict untolerated(const PodFacts& pod, const NodeSets& sets) {
  const ClusterNode& node = *sets.selected.front();
  const NodeTaint& taint = *untoleratedTaint(node, pod.spec, false);
  const std::string named =
      taint.key + (taint.value.empty() ? "" : "=" + taint.value) + ":" + taint.effect;
  PodVerdict verdict{WaitCause::UntoleratedTaint, "", "", poolOfNode(node)};
  verdict.reason = "the " + std::to_string(sets.selected.size()) +
                   (sets.selected.size() == 1 ? " node" : " nodes") +
                   " that can hold it and that its node selection allows (pool " +
                   poolsOf(sets.selected) + ") carry the taint " + named +
                   ", which it does not tolerate";
  verdict.fix =
      "add the toleration {key: " + taint.key +
      (taint.value.empty() ? ", operator: Exists" : ", operator: Equal, value: " + taint.value) +
      ", effect: " + taint.effect + "} to its Pod template";
  return verdict;
}

PodVerdict excluded(const PodFacts& pod, const NodeSets& sets) {
  // The example to select: a node that fits and whose taints it tolerates,
  // else any node that fits.
  const ClusterNode* example = sets.fit.front();
  for (const ClusterNode* node : sets.fit) {
    if (untoleratedTaint(*node, pod.spec, false) == nullptr) {
      example = node;
      break;
    }
  }
  const std::string selector = describeNodeSelector(pod.spec);
  const bool bySelector = !nodeSelectorMatches(pod.spec, *example);
  PodVerdict verdict{WaitCause::SelectorExcludes, "", "", poolOfNode(*example)};
  verdict.reason =
      "its " +
      (bySelector ? "nodeSelector (" + selector + ")" : std::string("required node affinity")) +
      " excludes all " + std::to_string(sets.fit.size()) +
      (sets.fit.size() == 1 ? " node" : " nodes") + " that can hold it (pool " + poolsOf(sets.fit) +
      ")";
  const auto [labelKey, labelValue] = poolLabelOf(*example);
  verdict.fix = labelKey.empty()
                    ? "select nodes that can hold it, such as " + example->name
                    : "select the pool by a label its nodes carry, such as nodeSelector " +
                          labelKey + ": " + labelValue;
  return verdict;
}

// Whether a node it may use has room now: its accelerators free, and no
// passing taint (not ready, cordoned) in the way.
bool roomNow(const PodFacts& pod, const ClusterNode& node, const Occupancy& occupancy) {
  if (untoleratedTaint(node, pod.spec, true) != nullptr) return false;
  for (const auto& [resource, count] : pod.accelerators) {
    if (allocatableOf(node, resource) - usedOn(occupancy, node, resource) < count) return false;
  }
  return true;
}

int64_t acceleratorsUsed(const Occupancy& occupancy, const ClusterNode& node) {
  int64_t total = 0;
  const auto onNode = occupancy.used.find(node.name);
  if (onNode == occupancy.used.end()) return 0;
  for (const auto& [resource, count] : onNode->second) total += count;
  return total;
}

int64_t acceleratorsOf(const ClusterNode& node) {
  int64_t total = 0;
  for (const auto& [resource, count] : node.allocatable) {
    if (looksLikeAccelerator(resource)) total += count;
  }
  return total;
}

// What the Pods bound to `nodes` hold, made once per set of nodes: many
// waiting Pods of one workload or one shape may use the same nodes.
const NodeSetUse& useOf(const std::vector<const ClusterNode*>& nodes, const Occupancy& occupancy) {
  const auto cached = occupancy.nodeSetUse.find(nodes);
  if (cached != occupancy.nodeSetUse.end()) return cached->second;
  NodeSetUse use;
  std::map<std::tuple<std::string, int64_t, std::string>, int64_t> held;
  for (const ClusterNode* node : nodes) {
    use.total += acceleratorsOf(*node);
    use.inUse += acceleratorsUsed(occupancy, *node);
    const auto holders = occupancy.holders.find(node->name);
    if (holders == occupancy.holders.end()) continue;
    for (const size_t index : holders->second) {
      const PodFacts& holder = occupancy.pods[index];
      held[{holder.namespaceName, holder.priority, holder.priorityClassName}] += holder.gpus;
      use.byPriority[holder.priority] += holder.gpus;
    }
  }
  // "6 GPUs by Pods of namespace team-a (priority 0)", most first.
  std::vector<std::pair<int64_t, std::string>> parts;
  for (const auto& [who, gpus] : held) {
    const auto& [ns, priority, className] = who;
    parts.emplace_back(gpus, gpuCount(gpus) + " by Pods of namespace " + ns + " (priority " +
                                 std::to_string(priority) +
                                 (className.empty() ? "" : ", " + className) + ")");
  }
  std::stable_sort(parts.begin(), parts.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [gpus, text] : parts) {
    use.holders += (use.holders.empty() ? "" : ", ") + text;
  }
  if (use.holders.empty()) use.holders = "no Pod this input shows";
  return occupancy.nodeSetUse.emplace(nodes, std::move(use)).first->second;
}

// GPUs that Pods of lower priority than `pod` hold.
int64_t heldBelow(const PodFacts& pod, const NodeSetUse& use) {
  int64_t gpus = 0;
  for (const auto& [priority, held] : use.byPriority) {
    if (priority < pod.priority) gpus += held;
  }
  return gpus;
}

// One resource's idle units on the nodes it may use whose passing taints
// (not ready, cordoned) are not in the way, most first, and their sum.
struct IdleBlocks {
  std::string resource;
  int64_t asked = 0;
  int64_t total = 0;
  std::vector<int64_t> blocks;  // one per node with any idle
};

IdleBlocks idleBlocks(const PodFacts& pod, const std::string& resource, int64_t asked,
                      const std::vector<const ClusterNode*>& eligible, const Occupancy& occupancy) {
  IdleBlocks idle{resource, asked, 0, {}};
  for (const ClusterNode* node : eligible) {
    if (untoleratedTaint(*node, pod.spec, true) != nullptr) continue;
    const int64_t free = allocatableOf(*node, resource) - usedOn(occupancy, *node, resource);
    if (free <= 0) continue;
    idle.blocks.push_back(free);
    idle.total += free;
  }
  std::sort(idle.blocks.rbegin(), idle.blocks.rend());
  return idle;
}

}  // namespace

std::string blockList(const std::vector<int64_t>& blocks) {
  constexpr size_t kShown = 12;
  std::string out;
  for (size_t i = 0; i < blocks.size() && i < kShown; ++i) {
    out += (i == 0 ? "" : ",") + std::to_string(blocks[i]);
  }
  if (blocks.size() > kShown) out += ",... (" + std::to_string(blocks.size() - kShown) + " more)";
  return out;
}

std::string packFix(const std::string& resource) {
  return "pack the small work onto fewer nodes so that whole nodes stay free: score nodes with "
         "kube-scheduler's NodeResourcesFit strategy MostAllocated or RequestedToCapacityRatio "
         "for " +
         resource +
         ", let the descheduler's HighNodeUtilization move the small Pods, or run it with a "
         "PriorityClass above theirs so that it preempts them";
}

namespace {

// A node where the idle GPUs and those Pods of lower priority hold would
// together hold it: where preemption can make room; null when none.
const ClusterNode* preemptibleNode(const PodFacts& pod, const IdleBlocks& idle,
                                   const std::vector<const ClusterNode*>& eligible,
                                   const Occupancy& occupancy) {
  if (pod.preemptsNever) return nullptr;
  for (const ClusterNode* node : eligible) {
    int64_t room = allocatableOf(*node, idle.resource) - usedOn(occupancy, *node, idle.resource);
    const auto holders = occupancy.holders.find(node->name);
    if (holders == occupancy.holders.end()) continue;
    for (const size_t index : holders->second) {
      const PodFacts& holder = occupancy.pods[index];
      if (holder.priority >= pod.priority) continue;
      const auto held = holder.accelerators.find(idle.resource);
      if (held != holder.accelerators.end()) room += held->second;
    }
    if (room >= idle.asked) return node;
  }
  return nullptr;
}

// The pool's idle GPUs that it may use would hold it together, but no one
// node has enough of them: the work is spread too thin, not too much.
// nullopt when they would not (the pool is full).
std::optional<PodVerdict> fragmented(const PodFacts& pod,
                                     const std::vector<const ClusterNode*>& eligible,
                                     const Occupancy& occupancy, const std::string& pool) {
  std::optional<IdleBlocks> shown;
  for (const auto& [resource, count] : pod.accelerators) {
    IdleBlocks idle = idleBlocks(pod, resource, count, eligible, occupancy);
    if (idle.total < count) return std::nullopt;
    const int64_t largest = idle.blocks.empty() ? 0 : idle.blocks.front();
    if (!shown || (largest < count && shown->blocks.front() >= shown->asked)) {
      shown = std::move(idle);
    }
  }
  if (!shown) return std::nullopt;
  const IdleBlocks& idle = *shown;
  PodVerdict verdict{WaitCause::Fragmented, "", "", pool};
  verdict.reason =
      "pool " + pool + " has " + std::to_string(idle.total) + " idle " +
      (idle.total == 1 ? "GPU" : "GPUs") + " on " + std::to_string(idle.blocks.size()) +
      (idle.blocks.size() == 1 ? " node" : " nodes") +
      " that it may use: " + blockList(idle.blocks) + "; together they would hold its " +
      std::to_string(idle.asked) + " " + idle.resource + ", but the largest free block is " +
      std::to_string(idle.blocks.front()) + ", and one Pod's GPUs must all be on one node";
  const std::string pack = packFix(idle.resource);
  if (const ClusterNode* node = preemptibleNode(pod, idle, eligible, occupancy)) {
    verdict.reason += "; on node " + node->name + " Pods of lower priority than its " +
                      std::to_string(pod.priority) +
                      " hold enough of the rest, so the scheduler may preempt them";
    verdict.fix = "wait for the scheduler to preempt the lower-priority Pods on node " +
                  node->name + "; to keep blocks whole, " + pack;
    return verdict;
  }
  verdict.fix = pack;
  return verdict;
}

// Pods of its gang are placed and hold GPUs while it waits for room.
PodVerdict gangPartial(const PodFacts& pod, const std::pair<int, int64_t>& placed,
                       const std::string& pool, const NodeSetUse& use) {
  const WorkloadKey& gang = pod.workload;
  PodVerdict verdict{WaitCause::GangPartial,
                     std::to_string(placed.first) + " GPU Pods of " + gang.kind + " " + gang.name +
                         " are placed and hold " + gpuCount(placed.second) +
                         " while this one waits for pool " + pool + ", whose " +
                         std::to_string(use.inUse) + " of " + gpuCount(use.total) + " are in use",
                     "", pool};
  const std::string freeIt = "free " + gpuCount(pod.gpus) + " in pool " + pool;
  if (!gang.native) {
    verdict.reason += "; the placed ones cannot start their work without it";
    verdict.fix =
        "admit the workload whole through a gang scheduler (Kueue, Volcano, or "
        "kube-scheduler's gang scheduling) so that no part holds GPUs while the rest waits, "
        "or " +
        freeIt;
    return verdict;
  }
  // Kubernetes' own gang places minCount of its Pods at once; the rest, or
  // Pods made later, are placed one by one as room frees up.
  verdict.reason += "; its minCount of " + std::to_string(*gang.podGroup->minCount) +
                    " let the scheduler place them without this one";
  verdict.fix = "raise the minCount of PodGroup " + gang.name +
                " to the number of its Pods so that the scheduler places them all at once, or " +
                freeIt;
  return verdict;
}

PodVerdict judgeFull(const PodFacts& pod, const std::vector<const ClusterNode*>& eligible,
                     const Occupancy& occupancy) {
  for (const ClusterNode* node : eligible) {
    if (!roomNow(pod, *node, occupancy)) continue;
    return {WaitCause::Unknown,
            "node " + node->name + " (pool " + poolOfNode(*node) +
                ") has room for its accelerators now; what else stops it is not GPUs, taints "
                "or node selection",
            "read the scheduler's message: kubectl describe pod " + pod.name, poolOfNode(*node)};
  }
  const auto placed = occupancy.placed.find(workloadIdOf(pod));
  if (pod.workload.gang && placed != occupancy.placed.end()) {
    return gangPartial(pod, placed->second, poolsOf(eligible), useOf(eligible, occupancy));
  }
  if (std::optional<PodVerdict> spread = fragmented(pod, eligible, occupancy, poolsOf(eligible))) {
    return *spread;
  }
  return poolFull(pod, eligible, occupancy);
}

}  // namespace

std::vector<const ClusterNode*> nodesItMayUse(const PodFacts& pod, const ClusterView& view) {
  return nodeSets(pod, view).eligible;
}

bool keptOffNow(const PodFacts& pod, const ClusterNode& node) {
  return untoleratedTaint(node, pod.spec, true) != nullptr;
}

PodVerdict poolFull(const PodFacts& pod, const std::vector<const ClusterNode*>& eligible,
                    const Occupancy& occupancy) {
  const std::string pool = poolsOf(eligible);
  const NodeSetUse& use = useOf(eligible, occupancy);
  PodVerdict verdict{WaitCause::PoolFull, "", "", pool};
  verdict.reason = std::to_string(use.inUse) + " of the " + gpuCount(use.total) + " of pool " +
                   pool + " that it may use are in use: " + use.holders;
  const int64_t below = heldBelow(pod, use);
  if (pod.preemptsNever) {
    verdict.reason += "; its preemptionPolicy is Never, so it preempts none of them";
  } else if (below > 0) {
    verdict.reason += "; Pods of lower priority than its " + std::to_string(pod.priority) +
                      " hold " + gpuCount(below) + " of them, so the scheduler may preempt them";
  } else {
    verdict.reason += "; none of them has a lower priority than its " +
                      std::to_string(pod.priority) + ", so preemption cannot help";
  }
  verdict.fix = below > 0 && !pod.preemptsNever
                    ? "wait for the scheduler to preempt the lower-priority Pods (their "
                      "graceful termination and PodDisruptionBudgets may delay it)"
                    : "wait for GPUs of pool " + pool + " to free up, add nodes to pool " + pool +
                          ", or run it with a PriorityClass above theirs";
  return verdict;
}

PodVerdict judgePod(const PodFacts& pod, const Occupancy& occupancy, const ClusterView& view) {
  if (std::optional<PodVerdict> claims = judgeClaims(pod, occupancy, view)) return *claims;
  if (pod.accelerators.empty()) {
    return {WaitCause::Unknown,
            "its claims are allocated or not made yet, and it asks for no extended resource",
            "read the scheduler's message: kubectl describe pod " + pod.name, ""};
  }
  if (std::optional<PodVerdict> none = noNodeHolds(pod, view)) return *none;
  const NodeSets sets = nodeSets(pod, view);
  if (sets.fit.empty()) {
    return {WaitCause::NoNodeCanHold, "no one node has all the accelerators it asks for",
            "ask for accelerators that one node offers together, or split the Pod", ""};
  }
  if (sets.eligible.empty()) {
    return sets.selected.empty() ? excluded(pod, sets) : untolerated(pod, sets);
  }
  return judgeFull(pod, sets.eligible, occupancy);
}

}  // namespace aiadmit::waiting
