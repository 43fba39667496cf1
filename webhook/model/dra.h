// Dynamic Resource Allocation as a Pod and its claims ask for devices
// (k8s.io/api/resource/v1, v1beta2, v1beta1; KEP-4381, KEP-4816 prioritized
// lists, KEP-5075 consumable capacity, KEP-5004 extended resources backed by
// DRA). Reads only: nothing here decides whether a request is allowed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "webhook/codec/json.h"
#include "webhook/model/scheduling.h"

namespace aiadmit {

// A container resource `deviceclass.resource.kubernetes.io/<class>` asks for
// devices of that DeviceClass without any claim (KEP-5004).
inline constexpr std::string_view kDeviceClassResourcePrefix =
    "deviceclass.resource.kubernetes.io/";

// The class a KEP-5004 implicit resource name names; nullopt for other names.
std::optional<std::string_view> deviceClassOfResourceName(std::string_view resourceName);

enum class AllocationMode { ExactCount, All };

// A consumable-capacity request (KEP-5075): a share of one device, such as
// `memory: 4Gi` of a GPU, never a fraction of a device count.
struct CapacityRequest {
  std::string name;
  std::string quantity;  // as written
};

// One way to satisfy a device request: an `exactly` request, a v1beta1
// request with its fields inline, or one `firstAvailable` sub-request.
struct DeviceAlternative {
  std::string name;  // the sub-request's name; empty otherwise
  std::string deviceClassName;
  AllocationMode mode = AllocationMode::ExactCount;
  int64_t count = 1;  // ExactCount only; the API's default is 1
  std::vector<CapacityRequest> capacity;
  bool adminAccess = false;
  bool selectors = false;  // narrows the class with CEL selectors of its own
  // The device taints it tolerates (`tolerations`, KEP-5055): the same
  // fields as a Pod's, matched against a device's taints.
  std::vector<Toleration> tolerations{};
  std::string fieldPath;  // relative to the ResourceClaimSpec, e.g. "devices.requests[0].exactly"

  // Shares of devices rather than whole ones.
  bool consumesShares() const { return !capacity.empty(); }
};

struct DeviceRequest {
  std::string name;
  // Exactly one for `exactly` (or v1beta1's inline fields); the ordered list
  // of sub-requests for `firstAvailable`, of which the scheduler takes the
  // first that fits.
  std::vector<DeviceAlternative> alternatives;
  bool firstAvailable = false;
  std::string fieldPath;  // "devices.requests[0]"
};

// What a ResourceClaimSpec asks for, and what in it could not be read the
// way the API server reads it (a shape of another version, an unknown
// allocation mode, a count that is not a positive integer).
struct ClaimSpec {
  std::vector<DeviceRequest> requests;
  std::vector<std::string> problems;  // "FIELD: what is wrong"
};

// Which request shape an apiVersion of resource.k8s.io serves: v1 and v1beta2
// nest a request's class and count under `exactly`; v1beta1 and v1alpha3 put
// them on the request itself. nullopt for other versions.
enum class ClaimShape { Nested, Inline };
std::optional<ClaimShape> claimShapeOf(std::string_view apiVersion);

// Reads `spec` of a ResourceClaim (or `spec.spec` of a template) written in
// `shape`.
ClaimSpec readClaimSpec(const JsonValue* claimSpec, ClaimShape shape);

// A ResourceClaim or ResourceClaimTemplate: the spec that claims are made of.
struct ClaimObject {
  bool isTemplate = false;
  std::string namespaceName;
  std::string name;
  ClaimSpec spec;
  std::string specPath;  // "spec" or "spec.spec"
};
// Reads a resource.k8s.io ResourceClaim or ResourceClaimTemplate; false (with
// `error`) when the object is neither or its apiVersion is not one served.
bool readClaimObject(const JsonValue& object, ClaimObject& out, std::string* error);

// ---------------------------------------------------------------------------
// Device taints (KEP-5055, GA in 1.37): a driver taints a device in its
// ResourceSlice (spec.devices[].taints; v1beta1: spec.devices[].basic.taints),
// an admin through a DeviceTaintRule (spec.taint). A taint is temporary
// (maintenance, a device the driver finds unhealthy), so nothing that judges
// whether a workload can ever run reads it.

struct DeviceTaint {
  std::string key;
  std::string value;
  std::string effect;     // None | NoSchedule | NoExecute (others may come)
  std::string timeAdded;  // RFC 3339, "" when not set
};
DeviceTaint deviceTaintFromJson(const JsonValue& item);

// Whether the allocator keeps a request that does not tolerate `taint` off
// its device: NoSchedule and NoExecute do; None and effects this version
// does not know are ignored, as the API tells consumers to.
bool keepsRequestsOff(const DeviceTaint& taint);

// Whether a request with `tolerations` may be given a device with `taint`,
// matched as k8s.io/dynamic-resource-allocation's ToleratesTaint does: an
// empty effect or key matches any, Exists any value, Equal (the default)
// the same value.
bool toleratesDeviceTaint(const std::vector<Toleration>& tolerations, const DeviceTaint& taint);

// ---------------------------------------------------------------------------
// The Pod side.

// spec.resourceClaims[i]: a claim by name, or one made from a template.
struct PodClaimSource {
  std::string name;
  std::string resourceClaimName;
  std::string resourceClaimTemplateName;
  std::string fieldPath;  // "resourceClaims[0]", relative to the PodSpec
};

// containers[i].resources.claims[j]: a container using a claim, or one
// request of it.
struct ContainerClaimUse {
  std::string container;
  bool initContainer = false;
  std::string claim;
  std::string request;  // empty: every request of the claim
  std::string fieldPath;
};

// A KEP-5004 implicit extended resource in a container's resources.
struct ContainerDeviceClassRequest {
  std::string container;
  bool initContainer = false;
  std::string deviceClassName;
  std::string quantity;          // as written
  std::optional<int64_t> count;  // when a positive whole number
  std::string fieldPath;         // "containers[0].resources.limits"
  // Asked for by an annotation of the object (AnnotatedClaim, KServe's
  // exp-dra-*) rather than by the container's resources: `fieldPath` is then
  // from the object's root, "metadata.annotations[...]".
  bool byAnnotation = false;
};

struct PodClaims {
  std::vector<PodClaimSource> sources;
  std::vector<ContainerClaimUse> uses;
  std::vector<ContainerDeviceClassRequest> deviceClassRequests;
  // A container naming a claim the Pod does not list, a source with neither
  // or both names, the pre-1.31 `source` field.
  std::vector<std::string> problems;

  const PodClaimSource* source(std::string_view claimName) const;
  bool empty() const { return sources.empty() && deviceClassRequests.empty(); }
};

// Reads a PodSpec's claims: spec.resourceClaims, resources.claims of every
// container and init container, and KEP-5004 names in their requests and
// limits (limits first: requests of an extended resource default to them).
PodClaims readPodClaims(const JsonValue* podSpec);

}  // namespace aiadmit
