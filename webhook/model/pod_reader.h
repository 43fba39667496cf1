// The pod reader: the one place that answers what a pod template asks for.
// Classification, every mutator and every validator read a pod through it,
// so they agree on which containers ask for accelerators, how many the Pod
// needs as the scheduler counts them, which container is the main one, what
// the aiadmit annotations say and which ports a container serves.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "webhook/codec/json.h"
#include "webhook/model/annotations.h"
#include "webhook/model/dra.h"
#include "webhook/model/quantity.h"
#include "webhook/model/scheduling.h"
#include "webhook/model/workload.h"
#include "webhook/model/workload_type.h"

namespace aiadmit {

// Which resource names count as accelerators. The default is the name's look
// (webhook/model/resources.h); a profile adds the names it allows and their
// near misses (webhook/policy/accelerators.h).
class AcceleratorNames {
 public:
  virtual ~AcceleratorNames() = default;
  virtual bool isAccelerator(std::string_view resourceName) const;
  static const AcceleratorNames& byLook();
};

struct PodContainer {
  // Never null: items that are not objects are skipped. For a template that
  // is only a ResourceRequirements (a TrainJob's trainer.resourcesPerNode),
  // the one container is that object itself.
  const JsonValue* json = nullptr;
  ContainerList list = ContainerList::Containers;
  // Within its list. A container object (KServe's predictor.model) is
  // numbered after the list's items, so that no two containers share one.
  size_t index = 0;
  std::string_view name{};
  bool sidecar = false;  // an init container with restartPolicy Always
  // A container object's pointer relative to the PodSpec ("/model"); "" for
  // an item of containers or initContainers.
  std::string_view object{};
  bool resourcesOnly = false;  // `json` is a ResourceRequirements, not a container
  // `json` is the limits a SparkPodSpec's `gpu: {name, quantity}` gives the
  // Spark container (resourcesOnly too): read, never written.
  bool sparkGpu = false;
  // Its ResourceRequirements: `resources` of a container, `json` itself when
  // resourcesOnly; null when absent.
  const JsonValue* resources() const;
};

// One entry of a container's resources.limits or resources.requests.
struct ResourceEntry {
  const PodContainer& container;
  std::string_view section;  // "limits" or "requests"
  std::string_view name;
  const JsonValue& value;
};

// Where an annotation was read.
enum class AnnotationSite { None, Template, Object };

// A GPU share that KAI Scheduler (and Run:ai before it) hands out by
// annotation on the Pod instead of an extended resource: `gpu-fraction`
// (a portion of one device's memory, 0 < f <= 1) or `gpu-memory` (MiB of
// one device), on `gpu-fraction-num-devices` devices (default 1). Such a
// Pod runs on GPUs that it shares with others; it never asks for
// nvidia.com/gpu as well (KAI refuses both together).
inline constexpr std::string_view kGpuFractionAnnotation = "gpu-fraction";
inline constexpr std::string_view kGpuMemoryAnnotation = "gpu-memory";
inline constexpr std::string_view kGpuFractionDevicesAnnotation = "gpu-fraction-num-devices";

struct GpuShare {
  std::string_view key;  // kGpuFractionAnnotation or kGpuMemoryAnnotation
  std::string_view value;
  int64_t devices = 1;  // GPUs on one node that the share is taken from
};

// Why a container is the main one.
enum class MainContainerBasis {
  None,         // the Pod has no containers
  Accelerator,  // it asks for an accelerator
  Annotation,   // aiadmit.dev/gpu-container names it
  First,        // the first container
};

// A claim of the Pod (or a KEP-5004 name) that resolves to GPU devices: its
// DeviceClass is a GPU class (isGpuDeviceClass, webhook/cluster/claim_resolution.h).
struct GpuClaim {
  std::string claim;         // the spec.resourceClaims entry; "" for a KEP-5004 name
  std::string resourceName;  // the KEP-5004 name; "" for a claim
  std::string container;     // the first container that uses it; "" when none names it
  bool initContainer = false;
  std::string deviceClassName;
  // Devices the Pod needs on one node for it, where the count is certain:
  // ExactCount requests; the smallest alternative of a firstAvailable list
  // whose alternatives are all GPUs. 0 otherwise (allocationMode All).
  int64_t devices = 0;
  // Consumable-capacity shares of devices (KEP-5075): devices are still
  // placed whole on a node, but none is a fraction of a GPU count.
  bool shares = false;
  std::string fieldPath;  // relative to the PodSpec: "resourceClaims[0]"
};

// What the Pod's DRA claims come to: the GPU ones, and those that could not
// be resolved (a template or claim the cluster view does not hold). An
// unresolved claim is never taken for a GPU.
struct ClaimedDevices {
  std::vector<GpuClaim> gpus;
  std::vector<std::string> unresolved;  // "claim gpu: ResourceClaimTemplate gpu-claim is not known"
};

struct MainContainer {
  const PodContainer* container = nullptr;
  MainContainerBasis basis = MainContainerBasis::None;
};

class PodReader {
 public:
  // `objectMetadata` is the object's own metadata; `templateMetadata` and
  // `podSpec` are its pod template's (for a Pod, its own metadata and spec).
  PodReader(const JsonValue* objectMetadata, const JsonValue* templateMetadata,
            const JsonValue* podSpec,
            const AcceleratorNames& accelerators = AcceleratorNames::byLook());
  static PodReader of(const PodTemplateView& view,
                      const AcceleratorNames& accelerators = AcceleratorNames::byLook());
  // This reader judging accelerators by `accelerators` (a profile's, where
  // this one judged by look): the containers and what was read of the claims
  // come along, without reading them again.
  PodReader judgingBy(const AcceleratorNames& accelerators) const;

  const JsonValue* spec() const { return spec_; }
  // Init containers first, then containers: the order the kubelet starts them.
  std::span<const PodContainer> containers() const { return containers_; }
  // More than one container, init containers included: messages then name it.
  bool hasSeveralContainers() const { return containers_.size() > 1; }

  // --- Annotations. One precedence for every aiadmit annotation: the pod
  // template's value (the one a controller's Pods carry) before the object's,
  // so that a controller and its Pods always read the same.
  std::optional<std::string_view> annotation(std::string_view key) const;
  // The same without a reader (and the containers it reads).
  static std::optional<std::string_view> annotation(const JsonValue* objectMetadata,
                                                    const JsonValue* templateMetadata,
                                                    std::string_view key);
  AnnotationSite annotationSite(std::string_view key) const;
  std::optional<std::string_view> templateAnnotation(std::string_view key) const;
  std::optional<std::string_view> objectAnnotation(std::string_view key) const;
  bool isTemplateOfController() const { return templateMetadata_ != objectMetadata_; }

  // --- Resources.
  // Whether an entry of this Pod's resources names an accelerator, by the
  // reader's names.
  bool isAccelerator(const ResourceEntry& entry) const {
    return accelerators_->isAccelerator(entry.name);
  }
  // Every entry of limits, then requests, of every container in order.
  // Templates, not std::function: every rule walks them, and the visit is
  // then inlined.
  template <typename Visit>
  void forEachResource(Visit&& visit) const;
  // The entries whose name is an accelerator, but for those of 0: a
  // quantity of 0 is a container without that resource (how Helm charts
  // switch a GPU off), for classification and every rule alike. Negative,
  // fractional and unreadable amounts are visited: AIA004 reports them.
  template <typename Visit>
  void forEachAccelerator(Visit&& visit) const {
    forEachResource([&](const ResourceEntry& entry) {
      if (isAccelerator(entry) && !isZeroQuantity(entry.value)) visit(entry);
    });
  }
  // The first of those entries, in container order; nullopt when none.
  struct FirstAccelerator {
    const PodContainer* container;
    std::string_view name;
  };
  std::optional<FirstAccelerator> firstAccelerator() const;
  // Whether an entry names an accelerator at all, 0 included: the Pod has
  // said how many it wants, and no default is added beside it.
  bool namesAccelerator() const;
  // Whether a container asks for a positive amount of an accelerator.
  bool asksForAccelerator(const PodContainer& container) const;
  bool asksForAccelerator() const;
  // Whether the Pod claims devices through dynamic resource allocation (its
  // resourceClaims, or those its operator adds by the row's AnnotatedClaim).
  bool claimsDevices() const;
  // What the Pod asks of dynamic resource allocation (webhook/model/dra.h):
  // spec.resourceClaims, containers' resources.claims and KEP-5004
  // deviceclass.resource.kubernetes.io/<class> names. Read on first use.
  const PodClaims& claims() const;
  // The Pod's claims resolved into devices, as the cluster view resolves them
  // (resolveClaims in webhook/cluster/claim_resolution.h); none until then.
  void setClaimedDevices(ClaimedDevices devices);
  const ClaimedDevices& claimedDevices() const;
  // Whether a claim of the Pod resolves to GPU devices.
  bool claimsGpus() const { return !claimedDevices().gpus.empty(); }
  // The GPU devices the Pod's claims certainly need on one node.
  int64_t claimedGpuCount() const;
  // The KAI GPU share the Pod's own annotations ask for (the pod template's,
  // which its Pods carry; a Pod's own): a positive gpu-fraction, else a
  // positive gpu-memory. nullopt when neither is there or usable.
  std::optional<GpuShare> gpuShare() const;
  bool asksForGpuShare() const { return gpuShare().has_value(); }
  // Whether the Pod asks for GPUs at all: by extended resource, by claim or
  // by a KAI share.
  bool asksForGpus() const { return asksForAccelerator() || claimsGpus() || asksForGpuShare(); }

  // --- Placement: where the Pod may land, as a pool that nodes are matched
  // against (nodeMatches in webhook/cluster/cluster_pools.h): its nodeSelector, its tolerations
  // and, when it has exactly one required node affinity term, that term's
  // matchExpressions. Several terms are ORed and none is kept then, so the
  // placement may match more nodes than the Pod can use, never fewer: the
  // largest node it finds is an upper bound, as "can never fit" needs.
  Placement placement() const;

  // What a container asks of `resource` as the scheduler reads it: its
  // request, else its limit (the API server defaults one from the other).
  // Zero when absent or not a positive whole number; a whole number beyond
  // int64 saturates (more than any node has).
  static int64_t containerRequest(const JsonValue& container, std::string_view resource);
  // The same for a container of this reader (a container object, or a
  // template's ResourceRequirements, included).
  static int64_t containerRequest(const PodContainer& container, std::string_view resource);
  // What the Pod needs of `resource` on one node, as kube-scheduler sums it:
  // regular containers and sidecars add up; each other init container runs
  // alone beside the sidecars started before it; the larger of the two.
  int64_t podRequest(std::string_view resource) const;

  // --- The main container: the one that asks for an accelerator (the one
  // aiadmit.dev/gpu-container names when several do); else the one the
  // annotation names; else the first container. Init containers never are.
  // None when the annotation names no container and none asks for an
  // accelerator.
  MainContainer mainContainer() const;
  // The value of aiadmit.dev/gpu-container when it names no container.
  std::optional<std::string_view> unknownGpuContainer() const;

  // --- Ports: the first TCP containerPort (protocol absent or TCP) in 1..65535.
  static std::optional<int> firstTcpPort(const JsonValue& container);
  static bool declaresPort(const JsonValue& container);
  // The TCP port a server takes its traffic on, where probes belong: the
  // first named for HTTP serving (http, https, http1, http2, web, serve,
  // serving, server, api, openai, inference, predict, rest, or one of them
  // and a dash: http-openai), else the first named for gRPC (grpc, h2c,
  // grpc-...), else the first TCP port not named for metrics, else the first
  // TCP port. Serving stacks name their ports so (Triton, NIM, TGI, KServe,
  // Ray Serve), while a runtime's own ports (Ray's gcs-server, a launcher's
  // ssh) or metrics often come first.
  static std::optional<int> servingPort(const JsonValue& container);

  // --- Ranks: the env var by which a container reads its Pod's ordinal in
  // its StatefulSet (the Downward API's apps.kubernetes.io/pod-index label),
  // as `"RANK"` (`"RANK" in container "vllm"` when there are several);
  // nullopt when none does. Multi-node servers in one StatefulSet start rank
  // 0 as the server and the others as its workers by it.
  std::optional<std::string> podIndexReader() const;

 private:
  const PodContainer* named(std::string_view name) const;
  void readAnnotatedClaim(const AnnotatedClaim& claim);
  // The containers of the PodSpec, with `objects` (absolute pointers into
  // `root`, each below `specPointer`) first among the regular ones.
  void readContainers(const JsonValue* root, std::string_view specPointer,
                      std::span<const std::string> objects);

  const JsonValue* objectMetadata_;
  const JsonValue* templateMetadata_;
  const JsonValue* spec_;
  const AcceleratorNames* accelerators_;
  std::vector<PodContainer> containers_;
  mutable std::optional<PodClaims> claims_;
  // The devices the row's AnnotatedClaim asks for by the object's annotations.
  std::optional<ContainerDeviceClassRequest> annotatedRequest_;
  // The ResourceRequirements read from a SparkPodSpec's gpu, which the
  // object does not hold as such; shared by the reader's copies.
  std::shared_ptr<const JsonDocument> sparkResources_;
  std::optional<ClaimedDevices> claimedDevices_;
  // Each container's limits and requests (null where absent), read on first
  // use: rules and mutators go through them many times.
  struct Quantities {
    const JsonValue* limits;
    const JsonValue* requests;
  };
  const std::vector<Quantities>& quantities() const;
  mutable std::vector<Quantities> quantities_;
};

template <typename Visit>
void PodReader::forEachResource(Visit&& visit) const {
  const std::vector<Quantities>& all = quantities();
  for (size_t i = 0; i < containers_.size(); ++i) {
    const std::pair<std::string_view, const JsonValue*> sections[] = {
        {"limits", all[i].limits}, {"requests", all[i].requests}};
    for (const auto& [section, map] : sections) {
      if (map == nullptr) continue;
      for (auto it = map->MemberBegin(), end = map->MemberEnd(); it != end; ++it) {
        visit(ResourceEntry{containers_[i], section, stringOf(&it->name), it->value});
      }
    }
  }
}

// kubectl field paths of a container of `view`'s pod reader:
// "spec.template.spec.containers[0]", "spec.predictor.model"; for a
// template that is only a ResourceRequirements, the template itself.
std::string containerFieldPath(const PodTemplateView& view, const PodContainer& container);
// Where its ResourceRequirements are: "spec.template.spec.containers[0].resources",
// "spec.predictor.model.resources", "spec.trainer.resourcesPerNode".
std::string resourcesFieldPath(const PodTemplateView& view, const PodContainer& container);
// Where one section ("limits", "requests") of them is:
// "spec.template.spec.containers[0].resources.limits"; a SparkPodSpec's gpu
// is its only limit, "spec.executor.gpu".
std::string resourceSectionFieldPath(const PodTemplateView& view, const PodContainer& container,
                                     std::string_view section);
// The ResourceRequirements of `container`, in the document the reader was
// made on (a mutator's copy), created when missing.
JsonValue& ensureResources(const PodContainer& container, JsonAllocator& alloc);

// ` in container "vllm"` when the Pod has several containers and this one has
// a name; "" when the field path says enough.
std::string inContainer(const PodReader& pod, const PodContainer& container);

// How the template's Pods tell the ranks of one multi-node server apart, of
// which rank 0 alone serves: more than one Pod (or a count the object does
// not say) that read their ordinal (PodReader::podIndexReader, returned).
// Such Pods share one template, so a probe on it runs on every rank and never
// passes on those that do not serve. nullopt for any other template.
std::optional<std::string> ranksOfOneServer(const PodTemplateView& view, const PodReader& pod);

}  // namespace aiadmit
