#include "webhook/model/pod_reader.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <string>

#include "webhook/codec/json_pointer.h"
#include "webhook/codec/text.h"
#include "webhook/model/annotations.h"
#include "webhook/model/quantity.h"
#include "webhook/model/resources.h"

namespace aiadmit {

namespace {

// `text` without the spaces and line breaks around it, as Go's
// strings.TrimSpace leaves an annotation's value.
std::string_view trimmed(std::string_view text) {
  constexpr std::string_view kSpace = " \t\n\r\f\v";
  const size_t first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kSpace) - first + 1);
}

// A count written as a positive decimal integer (what Go's strconv.Atoi
// reads and an operator then holds to at least 1); nullopt otherwise.
std::optional<int64_t> positiveWholeNumber(std::string_view text) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 1) return std::nullopt;
  return value;
}

// KServe makes a predictor's model-format object (`model`, or a legacy
// framework field such as `pytorch`) its main container and names it so
// when the object has no name of its own; KServe is the only operator whose
// rows have container objects.
constexpr std::string_view kContainerObjectName = "kserve-container";

std::optional<std::string_view> annotationOf(const JsonValue* metadata, std::string_view key) {
  const JsonValue* value = member(member(metadata, "annotations"), key);
  if (value == nullptr || !value->IsString()) return std::nullopt;
  return stringOf(value);
}

int64_t saturatingAdd(int64_t a, int64_t b) {
  return a > std::numeric_limits<int64_t>::max() - b ? std::numeric_limits<int64_t>::max() : a + b;
}

bool isPositive(const JsonValue& value) {
  const auto quantity = Quantity::fromJson(value);
  return quantity && !quantity->isZero() && !quantity->isNegative();
}

// The ResourceRequirements the Spark operator's Pod webhook gives the Spark
// container of a SparkPodSpec `spec` (addGPU): limits {NAME: QUANTITY} from
// `gpu`, and nothing when the name is empty or the quantity not positive,
// which the webhook skips.
std::shared_ptr<const JsonDocument> sparkGpuResources(const JsonValue* spec) {
  auto resources = std::make_shared<JsonDocument>(rapidjson::kObjectType);
  const JsonValue* gpu = member(spec, "gpu");
  const JsonValue* quantity = member(gpu, "quantity");
  const std::string_view name = stringMember(gpu, "name");
  if (name.empty() || quantity == nullptr || !quantity->IsInt64() || quantity->GetInt64() <= 0) {
    return resources;
  }
  JsonAllocator& alloc = resources->GetAllocator();
  JsonValue limits(rapidjson::kObjectType);
  limits.AddMember(makeString(name, alloc), JsonValue(quantity->GetInt64()), alloc);
  resources->AddMember("limits", limits, alloc);
  return resources;
}

}  // namespace

bool AcceleratorNames::isAccelerator(std::string_view resourceName) const {
  return looksLikeAccelerator(resourceName);
}

const AcceleratorNames& AcceleratorNames::byLook() {
  static const AcceleratorNames names;
  return names;
}

const JsonValue* PodContainer::resources() const {
  return resourcesOnly ? json : member(json, "resources");
}

PodReader::PodReader(const JsonValue* objectMetadata, const JsonValue* templateMetadata,
                     const JsonValue* podSpec, const AcceleratorNames& accelerators)
    : objectMetadata_(objectMetadata),
      templateMetadata_(templateMetadata),
      spec_(podSpec),
      accelerators_(&accelerators) {
  readContainers(nullptr, {}, {});
}

void PodReader::readContainers(const JsonValue* root, std::string_view specPointer,
                               std::span<const std::string> objects) {
  containers_.clear();
  auto readList = [&](ContainerList list) {
    const JsonValue* items = member(spec_, containerListName(list));
    if (!isArray(items)) return;
    containers_.reserve(containers_.size() + items->Size());
    for (rapidjson::SizeType i = 0; i < items->Size(); ++i) {
      const JsonValue& item = (*items)[i];
      if (!item.IsObject()) continue;
      const bool sidecar =
          list == ContainerList::InitContainers && stringMember(&item, "restartPolicy") == "Always";
      containers_.push_back({.json = &item,
                             .list = list,
                             .index = i,
                             .name = stringMember(&item, "name"),
                             .sidecar = sidecar});
    }
  };
  readList(ContainerList::InitContainers);
  // Container objects come first among the regular containers: the operator
  // makes them the Pod's first container, its main one.
  const JsonValue* items = member(spec_, "containers");
  size_t next = isArray(items) ? items->Size() : 0;
  for (const std::string& pointer : objects) {
    const JsonValue* object = root != nullptr ? valueAt(*root, pointer) : nullptr;
    if (!isObject(object) || pointer.size() <= specPointer.size() ||
        pointer.compare(0, specPointer.size(), specPointer) != 0) {
      continue;
    }
    std::string_view name = stringMember(object, "name");
    if (name.empty()) name = kContainerObjectName;
    containers_.push_back({.json = object,
                           .index = next++,
                           .name = name,
                           .object = std::string_view(pointer).substr(specPointer.size())});
  }
  readList(ContainerList::Containers);
}

PodReader PodReader::of(const PodTemplateView& view, const AcceleratorNames& accelerators) {
  PodReader reader(member(view.object, "metadata"), view.metadata, view.spec, accelerators);
  const ResolvedTemplate* place = view.place;
  if (place == nullptr || place->slot == nullptr || view.object == nullptr) return reader;
  if (place->slot->shape == TemplateShape::Resources) {
    // The ResourceRequirements is what the operator gives its main container
    // on every node: read it as that container.
    reader.containers_.clear();
    if (isObject(view.spec)) {
      reader.containers_.push_back({.json = view.spec, .name = place->role, .resourcesOnly = true});
    }
  } else if (place->slot->shape == TemplateShape::SparkPod) {
    // The Spark container, which spark-submit makes, is the Pod's main one;
    // its `template`, sidecars and init containers are not read.
    reader.containers_.clear();
    reader.sparkResources_ = sparkGpuResources(view.spec);
    reader.containers_.push_back({.json = reader.sparkResources_.get(),
                                  .name = place->role,
                                  .resourcesOnly = true,
                                  .sparkGpu = true});
  } else if (!place->containerObjects.empty()) {
    reader.readContainers(view.object, place->specPointer, place->containerObjects);
  }
  if (place->slot->annotatedClaim.any()) reader.readAnnotatedClaim(place->slot->annotatedClaim);
  return reader;
}

// The devices of `claim`, as the operator asks for them: the DeviceClass the
// object's annotation names, for the container it names (the first one when
// it names none), the count it gives (1 when it gives none).
void PodReader::readAnnotatedClaim(const AnnotatedClaim& claim) {
  const std::optional<std::string_view> deviceClass = objectAnnotation(claim.deviceClass);
  if (!deviceClass || trimmed(*deviceClass).empty()) return;
  ContainerDeviceClassRequest request;
  request.deviceClassName = std::string(trimmed(*deviceClass));
  request.byAnnotation = true;
  request.fieldPath = "metadata.annotations[" + claim.deviceClass + "]";
  const std::optional<std::string_view> count =
      claim.count.empty() ? std::nullopt : objectAnnotation(claim.count);
  request.quantity = count && !trimmed(*count).empty() ? std::string(trimmed(*count)) : "1";
  request.count = positiveWholeNumber(request.quantity);
  const std::optional<std::string_view> container =
      claim.container.empty() ? std::nullopt : objectAnnotation(claim.container);
  if (container && !trimmed(*container).empty()) {
    if (named(trimmed(*container)) != nullptr) request.container = std::string(trimmed(*container));
  } else {
    for (const PodContainer& each : containers_) {
      if (each.list != ContainerList::Containers || each.name.empty()) continue;
      request.container = std::string(each.name);
      break;
    }
  }
  annotatedRequest_ = std::move(request);
}

PodReader PodReader::judgingBy(const AcceleratorNames& accelerators) const {
  PodReader reader = *this;
  reader.accelerators_ = &accelerators;
  return reader;
}

std::optional<std::string_view> PodReader::templateAnnotation(std::string_view key) const {
  if (!isTemplateOfController()) return std::nullopt;
  return annotationOf(templateMetadata_, key);
}

std::optional<std::string_view> PodReader::objectAnnotation(std::string_view key) const {
  return annotationOf(objectMetadata_, key);
}

std::optional<std::string_view> PodReader::annotation(std::string_view key) const {
  return annotation(objectMetadata_, templateMetadata_, key);
}

std::optional<std::string_view> PodReader::annotation(const JsonValue* objectMetadata,
                                                      const JsonValue* templateMetadata,
                                                      std::string_view key) {
  // A Pod's template is the Pod: its metadata is read once.
  if (templateMetadata != objectMetadata) {
    if (auto onTemplate = annotationOf(templateMetadata, key)) return onTemplate;
  }
  return annotationOf(objectMetadata, key);
}

AnnotationSite PodReader::annotationSite(std::string_view key) const {
  if (templateAnnotation(key)) return AnnotationSite::Template;
  return objectAnnotation(key) ? AnnotationSite::Object : AnnotationSite::None;
}

const std::vector<PodReader::Quantities>& PodReader::quantities() const {
  if (quantities_.size() == containers_.size()) return quantities_;
  quantities_.clear();
  quantities_.reserve(containers_.size());
  for (const PodContainer& container : containers_) {
    const JsonValue* resources = container.resources();
    const JsonValue* limits = member(resources, "limits");
    const JsonValue* requests = member(resources, "requests");
    quantities_.push_back(
        {isObject(limits) ? limits : nullptr, isObject(requests) ? requests : nullptr});
  }
  return quantities_;
}

std::optional<PodReader::FirstAccelerator> PodReader::firstAccelerator() const {
  std::optional<FirstAccelerator> first;
  forEachAccelerator([&](const ResourceEntry& entry) {
    if (!first) first = FirstAccelerator{&entry.container, entry.name};
  });
  return first;
}

bool PodReader::namesAccelerator() const {
  bool names = false;
  forEachResource([&](const ResourceEntry& entry) { names = names || isAccelerator(entry); });
  return names;
}

bool PodReader::asksForAccelerator(const PodContainer& container) const {
  const JsonValue* resources = container.resources();
  for (std::string_view section : {"limits", "requests"}) {
    const JsonValue* quantities = member(resources, section);
    if (!isObject(quantities)) continue;
    for (auto it = quantities->MemberBegin(); it != quantities->MemberEnd(); ++it) {
      if (accelerators_->isAccelerator(stringOf(&it->name)) && isPositive(it->value)) return true;
    }
  }
  return false;
}

bool PodReader::asksForAccelerator() const {
  return std::any_of(containers_.begin(), containers_.end(),
                     [&](const PodContainer& c) { return asksForAccelerator(c); });
}

bool PodReader::claimsDevices() const {
  // The operator adds the claim of its annotations to the Pods it makes.
  if (annotatedRequest_) return true;
  const JsonValue* claims = member(spec_, "resourceClaims");
  return isArray(claims) && !claims->Empty();
}

const PodClaims& PodReader::claims() const {
  if (!claims_) {
    claims_ = readPodClaims(spec_);
    if (annotatedRequest_) claims_->deviceClassRequests.push_back(*annotatedRequest_);
  }
  return *claims_;
}

void PodReader::setClaimedDevices(ClaimedDevices devices) {
  claimedDevices_ = std::move(devices);
}

const ClaimedDevices& PodReader::claimedDevices() const {
  static const ClaimedDevices kNone;
  return claimedDevices_ ? *claimedDevices_ : kNone;
}

int64_t PodReader::claimedGpuCount() const {
  int64_t devices = 0;
  for (const GpuClaim& gpu : claimedDevices().gpus) devices = saturatingAdd(devices, gpu.devices);
  return devices;
}

std::optional<GpuShare> PodReader::gpuShare() const {
  // KAI reads the Pod's own annotations, which come from the template's
  // metadata (for a Pod, its own): the object's do not reach its Pods.
  for (std::string_view key : {kGpuFractionAnnotation, kGpuMemoryAnnotation}) {
    const std::optional<std::string_view> value = annotationOf(templateMetadata_, key);
    if (!value) continue;
    const auto quantity = Quantity::parse(*value);
    if (!quantity || quantity->isZero() || quantity->isNegative()) continue;
    // KAI takes a fraction above one device for no share at all.
    if (key == kGpuFractionAnnotation && quantity->approximate() > 1.0) continue;
    GpuShare share{key, *value, 1};
    if (const auto devices = annotationOf(templateMetadata_, kGpuFractionDevicesAnnotation)) {
      const auto count = Quantity::parse(*devices);
      const std::optional<int64_t> whole = count ? count->wholeValue() : std::nullopt;
      if (whole && *whole > 0) share.devices = *whole;
    }
    return share;
  }
  return std::nullopt;
}

Placement PodReader::placement() const {
  Placement placement;
  if (const JsonValue* selector = member(spec_, "nodeSelector");
      selector != nullptr && selector->IsObject()) {
    for (const auto& entry : selector->GetObject()) {
      if (entry.value.IsString()) {
        placement.nodeSelector[std::string(stringOf(&entry.name))] =
            std::string(stringOf(&entry.value));
      }
    }
  }
  if (const JsonValue* tolerations = member(spec_, "tolerations"); isArray(tolerations)) {
    for (const JsonValue& item : tolerations->GetArray()) {
      if (item.IsObject()) placement.tolerations.push_back(tolerationFromJson(item));
    }
  }
  const JsonValue* terms = requiredNodeSelectorTerms(spec_);
  if (!isArray(terms) || terms->Size() != 1) return placement;
  const JsonValue* expressions = member(&(*terms)[0], "matchExpressions");
  if (!isArray(expressions)) return placement;
  for (const JsonValue& expression : expressions->GetArray()) {
    NodeSelectorRequirement requirement;
    requirement.key = std::string(stringMember(&expression, "key"));
    requirement.op = std::string(stringMember(&expression, "operator"));
    if (const JsonValue* values = member(&expression, "values"); isArray(values)) {
      for (const JsonValue& value : values->GetArray()) {
        if (value.IsString()) requirement.values.emplace_back(stringOf(&value));
      }
    }
    if (!requirement.key.empty()) placement.requiredNodeAffinity.push_back(std::move(requirement));
  }
  return placement;
}

int64_t PodReader::containerRequest(const JsonValue& container, std::string_view resource) {
  const PodContainer reading{.json = &container};
  return containerRequest(reading, resource);
}

int64_t PodReader::containerRequest(const PodContainer& container, std::string_view resource) {
  const JsonValue* resources = container.resources();
  const JsonValue* value = member(member(resources, "requests"), resource);
  if (value == nullptr) value = member(member(resources, "limits"), resource);
  if (value == nullptr) return 0;
  const auto quantity = Quantity::fromJson(*value);
  if (!quantity || quantity->isNegative() || quantity->isZero() || !quantity->isWholeNumber()) {
    return 0;
  }
  return quantity->wholeValue().value_or(std::numeric_limits<int64_t>::max());
}

int64_t PodReader::podRequest(std::string_view resource) const {
  int64_t running = 0;  // regular containers and sidecars
  int64_t sidecars = 0;
  int64_t initPeak = 0;
  for (const PodContainer& container : containers_) {
    const int64_t own = containerRequest(container, resource);
    if (container.list == ContainerList::Containers) {
      running = saturatingAdd(running, own);
    } else if (container.sidecar) {
      sidecars = saturatingAdd(sidecars, own);
      running = saturatingAdd(running, own);
      initPeak = std::max(initPeak, sidecars);
    } else {
      initPeak = std::max(initPeak, saturatingAdd(own, sidecars));
    }
  }
  return std::max(running, initPeak);
}

const PodContainer* PodReader::named(std::string_view name) const {
  for (const PodContainer& container : containers_) {
    if (container.list == ContainerList::Containers && container.name == name) return &container;
  }
  return nullptr;
}

MainContainer PodReader::mainContainer() const {
  const std::optional<std::string_view> wanted = annotation(kGpuContainerAnnotation);
  const PodContainer* byName = wanted ? named(*wanted) : nullptr;
  if (byName != nullptr && asksForAccelerator(*byName)) {
    return {byName, MainContainerBasis::Accelerator};
  }
  const PodContainer* first = nullptr;
  for (const PodContainer& container : containers_) {
    if (container.list != ContainerList::Containers) continue;
    if (first == nullptr) first = &container;
    if (asksForAccelerator(container)) return {&container, MainContainerBasis::Accelerator};
  }
  if (byName != nullptr) return {byName, MainContainerBasis::Annotation};
  // An annotation naming no container is an error (AIA001), not a reason to
  // pick another container silently.
  if (wanted) return {};
  if (first != nullptr) return {first, MainContainerBasis::First};
  return {};
}

std::optional<std::string_view> PodReader::unknownGpuContainer() const {
  const std::optional<std::string_view> wanted = annotation(kGpuContainerAnnotation);
  if (!wanted || named(*wanted) != nullptr) return std::nullopt;
  return wanted;
}

namespace {

// How a port's name ranks as the one a server serves on: 3 for HTTP, 2 for
// gRPC (an HTTP GET probe needs the first), 1 for any other name, 0 for
// metrics, which a server may answer long before its model is loaded.
int servingRank(std::string_view name) {
  if (name.find("metrics") != std::string_view::npos) return 0;
  auto named = [&](std::string_view word) {
    return name == word ||
           (name.size() > word.size() && name.starts_with(word) && name[word.size()] == '-');
  };
  for (std::string_view word : {"http", "https", "http1", "http2", "web", "serve", "serving",
                                "server", "api", "openai", "inference", "predict", "rest"}) {
    if (named(word)) return 3;
  }
  for (std::string_view word : {"grpc", "h2c"}) {
    if (named(word)) return 2;
  }
  return 1;
}

std::optional<int> tcpPortNumber(const JsonValue& port) {
  const std::string_view protocol = stringMember(&port, "protocol");
  if (!protocol.empty() && protocol != "TCP") return std::nullopt;
  const JsonValue* number = member(&port, "containerPort");
  if (number == nullptr || !number->IsInt() || number->GetInt() <= 0 || number->GetInt() > 65535) {
    return std::nullopt;
  }
  return number->GetInt();
}

constexpr std::string_view kPodIndexFieldPath = "metadata.labels['apps.kubernetes.io/pod-index']";

}  // namespace

std::optional<int> PodReader::firstTcpPort(const JsonValue& container) {
  const JsonValue* ports = member(&container, "ports");
  if (!isArray(ports)) return std::nullopt;
  for (const JsonValue& port : ports->GetArray()) {
    if (const std::optional<int> number = tcpPortNumber(port)) return number;
  }
  return std::nullopt;
}

std::optional<int> PodReader::servingPort(const JsonValue& container) {
  const JsonValue* ports = member(&container, "ports");
  if (!isArray(ports)) return std::nullopt;
  std::optional<int> best;
  int bestRank = -1;
  for (const JsonValue& port : ports->GetArray()) {
    const std::optional<int> number = tcpPortNumber(port);
    if (!number) continue;
    const int rank = servingRank(stringMember(&port, "name"));
    if (rank > bestRank) {
      best = number;
      bestRank = rank;
    }
  }
  return best;
}

std::optional<std::string> PodReader::podIndexReader() const {
  for (const PodContainer& container : containers_) {
    const JsonValue* env = member(container.json, "env");
    if (!isArray(env)) continue;
    for (const JsonValue& variable : env->GetArray()) {
      const JsonValue* fieldRef = member(member(&variable, "valueFrom"), "fieldRef");
      if (stringMember(fieldRef, "fieldPath") != kPodIndexFieldPath) continue;
      return inQuotes(stringMember(&variable, "name")) + inContainer(*this, container);
    }
  }
  return std::nullopt;
}

bool PodReader::declaresPort(const JsonValue& container) {
  const JsonValue* ports = member(&container, "ports");
  if (!isArray(ports)) return false;
  for (const JsonValue& port : ports->GetArray()) {
    if (member(&port, "containerPort") != nullptr) return true;
  }
  return false;
}

std::string containerFieldPath(const PodTemplateView& view, const PodContainer& container) {
  const std::string spec = view.specFieldPath();
  if (container.resourcesOnly) return spec;
  if (!container.object.empty() && view.spec != nullptr) {
    return spec + "." + fieldPathOf(*view.spec, container.object);
  }
  return spec + "." + std::string(containerListName(container.list)) + "[" +
         std::to_string(container.index) + "]";
}

std::string resourcesFieldPath(const PodTemplateView& view, const PodContainer& container) {
  const std::string path = containerFieldPath(view, container);
  if (container.sparkGpu) return path + ".gpu";
  return container.resourcesOnly ? path : path + ".resources";
}

std::string resourceSectionFieldPath(const PodTemplateView& view, const PodContainer& container,
                                     std::string_view section) {
  const std::string path = resourcesFieldPath(view, container);
  return container.sparkGpu ? path : path + "." + std::string(section);
}

JsonValue& ensureResources(const PodContainer& container, JsonAllocator& alloc) {
  // The reader looks at the document being edited: its containers are that copy's.
  JsonValue& json = *const_cast<JsonValue*>(container.json);
  return container.resourcesOnly ? json : ensureObject(json, "resources", alloc);
}

std::string inContainer(const PodReader& pod, const PodContainer& container) {
  if (!pod.hasSeveralContainers() || container.name.empty()) return {};
  return " in container \"" + std::string(container.name) + "\"";
}

std::optional<std::string> ranksOfOneServer(const PodTemplateView& view, const PodReader& pod) {
  const bool onePod = view.place != nullptr && view.place->replicas == 1;
  if (onePod) return std::nullopt;
  return pod.podIndexReader();
}

}  // namespace aiadmit
