// Reading the cluster objects the view keeps, in the versions the API serves.
#include "webhook/cluster/cluster_view.h"
#include "webhook/cluster/cluster_workloads.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "webhook/model/quantity.h"
#include "webhook/model/resources.h"

namespace aiadmit {

namespace {

std::map<std::string, std::string> stringMap(const JsonValue* object) {
  std::map<std::string, std::string> out;
  if (!isObject(object)) return out;
  for (const auto& entry : object->GetObject()) {
    out.emplace(std::string(entry.name.GetString(), entry.name.GetStringLength()),
                std::string(stringOf(&entry.value)));
  }
  return out;
}

bool boolOf(const JsonValue* value) {
  return value != nullptr && value->IsBool() && value->GetBool();
}

int64_t intOf(const JsonValue* value, int64_t fallback) {
  return value != nullptr && value->IsInt64() ? value->GetInt64() : fallback;
}

void readRequirements(const JsonValue* list, bool field, std::vector<OwnedRequirement>& out) {
  if (!isArray(list)) return;
  for (const JsonValue& expression : list->GetArray()) {
    LabelRequirement requirement;
    OwnedRequirement owned;
    owned.field = field;
    if (!LabelRequirement::fromJson(expression, requirement)) {
      // A requirement the API server refuses: nothing can satisfy it.
      owned.key = std::string(stringMember(&expression, "key"));
      owned.op = LabelOperator::In;
      out.push_back(std::move(owned));
      continue;
    }
    owned.key = std::string(requirement.key);
    owned.op = requirement.op;
    for (size_t i = 0; i < requirement.values.size(); ++i) {
      owned.values.emplace_back(requirement.values[i]);
    }
    out.push_back(std::move(owned));
  }
}

std::optional<NodeSelectorTerms> readNodeSelector(const JsonValue* selector) {
  if (!isObject(selector)) return std::nullopt;
  NodeSelectorTerms terms;
  const JsonValue* list = member(selector, "nodeSelectorTerms");
  if (isArray(list)) {
    for (const JsonValue& term : list->GetArray()) {
      std::vector<OwnedRequirement> requirements;
      readRequirements(member(&term, "matchExpressions"), false, requirements);
      readRequirements(member(&term, "matchFields"), true, requirements);
      terms.push_back(std::move(requirements));
    }
  }
  return terms;
}

void readNode(const JsonValue& object, ClusterNode& node) {
  const JsonValue* metadata = member(&object, "metadata");
  node.labels = stringMap(member(metadata, "labels"));
  const JsonValue* spec = member(&object, "spec");
  const JsonValue* taints = member(spec, "taints");
  if (isArray(taints)) {
    for (const JsonValue& taint : taints->GetArray()) {
      node.taints.push_back({std::string(stringMember(&taint, "key")),
                             std::string(stringMember(&taint, "value")),
                             std::string(stringMember(&taint, "effect"))});
    }
  }
  const JsonValue* allocatable = member(member(&object, "status"), "allocatable");
  if (!isObject(allocatable)) return;
  for (const auto& entry : allocatable->GetObject()) {
    const std::string_view name(entry.name.GetString(), entry.name.GetStringLength());
    if (name == "cpu" || name == "memory" || name == "pods" || name == "ephemeral-storage" ||
        name.substr(0, 10) == "hugepages-") {
      continue;
    }
    const std::optional<Quantity> quantity = Quantity::fromJson(entry.value);
    const std::optional<int64_t> count = quantity ? quantity->wholeValue() : std::nullopt;
    if (count && *count >= 0) node.allocatable.emplace(std::string(name), *count);
  }
}

void readRuntimeClass(const JsonValue& object, RuntimeClassRecord& record) {
  record.handler = std::string(stringMember(&object, "handler"));
  const JsonValue* scheduling = member(&object, "scheduling");
  record.nodeSelector = stringMap(member(scheduling, "nodeSelector"));
  const JsonValue* tolerations = member(scheduling, "tolerations");
  if (!isArray(tolerations)) return;
  for (const JsonValue& item : tolerations->GetArray()) {
    if (item.IsObject()) record.tolerations.push_back(tolerationFromJson(item));
  }
}

bool readSlice(const JsonValue& object, ResourceSliceRecord& slice, std::string* error) {
  const JsonValue* spec = member(&object, "spec");
  slice.driver = std::string(stringMember(spec, "driver"));
  const JsonValue* pool = member(spec, "pool");
  slice.pool = std::string(stringMember(pool, "name"));
  slice.poolGeneration = intOf(member(pool, "generation"), 0);
  slice.resourceSliceCount = intOf(member(pool, "resourceSliceCount"), 1);
  if (slice.driver.empty() || slice.pool.empty()) {
    if (error) *error = "spec.driver and spec.pool.name are required";
    return false;
  }
  slice.nodeName = std::string(stringMember(spec, "nodeName"));
  slice.allNodes = boolOf(member(spec, "allNodes"));
  slice.nodeSelector = readNodeSelector(member(spec, "nodeSelector"));
  slice.perDeviceNodeSelection = boolOf(member(spec, "perDeviceNodeSelection"));
  const JsonValue* devices = member(spec, "devices");
  if (!isArray(devices)) return true;
  for (const JsonValue& item : devices->GetArray()) {
    SliceDevice device;
    device.name = std::string(stringMember(&item, "name"));
    // v1beta1 nests a device's fields under `basic`.
    const JsonValue* fields = isObject(member(&item, "basic")) ? member(&item, "basic") : &item;
    device.nodeName = std::string(stringMember(fields, "nodeName"));
    device.allNodes = boolOf(member(fields, "allNodes"));
    device.nodeSelector = readNodeSelector(member(fields, "nodeSelector"));
    const JsonValue* taints = member(fields, "taints");
    if (isArray(taints)) {
      for (const JsonValue& taint : taints->GetArray()) {
        if (taint.IsObject()) device.taints.push_back(deviceTaintFromJson(taint));
      }
    }
    slice.devices.push_back(std::move(device));
  }
  return true;
}

void readDeviceClass(const JsonValue& object, DeviceClassRecord& deviceClass) {
  deviceClass.creationTimestamp =
      std::string(stringMember(member(&object, "metadata"), "creationTimestamp"));
  const JsonValue* spec = member(&object, "spec");
  deviceClass.extendedResourceName = std::string(stringMember(spec, "extendedResourceName"));
  const JsonValue* selectors = member(spec, "selectors");
  if (!isArray(selectors)) return;
  // Selectors are ANDed: the class's drivers are those every naming selector names.
  bool first = true;
  for (const JsonValue& selector : selectors->GetArray()) {
    const JsonValue* cel = member(&selector, "cel");
    if (cel == nullptr) {
      deviceClass.notUnderstood.push_back(toJson(selector));
      continue;
    }
    std::vector<std::string> drivers;
    readDeviceClassSelector(stringMember(cel, "expression"), drivers, deviceClass.notUnderstood);
    if (drivers.empty()) continue;
    if (first) {
      deviceClass.drivers = std::move(drivers);
      first = false;
      continue;
    }
    std::vector<std::string> both;
    for (const std::string& driver : deviceClass.drivers) {
      if (std::find(drivers.begin(), drivers.end(), driver) != drivers.end())
        both.push_back(driver);
    }
    deviceClass.drivers = std::move(both);
  }
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\n' || text.front() == '\t' ||
                           text.front() == '\r')) {
    text.remove_prefix(1);
  }
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n' || text.back() == '\t' ||
                           text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

// Splits `text` on `op` ("&&" or "||") outside parentheses, brackets and
// string literals.
std::vector<std::string_view> splitTopLevel(std::string_view text, std::string_view op) {
  std::vector<std::string_view> parts;
  int depth = 0;
  char quote = 0;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote != 0) {
      if (c == '\\') {
        ++i;
      } else if (c == quote) {
        quote = 0;
      }
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      --depth;
    } else if (depth == 0 && text.substr(i, op.size()) == op) {
      parts.push_back(trim(text.substr(start, i - start)));
      start = i + op.size();
      ++i;
    }
  }
  parts.push_back(trim(text.substr(start)));
  return parts;
}

// `device.driver == "NAME"` or `"NAME" == device.driver`: the name.
std::optional<std::string> driverEquality(std::string_view conjunct) {
  while (conjunct.size() >= 2 && conjunct.front() == '(' && conjunct.back() == ')' &&
         splitTopLevel(conjunct.substr(1, conjunct.size() - 2), "&&").size() == 1) {
    conjunct = trim(conjunct.substr(1, conjunct.size() - 2));
  }
  const std::vector<std::string_view> sides = [&] {
    std::vector<std::string_view> out;
    const size_t at = conjunct.find("==");
    if (at == std::string_view::npos) return out;
    out.push_back(trim(conjunct.substr(0, at)));
    out.push_back(trim(conjunct.substr(at + 2)));
    return out;
  }();
  if (sides.size() != 2) return std::nullopt;
  auto literal = [](std::string_view side) -> std::optional<std::string> {
    if (side.size() < 2 || (side.front() != '\'' && side.front() != '"') ||
        side.back() != side.front()) {
      return std::nullopt;
    }
    const std::string_view inner = side.substr(1, side.size() - 2);
    if (inner.find_first_of("\\'\"") != std::string_view::npos) return std::nullopt;
    return std::string(inner);
  };
  if (sides[0] == "device.driver") return literal(sides[1]);
  if (sides[1] == "device.driver") return literal(sides[0]);
  return std::nullopt;
}

}  // namespace

void readDeviceClassSelector(std::string_view expression, std::vector<std::string>& drivers,
                             std::vector<std::string>& notUnderstood) {
  std::vector<std::string> named;
  std::vector<std::string> rest;
  for (std::string_view disjunct : splitTopLevel(trim(expression), "||")) {
    std::optional<std::string> driver;
    for (std::string_view conjunct : splitTopLevel(disjunct, "&&")) {
      std::optional<std::string> equality = driverEquality(conjunct);
      if (equality && !driver) {
        driver = std::move(equality);
      } else if (!conjunct.empty()) {
        rest.emplace_back(conjunct);
      }
    }
    if (!driver) {
      // One alternative that names no driver: the class may select any driver.
      notUnderstood.emplace_back(trim(expression));
      return;
    }
    if (std::find(named.begin(), named.end(), *driver) == named.end()) named.push_back(*driver);
  }
  drivers.insert(drivers.end(), named.begin(), named.end());
  notUnderstood.insert(notUnderstood.end(), rest.begin(), rest.end());
}

ClusterKind kindOf(const ClusterObject& object) {
  return static_cast<ClusterKind>(object.index());
}

std::string keyOf(const ClusterObject& object) {
  return std::visit(
      [](const auto& record) -> std::string {
        if constexpr (requires { record.namespaceName; }) {
          return record.namespaceName + "/" + record.name;
        } else {
          return record.name;
        }
      },
      object);
}

namespace {

std::optional<std::string> optionalString(const JsonValue* object, std::string_view key) {
  const JsonValue* value = member(object, key);
  if (value == nullptr || !value->IsString()) return std::nullopt;
  return std::string(stringOf(value));
}

void readDeviceTaintRule(const JsonValue& object, DeviceTaintRuleRecord& record) {
  const JsonValue* spec = member(&object, "spec");
  const JsonValue* selector = member(spec, "deviceSelector");
  // v1alpha3 could also select by DeviceClass and CEL, which are not
  // evaluated here: such a rule is not counted rather than guessed at.
  const JsonValue* selectors = member(selector, "selectors");
  record.selects = isObject(selector) && member(selector, "deviceClassName") == nullptr &&
                   !(isArray(selectors) && !selectors->GetArray().Empty());
  record.driver = optionalString(selector, "driver");
  record.pool = optionalString(selector, "pool");
  record.device = optionalString(selector, "device");
  const JsonValue* taint = member(spec, "taint");
  if (isObject(taint)) record.taint = deviceTaintFromJson(*taint);
}

// The condition of `type` in the object's status.conditions; an empty record
// (type "") when it has none.
ConditionRecord conditionOf(const JsonValue& object, std::string_view type) {
  const JsonValue* condition =
      elementWith(member(member(&object, "status"), "conditions"), "type", type);
  if (condition == nullptr) return {};
  return {std::string(type), std::string(stringMember(condition, "status")),
          std::string(stringMember(condition, "reason")),
          std::string(stringMember(condition, "message"))};
}

// Every version served (v1beta1, v1alpha3, v1alpha2) keeps the policy at
// spec.schedulingPolicy; the condition was renamed in 1.37.
void readPodGroup(const JsonValue& object, PodGroupRecord& record) {
  const JsonValue* gang = member(member(member(&object, "spec"), "schedulingPolicy"), "gang");
  if (isObject(gang)) record.minCount = intOf(member(gang, "minCount"), 1);
  record.scheduled = conditionOf(object, "PodGroupInitiallyScheduled");
  if (record.scheduled.type.empty()) record.scheduled = conditionOf(object, "PodGroupScheduled");
}

void readPriorityClass(const JsonValue& object, PriorityClassRecord& record) {
  record.value = intOf(member(&object, "value"), 0);
  record.globalDefault = boolOf(member(&object, "globalDefault"));
}

// The record of a cluster-scoped object: its name and what `read` takes
// from the object.
template <class Record>
Record namedRecord(const std::string& name, const JsonValue& object,
                   void (*read)(const JsonValue&, Record&)) {
  Record record;
  record.name = name;
  read(object, record);
  return record;
}

}  // namespace

bool readClusterObject(ClusterKind kind, std::string_view apiVersion, const JsonValue& object,
                       ClusterObject& out, std::string* error) {
  const JsonValue* metadata = member(&object, "metadata");
  const std::string name(stringMember(metadata, "name"));
  const std::string namespaceName(stringMember(metadata, "namespace"));
  if (name.empty()) {
    if (error) *error = "metadata.name is required";
    return false;
  }
  if (resourceType(kind).namespaced && namespaceName.empty()) {
    if (error) *error = "metadata.namespace is required";
    return false;
  }
  switch (kind) {
    case ClusterKind::Node:
      out = namedRecord(name, object, readNode);
      return true;
    case ClusterKind::ResourceSlice: {
      ResourceSliceRecord slice;
      slice.name = name;
      if (!readSlice(object, slice, error)) return false;
      out = std::move(slice);
      return true;
    }
    case ClusterKind::DeviceClass:
      out = namedRecord(name, object, readDeviceClass);
      return true;
    case ClusterKind::ResourceClaimTemplate:
    case ClusterKind::ResourceClaim: {
      const std::optional<ClaimShape> shape = claimShapeOf(apiVersion);
      if (!shape) {
        if (error) *error = "unserved apiVersion \"" + std::string(apiVersion) + "\"";
        return false;
      }
      const JsonValue* spec = member(&object, "spec");
      if (kind == ClusterKind::ResourceClaim) {
        ClaimRecord claim{namespaceName, name, readClaimSpec(spec, *shape)};
        claim.devices = allocatedDevices(object, claim.allocated);
        out = std::move(claim);
      } else {
        out = ClaimTemplateRecord{namespaceName, name, readClaimSpec(member(spec, "spec"), *shape)};
      }
      return true;
    }
    case ClusterKind::PriorityClass:
      out = namedRecord(name, object, readPriorityClass);
      return true;
    case ClusterKind::Namespace: {
      out = NamespaceRecord{name, stringMap(member(metadata, "labels"))};
      return true;
    }
    case ClusterKind::LocalQueue: {
      out = LocalQueueRecord{namespaceName, name,
                             std::string(stringMember(member(&object, "spec"), "clusterQueue"))};
      return true;
    }
    case ClusterKind::RuntimeClass:
      out = namedRecord(name, object, readRuntimeClass);
      return true;
    case ClusterKind::Pod: {
      PodRecord pod;
      if (!readPodRecord(object, namespaceName, name, pod)) {
        if (error) error->clear();
        return false;
      }
      out = std::move(pod);
      return true;
    }
    case ClusterKind::QueueWorkload:
      out = readQueueWorkloadRecord(object, apiVersion, namespaceName, name);
      return true;
    case ClusterKind::DeviceTaintRule:
      out = namedRecord(name, object, readDeviceTaintRule);
      return true;
    case ClusterKind::PodGroup: {
      PodGroupRecord group{namespaceName, name, std::nullopt, {}};
      readPodGroup(object, group);
      out = std::move(group);
      return true;
    }
  }
  return false;
}

bool DeviceTaintRuleRecord::appliesTo(std::string_view driverName, std::string_view poolName,
                                      std::string_view deviceName) const {
  return selects && (!driver || *driver == driverName) && (!pool || *pool == poolName) &&
         (!device || *device == deviceName);
}

}  // namespace aiadmit
