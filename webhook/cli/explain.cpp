#include "webhook/cli/explain.h"

#include <chrono>
#include <ctime>
#include <iostream>
#include <map>

#include "webhook/cli/cluster_source.h"

namespace aiadmit {

namespace {

constexpr const char* kExplainHelp =
    R"(Usage: aiadmit explain [--kubeconfig FILE | --cluster SNAPSHOT] [-n NS | -A] [-o text|json] [NAME...]

Why GPU work waits: each Pending Pod that asks for accelerators and each Kueue
Workload not admitted, with one cause and one fix, grouped by cause and
ranked by the GPUs that wait; beside them, the idle GPUs of each pool (a
node group: GKE node pool, EKS node group, Karpenter NodePool, AKS agent
pool, else the instance type). Causes: no-node-can-hold, claim-unallocatable,
untolerated-taint, selector-excludes, device-tainted, quota, gang-partial,
fragmented, pool-full, unknown. The Pods of a PodGroup of Kubernetes' own
are judged together, as its gang is placed: minCount of them at once. Kueue's
own words (its QuotaReserved or Admitted condition, with reason), and the
scheduler's on a PodGroup (PodGroupInitiallyScheduled), are shown beside the
cause.

Options:
  --kubeconfig FILE   read the cluster with this kubeconfig's current context (list
                      and get on the kinds below; nothing is written)
  --cluster SNAPSHOT  read a snapshot file instead, as
                      kubectl get pods,nodes,events,resourceslices,resourceclaims,deviceclasses,devicetaintrules,podgroups.scheduling.k8s.io,priorityclasses,localqueues,clusterqueues,workloads.kueue.x-k8s.io -A -o yaml
                      prints it (kinds a cluster does not serve may be left out)
  -n, --namespace NS  the namespace of the work to explain (default: the context's, else
                      "default"); the pools are always the whole cluster's
  -A, --all-namespaces
                      the work of every namespace
  -o, --output FORMAT text (default) or json: {"waiting": [{kind, namespace, name, gpus,
                      pods, cause, reason, fix, pool, since, scheduler: {message, agrees,
                      source, condition, status, reason}}], "idle": [{pool, nodes, gpus,
                      idleGpus, taintedGpus, unusableIdleGpus, waitingPods,
                      waitingByCause}]}
  NAME...             only these workloads (or Pods)
  -h, --help          this help

Exit 0 when nothing waits, 1 when some work waits, 2 on a usage or input error.
)";

struct ExplainOptions {
  std::string kubeconfig;
  std::string snapshot;
  std::string namespaceName;
  bool allNamespaces = false;
  bool json = false;
  std::vector<std::string> names;
};

int usage(const std::string& message) {
  std::cerr << "aiadmit: " << message << "\n\n" << kExplainHelp;
  return 2;
}

// 0 when parsed, else the exit code.
int parseOptions(const Arguments& args, ExplainOptions& options) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const auto value = [&](std::initializer_list<const char*> flags, std::string& out) {
      for (const char* flag : flags) {
        if (takeValue(args, i, flag, out)) return true;
      }
      return false;
    };
    std::string output;
    if (value({"--kubeconfig"}, options.kubeconfig) || value({"--cluster"}, options.snapshot) ||
        value({"-n", "--namespace"}, options.namespaceName)) {
      continue;
    }
    if (value({"-o", "--output"}, output)) {
      if (output != "text" && output != "json") return usage("-o: text or json");
      options.json = output == "json";
      continue;
    }
    if (arg == "-A" || arg == "--all-namespaces") {
      options.allNamespaces = true;
      continue;
    }
    if (!arg.empty() && arg[0] == '-') return usage("unknown argument " + arg);
    options.names.push_back(arg);
  }
  if (options.kubeconfig.empty() == options.snapshot.empty()) {
    return usage("give one of --kubeconfig FILE and --cluster SNAPSHOT");
  }
  if (options.allNamespaces && !options.namespaceName.empty()) {
    return usage("-n and -A exclude each other");
  }
  return 0;
}

std::string utcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

}  // namespace

int explainCommand(const Arguments& args) {
  if (printHelp(args, kExplainHelp)) return 0;
  ExplainOptions options;
  if (const int failed = parseOptions(args, options); failed != 0) return failed;
  ClusterText cluster;
  if (!readClusterText({options.kubeconfig, options.snapshot}, listWaitingSnapshot, cluster)) {
    return 2;
  }
  const WaitingInput input = readWaitingInput(cluster.text, cluster.name);
  if (!input.error.empty()) {
    std::cerr << "aiadmit: " << input.error << "\n";
    return 2;
  }
  WaitingScope scope;
  if (!options.allNamespaces) {
    scope.namespaces.push_back(options.namespaceName.empty() ? cluster.defaultNamespace
                                                             : options.namespaceName);
  }
  scope.names = options.names;
  const WaitingReport report = explainWaiting(input, scope);
  std::cout << (options.json ? explainJson(report) : explainText(report, utcNow()));
  return report.waiting.empty() ? 0 : 1;
}

}  // namespace aiadmit
