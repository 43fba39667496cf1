// Kueue Workloads not admitted: the Job, JobSet or other object Kueue holds
// suspended, the LocalQueue and ClusterQueue that hold it, and its GPUs
// against the ClusterQueue's nominal quota, usage and borrowing.
#include <algorithm>

#include "webhook/model/pod_reader.h"
#include "webhook/model/quantity.h"
#include "webhook/model/resources.h"
#include "webhook/waiting/waiting_queue.h"

namespace aiadmit::waiting {

namespace {

bool conditionIs(const JsonValue* status, std::string_view type, std::string_view value) {
  const JsonValue* condition = elementWith(member(status, "conditions"), "type", type);
  return stringMember(condition, "status") == value;
}

// What Kueue says of a Workload it has not admitted, in its own words: the
// QuotaReserved condition when it is False (no quota: Pending, Inadmissible,
// AdmissionGated, Waiting), else the Admitted condition when it is False
// (quota reserved, admission checks not ready: UnsatisfiedChecks, ...).
SchedulerWord kueueWord(const JsonValue* status) {
  SchedulerWord word;
  word.source = "kueue";
  for (const std::string_view type : {"QuotaReserved", "Admitted"}) {
    const JsonValue* condition = elementWith(member(status, "conditions"), "type", type);
    if (stringMember(condition, "status") != "False") continue;
    word.condition = std::string(type);
    word.status = "False";
    word.reason = std::string(stringMember(condition, "reason"));
    word.message = std::string(stringMember(condition, "message"));
    break;
  }
  word.agrees = messageAgrees(word.message, WaitCause::Quota);
  return word;
}

int64_t wholeQuantity(const JsonValue* value) {
  if (value == nullptr) return 0;
  const std::optional<Quantity> quantity = Quantity::fromJson(*value);
  const std::optional<int64_t> whole = quantity ? quantity->wholeValue() : std::nullopt;
  return whole.value_or(0);
}

// What the Workload's pod sets ask for of each accelerator, all Pods together.
std::map<std::string, int64_t> podSetAccelerators(const JsonValue* spec, int& pods) {
  std::map<std::string, int64_t> total;
  const JsonValue* podSets = member(spec, "podSets");
  if (!isArray(podSets)) return total;
  for (const JsonValue& podSet : podSets->GetArray()) {
    const JsonValue* count = member(&podSet, "count");
    const int64_t replicas = count != nullptr && count->IsInt64() ? count->GetInt64() : 1;
    const JsonValue* podTemplate = member(&podSet, "template");
    const JsonValue* metadata = member(podTemplate, "metadata");
    const PodReader reader(metadata, metadata, member(podTemplate, "spec"));
    // Each name once per pod set: a Pod's request as the scheduler sums it.
    std::map<std::string, int64_t> once;
    reader.forEachAccelerator([&](const ResourceEntry& entry) {
      once[std::string(entry.name)] = reader.podRequest(entry.name);
    });
    for (const auto& [resource, each] : once) {
      if (each > 0) total[resource] += each * replicas;
    }
    pods += static_cast<int>(replicas);
  }
  std::erase_if(total, [](const auto& entry) { return entry.second <= 0; });
  return total;
}

struct QueueQuota {
  int64_t nominal = 0;
  std::optional<int64_t> borrowingLimit;  // nullopt: none set (or not on every flavor)
  int64_t reserved = 0;
  bool covered = false;  // some flavor covers the resource
};

QueueQuota quotaOf(const JsonValue& clusterQueue, const std::string& resource) {
  QueueQuota quota;
  bool everyLimit = true;
  int64_t limits = 0;
  const JsonValue* groups = member(member(&clusterQueue, "spec"), "resourceGroups");
  if (!isArray(groups)) return quota;
  for (const JsonValue& group : groups->GetArray()) {
    const JsonValue* flavors = member(&group, "flavors");
    if (!isArray(flavors)) continue;
    for (const JsonValue& flavor : flavors->GetArray()) {
      const JsonValue* entry = elementWith(member(&flavor, "resources"), "name", resource);
      if (entry == nullptr) continue;
      quota.covered = true;
      quota.nominal += wholeQuantity(member(entry, "nominalQuota"));
      const JsonValue* limit = member(entry, "borrowingLimit");
      everyLimit = everyLimit && limit != nullptr;
      limits += wholeQuantity(limit);
    }
  }
  if (quota.covered && everyLimit) quota.borrowingLimit = limits;
  const JsonValue* reservations = member(member(&clusterQueue, "status"), "flavorsReservation");
  if (isArray(reservations)) {
    for (const JsonValue& flavor : reservations->GetArray()) {
      const JsonValue* entry = elementWith(member(&flavor, "resources"), "name", resource);
      quota.reserved += wholeQuantity(member(entry, "total"));
    }
  }
  return quota;
}

const JsonValue* clusterQueueNamed(const WaitingInput& input, std::string_view name) {
  for (const JsonValue* queue : input.clusterQueues) {
    if (stringMember(member(queue, "metadata"), "name") == name) return queue;
  }
  return nullptr;
}

// The reason and fix for a Workload that asks `need` of the queues.
void explainQuota(const WaitingInput& input, std::string_view ns, std::string_view queueName,
                  const std::map<std::string, int64_t>& need, WaitingWorkload& out) {
  const LocalQueueRecord* local = input.view->localQueue(ns, queueName);
  if (local == nullptr) {
    out.reason = "Kueue holds it for LocalQueue " + std::string(queueName) + ", which " +
                 (input.view->knows(ClusterKind::LocalQueue) ? "does not exist in namespace "
                                                             : "the input does not show in ") +
                 std::string(ns);
    out.fix = "set the label kueue.x-k8s.io/queue-name to a LocalQueue of namespace " +
              std::string(ns) + " (kubectl get localqueues -n " + std::string(ns) +
              "), or create " + std::string(queueName);
    return;
  }
  const JsonValue* clusterQueue = clusterQueueNamed(input, local->clusterQueue);
  const std::string cq = "ClusterQueue " + local->clusterQueue;
  if (clusterQueue == nullptr) {
    out.reason = "LocalQueue " + local->name + " points at " + cq + ", which " +
                 (input.clusterQueues.empty() ? "the input does not show" : "does not exist");
    out.fix = "create " + cq + " or point LocalQueue " + local->name + " at one that exists";
    return;
  }
  const JsonValue* spec = member(clusterQueue, "spec");
  std::string cohort(stringMember(spec, "cohortName"));
  if (cohort.empty()) cohort = std::string(stringMember(spec, "cohort"));
  for (const auto& [resource, count] : need) {
    const QueueQuota quota = quotaOf(*clusterQueue, resource);
    const std::string asks = "it asks for " + std::to_string(count) + " " + resource + "; " + cq +
                             " (LocalQueue " + local->name + ") has a nominal quota of " +
                             std::to_string(quota.nominal);
    const bool canBorrow = !cohort.empty() && quota.borrowingLimit.value_or(1) > 0;
    const int64_t ceiling = quota.nominal + (canBorrow ? quota.borrowingLimit.value_or(0) : 0);
    if (!quota.covered || ((!canBorrow || quota.borrowingLimit) && count > ceiling)) {
      out.reason = asks +
                   (canBorrow ? " and may borrow " + std::to_string(ceiling - quota.nominal)
                              : " and no cohort to borrow from") +
                   ", so it can never be admitted there";
      out.fix = "ask for at most " + std::to_string(ceiling) + " " + resource +
                ", or raise the nominalQuota of " + resource + " in " + cq;
      return;
    }
    if (count > quota.nominal - quota.reserved) {
      out.reason = asks + ", of which " + std::to_string(quota.reserved) + " are in use" +
                   (canBorrow ? "; it may borrow from cohort " + cohort : std::string());
      out.fix = "wait for the admitted work of " + cq +
                " to finish, or raise its nominalQuota of " + resource;
      return;
    }
  }
  out.reason = cq + " has the quota for it; Kueue has not admitted it yet";
  out.fix = "read Kueue's message: kubectl describe workloads.kueue.x-k8s.io -n " + std::string(ns);
}

}  // namespace

std::vector<WaitingWorkload> queuedWorkloads(const WaitingInput& input, const WaitingScope& scope) {
  std::vector<WaitingWorkload> out;
  for (const JsonValue* workload : input.workloads) {
    const JsonValue* metadata = member(workload, "metadata");
    const std::string ns(stringMember(metadata, "namespace"));
    const JsonValue* spec = member(workload, "spec");
    const JsonValue* status = member(workload, "status");
    const JsonValue* active = member(spec, "active");
    if (!inScope(scope, ns) || conditionIs(status, "Admitted", "True") ||
        conditionIs(status, "Finished", "True") ||
        (active != nullptr && active->IsBool() && !active->GetBool())) {
      continue;
    }
    WaitingWorkload waiting;
    const std::map<std::string, int64_t> need = podSetAccelerators(spec, waiting.pods);
    for (const auto& [resource, count] : need) waiting.gpus += count;
    if (waiting.gpus == 0) continue;
    waiting.kind = "Workload";
    waiting.name = std::string(stringMember(metadata, "name"));
    const JsonValue* owners = member(metadata, "ownerReferences");
    if (isArray(owners) && owners->Size() > 0) {
      waiting.kind = std::string(stringMember(&(*owners)[0], "kind"));
      waiting.name = std::string(stringMember(&(*owners)[0], "name"));
    }
    waiting.namespaceName = ns;
    waiting.cause = WaitCause::Quota;
    waiting.scheduler = kueueWord(status);
    waiting.since = std::string(stringMember(metadata, "creationTimestamp"));
    waiting.podNames.push_back(std::string(stringMember(metadata, "name")));
    explainQuota(input, ns, stringMember(spec, "queueName"), need, waiting);
    out.push_back(std::move(waiting));
  }
  return out;
}

}  // namespace aiadmit::waiting
