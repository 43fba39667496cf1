#include "webhook/model/workload_type.h"

#include <algorithm>
#include <limits>

#include "webhook/codec/enum_table.h"
#include "webhook/codec/json_patch.h"
#include "webhook/codec/json_pointer.h"
#include "webhook/model/workload_type_builtin.h"

namespace aiadmit {

namespace {

constexpr std::string_view kWildcard = "*";

size_t wildcardCount(std::string_view pattern) {
  size_t count = 0;
  for (const std::string& token : pointerTokens(pattern)) count += token == kWildcard ? 1 : 0;
  return count;
}

bool hasPlaceholders(std::string_view role) {
  return role.find('{') != std::string_view::npos;
}

}  // namespace

std::string_view injectionName(Injection injection) {
  for (const InjectionName& entry : kInjectionNames) {
    if (entry.injection == injection) return entry.name;
  }
  return "";
}

std::string describeInjections(uint32_t injections) {
  std::string out;
  for (const InjectionName& entry : kInjectionNames) {
    if ((injections & entry.injection) == 0) continue;
    if (!out.empty()) out += ", ";
    out += entry.name;
  }
  return out.empty() ? "nothing" : out;
}

constexpr EnumEntry<Lifecycle> kLifecycleNames[] = {
    {Lifecycle::RunsToCompletion, "runs to completion"}, {Lifecycle::LongRunning, "long-running"}};

std::string_view lifecycleName(Lifecycle lifecycle) {
  return valueIn(kLifecycleNames, lifecycle, "either");
}

std::string WorkloadType::qualifiedKind() const {
  return group.empty() ? kind : kind + "." + group;
}

bool WorkloadType::servesVersion(std::string_view version) const {
  return versions.empty() || std::find(versions.begin(), versions.end(), version) != versions.end();
}

namespace {

// A JSON true, or a string Go's strconv.ParseBool takes for true.
bool holdsTrue(const JsonValue* value) {
  if (value == nullptr) return false;
  if (value->IsBool()) return value->GetBool();
  if (!value->IsString()) return false;
  const std::string_view text = stringOf(value);
  return text == "1" || text == "t" || text == "T" || text == "true" || text == "TRUE" ||
         text == "True";
}

// Whether a regular container of the object's first template declares a
// containerPort.
bool declaresAnyPort(const WorkloadType& type, const JsonValue& object) {
  if (type.templates.empty()) return false;
  const JsonValue* containers = member(valueAt(object, type.templates.front().spec), "containers");
  if (containers == nullptr || !containers->IsArray()) return false;
  for (const JsonValue& container : containers->GetArray()) {
    const JsonValue* ports = member(&container, "ports");
    if (ports == nullptr || !ports->IsArray()) continue;
    for (const JsonValue& port : ports->GetArray()) {
      if (member(&port, "containerPort") != nullptr) return true;
    }
  }
  return false;
}

}  // namespace

DefaultClass defaultClassOf(const WorkloadType& type, const JsonValue& object) {
  for (const ClassCondition& condition : type.classConditions) {
    if (condition.noPortDeclared) {
      if (!declaresAnyPort(type, object)) return {condition.workloadClass, condition.reason};
      continue;
    }
    const JsonValue* value = valueAt(object, condition.pointer);
    const bool absent = value == nullptr || value->IsNull();
    const bool holds =
        absent ? condition.whenAbsent
               : value->IsString() && std::find(condition.values.begin(), condition.values.end(),
                                                stringOf(value)) != condition.values.end();
    if (holds) return {condition.workloadClass, condition.reason};
  }
  return {type.workloadClass, type.classReason};
}

// ---- Checks ----

std::string checkPointerPattern(std::string_view pattern, bool allowRelative) {
  if (pattern.empty()) return "";  // the object itself (a Pod's spec is "/spec")
  if (pattern.front() != '/' && !allowRelative) {
    return "must start with / (a JSON Pointer from the object's root)";
  }
  if (pattern.back() == '/') return "must not end with /";
  if (pattern.find("//") != std::string_view::npos) return "has an empty token (//)";
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '~') continue;
    if (i + 1 == pattern.size() || (pattern[i + 1] != '0' && pattern[i + 1] != '1')) {
      return "has ~ not followed by 0 or 1 (write ~0 for ~ and ~1 for /)";
    }
  }
  for (const std::string& token : pointerTokens(pattern)) {
    if (token != kWildcard && token.find('*') != std::string::npos) {
      return "has * inside a token; * must be a whole token (/spec/replicaSpecs/*/template)";
    }
  }
  return "";
}

std::string checkRoleTemplate(std::string_view role) {
  if (role.empty()) return "must not be empty";
  for (size_t i = 0; i < role.size(); ++i) {
    if (role[i] == '}') return "has } without {";
    if (role[i] != '{') continue;
    const size_t close = role.find('}', i);
    if (close == std::string_view::npos) return "has { without }";
    const std::string_view name = role.substr(i + 1, close - i - 1);
    const bool field =
        name.size() > 1 && name[0] == '.' && name.find_first_of("{.", 1) == std::string_view::npos;
    if (name != "key" && !field) {
      return "has {" + std::string(name) +
             "}; placeholders are {key} (the wildcard's key or index) and {.FIELD}";
    }
    i = close;
  }
  return "";
}

namespace {

// Metadata follows the spec's wildcards: up to its last wildcard it is the
// spec's pattern, so that both resolve to the same item.
std::string metadataProblem(const std::string& spec, const std::string& metadata) {
  const std::vector<std::string> specTokens = pointerTokens(spec);
  const std::vector<std::string> metadataTokens = pointerTokens(metadata);
  size_t lastWildcard = 0;
  for (size_t i = 0; i < metadataTokens.size(); ++i) {
    if (metadataTokens[i] == kWildcard) lastWildcard = i + 1;
  }
  for (size_t i = 0; i < lastWildcard; ++i) {
    if (i >= specTokens.size() || specTokens[i] != metadataTokens[i]) {
      return metadata + " must follow the spec pattern up to its last wildcard";
    }
  }
  return "";
}

}  // namespace

std::string checkTemplateSlot(const TemplateSlot& slot) {
  if (std::string problem = checkRoleTemplate(slot.role); !problem.empty()) {
    return "role " + problem;
  }
  if (slot.spec.empty() && slot.shape != TemplateShape::PodSpec) {
    return "a resources or sparkPod slot needs a pointer";
  }
  if (std::string problem = checkPointerPattern(slot.spec, false); !problem.empty()) {
    return "spec " + problem;
  }
  const std::pair<const std::string&, const char*> metadataPatterns[] = {
      {slot.metadata, "metadata"}, {slot.intermediateMetadata, "intermediateMetadata"}};
  for (const auto& [pattern, what] : metadataPatterns) {
    if (std::string problem = checkPointerPattern(pattern, false); !problem.empty()) {
      return what + (" " + problem);
    }
  }
  const size_t wildcards = wildcardCount(slot.spec);
  if (wildcards == 0 && hasPlaceholders(slot.role)) {
    return "role " + slot.role + " has a placeholder, but the spec pointer has no wildcard";
  }
  for (const auto& [pattern, what] : metadataPatterns) {
    if (std::string problem = metadataProblem(slot.spec, pattern); !problem.empty()) {
      return what + (" " + problem);
    }
  }
  for (const std::string& object : slot.containerObjects) {
    if (object.empty() || object.front() == '/' || wildcardCount(object) != 0 ||
        !checkPointerPattern(object, true).empty()) {
      return "container object " + object + " must be a pointer relative to the spec, without *";
    }
  }
  auto checkRelative = [&](const std::string& pointer, const std::string& what) -> std::string {
    if (pointer.empty()) return "";
    if (wildcardCount(pointer) != 0) return what + " " + pointer + " must not hold *";
    const std::string problem = checkPointerPattern(pointer, true);
    return problem.empty() ? "" : what + " " + problem;
  };
  if (slot.replicas) {
    for (const ReplicaFactor& factor : *slot.replicas) {
      if (factor.pointer.empty()) return "a replica factor needs a pointer";
      for (const auto& [pointer, what] :
           {std::pair{factor.pointer, "replicas"},
            std::pair{factor.subtractWhenPresent, "subtractWhenPresent"},
            std::pair{factor.atLeast, "atLeast"}, std::pair{factor.atMost, "atMost"}}) {
        if (std::string problem = checkRelative(pointer, what); !problem.empty()) return problem;
      }
      if (factor.subtract < 0) return "a replica factor's subtract must not be negative";
    }
  }
  for (const auto& [pointer, what] :
       {std::pair{slot.jobSettings.backoffLimit, "backoffLimit"},
        std::pair{slot.jobSettings.activeDeadlineSeconds, "activeDeadlineSeconds"},
        std::pair{slot.jobSettings.ttlSecondsAfterFinished, "ttlSecondsAfterFinished"},
        std::pair{slot.jobSettings.backoffLimitPerIndex, "backoffLimitPerIndex"},
        std::pair{slot.completions, "completions"}}) {
    if (std::string problem = checkRelative(pointer, what); !problem.empty()) return problem;
  }
  return "";
}

std::string checkWorkloadType(const WorkloadType& type) {
  if (type.kind.empty()) return "kind must not be empty";
  if (type.templates.empty()) return type.qualifiedKind() + " has no template";
  for (const ClassCondition& condition : type.classConditions) {
    if (condition.workloadClass == WorkloadClass::None) {
      return type.qualifiedKind() +
             ": a class condition's class must be training, batch or realtime";
    }
  }
  if (type.workloadClass == WorkloadClass::None) {
    return type.qualifiedKind() + ": class must be training, batch or realtime";
  }
  for (const TemplateSlot& slot : type.templates) {
    if (std::string problem = checkTemplateSlot(slot); !problem.empty()) {
      return type.qualifiedKind() + " template " + slot.role + ": " + problem;
    }
  }
  return "";
}

// ---- Table ----

WorkloadTypeTable::WorkloadTypeTable(std::vector<WorkloadType> types) : types_(std::move(types)) {
  for (size_t i = 0; i < types_.size(); ++i) {
    byGroupKind_[types_[i].group + "/" + types_[i].kind].push_back(i);
  }
}

std::shared_ptr<const WorkloadTypeTable> WorkloadTypeTable::builtIn() {
  static const std::shared_ptr<const WorkloadTypeTable> table =
      std::make_shared<const WorkloadTypeTable>(builtInWorkloadTypes());
  return table;
}

std::shared_ptr<const WorkloadTypeTable> WorkloadTypeTable::withAdded(
    std::vector<WorkloadType> added, std::string* error) {
  if (error != nullptr) error->clear();
  if (added.empty()) return builtIn();
  std::vector<WorkloadType> all = builtIn()->types();
  for (WorkloadType& type : added) {
    const auto same = std::find_if(all.begin(), all.end(), [&](const WorkloadType& other) {
      return other.group == type.group && other.kind == type.kind;
    });
    if (same != all.end()) {
      if (error != nullptr) {
        *error = type.qualifiedKind() + " is already defined (" + same->source + ")";
      }
      return nullptr;
    }
    all.push_back(std::move(type));
  }
  return std::make_shared<const WorkloadTypeTable>(std::move(all));
}

const std::vector<size_t>* WorkloadTypeTable::rowsOf(std::string_view group,
                                                     std::string_view kind) const {
  std::string key;
  key.reserve(group.size() + kind.size() + 1);
  key.append(group).append("/").append(kind);
  const auto it = byGroupKind_.find(key);
  return it == byGroupKind_.end() ? nullptr : &it->second;
}

const WorkloadType* WorkloadTypeTable::findGroupKind(std::string_view group,
                                                     std::string_view kind) const {
  const std::vector<size_t>* rows = rowsOf(group, kind);
  return rows == nullptr ? nullptr : &types_[rows->front()];
}

const WorkloadType* WorkloadTypeTable::find(std::string_view group, std::string_view version,
                                            std::string_view kind) const {
  const std::vector<size_t>* rows = rowsOf(group, kind);
  if (rows == nullptr) return nullptr;
  for (size_t row : *rows) {
    if (types_[row].servesVersion(version)) return &types_[row];
  }
  return nullptr;
}

const WorkloadType* kubernetesKindOf(std::string_view group, std::string_view kind) {
  const WorkloadType* type = WorkloadTypeTable::builtIn()->findGroupKind(group, kind);
  return type != nullptr && !type->customResource ? type : nullptr;
}

const WorkloadType* WorkloadTypeTable::findForObject(const JsonValue& object) const {
  const std::string_view apiVersion = stringMember(&object, "apiVersion");
  const std::string_view kind = stringMember(&object, "kind");
  if (apiVersion.empty() || kind.empty()) return nullptr;
  const GroupVersion groupVersion = splitApiVersion(apiVersion);
  return find(groupVersion.group, groupVersion.version, kind);
}

// ---- Resolution ----

namespace {

struct Capture {
  std::string token;  // unescaped map key, or the index as digits
  std::string pointer;
  const JsonValue* value = nullptr;
};

struct Walk {
  const WorkloadType& type;
  const TemplateSlot& slot;
  const JsonValue& root;
  const ResolveLimits& limits;
  Resolution& out;
  size_t& visits;
  std::vector<std::string> tokens;
  std::vector<Capture> captures;

  bool full() const { return !out.error.empty(); }

  void visit(const JsonValue& value, size_t depth, std::string& pointer, std::string& path) {
    if (full()) return;
    if (depth == tokens.size()) {
      emit(value, pointer, path);
      return;
    }
    const std::string& token = tokens[depth];
    if (token != kWildcard) {
      const JsonValue* child = childAt(&value, token);
      if (child == nullptr) return;
      descend(*child, depth, pointer, path, token, value.IsArray());
      return;
    }
    if (value.IsObject()) {
      for (auto it = value.MemberBegin(); it != value.MemberEnd() && !full(); ++it) {
        if (!countVisit()) return;
        const std::string key(it->name.GetString(), it->name.GetStringLength());
        captures.push_back({key, {}, &it->value});
        descend(it->value, depth, pointer, path, key, false);
        captures.pop_back();
      }
    } else if (value.IsArray()) {
      for (rapidjson::SizeType i = 0; i < value.Size() && !full(); ++i) {
        if (!countVisit()) return;
        captures.push_back({std::to_string(i), {}, &value[i]});
        descend(value[i], depth, pointer, path, captures.back().token, true);
        captures.pop_back();
      }
    }
  }

  // `token` is a copy: deeper wildcards grow `captures`, which holds it.
  void descend(const JsonValue& child, size_t depth, std::string& pointer, std::string& path,
               const std::string token, bool inArray) {
    const size_t pointerSize = pointer.size();
    const size_t pathSize = path.size();
    appendEscapedPointerToken(pointer, token);
    if (inArray) {
      appendFieldPathIndex(path, static_cast<size_t>(std::stoul(token)));
    } else {
      appendFieldPathMember(path, token);
    }
    if (tokens[depth] == kWildcard) captures.back().pointer = pointer;
    visit(child, depth + 1, pointer, path);
    pointer.resize(pointerSize);
    path.resize(pathSize);
  }

  bool countVisit() {
    if (++visits <= limits.maxVisits) return true;
    out.error = type.qualifiedKind() + ": more than " + std::to_string(limits.maxVisits) +
                " values under the wildcards of its pod template pointers";
    return false;
  }

  // The pointer that a relative `pointer` names from the last wildcard's
  // match (or from the root when there is none).
  std::string concrete(const std::string& relative) const {
    if (relative.empty() || relative.front() == '/') return relative;
    std::string base = captures.empty() ? std::string() : captures.back().pointer;
    for (const std::string& token : pointerTokens(relative)) {
      appendEscapedPointerToken(base, token);
    }
    return base;
  }

  std::string substituted(const std::string& pattern) const {
    // Without a wildcard a (well-formed) pattern is its own pointer.
    if (pattern.find('*') == std::string::npos) return pattern;
    std::string pointer;
    size_t wildcard = 0;
    for (const std::string& token : pointerTokens(pattern)) {
      appendEscapedPointerToken(pointer, token == kWildcard && wildcard < captures.size()
                                             ? captures[wildcard++].token
                                             : token);
    }
    return pointer;
  }

  std::string role() const {
    std::string text;
    const Capture* last = captures.empty() ? nullptr : &captures.back();
    for (size_t i = 0; i < slot.role.size(); ++i) {
      const size_t close = slot.role[i] == '{' ? slot.role.find('}', i) : std::string::npos;
      if (close == std::string::npos) {
        text.push_back(slot.role[i]);
        continue;
      }
      const std::string_view name = std::string_view(slot.role).substr(i + 1, close - i - 1);
      std::string_view value = last != nullptr ? std::string_view(last->token) : "";
      if (name.size() > 1 && name[0] == '.' && last != nullptr) {
        // A copy: RapidJSON 1.1's FindMember reads a StringRef key up to its
        // NUL, and a view into the role text runs on to the closing brace.
        const std::string_view field = stringMember(last->value, std::string(name.substr(1)));
        if (!field.empty()) value = field;
      }
      text.append(value);
      i = close;
    }
    return text;
  }

  std::optional<int64_t> replicas() const {
    if (!slot.replicas) return std::nullopt;
    int64_t product = 1;
    for (const ReplicaFactor& factor : *slot.replicas) {
      for (const std::string& flag : factor.unknownWhen) {
        if (holdsTrue(valueAt(root, concrete(flag)))) return std::nullopt;
      }
      const JsonValue* value = valueAt(root, concrete(factor.pointer));
      std::optional<int64_t> count = factor.defaultValue;
      if (value != nullptr && !value->IsNull()) {
        if (!value->IsInt64() || value->GetInt64() < 0) return std::nullopt;
        count = value->GetInt64();
      }
      if (!count) return std::nullopt;
      if (const JsonValue* low = valueAt(root, concrete(factor.atLeast));
          !factor.atLeast.empty() && low != nullptr && low->IsInt64()) {
        count = std::max(*count, low->GetInt64());
      }
      if (const JsonValue* high = valueAt(root, concrete(factor.atMost));
          !factor.atMost.empty() && high != nullptr && high->IsInt64()) {
        count = std::max<int64_t>(0, std::min(*count, high->GetInt64()));
      }
      const bool subtracts = factor.subtractWhenPresent.empty() ||
                             valueAt(root, concrete(factor.subtractWhenPresent)) != nullptr;
      if (subtracts) count = std::max<int64_t>(0, *count - factor.subtract);
      if (*count != 0 && product > std::numeric_limits<int64_t>::max() / *count) {
        return std::nullopt;
      }
      product *= *count;
    }
    return product;
  }

  void emit(const JsonValue& spec, const std::string& pointer, const std::string& path) {
    if (!spec.IsObject()) return;
    if (out.templates.size() == limits.maxTemplates) {
      out.error = type.qualifiedKind() + ": more than " + std::to_string(limits.maxTemplates) +
                  " pod templates";
      return;
    }
    ResolvedTemplate& resolved = out.templates.emplace_back();
    resolved.slot = &slot;
    resolved.role = role();
    resolved.specPointer = pointer;
    resolved.specFieldPath = path;
    resolved.spec = &spec;
    if (!slot.metadata.empty()) {
      resolved.metadataPointer = substituted(slot.metadata);
      resolved.metadataFieldPath = fieldPathOf(root, resolved.metadataPointer);
      resolved.metadata = valueAt(root, resolved.metadataPointer);
      if (resolved.metadata != nullptr && !resolved.metadata->IsObject()) {
        resolved.metadata = nullptr;
      }
    }
    if (!slot.intermediateMetadata.empty()) {
      resolved.intermediateMetadataPointer = substituted(slot.intermediateMetadata);
    }
    for (const std::string& object : slot.containerObjects) {
      std::string concretePointer = pointer;
      for (const std::string& token : pointerTokens(object)) {
        appendEscapedPointerToken(concretePointer, token);
      }
      if (isObject(valueAt(root, concretePointer))) {
        resolved.containerObjects.push_back(std::move(concretePointer));
      }
    }
    resolved.replicas = replicas();
    resolved.jobSettings.backoffLimit = concrete(slot.jobSettings.backoffLimit);
    resolved.jobSettings.activeDeadlineSeconds = concrete(slot.jobSettings.activeDeadlineSeconds);
    resolved.jobSettings.ttlSecondsAfterFinished =
        concrete(slot.jobSettings.ttlSecondsAfterFinished);
    resolved.jobSettings.serverBackoffLimit = slot.jobSettings.serverBackoffLimit;
    resolved.jobSettings.backoffLimitPerIndex = concrete(slot.jobSettings.backoffLimitPerIndex);
  }
};

}  // namespace

Resolution resolveTemplates(const WorkloadType& type, const JsonValue& object,
                            const ResolveLimits& limits) {
  Resolution out;
  size_t visits = 0;
  for (const TemplateSlot& slot : type.templates) {
    if (slot.spec.find('*') == std::string::npos) {
      // No wildcard (every Kubernetes kind): the pattern is the pointer.
      Walk walk{type, slot, object, limits, out, visits, {}, {}};
      if (const JsonValue* spec = valueAt(object, slot.spec)) {
        walk.emit(*spec, slot.spec, fieldPathOf(object, slot.spec));
      }
    } else {
      Walk walk{type, slot, object, limits, out, visits, pointerTokens(slot.spec), {}};
      std::string pointer;
      std::string path;
      walk.visit(object, 0, pointer, path);
    }
    if (!out.ok()) break;
  }
  return out;
}

}  // namespace aiadmit
