// The workload-type table: for each API group and kind that carries Pods,
// where its pod templates are, which role each one plays, how many Pods each
// makes, where its Job-level settings live and which class it defaults to.
// Built-in kinds (Pod and its controllers, the AI operators' custom
// resources) and the kinds a platform team adds in the profiles directory
// (WorkloadType documents) are rows of the same table, and one resolver turns
// a row and an object into the concrete template locations of that object.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "webhook/codec/json.h"
#include "webhook/codec/json_pointer.h"
#include "webhook/model/workload_class.h"

namespace aiadmit {

// Pointers in the table are RFC 6901 JSON Pointers ("/spec/template"), with
// `*` as a token that matches every member of an object (a map key) or every
// element of an array. A pointer without the leading "/" ("replicas",
// "template/spec/parallelism") is relative to the value the template's last
// wildcard matched (the replica spec, the replicated job, the worker group).

// One number that multiplies into a template's Pod count.
struct ReplicaFactor {
  std::string pointer;                  // absolute, or relative to the last wildcard's match
  std::optional<int64_t> defaultValue;  // when absent; none: the count is unknown
  // Subtracted from the value (LeaderWorkerSet's size counts the leader);
  // only when `subtractWhenPresent` (absolute) exists, if it is set.
  int64_t subtract = 0;
  std::string subtractWhenPresent;
  // Bounds the value is clamped to when they are present (KubeRay keeps a
  // worker group's replicas within minReplicas and maxReplicas).
  std::string atLeast;
  std::string atMost;
  // Fields (absolute, or relative to the last wildcard's match) that make
  // the count unknown when any is true: a JSON true, or a string Go's
  // strconv.ParseBool reads as true (the Spark operator's sparkConf). Spark's
  // dynamic allocation sizes the executors at run time.
  std::vector<std::string> unknownWhen;
};

// Where the Job-level settings of a template's Pods are: a pointer to each
// field (absolute or relative), "" where the kind has no such setting. The
// fields may be absent in the object; a mutator creates them.
struct JobSettingPointers {
  std::string backoffLimit;  // Volcano: maxRetry
  std::string activeDeadlineSeconds;
  std::string ttlSecondsAfterFinished;
  // What the API server writes into backoffLimit when it is left out (a
  // Job's 6): that value is taken as unset. None where nothing defaults it.
  std::optional<int64_t> serverBackoffLimit;
  // The field whose presence says the user chose the retries per index
  // (a Job's backoffLimitPerIndex): backoffLimit is then theirs, whatever it is.
  std::string backoffLimitPerIndex;
  bool any() const {
    return !backoffLimit.empty() || !activeDeadlineSeconds.empty() ||
           !ttlSecondsAfterFinished.empty();
  }
};

// What a template's shape lets aiadmit inject (a bit set).
enum Injection : uint32_t {
  kInjectGpuLimits = 1u << 0,     // resources.limits beside GPU requests
  kInjectPlacement = 1u << 1,     // tolerations, nodeSelector, required node affinity
  kInjectPriority = 1u << 2,      // priorityClassName
  kInjectScheduler = 1u << 3,     // schedulerName
  kInjectStamps = 1u << 4,        // labels and annotations of the Pods
  kInjectProbes = 1u << 5,        // readiness and startup probes of the serving container
  kInjectSharedMemory = 1u << 6,  // a memory-backed /dev/shm volume
};
// Every injection with its name in WorkloadType documents (`inject:`), in bit
// order: the names, the loader's vocabulary and kInjectAll all come from here.
struct InjectionName {
  Injection injection;
  std::string_view name;
};
inline constexpr InjectionName kInjectionNames[] = {
    {kInjectGpuLimits, "gpuLimits"},
    {kInjectPlacement, "placement"},
    {kInjectPriority, "priority"},
    {kInjectScheduler, "scheduler"},
    {kInjectStamps, "stamps"},
    {kInjectProbes, "probes"},
    {kInjectSharedMemory, "sharedMemory"},
};
inline constexpr uint32_t kInjectAll = [] {
  uint32_t all = 0;
  for (const InjectionName& entry : kInjectionNames) all |= entry.injection;
  return all;
}();
std::string_view injectionName(Injection injection);
// "gpuLimits, placement, ..." in bit order.
std::string describeInjections(uint32_t injections);

enum class TemplateShape {
  // A PodTemplateSpec-like pair: `spec` is a PodSpec, `metadata` (if any)
  // an object with labels and annotations (a Pod's, a template's, or a
  // KServe component's own labels/annotations members).
  PodSpec,
  // Only a ResourceRequirements (Trainer TrainJob's trainer.resourcesPerNode):
  // GPUs are read from its requests and limits; only limits may be injected.
  Resources,
  // A Spark operator SparkPodSpec (a SparkApplication's driver or executor):
  // the Spark container is implicit, its GPUs are `gpu: {name, quantity}`,
  // which the operator's Pod webhook makes that container's limit, and its
  // Pods' labels and annotations are the spec's own members.
  SparkPod,
};

// Devices the operator claims for a template's Pods from annotations on the
// object, where the template itself names no claim: KServe's
// serving.kserve.io/exp-dra-* make it create a ResourceClaimTemplate of that
// DeviceClass and count and give its claim to one container of each Pod.
// Keys of the object's annotations.
struct AnnotatedClaim {
  std::string deviceClass{};  // the DeviceClass; no claim unless it is set
  std::string count{};        // a whole number of devices; absent or blank: 1
  std::string container{};    // the container that uses it; absent: the first
  bool any() const { return !deviceClass.empty(); }
};

// What a SparkPodSpec slot may take: its priorityClassName (the operator's
// Pod webhook sets it on the Pods) and its labels and annotations (given to
// the Pods through spark-submit). Its GPUs are read, never written; its
// placement is the application's and the operator's (see the row).
inline constexpr uint32_t kSparkPodInjectable = kInjectPriority | kInjectStamps;

struct TemplateSlot {
  // Role of the Pods: literal text in which `{key}` stands for the map key
  // or array index the last wildcard matched and `{.FIELD}` for the string
  // field FIELD of the matched value (its key or index when FIELD is absent):
  // "{key}", "{.groupName}", "{.name}-leader", "head".
  std::string role{};
  TemplateShape shape = TemplateShape::PodSpec;
  std::string spec{};      // pointer pattern of the PodSpec (ResourceRequirements, SparkPodSpec)
  std::string metadata{};  // pointer pattern of the Pods' metadata; "" when none
  // Pointer pattern of the metadata of what the object makes and which makes
  // the Pods (a CronJob's Jobs: /spec/jobTemplate/metadata): stamped like
  // the Pods' own. "" when the Pods come from the object itself.
  std::string intermediateMetadata{};
  // Container-shaped objects outside spec.containers that become a
  // container of the Pod, relative to `spec` (KServe's predictor.model).
  std::vector<std::string> containerObjects{};
  AnnotatedClaim annotatedClaim{};
  // Pod count: the product of the factors; none: not knowable from the object.
  std::optional<std::vector<ReplicaFactor>> replicas{};
  JobSettingPointers jobSettings{};
  // Pointer of the number of Pods that must finish (a Job's completions),
  // which caps how many of the first replica factor's Pods run at once; ""
  // when none.
  std::string completions{};
  uint32_t injectable = kInjectAll;
  std::string note{};  // what the count or the shape means, for docs and `check`
};

// How the kind runs: shape-against-kind checks (AIA002) refuse training or
// batch on long-running kinds and realtime on kinds that run to completion.
enum class Lifecycle { RunsToCompletion, LongRunning, Either };
std::string_view lifecycleName(Lifecycle lifecycle);

// The class when the workload carries no aiadmit.dev/workload annotation: the
// first condition that holds, else `workloadClass`. A condition holds when
// the field at `pointer` has one of `values` (or is absent, with
// `whenAbsent`); or, with `noPortDeclared`, when no container of the object's
// first template declares a port: what serves nothing is not a server.
struct ClassCondition {
  std::string pointer;              // absolute
  std::vector<std::string> values;  // the string values that make it hold
  bool whenAbsent = false;          // whether an absent field holds too
  bool noPortDeclared = false;
  WorkloadClass workloadClass = WorkloadClass::None;
  std::string reason;
};

// What an UPDATE of the kind may change without being a rollout, and what it
// may not change at all. Pointer patterns are absolute, with `*` wildcards.
struct UpdateRules {
  // Fields that change how many Pods run, not what they run (replicas,
  // minReplicas, a worker group's count): an UPDATE that changes nothing else
  // is a scale, and a scale is never a rollout.
  std::vector<std::string> scale;
  // The kind's suspend flag ("" when none). Queue controllers (Kueue) flip it
  // and, while the old object is suspended, write the templates' node
  // selection, tolerations, scheduling gates, labels and annotations.
  std::string suspend;
  // Parts fixed once created, by the API server or the operator's own webhook
  // (a Job's pod template, a JobSet's replicated jobs): aiadmit never edits a
  // template inside one on UPDATE, since the update would then be refused.
  std::vector<std::string> immutable;
  // False when aiadmit edits the object only as it is created (a Pod: its
  // spec is settled then, and its metadata is what its controller or its
  // owner writes afterwards).
  bool editedOnUpdate = true;
};

// Where the operator reads the scheduling of all its Pods, instead of (or
// before) their templates: JSON Pointers into the object, "" when the kind
// has no such field. A label or annotation is a pointer too
// ("/metadata/labels/ray.io~1scheduler-name").
//
// Rules read every field: AIA010 holds when schedulerName names the
// profile's gang scheduler or a `gang` field is present; AIA011 and AIA017
// judge priorityClassName as they judge a template's. The scheduling mutator
// writes the profile's scheduler and priority class at a field of `/spec`
// that no `gang` pattern contains, instead of the templates: the operator
// gives it to every Pod whose template names none (Volcano). A label (an
// integration that works only where the operator runs with it, KubeRay's)
// or a field inside `gang` (Kubeflow's schedulingPolicy, which names only
// the PodGroup's class, and whose presence would claim gang scheduling) is
// read, not written: the templates get the profile's value, or the field's
// own when it has one, so that the two never disagree.
struct SchedulingFields {
  std::string schedulerName{};      // Volcano's spec.schedulerName, KubeRay's ray.io/scheduler-name
  std::string priorityClassName{};  // Volcano's spec.priorityClassName, ray.io/priority-class-name
  std::string queue{};              // Volcano's spec.queue, runPolicy.schedulingPolicy.queue
  // Pointer patterns (`*` allowed) whose presence says the operator
  // gang-schedules the workload's Pods itself (a Kubeflow job's
  // runPolicy.schedulingPolicy, a Volcano Job's minAvailable).
  std::vector<std::string> gang{};
  // Pointer patterns whose presence says the controller makes a PodGroup of
  // Kubernetes' own with a gang policy for the Pods (a Job's
  // spec.scheduling.schedulingPolicy.gang, WorkloadWithJob in 1.36+). A pod
  // template's own spec.schedulingGroup is read for every kind.
  std::vector<std::string> nativeGang{};
};

struct WorkloadType {
  std::string group;  // "" for the core group
  std::string kind;
  std::vector<std::string> versions;                  // every served version; empty: any
  std::string resource;                               // plural resource name, for webhook rules
  WorkloadClass workloadClass = WorkloadClass::None;  // never None in a checked row
  std::string classReason;  // "a PyTorchJob is a distributed training run"
  std::vector<ClassCondition> classConditions;
  Lifecycle lifecycle = Lifecycle::Either;
  std::vector<TemplateSlot> templates;
  UpdateRules updates;
  SchedulingFields scheduling;
  // A command line the kind runs beside its templates, whose Pods only start
  // a runtime for it (a RayJob's /spec/entrypoint); "" when it has none.
  // Read for signs of what the workload runs, never edited.
  std::string entrypoint;
  // A kind of an operator; false for Kubernetes' own (a Pod and its
  // controllers), whose paths messages name without a role.
  bool customResource = true;
  // The object is its own Pod (a bare Pod): no controller retries it, its
  // restartPolicy defaults to Always and the API server may set its priority.
  bool objectIsPod = false;
  bool builtIn = false;
  std::string source;  // "built-in", or FILE:LINE of its WorkloadType document

  // "PyTorchJob.kubeflow.org", "Pod" for the core group.
  std::string qualifiedKind() const;
  bool servesVersion(std::string_view version) const;
};

// The default class of `object` of `type`, with why.
struct DefaultClass {
  WorkloadClass workloadClass = WorkloadClass::None;
  std::string_view reason;
};
DefaultClass defaultClassOf(const WorkloadType& type, const JsonValue& object);

// Every problem of a row, "" when there is none: pointer syntax, role
// placeholders, metadata that does not follow its spec's wildcards.
std::string checkWorkloadType(const WorkloadType& type);
std::string checkTemplateSlot(const TemplateSlot& slot);
// Whether `pattern` is a well-formed pointer pattern ("" when it is, else why).
std::string checkPointerPattern(std::string_view pattern, bool allowRelative);
std::string checkRoleTemplate(std::string_view role);

class WorkloadTypeTable {
 public:
  // A group/kind may have several rows for disjoint sets of versions (an
  // older version that lacks a field); checkWorkloadType is the caller's job.
  explicit WorkloadTypeTable(std::vector<WorkloadType> types);
  WorkloadTypeTable(const WorkloadTypeTable&) = delete;
  WorkloadTypeTable& operator=(const WorkloadTypeTable&) = delete;

  // The built-in rows (built once, shared).
  static std::shared_ptr<const WorkloadTypeTable> builtIn();
  // Built-in rows plus `added`; "" in `error` or why the set is refused
  // (a row that repeats a built-in or another added group/kind).
  static std::shared_ptr<const WorkloadTypeTable> withAdded(std::vector<WorkloadType> added,
                                                            std::string* error);

  // In table order: built-in rows first, each group's kinds together.
  const std::vector<WorkloadType>& types() const { return types_; }
  // The row of a group, version and kind; nullptr when none serves it.
  const WorkloadType* find(std::string_view group, std::string_view version,
                           std::string_view kind) const;
  // The first row of a group and kind, whatever the version.
  const WorkloadType* findGroupKind(std::string_view group, std::string_view kind) const;
  // From the object's own apiVersion ("kubeflow.org/v1") and kind.
  const WorkloadType* findForObject(const JsonValue& object) const;

 private:
  const std::vector<size_t>* rowsOf(std::string_view group, std::string_view kind) const;

  std::vector<WorkloadType> types_;
  std::unordered_map<std::string, std::vector<size_t>> byGroupKind_;
};

// The built-in row of one of Kubernetes' own kinds (a Pod and its
// controllers: not a custom resource) by group and kind, whatever the
// version; null for any other kind.
const WorkloadType* kubernetesKindOf(std::string_view group, std::string_view kind);

// ---- Resolution: the concrete templates of one object ----

struct ResolvedTemplate {
  const TemplateSlot* slot = nullptr;
  std::string role;
  std::string specPointer;  // RFC 6901, escaped: "/spec/pytorchReplicaSpecs/Worker/template/spec"
  std::string metadataPointer;  // "" when the slot has no metadata
  std::string specFieldPath;    // kubectl: "spec.pytorchReplicaSpecs.Worker.template.spec"
  std::string metadataFieldPath;
  std::string intermediateMetadataPointer;    // "" when the slot has none
  const JsonValue* spec = nullptr;            // the PodSpec (or ResourceRequirements)
  const JsonValue* metadata = nullptr;        // nullptr when absent from the object
  std::vector<std::string> containerObjects;  // concrete pointers of those present
  std::optional<int64_t> replicas;            // Pods from this template; none: unknown
  JobSettingPointers jobSettings;             // concrete, escaped pointers
};

struct ResolveLimits {
  size_t maxTemplates = 256;  // more is refused: no real workload has that many
  size_t maxVisits = 4096;    // values a wildcard may look at, in all
};

struct Resolution {
  std::vector<ResolvedTemplate> templates;
  // Set when the object is beyond the limits; `templates` then holds what
  // was found before, and the object must be refused, not half-processed.
  std::string error;
  bool ok() const { return error.empty(); }
};

// Every template of `object` that `type` describes and the object holds (a
// slot whose spec is absent or not an object yields nothing), in slot order,
// then in the object's member and element order.
Resolution resolveTemplates(const WorkloadType& type, const JsonValue& object,
                            const ResolveLimits& limits = {});

}  // namespace aiadmit
