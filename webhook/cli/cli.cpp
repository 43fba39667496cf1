#include "webhook/cli/cli.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "mutators/mutator.h"
#include "webhook/cli/profiles_init.h"
#include "webhook/cluster/cluster_snapshot.h"
#include "webhook/engine/engine.h"
#include "webhook/policy/admission_policy_export.h"
#include "webhook/policy/profile_loader.h"
#include "webhook/serving/logging.h"
#include "webhook/serving/server.h"
#include "webhook/serving/server_flags.h"

namespace aiadmit {

namespace {

constexpr const char* kServeHelp =
    R"(Usage: aiadmit serve --profiles DIR --tls-cert FILE --tls-key FILE [options]

Runs the admission webhook over HTTPS: POST /mutate, POST /validate (and
/applied/mutate, /applied/validate, which judge the object as a person's
whatever owner it names), POST /validate-profiles (the profiles ConfigMap's own check), GET /healthz,
GET /readyz, GET /metrics. With --metrics-listen, also GET /metrics,
/healthz and /readyz over plain HTTP on a port of their own.

Options:
  --profiles DIR          profile directory (default: the shipped profiles)
  --tls-cert FILE         PEM certificate (chain) to serve; reloaded when it changes
  --tls-key FILE          PEM private key; reloaded when it changes. A certificate that is
                          expired, not yet valid or lacks the --tls-server-name is refused
                          (at start, and on reload, where the previous one stays)
  --tls-server-name NAME  the name callers check the certificate against, e.g.
                          aiadmit.aiadmit-system.svc (default: a reloaded certificate must
                          share a name with the one served so far)
  --client-ca FILE        mutual TLS: callers must present a certificate this PEM CA (bundle)
                          verifies; without one, every path but /healthz and /readyz is
                          refused (403) before the body is read; reloaded when it changes
  --listen HOST:PORT      address to listen on (default [::]:8443: IPv6 and IPv4, or 0.0.0.0:8443
                          where the host has no IPv6; port 0 picks a free one)
  --enforcement LEVEL     audit, warn or deny (default): caps every rule's action, for a
                          staged rollout; decisions are recorded in auditAnnotations
  --log-level LEVEL       trace, debug, info, warn, error or off (default info)
  --cluster-view MODE     auto (default), on or off: a live, read-only view of the cluster's
                          nodes, priority classes, queues and DRA objects for AIA016-AIA019.
                          auto: on when the Pod mounts a service-account token or
                          --kubeconfig is given; on: missing credentials stop the server
  --kubeconfig FILE       read the cluster view with this kubeconfig's current context
                          (default: the Pod's service-account token)
  --waiting-metrics       also watch Pods and Kueue Workloads (RBAC:
                          manifests/components/waiting-metrics) for the gauges
                          aiadmit_gpu_workloads_waiting{cause,namespace} and
                          aiadmit_gpus_idle{pool}, as `aiadmit explain` counts them
  -h, --help              this help

Limits and deadlines (durations as "10s", "500ms" or seconds):
)";

constexpr const char* kReviewHelp =
    R"(Usage: aiadmit review [--profiles DIR] [--validate] [--enforcement LEVEL]

Reads one admission.k8s.io/v1 AdmissionReview (JSON) on stdin and writes the
response AdmissionReview on stdout, through the same code as `serve`
(/mutate, or /validate with --validate). Exit 0 when the request was decided
(allowed or denied), 2 when it was not a usable review.

Options:
  --profiles DIR   profile directory (default: the shipped profiles)
  --validate       answer as /validate instead of /mutate
  --enforcement LEVEL
                   audit, warn or deny (default), as `serve --enforcement`
  -h, --help       this help
)";

constexpr const char* kProfilesHelp = R"(Usage: aiadmit profiles lint [--cluster SNAPSHOT] [DIR]
       aiadmit profiles init (--kubeconfig FILE | --cluster SNAPSHOT) [--preset gke|eks|aks|gpu-operator] -o DIR
       aiadmit profiles export --admission-policies DIR -o FILE

lint validates every profile in DIR (default: the shipped profiles) with the
checks the server applies when it loads them, and prints every error as
FILE:LINE:COLUMN: FIELD: MESSAGE. With --cluster (a snapshot of
`kubectl get nodes,resourceslices,deviceclasses -o yaml`), a profile whose pool
matches no GPU node of a cluster that has GPU nodes is an error too: every
workload it places would stay Pending. When all are valid, lists each profile
with its class and scope. Exit 0 when all are valid, 1 otherwise.

init writes profiles whose pools are the cluster's GPU node groups
(`aiadmit profiles init --help`).

export writes the profiles of DIR as native admission policies
(admissionregistration.k8s.io/v1 MutatingAdmissionPolicies,
ValidatingAdmissionPolicies and their bindings) to FILE ("-": stdout): what
the profiles inject into declared GPU Pods, Deployments, StatefulSets,
ReplicaSets, Jobs and CronJobs at CREATE and the rules that need no cluster
view, evaluated by the API server. What stays with the webhook is reported on
stderr and as comments at the top of FILE. Exit 0 when written, 1 when the
profiles do not load, 2 on a usage error.
)";

int usageError(const std::string& message, const char* help) {
  std::cerr << "aiadmit: " << message << "\n\n" << help;
  return 2;
}

}  // namespace

bool printHelp(const Arguments& args, std::string_view help) {
  const bool asked = std::any_of(args.begin(), args.end(), [](const std::string& arg) {
    return arg == "-h" || arg == "--help";
  });
  if (asked) std::cout << help;
  return asked;
}

// "--flag value" or "--flag=value".
bool takeValue(const Arguments& args, size_t& i, const std::string& flag, std::string& out) {
  const std::string& arg = args[i];
  if (arg == flag) {
    if (i + 1 >= args.size()) {
      std::cerr << "aiadmit: " << flag << " needs a value\n";
      std::exit(2);
    }
    out = args[++i];
    return true;
  }
  if (arg.rfind(flag + "=", 0) == 0) {
    out = arg.substr(flag.size() + 1);
    return true;
  }
  return false;
}

std::string defaultProfilesDir() {
  if (const char* fromEnv = std::getenv("AIADMIT_PROFILES"); fromEnv != nullptr && *fromEnv) {
    return fromEnv;
  }
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto installed = exe.parent_path().parent_path() / "share" / "aiadmit" / "profiles";
    if (std::filesystem::is_directory(installed, ec)) return installed.string();
  }
  return AIADMIT_DEFAULT_PROFILES_DIR;
}

bool readAll(const std::string& path, std::string& out) {
  std::ostringstream buffer;
  if (path == "-") {
    buffer << std::cin.rdbuf();
    if (std::cin.bad()) return false;
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    buffer << in.rdbuf();
  }
  out = buffer.str();
  return true;
}

int serveCommand(const Arguments& args) {
  if (printHelp(args, kServeHelp + serverFlagsHelp())) return 0;
  ServerOptions options;
  options.profilesDir = defaultProfilesDir();
  std::string listen = "[::]:8443";
  std::string logLevel = "info";
  for (size_t i = 0; i < args.size(); ++i) {
    if (takeValue(args, i, "--profiles", options.profilesDir) ||
        takeValue(args, i, "--tls-cert", options.certFile) ||
        takeValue(args, i, "--tls-key", options.keyFile) ||
        takeValue(args, i, "--tls-server-name", options.tlsServerName) ||
        takeValue(args, i, "--client-ca", options.clientCaFile) ||
        takeValue(args, i, "--listen", listen) || takeValue(args, i, "--log-level", logLevel) ||
        takeValue(args, i, "--kubeconfig", options.clusterView.kubeconfig)) {
      continue;
    }
    if (args[i] == "--waiting-metrics") {
      options.clusterView.waitingMetrics = true;
      continue;
    }
    std::string value;
    if (takeValue(args, i, "--cluster-view", value)) {
      const auto mode = parseClusterViewMode(value);
      if (!mode) return usageError("--cluster-view: auto, on or off", kServeHelp);
      options.clusterView.mode = *mode;
      continue;
    }
    if (takeValue(args, i, "--enforcement", value)) {
      const auto enforcement = parseEnforcement(value);
      if (!enforcement) return usageError("--enforcement: audit, warn or deny", kServeHelp);
      options.enforcement = *enforcement;
      continue;
    }
    std::string error;
    const FlagResult limit = takeServerFlag(args, i, options, &error);
    if (limit == FlagResult::Invalid) return usageError(error, kServeHelp);
    if (limit == FlagResult::Taken) continue;
    return usageError("unknown argument " + args[i], kServeHelp);
  }
  if (options.certFile.empty() || options.keyFile.empty()) {
    return usageError("--tls-cert and --tls-key are required", kServeHelp);
  }
  if (!parseHostPort(listen, options.host, options.port)) {
    return usageError("--listen must be HOST:PORT", kServeHelp);
  }
  if (!setupLogging(logLevel)) return usageError("unknown --log-level " + logLevel, kServeHelp);
  return runServer(options);
}

int reviewCommand(const Arguments& args) {
  if (printHelp(args, kReviewHelp)) return 0;
  std::string profilesDir = defaultProfilesDir();
  Endpoint endpoint = Endpoint::Mutate;
  RuleAction enforcement = RuleAction::Deny;
  for (size_t i = 0; i < args.size(); ++i) {
    if (takeValue(args, i, "--profiles", profilesDir)) continue;
    std::string level;
    if (takeValue(args, i, "--enforcement", level)) {
      const auto parsed = parseEnforcement(level);
      if (!parsed) return usageError("--enforcement: audit, warn or deny", kReviewHelp);
      enforcement = *parsed;
      continue;
    }
    if (args[i] == "--validate") {
      endpoint = Endpoint::Validate;
      continue;
    }
    return usageError("unknown argument " + args[i], kReviewHelp);
  }
  ProfileLoadResult loaded = loadProfileDirectory(profilesDir, mutationSwitches());
  if (!loaded.ok()) {
    for (const ProfileError& error : loaded.errors) std::cerr << error.format() << "\n";
    return 2;
  }
  std::string body;
  if (!readAll("-", body)) {
    std::cerr << "aiadmit: cannot read stdin\n";
    return 2;
  }
  const Engine engine(loaded.set, enforcement);
  const ReviewAnswer answer = answerReview(engine, endpoint, body);
  std::cout << answer.body << "\n";
  return answer.decision == Decision::Errored ? 2 : 0;
}

int profilesExportCommand(const Arguments& args) {
  if (printHelp(args, kProfilesHelp)) return 0;
  std::string dir;
  std::string file;
  for (size_t i = 0; i < args.size(); ++i) {
    if (takeValue(args, i, "--admission-policies", dir) || takeValue(args, i, "-o", file)) continue;
    return usageError("unknown argument " + args[i], kProfilesHelp);
  }
  if (dir.empty() || file.empty()) {
    return usageError("export needs --admission-policies DIR and -o FILE", kProfilesHelp);
  }
  const ProfileLoadResult loaded = loadProfileDirectory(dir, mutationSwitches());
  if (!loaded.ok()) {
    for (const ProfileError& error : loaded.errors) std::cerr << error.format() << "\n";
    return 1;
  }
  const AdmissionPolicyExport exported = exportAdmissionPolicies(*loaded.set);
  const std::string text = admissionPolicyFile(exported);
  if (file == "-") {
    std::cout << text;
  } else {
    std::ofstream out(file, std::ios::binary);
    out << text;
    if (!out.flush()) {
      std::cerr << "aiadmit: cannot write " << file << "\n";
      return 2;
    }
  }
  for (const std::string& line : exported.report) std::cerr << line << "\n";
  return 0;
}

int profilesCommand(const Arguments& args) {
  if (args.empty()) {
    std::cout << kProfilesHelp;
    return 2;
  }
  if (args[0] == "init") return profilesInitCommand(Arguments(args.begin() + 1, args.end()));
  if (args[0] == "export") return profilesExportCommand(Arguments(args.begin() + 1, args.end()));
  if (printHelp(args, kProfilesHelp)) return 0;
  if (args[0] != "lint") return usageError("unknown arguments", kProfilesHelp);
  std::string snapshotFile;
  std::vector<std::string> dirs;
  for (size_t i = 1; i < args.size(); ++i) {
    if (takeValue(args, i, "--cluster", snapshotFile)) continue;
    dirs.push_back(args[i]);
  }
  if (dirs.size() > 1) return usageError("unknown arguments", kProfilesHelp);
  const std::string dir = dirs.empty() ? defaultProfilesDir() : dirs[0];
  const ProfileLoadResult loaded = loadProfileDirectory(dir, mutationSwitches());
  for (const ProfileError& error : loaded.errors) std::cout << error.format() << "\n";
  if (!loaded.ok()) {
    std::cout << loaded.errors.size() << (loaded.errors.size() == 1 ? " error" : " errors")
              << " in " << dir << "\n";
    return 1;
  }
  if (!snapshotFile.empty()) {
    const ClusterSnapshot snapshot = loadClusterSnapshot(snapshotFile);
    if (!snapshot.error.empty()) {
      std::cerr << "aiadmit: " << snapshot.error << "\n";
      return 2;
    }
    const std::vector<std::string> unmatched = poolsMatchingNoNode(*loaded.set, *snapshot.view);
    for (const std::string& problem : unmatched) std::cout << problem << "\n";
    if (!unmatched.empty()) {
      std::cout << unmatched.size() << (unmatched.size() == 1 ? " pool" : " pools") << " in " << dir
                << " match no GPU node of " << snapshotFile << "\n";
      return 1;
    }
  }
  for (const Profile& profile : loaded.set->profiles()) {
    std::cout << profile.name << ": class " << className(profile.workloadClass) << ", "
              << describeScope(profile.scope) << "\n";
  }
  const size_t count = loaded.set->profiles().size();
  std::cout << count << (count == 1 ? " profile in " : " profiles in ") << dir
            << (count == 1 ? " is valid\n" : " are valid\n");
  return 0;
}

}  // namespace aiadmit
