#include "webhook/model/dra.h"

#include "webhook/model/quantity.h"

namespace aiadmit {

std::optional<std::string_view> deviceClassOfResourceName(std::string_view resourceName) {
  if (resourceName.size() <= kDeviceClassResourcePrefix.size() ||
      resourceName.substr(0, kDeviceClassResourcePrefix.size()) != kDeviceClassResourcePrefix) {
    return std::nullopt;
  }
  return resourceName.substr(kDeviceClassResourcePrefix.size());
}

std::optional<ClaimShape> claimShapeOf(std::string_view apiVersion) {
  if (apiVersion == "resource.k8s.io/v1" || apiVersion == "resource.k8s.io/v1beta2") {
    return ClaimShape::Nested;
  }
  if (apiVersion == "resource.k8s.io/v1beta1" || apiVersion == "resource.k8s.io/v1alpha3") {
    return ClaimShape::Inline;
  }
  return std::nullopt;
}

namespace {

std::string indexed(std::string_view path, std::string_view field, size_t index) {
  std::string out(path);
  if (!out.empty()) out += '.';
  out += field;
  out += '[' + std::to_string(index) + ']';
  return out;
}

std::string joined(std::string_view path, std::string_view field) {
  return path.empty() ? std::string(field) : std::string(path) + "." + std::string(field);
}

// The fields a request shares with its sub-requests and with `exactly`:
// deviceClassName, allocationMode, count, capacity, adminAccess.
DeviceAlternative readAlternative(const JsonValue* fields, std::string path,
                                  std::vector<std::string>& problems) {
  DeviceAlternative alternative;
  alternative.fieldPath = std::move(path);
  alternative.name = std::string(stringMember(fields, "name"));
  alternative.deviceClassName = std::string(stringMember(fields, "deviceClassName"));
  if (alternative.deviceClassName.empty()) {
    problems.push_back(joined(alternative.fieldPath, "deviceClassName") + ": required");
  }

  const std::string_view mode = stringMember(fields, "allocationMode");
  if (mode == "All") {
    alternative.mode = AllocationMode::All;
  } else if (!mode.empty() && mode != "ExactCount") {
    problems.push_back(joined(alternative.fieldPath, "allocationMode") + ": unknown mode \"" +
                       std::string(mode) + "\" (ExactCount or All)");
  }

  const JsonValue* count = member(fields, "count");
  if (count != nullptr) {
    if (!count->IsInt64() || count->GetInt64() <= 0) {
      problems.push_back(joined(alternative.fieldPath, "count") +
                         ": must be a positive integer, not " + toJson(*count));
    } else if (alternative.mode == AllocationMode::All) {
      problems.push_back(joined(alternative.fieldPath, "count") +
                         ": allocationMode All takes no count");
    } else {
      alternative.count = count->GetInt64();
    }
  }

  const JsonValue* requests = member(member(fields, "capacity"), "requests");
  if (isObject(requests)) {
    for (const auto& entry : requests->GetObject()) {
      alternative.capacity.push_back(
          {std::string(entry.name.GetString(), entry.name.GetStringLength()),
           quantityText(entry.value)});
    }
  }
  const JsonValue* adminAccess = member(fields, "adminAccess");
  alternative.adminAccess =
      adminAccess != nullptr && adminAccess->IsBool() && adminAccess->GetBool();
  const JsonValue* selectors = member(fields, "selectors");
  alternative.selectors = isArray(selectors) && selectors->Size() > 0;
  const JsonValue* tolerations = member(fields, "tolerations");
  if (isArray(tolerations)) {
    for (const JsonValue& item : tolerations->GetArray()) {
      if (item.IsObject()) alternative.tolerations.push_back(tolerationFromJson(item));
    }
  }
  return alternative;
}

void readFirstAvailable(const JsonValue* list, DeviceRequest& request,
                        std::vector<std::string>& problems) {
  request.firstAvailable = true;
  const std::string path = joined(request.fieldPath, "firstAvailable");
  if (!isArray(list) || list->Empty()) {
    problems.push_back(path + ": must list at least one sub-request");
    return;
  }
  for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
    const JsonValue* item = &(*list)[i];
    std::string itemPath = indexed(request.fieldPath, "firstAvailable", i);
    if (member(item, "exactly") != nullptr) {
      problems.push_back(itemPath + ".exactly: a sub-request carries deviceClassName itself");
    }
    request.alternatives.push_back(readAlternative(item, std::move(itemPath), problems));
  }
}

DeviceRequest readRequest(const JsonValue* item, std::string path, ClaimShape shape,
                          std::vector<std::string>& problems) {
  DeviceRequest request;
  request.name = std::string(stringMember(item, "name"));
  request.fieldPath = std::move(path);
  if (request.name.empty()) problems.push_back(request.fieldPath + ".name: required");

  const JsonValue* firstAvailable = member(item, "firstAvailable");
  if (shape == ClaimShape::Nested) {
    const JsonValue* exactly = member(item, "exactly");
    if (member(item, "deviceClassName") != nullptr) {
      problems.push_back(request.fieldPath +
                         ".deviceClassName: in this version it belongs under exactly "
                         "(the v1beta1 shape was written)");
    }
    if ((exactly != nullptr) == (firstAvailable != nullptr)) {
      problems.push_back(request.fieldPath + ": exactly one of exactly or firstAvailable");
    }
    if (exactly != nullptr) {
      request.alternatives.push_back(
          readAlternative(exactly, joined(request.fieldPath, "exactly"), problems));
    } else if (firstAvailable != nullptr) {
      readFirstAvailable(firstAvailable, request, problems);
    }
    return request;
  }

  if (member(item, "exactly") != nullptr) {
    problems.push_back(request.fieldPath +
                       ".exactly: this version takes deviceClassName on the request itself "
                       "(the v1 shape was written)");
  }
  if (firstAvailable != nullptr) {
    if (member(item, "deviceClassName") != nullptr) {
      problems.push_back(request.fieldPath +
                         ": deviceClassName and firstAvailable exclude each other");
    }
    readFirstAvailable(firstAvailable, request, problems);
  } else {
    DeviceAlternative alternative = readAlternative(item, request.fieldPath, problems);
    alternative.name.clear();  // the request's own name, not a sub-request's
    request.alternatives.push_back(std::move(alternative));
  }
  return request;
}

}  // namespace

ClaimSpec readClaimSpec(const JsonValue* claimSpec, ClaimShape shape) {
  ClaimSpec out;
  const JsonValue* requests = member(member(claimSpec, "devices"), "requests");
  if (requests == nullptr) return out;  // a claim without requests allocates nothing
  if (!isArray(requests)) {
    out.problems.push_back("devices.requests: must be a list");
    return out;
  }
  for (rapidjson::SizeType i = 0; i < requests->Size(); ++i) {
    out.requests.push_back(
        readRequest(&(*requests)[i], indexed("devices", "requests", i), shape, out.problems));
  }
  return out;
}

bool readClaimObject(const JsonValue& object, ClaimObject& out, std::string* error) {
  const std::string_view kind = stringMember(&object, "kind");
  const std::string_view apiVersion = stringMember(&object, "apiVersion");
  if (kind != "ResourceClaim" && kind != "ResourceClaimTemplate") {
    if (error) *error = "not a ResourceClaim or ResourceClaimTemplate: " + std::string(kind);
    return false;
  }
  const std::optional<ClaimShape> shape = claimShapeOf(apiVersion);
  if (!shape) {
    if (error)
      *error = std::string(kind) + " of unserved apiVersion \"" + std::string(apiVersion) + "\"";
    return false;
  }
  out.isTemplate = kind == "ResourceClaimTemplate";
  const JsonValue* metadata = member(&object, "metadata");
  out.namespaceName = std::string(stringMember(metadata, "namespace"));
  out.name = std::string(stringMember(metadata, "name"));
  out.specPath = out.isTemplate ? "spec.spec" : "spec";
  const JsonValue* spec = member(&object, "spec");
  out.spec = readClaimSpec(out.isTemplate ? member(spec, "spec") : spec, *shape);
  return true;
}

// ---------------------------------------------------------------------------

DeviceTaint deviceTaintFromJson(const JsonValue& item) {
  return {std::string(stringMember(&item, "key")), std::string(stringMember(&item, "value")),
          std::string(stringMember(&item, "effect")),
          std::string(stringMember(&item, "timeAdded"))};
}

bool keepsRequestsOff(const DeviceTaint& taint) {
  return taint.effect == "NoSchedule" || taint.effect == "NoExecute";
}

bool toleratesDeviceTaint(const std::vector<Toleration>& tolerations, const DeviceTaint& taint) {
  for (const Toleration& toleration : tolerations) {
    if (!toleration.effect.empty() && toleration.effect != taint.effect) continue;
    if (!toleration.key.empty() && toleration.key != taint.key) continue;
    if (toleration.op == "Exists") return true;
    // An unknown operator tolerates nothing.
    if (toleration.op == "Equal" && toleration.value == taint.value) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------

const PodClaimSource* PodClaims::source(std::string_view claimName) const {
  for (const PodClaimSource& candidate : sources) {
    if (candidate.name == claimName) return &candidate;
  }
  return nullptr;
}

namespace {

void readSources(const JsonValue* list, PodClaims& out) {
  if (!isArray(list)) return;
  for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
    const JsonValue* item = &(*list)[i];
    PodClaimSource source;
    source.fieldPath = indexed("", "resourceClaims", i);
    source.name = std::string(stringMember(item, "name"));
    source.resourceClaimName = std::string(stringMember(item, "resourceClaimName"));
    source.resourceClaimTemplateName = std::string(stringMember(item, "resourceClaimTemplateName"));
    if (member(item, "source") != nullptr) {
      out.problems.push_back(source.fieldPath +
                             ".source: removed in Kubernetes 1.31; set resourceClaimName or "
                             "resourceClaimTemplateName on the entry itself");
    } else if (source.resourceClaimName.empty() == source.resourceClaimTemplateName.empty()) {
      out.problems.push_back(source.fieldPath +
                             ": exactly one of resourceClaimName or resourceClaimTemplateName");
    }
    out.sources.push_back(std::move(source));
  }
}

// A container of the Pod, named and placed only when something of it is
// recorded: most containers ask for no claim and no device class.
struct ClaimingContainer {
  const JsonValue* json;
  std::string_view field;
  rapidjson::SizeType index;
  bool init;
  std::string name() const { return std::string(stringMember(json, "name")); }
  std::string path() const { return indexed("", field, index); }
};

void readDeviceClassResources(const JsonValue* resources, const ClaimingContainer& container,
                              PodClaims& out) {
  // Limits first: an extended resource's requests default to its limits and
  // must equal them, so one entry per class is enough.
  for (std::string_view part : {"limits", "requests"}) {
    const JsonValue* map = member(resources, part);
    if (!isObject(map)) continue;
    for (const auto& entry : map->GetObject()) {
      const std::string_view name(entry.name.GetString(), entry.name.GetStringLength());
      const std::optional<std::string_view> deviceClass = deviceClassOfResourceName(name);
      if (!deviceClass) continue;
      const std::string containerName = container.name();
      bool seen = false;
      for (const ContainerDeviceClassRequest& existing : out.deviceClassRequests) {
        seen = seen ||
               (existing.container == containerName && existing.initContainer == container.init &&
                existing.deviceClassName == *deviceClass);
      }
      if (seen) continue;
      ContainerDeviceClassRequest request;
      request.container = containerName;
      request.initContainer = container.init;
      request.deviceClassName = std::string(*deviceClass);
      request.quantity = quantityText(entry.value);
      const std::optional<Quantity> quantity = Quantity::fromJson(entry.value);
      if (quantity && !quantity->isNegative() && !quantity->isZero()) {
        request.count = quantity->wholeValue();
      }
      request.fieldPath = container.path() + ".resources." + std::string(part);
      out.deviceClassRequests.push_back(std::move(request));
    }
  }
}

void readContainers(const JsonValue* list, std::string_view field, bool init, PodClaims& out) {
  if (!isArray(list)) return;
  for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
    const ClaimingContainer container{&(*list)[i], field, i, init};
    const JsonValue* resources = member(container.json, "resources");
    readDeviceClassResources(resources, container, out);
    const JsonValue* claims = member(resources, "claims");
    if (!isArray(claims)) continue;
    const std::string name = container.name();
    const std::string path = container.path();
    for (rapidjson::SizeType j = 0; j < claims->Size(); ++j) {
      ContainerClaimUse use;
      use.container = name;
      use.initContainer = init;
      use.claim = std::string(stringMember(&(*claims)[j], "name"));
      use.request = std::string(stringMember(&(*claims)[j], "request"));
      use.fieldPath = indexed(path + ".resources", "claims", j);
      if (out.source(use.claim) == nullptr) {
        out.problems.push_back(use.fieldPath + ".name: \"" + use.claim +
                               "\" is not in spec.resourceClaims");
      }
      out.uses.push_back(std::move(use));
    }
  }
}

}  // namespace

PodClaims readPodClaims(const JsonValue* podSpec) {
  PodClaims out;
  readSources(member(podSpec, "resourceClaims"), out);
  readContainers(member(podSpec, "initContainers"), "initContainers", true, out);
  readContainers(member(podSpec, "containers"), "containers", false, out);
  return out;
}

}  // namespace aiadmit
