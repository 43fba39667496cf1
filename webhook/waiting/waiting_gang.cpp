// A native gang that waits whole, judged as the scheduler places it: minCount
// of its Pods at once (those that ask for no GPU count too), each on a node
// it may use, against the GPUs free on those nodes now and against all they
// have. Only what is established is said: the Pods that ask for the fewest
// GPUs are taken, and where their asks or their nodes differ, only what the
// totals prove.
#include "webhook/waiting/waiting_gang.h"

#include <algorithm>
#include <limits>
#include <set>

#include "webhook/waiting/waiting_judge.h"

namespace aiadmit::waiting {

namespace {

// Units of each accelerator resource: what a Pod asks, or what a node has.
using Units = std::map<std::string, int64_t>;

// A Pod of the gang and the nodes it may use: ever (fit, selected,
// tolerated), and now (of those, no passing taint in the way).
struct Member {
  const PodFacts* pod = nullptr;
  std::vector<const ClusterNode*> ever;
  std::vector<const ClusterNode*> now;
};

// What placing the gang takes: `members`, the GPU Pods that ask for the
// fewest, as many as minCount needs beside the Pods that ask for no GPU.
struct GangNeed {
  const WorkloadKey* group = nullptr;
  int64_t minCount = 0;
  int withoutGpus = 0;  // its waiting Pods that ask for no GPU
  std::vector<Member> members;
  bool alike = false;                     // every member asks the same of the same nodes
  Units total;                            // what the members ask together
  std::vector<const ClusterNode*> nodes;  // every node a member may use, by name
};

bool fitsIn(const Units& ask, const Units& room) {
  for (const auto& [resource, count] : ask) {
    const auto have = room.find(resource);
    if (have == room.end() || have->second < count) return false;
  }
  return true;
}

// What `node` has of the resources in `ask`: all of it, or what bound Pods leave.
Units unitsOn(const ClusterNode& node, const Units& ask, const Occupancy& occupancy, bool free) {
  Units units;
  for (const auto& [resource, count] : ask) {
    units[resource] =
        allocatableOf(node, resource) - (free ? usedOn(occupancy, node, resource) : 0);
  }
  return units;
}

// How many of the members fit at once, each taken in turn to the first node
// it may use with room left. For members that ask alike of the same nodes
// this is the most that fit; otherwise a lower bound.
int packed(const GangNeed& need, const Occupancy& occupancy, bool now) {
  std::map<const ClusterNode*, Units> rooms;
  int placed = 0;
  for (const Member& member : need.members) {
    for (const ClusterNode* node : now ? member.now : member.ever) {
      auto room = rooms.find(node);
      if (room == rooms.end()) {
        room = rooms.emplace(node, unitsOn(*node, need.total, occupancy, now)).first;
      }
      if (!fitsIn(member.pod->accelerators, room->second)) continue;
      for (const auto& [resource, count] : member.pod->accelerators)
        room->second[resource] -= count;
      ++placed;
      break;
    }
  }
  return placed;
}

// How many Pods that ask what the members ask alike the nodes they may use
// hold at once: with all of their GPUs, or with those free now.
int64_t slots(const GangNeed& need, const Occupancy& occupancy, bool now) {
  const Member& first = need.members.front();
  int64_t total = 0;
  for (const ClusterNode* node : now ? first.now : first.ever) {
    const Units room = unitsOn(*node, first.pod->accelerators, occupancy, now);
    int64_t fit = std::numeric_limits<int64_t>::max();
    for (const auto& [resource, count] : first.pod->accelerators) {
      fit = std::min(fit, std::max<int64_t>(0, room.at(resource)) / count);
    }
    total += fit;
  }
  return total;
}

// Whether the nodes the members may use have, together, what they ask together.
bool totalsHold(const GangNeed& need, const Occupancy& occupancy, bool now) {
  std::set<const ClusterNode*> nodes;
  for (const Member& member : need.members) {
    nodes.insert((now ? member.now : member.ever).begin(), (now ? member.now : member.ever).end());
  }
  Units sum;
  for (const ClusterNode* node : nodes) {
    for (const auto& [resource, units] : unitsOn(*node, need.total, occupancy, now)) {
      sum[resource] += std::max<int64_t>(0, units);
    }
  }
  return fitsIn(need.total, sum);
}

// "1 such Pod", "2 such Pods".
std::string suchPods(int64_t count) {
  return std::to_string(count) + (count == 1 ? " such Pod" : " such Pods");
}

std::string unitsText(const Units& units) {
  std::string out;
  for (const auto& [resource, count] : units) {
    out += (out.empty() ? "" : " and ") + std::to_string(count) + " " + resource;
  }
  return out;
}

int64_t gpusOf(const Units& units) {
  int64_t gpus = 0;
  for (const auto& [resource, count] : units) gpus += count;
  return gpus;
}

// "kube-scheduler places none of the Pods of PodGroup train until 3 of them
// (its minCount) fit at once: 3 Pods of 2 nvidia.com/gpu, 6 GPUs in all"
std::string needText(const GangNeed& need) {
  const size_t count = need.members.size();
  std::string out = "kube-scheduler places none of the Pods of PodGroup " + need.group->name +
                    " until " + std::to_string(need.minCount) +
                    " of them (its minCount) fit at once: ";
  if (need.withoutGpus > 0) {
    out += "its " + std::to_string(need.withoutGpus) +
           (need.withoutGpus == 1 ? " Pod that asks" : " Pods that ask") + " for no GPU and ";
  }
  out += need.alike ? std::to_string(count) + (count == 1 ? " Pod of " : " Pods of ") +
                          unitsText(need.members.front().pod->accelerators)
                    : "the " + std::to_string(count) + " GPU Pods that ask for the fewest GPUs";
  return out + ", " + gpuCount(gpusOf(need.total)) + " in all";
}

// The members: the `wanted` GPU Pods that ask for the fewest GPUs, the
// largest first (as packing takes them), each with its nodes.
std::vector<Member> fewestFirst(std::vector<const PodFacts*> pods, size_t wanted,
                                const ClusterView& view) {
  std::stable_sort(pods.begin(), pods.end(),
                   [](const PodFacts* a, const PodFacts* b) { return a->gpus < b->gpus; });
  pods.resize(wanted);
  std::vector<Member> members;
  for (auto it = pods.rbegin(); it != pods.rend(); ++it) {
    Member member{*it, nodesItMayUse(**it, view), {}};
    for (const ClusterNode* node : member.ever) {
      if (!keptOffNow(**it, *node)) member.now.push_back(node);
    }
    members.push_back(std::move(member));
  }
  return members;
}

GangNeed needOf(const std::vector<const PodFacts*>& pods, size_t wanted, int withoutGpus,
                const ClusterView& view) {
  const WorkloadKey& group = pods.front()->workload;
  GangNeed need;
  need.group = &group;
  need.minCount = *group.podGroup->minCount;
  need.withoutGpus = withoutGpus;
  need.members = fewestFirst(pods, wanted, view);
  need.alike = true;
  std::set<const ClusterNode*> nodes;
  for (const Member& member : need.members) {
    const Member& first = need.members.front();
    need.alike = need.alike && member.pod->accelerators == first.pod->accelerators &&
                 member.ever == first.ever && member.now == first.now;
    for (const auto& [resource, count] : member.pod->accelerators) need.total[resource] += count;
    nodes.insert(member.ever.begin(), member.ever.end());
  }
  need.nodes.assign(nodes.begin(), nodes.end());
  std::sort(need.nodes.begin(), need.nodes.end(),
            [](const ClusterNode* a, const ClusterNode* b) { return a->name < b->name; });
  return need;
}

// Even with every GPU free, the nodes they may use cannot hold minCount of
// them at once.
PodVerdict neverHeld(const GangNeed& need, const Occupancy& occupancy) {
  const std::string pool = poolsOf(need.nodes);
  PodVerdict verdict{WaitCause::NoNodeCanHold,
                     needText(need) + "; the nodes of pool " + pool + " that they may use", "",
                     pool};
  const std::string more = ", ask for fewer GPUs per Pod, or add nodes to pool " + pool;
  if (need.alike) {
    const int64_t most = slots(need, occupancy, false);
    verdict.reason += " hold at most " + suchPods(most) + ", even with every GPU free";
    verdict.fix = "lower the minCount of PodGroup " + need.group->name + " to at most " +
                  std::to_string(most + need.withoutGpus) + more;
    return verdict;
  }
  verdict.reason += " have fewer GPUs than that in all, even with every GPU free";
  verdict.fix = "lower the minCount of PodGroup " + need.group->name + more;
  return verdict;
}

// The idle GPUs together would hold them, but not one Pod's GPUs per node.
PodVerdict spreadThin(const GangNeed& need, const Occupancy& occupancy) {
  const Member& first = need.members.front();
  const std::string& resource = first.pod->accelerators.begin()->first;
  std::vector<int64_t> blocks;
  for (const ClusterNode* node : first.now) {
    const int64_t free = allocatableOf(*node, resource) - usedOn(occupancy, *node, resource);
    if (free > 0) blocks.push_back(free);
  }
  std::sort(blocks.rbegin(), blocks.rend());
  const std::string pool = poolsOf(first.now);
  const int64_t fit = slots(need, occupancy, true);
  return {WaitCause::Fragmented,
          needText(need) + "; the nodes of pool " + pool + " that they may use have idle " +
              resource + " spread " + blockList(blocks) +
              ": together they would hold them, but only " + suchPods(fit) +
              (fit == 1 ? " fits" : " fit") + " at once, as one Pod's GPUs must all be on one node",
          packFix(resource), pool};
}

// GPUs are not what stops it (or not what aiadmit can tell): the Pods' own
// cause stays unknown, with what the gang takes beside it.
PodVerdict notGpus(const GangNeed& need, const PodVerdict& current, bool fits) {
  const std::string pool = poolsOf(need.nodes);
  return {WaitCause::Unknown,
          needText(need) + (fits ? "; they fit the idle GPUs of pool " + pool +
                                       " now, so what holds them is not GPUs, taints or node "
                                       "selection"
                                 : "; whether the idle GPUs of pool " + pool +
                                       " hold them at once aiadmit cannot tell, as their asks or "
                                       "the nodes they may use differ"),
          "read the scheduler's words on the group: kubectl get podgroups.scheduling.k8s.io " +
              need.group->name + " -o yaml (status.conditions)",
          current.pool};
}

// minCount against the GPUs of the nodes they may use: never, full, spread
// too thin, or room.
PodVerdict judgeNeed(const GangNeed& need, const PodVerdict& current, const Occupancy& occupancy) {
  const auto members = static_cast<int>(need.members.size());
  if (packed(need, occupancy, true) >= members) return notGpus(need, current, true);
  const bool heldEver = packed(need, occupancy, false) >= members;
  if (!heldEver && (need.alike || !totalsHold(need, occupancy, false))) {
    return neverHeld(need, occupancy);
  }
  if (!totalsHold(need, occupancy, true)) {
    PodVerdict full = poolFull(*need.members.front().pod, need.nodes, occupancy);
    full.reason = needText(need) + "; " + full.reason;
    return full;
  }
  if (need.alike) return spreadThin(need, occupancy);
  return notGpus(need, current, false);
}

// An unknown cause with what aiadmit cannot tell of the group beside it, so
// that "not GPUs" is not read as the whole story; nullopt for a known cause.
std::optional<PodVerdict> noted(const PodVerdict& current, const std::string& note) {
  if (current.cause != WaitCause::Unknown) return std::nullopt;
  PodVerdict verdict = current;
  verdict.reason += "; " + note;
  return verdict;
}

// A group the Pods name that the input lacks: it does not exist when the
// input lists PodGroups, else its policy is not known.
std::optional<PodVerdict> withoutRecord(const WorkloadKey& group, const PodVerdict& current) {
  if (group.podGroupsListed) {
    return PodVerdict{WaitCause::Unknown,
                      "its Pods name PodGroup " + group.name +
                          " (spec.schedulingGroup.podGroupName), which does not exist: "
                          "kube-scheduler places none of them until it does",
                      "create PodGroup " + group.name +
                          " (scheduling.k8s.io), or leave spec.schedulingGroup out of its Pods",
                      current.pool};
  }
  return noted(current, "its Pods belong to PodGroup " + group.name +
                            ", whose policy this input does not show: kube-scheduler may hold "
                            "them for the rest of their group");
}

// Fewer of its Pods exist than minCount: the scheduler waits for the rest.
PodVerdict tooFew(const WorkloadKey& group, size_t pods, const PodVerdict& current) {
  const int64_t minCount = *group.podGroup->minCount;
  return {WaitCause::Unknown,
          "kube-scheduler places none of the Pods of PodGroup " + group.name + " until " +
              std::to_string(minCount) + " of them (its minCount) fit at once, and " +
              std::to_string(pods) + (pods == 1 ? " exists" : " exist") +
              ": it waits for the rest to be made",
          "make the rest of its Pods (is their controller failing?), or lower the minCount of "
          "PodGroup " +
              group.name + " to " + std::to_string(pods),
          current.pool};
}

// The group's waiting Pods that ask for no GPU; nullopt when a Pod of it is
// placed: then it waits in part (gang-partial), and each Pod is judged alone.
std::optional<int> waitingWithoutGpus(const Occupancy& occupancy, const WorkloadId& id) {
  const auto other = occupancy.withoutGpus.find(id);
  const std::pair<int, int> withoutGpus =
      other == occupancy.withoutGpus.end() ? std::pair<int, int>{0, 0} : other->second;
  if (occupancy.placed.count(id) != 0 || withoutGpus.first > 0) return std::nullopt;
  return withoutGpus.second;
}

// Whether the Pods ask for extended resources alone: DRA claims are judged
// Pod by Pod (the allocator, not a count per node, decides them).
bool extendedResourcesOnly(const std::vector<const PodFacts*>& pods) {
  return std::all_of(pods.begin(), pods.end(), [](const PodFacts* pod) {
    return pod->claimedDevices == 0 && !pod->accelerators.empty();
  });
}

}  // namespace

std::optional<PodVerdict> judgeNativeGroup(const std::vector<const PodFacts*>& pods,
                                           const PodVerdict& current, const Occupancy& occupancy,
                                           const ClusterView& view) {
  if (pods.empty() || current.cause < WaitCause::GangPartial) return std::nullopt;
  const WorkloadKey& group = pods.front()->workload;
  if (group.podGroup == nullptr) return withoutRecord(group, current);
  if (!group.podGroup->minCount) return std::nullopt;
  const std::optional<int> withoutGpus = waitingWithoutGpus(occupancy, workloadIdOf(*pods.front()));
  if (!withoutGpus) return std::nullopt;
  const int64_t wanted = *group.podGroup->minCount - *withoutGpus;
  if (wanted <= 0) return std::nullopt;
  if (wanted > static_cast<int64_t>(pods.size())) {
    return tooFew(group, pods.size() + *withoutGpus, current);
  }
  if (!extendedResourcesOnly(pods)) {
    const std::string minCount = std::to_string(*group.podGroup->minCount);
    return noted(current, "its Pods are a gang of PodGroup " + group.name + " (minCount " +
                              minCount +
                              "), whose claimed devices aiadmit does not add up: kube-scheduler "
                              "holds them until " +
                              minCount + " fit at once");
  }
  const GangNeed need = needOf(pods, static_cast<size_t>(wanted), *withoutGpus, view);
  const PodVerdict verdict = judgeNeed(need, current, occupancy);
  // A Pod of it that does not fit alone keeps its own, established cause
  // over what aiadmit cannot tell of the group.
  if (verdict.cause == WaitCause::Unknown && current.cause != WaitCause::Unknown) {
    return std::nullopt;
  }
  return verdict;
}

std::optional<SchedulerWord> podGroupWord(const WorkloadKey& group, WaitCause cause) {
  if (group.podGroup == nullptr || group.podGroup->scheduled.status != "False") {
    return std::nullopt;
  }
  const ConditionRecord& condition = group.podGroup->scheduled;
  SchedulerWord word;
  word.condition = condition.type;
  word.status = condition.status;
  word.reason = condition.reason;
  word.message = condition.message;
  word.agrees = gangMessageAgrees(word.message, cause);
  return word;
}

std::optional<bool> gangMessageAgrees(std::string_view message, WaitCause cause) {
  const std::optional<bool> agrees = messageAgrees(message, cause);
  const bool placing = cause == WaitCause::NoNodeCanHold || cause == WaitCause::PoolFull ||
                       cause == WaitCause::Fragmented;
  if (agrees && !*agrees && placing) return message.find("minCount") != std::string_view::npos;
  return agrees;
}

}  // namespace aiadmit::waiting
