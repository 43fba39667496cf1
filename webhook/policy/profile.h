// A profile: the platform team's policy for one class of AI work, parsed once
// from YAML (profiles/README.md documents every field) and never mutated after.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "webhook/model/resources.h"
#include "webhook/model/scheduling.h"
#include "webhook/policy/classify.h"
#include "webhook/policy/rules.h"

namespace aiadmit {

struct GpuPool {
  std::string resourceName = "nvidia.com/gpu";
  // Accelerator resources a manifest may ask for, sorted; always contains
  // resourceName. An entry may be a glob ("nvidia.com/mig-*"): use
  // Profile::allowsResource rather than comparing names.
  std::vector<std::string> allowedResources;
  // Whether time-sliced or MIG (shared) GPU resources are acceptable (AIA013).
  bool sharingAllowed = false;
  // GPUs given to the main container when the workload names none (0: none).
  int64_t defaultCount = 0;
  // GPUs on the largest node of the pool (AIA006).
  int64_t gpusPerNode = 8;
  // Set when an autoscaler (Cluster Autoscaler, Karpenter, node
  // auto-provisioning) adds the pool's nodes on demand: the most GPUs of
  // resourceName on a node it can add. AIA016 then judges a Pod against the
  // larger of this and the nodes there are now, since a pool scaled to zero
  // or to smaller nodes is not what it can become.
  std::optional<int64_t> maxNodeGpus;
  // Namespaces (globs) where GPUs may be requested; empty: every namespace (AIA012).
  std::vector<std::string> allowedNamespaces;
  // DRA DeviceClasses whose devices a ResourceClaim or ResourceClaimTemplate
  // may request, in order of preference for "did you mean" (AIA020), and
  // that the profile places. The loader gives a pool of another vendor's
  // resourceName that vendor's classes (webhook/model/accelerator_vendors.h).
  std::vector<std::string> deviceClasses = {"gpu.nvidia.com", "mig.nvidia.com"};
};

struct GangScheduling {
  bool required = false;  // AIA010
  // Gang scheduling counts as present when the pod uses this scheduler ...
  std::string schedulerName;
  // ... or carries this label (for example kueue.x-k8s.io/queue-name) ...
  std::string queueLabel;
  // ... or is a gang of Kubernetes' own (1.35+): its Pods belong to a
  // PodGroup (the pod template's spec.schedulingGroup, spec.workloadRef in
  // 1.35), or a Job asks for one (spec.scheduling.schedulingPolicy.gang).
  bool native = true;
};

struct Scheduling {
  std::string priorityClassName;
  std::vector<std::string> allowedPriorityClasses;  // empty: only priorityClassName (AIA011)
  std::string schedulerName;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  GangScheduling gang;
};

struct ProbeSpec {
  enum class Handler { HttpGet, TcpSocket };
  Handler handler = Handler::HttpGet;
  std::string path = "/health";
  std::string scheme = "HTTP";
  std::optional<int> port;  // default: the port the container serves on (PodReader::servingPort)
  int periodSeconds = 10;
  int timeoutSeconds = 1;
  int failureThreshold = 3;
};

struct Probes {
  bool enabled = false;
  ProbeSpec readiness;
  ProbeSpec startup;
  // How long a model may take to load; startup.failureThreshold is derived.
  int startupBudgetSeconds = 600;

  // Enough startup probe periods to cover the budget: ceil(budget / period).
  int startupFailureThreshold() const;
};

struct JobDefaults {
  std::optional<int64_t> backoffLimit;
  std::optional<int64_t> activeDeadlineSeconds;
  std::optional<int64_t> ttlSecondsAfterFinished;
};

struct SharedMemory {
  bool enabled = false;
  int64_t minGpus = 1;  // add /dev/shm from this many GPUs in a pod
  // The volume's sizeLimit, lowered to the containers' memory limit; empty:
  // the memory limit when the containers have one, else none.
  std::string sizeLimit;
};

// A switch under spec.mutations that turns mutators off. The mutators
// declare the ones they honour, with their defaults (mutators/*.cpp), and the
// registry hands them to the loader, which takes exactly these keys.
struct MutationSwitch {
  std::string_view key;     // "gpuLimits"
  bool onByDefault = true;  // when the profile leaves it out
};

// The switches a profile turns off: set false under spec.mutations, or left
// out where the switch is off by default. A Profile built without the loader
// turns none off.
struct MutationSwitches {
  std::set<std::string, std::less<>> off;

  bool on(std::string_view key) const { return !off.contains(key); }
};

// How the rules whose premise is the class (AIA002, AIA009, AIA014, AIA015)
// treat a class aiadmit inferred from the kind rather than one the developer
// declared: by default they warn at most, since a guess is not a statement.
struct ClassificationPolicy {
  bool enforceInferred = false;
};

struct ProfileScope {
  // Exact names or globs (* and ?); empty: every namespace.
  std::vector<std::string> namespaces;
  // All must be on the object (or, for keys the object lacks, its pod template).
  std::map<std::string, std::string> matchLabels;
};

// 1-based line and column in the profile file; 0 when unknown.
struct SourceLocation {
  int line = 0;
  int column = 0;
};

struct Profile {
  std::string name;
  WorkloadClass workloadClass = WorkloadClass::None;
  std::string sourceFile;
  int sourceLine = 0;            // where the YAML document starts
  SourceLocation nameLocation;   // of metadata.name
  SourceLocation scopeLocation;  // of spec.scope, or of spec when there is none

  ProfileScope scope;
  GpuPool gpu;
  Placement placement;
  Scheduling scheduling;
  Probes probes;
  JobDefaults jobDefaults;
  SharedMemory sharedMemory;
  MutationSwitches mutations;
  RuleActions rules;
  ClassificationPolicy classification;

  bool allowsResource(std::string_view resourceName) const;
  bool allowsPriorityClass(std::string_view priorityClass) const;
};

// Shell-style glob with * and ?, as used for namespace scopes and allowed
// resources.
bool globMatch(std::string_view pattern, std::string_view text);
bool isGlob(std::string_view pattern);

// A Kubernetes namespace name: an RFC 1123 label (a-z, 0-9, '-', at most 63,
// starting and ending with a letter or digit).
bool isNamespaceName(std::string_view name);

// A namespace name that every pattern (exact name or glob) matches and that is
// not in `excluded`: a shortest one when nothing is excluded, so that messages
// show a plausible example. nullopt when no valid namespace name qualifies. Exact, not a guess:
// the patterns are intersected as automata together with the name syntax.
std::optional<std::string> namespaceMatchedByAll(
    const std::vector<std::string_view>& patterns,
    const std::vector<std::string_view>& excluded = {});

}  // namespace aiadmit
