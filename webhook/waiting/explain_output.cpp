#include "webhook/waiting/explain_output.h"

#include <nlohmann/json.hpp>

#include <ctime>
#include <iomanip>
#include <map>
#include <sstream>

namespace aiadmit {

namespace {

using Json = nlohmann::ordered_json;

Json waitingJson(const WaitingWorkload& workload) {
  const SchedulerWord& word = workload.scheduler;
  return Json{{"kind", workload.kind},
              {"namespace", workload.namespaceName},
              {"name", workload.name},
              {"gpus", workload.gpus},
              {"pods", workload.pods},
              {"cause", std::string(causeName(workload.cause))},
              {"reason", workload.reason},
              {"fix", workload.fix},
              {"pool", workload.pool},
              {"since", workload.since},
              {"scheduler",
               {{"message", word.message},
                {"agrees", word.agrees ? Json(*word.agrees) : Json(nullptr)},
                {"source", word.source},
                {"condition", word.condition},
                {"status", word.status},
                {"reason", word.reason}}}};
}

Json idleJson(const PoolIdle& pool) {
  Json byCause = Json::object();
  for (const auto& [cause, pods] : pool.waitingByCause)
    byCause[std::string(causeName(cause))] = pods;
  return Json{{"pool", pool.pool},
              {"nodes", pool.nodes},
              {"gpus", pool.gpus},
              {"idleGpus", pool.idleGpus},
              {"taintedGpus", pool.taintedGpus},
              {"unusableIdleGpus", pool.unusableIdleGpus},
              {"waitingPods", pool.waitingPods},
              {"waitingByCause", std::move(byCause)}};
}

std::string gpus(int64_t count) {
  return std::to_string(count) + (count == 1 ? " GPU" : " GPUs");
}

std::string plural(int64_t count, const std::string& one, const std::string& many) {
  return std::to_string(count) + " " + (count == 1 ? one : many);
}

std::optional<std::time_t> parseTime(const std::string& text) {
  std::tm parsed{};
  std::istringstream in(text);
  in >> std::get_time(&parsed, "%Y-%m-%dT%H:%M:%S");
  if (in.fail()) return std::nullopt;
  return timegm(&parsed);
}

// "45s", "12m", "3h20m", "4d": how long since `since`, as kubectl ages read.
std::string waited(const std::string& since, const std::string& now) {
  const std::optional<std::time_t> from = parseTime(since);
  const std::optional<std::time_t> to = parseTime(now);
  if (!from || !to || *to < *from) return "";
  const long seconds = static_cast<long>(*to - *from);
  if (seconds < 120) return std::to_string(seconds) + "s";
  if (seconds < 3600) return std::to_string(seconds / 60) + "m";
  if (seconds < 3 * 3600) {
    return std::to_string(seconds / 3600) + "h" + std::to_string(seconds % 3600 / 60) + "m";
  }
  if (seconds < 2 * 86400) return std::to_string(seconds / 3600) + "h";
  return std::to_string(seconds / 86400) + "d";
}

std::string agreement(const SchedulerWord& word) {
  if (!word.agrees) return "";
  return *word.agrees ? " (aiadmit agrees)" : " (aiadmit finds another cause)";
}

void writeWorkloadText(std::ostream& out, const WaitingWorkload& workload, const std::string& now) {
  out << "  " << workload.kind << " " << workload.namespaceName << "/" << workload.name << ": "
      << gpus(workload.gpus);
  if (workload.pods > 0) out << " in " << plural(workload.pods, "Pod", "Pods");
  const std::string age = waited(workload.since, now);
  if (!age.empty()) out << ", waiting " << age;
  if (!workload.pool.empty()) out << ", pool " << workload.pool;
  out << "\n    why: " << workload.reason << "\n    fix: " << workload.fix << "\n";
  const SchedulerWord& word = workload.scheduler;
  if (word.message.empty()) return;
  out << "    " << word.source << ": ";
  // Kueue's reason says more than its message alone (Pending, Inadmissible,
  // AdmissionGated), and a PodGroup's condition is the group's, not the
  // Pod's; a Pod's is Unschedulable whatever the filter.
  if (!word.condition.empty() && word.condition != "PodScheduled") {
    out << word.condition << "=" << word.status << " (" << word.reason << "): ";
  }
  out << word.message << agreement(word) << "\n";
}

// "a100: 2 of 8 GPUs idle on 2 nodes", and what of them no Pod that waits
// can use.
void writePoolText(std::ostream& out, const PoolIdle& pool) {
  out << "  " << pool.pool << ": " << pool.idleGpus << " of " << gpus(pool.gpus) << " idle on "
      << plural(pool.nodes, "node", "nodes");
  if (pool.unusableIdleGpus > 0) {
    out << " ("
        << (pool.unusableIdleGpus == pool.idleGpus ? "all" : std::to_string(pool.unusableIdleGpus))
        << " on nodes with room for none of the Pods that wait)";
  }
  if (pool.taintedGpus > 0) {
    out << ", " << gpus(pool.taintedGpus) << " free but kept off by device taints";
  }
  if (pool.waitingPods > 0) {
    out << ", while " << plural(pool.waitingPods, "Pod waits", "Pods wait") << " for it: ";
    bool first = true;
    for (const auto& [cause, pods] : pool.waitingByCause) {
      out << (first ? "" : ", ") << pods << " " << causeName(cause);
      first = false;
    }
  }
  out << "\n";
}

}  // namespace

std::string explainJson(const WaitingReport& report) {
  Json waiting = Json::array();
  for (const WaitingWorkload& workload : report.waiting) waiting.push_back(waitingJson(workload));
  Json idle = Json::array();
  for (const PoolIdle& pool : report.idle) idle.push_back(idleJson(pool));
  const Json out{{"waiting", std::move(waiting)}, {"idle", std::move(idle)}};
  // Names come from the cluster's objects: bytes that are no UTF-8 are replaced, not refused.
  return out.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string explainText(const WaitingReport& report, const std::string& now) {
  std::ostringstream out;
  int64_t waitingGpus = 0;
  for (const WaitingWorkload& workload : report.waiting) waitingGpus += workload.gpus;
  if (report.waiting.empty()) {
    out << "No GPU work waits.\n";
  } else {
    out << plural(static_cast<int64_t>(report.waiting.size()), "GPU workload waits",
                  "GPU workloads wait")
        << " for " << gpus(waitingGpus) << ".\n";
  }
  for (size_t i = 0; i < report.waiting.size();) {
    const WaitCause cause = report.waiting[i].cause;
    size_t end = i;
    int64_t groupGpus = 0;
    while (end < report.waiting.size() && report.waiting[end].cause == cause) {
      groupGpus += report.waiting[end++].gpus;
    }
    out << "\n"
        << causeName(cause) << ": " << plural(end - i, "workload", "workloads") << ", "
        << gpus(groupGpus) << "\n";
    for (; i < end; ++i) writeWorkloadText(out, report.waiting[i], now);
  }
  out << "\nIdle GPUs by pool:\n";
  if (report.idle.empty()) out << "  no node offers accelerators\n";
  for (const PoolIdle& pool : report.idle) writePoolText(out, pool);
  return out.str();
}

}  // namespace aiadmit
