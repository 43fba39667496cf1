#include "webhook/policy/workload_type_loader.h"

#include "webhook/policy/profile_reader.h"

#include <map>

#include "webhook/codec/text.h"
#include "webhook/policy/yaml_fields.h"

namespace aiadmit {

using yaml_fields::Reader;

namespace {

bool isKindName(std::string_view kind) {
  if (kind.empty() || kind.size() > 63 || kind[0] < 'A' || kind[0] > 'Z') return false;
  return std::all_of(kind.begin(), kind.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  });
}

// A version or resource name: a DNS-1035 label (v1, v1beta1, notebooks).
bool isDnsLabel(std::string_view name) {
  if (name.empty() || name.size() > 63 || name[0] < 'a' || name[0] > 'z') return false;
  return std::all_of(
             name.begin(), name.end(),
             [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; }) &&
         name.back() != '-';
}

// A pointer field: absolute (from the object's root) or, where `relative`,
// also relative to the template's last wildcard match; `wildcards` allows *.
std::optional<std::string> readPointer(Reader& r, const YAML::Node& node, const std::string& field,
                                       bool relative, bool wildcards) {
  auto text = r.string(node, field);
  if (!text) return std::nullopt;
  std::string problem = checkPointerPattern(*text, relative);
  if (problem.empty() && text->empty() && relative) problem = "must not be empty";
  if (problem.empty() && !wildcards && text->find('*') != std::string::npos) {
    problem = "must not hold * (it names one field)";
  }
  if (!problem.empty()) {
    r.error(node, field, inQuotes(*text) + " " + problem);
    return std::nullopt;
  }
  return text;
}

void readJobSettings(Reader& r, const YAML::Node& node, const std::string& field,
                     JobSettingPointers& out) {
  if (!r.mapping(node, field,
                 {"backoffLimit", "activeDeadlineSeconds", "ttlSecondsAfterFinished"})) {
    return;
  }
  auto read = [&](std::string_view key, std::string& target) {
    r.optional(node, key, field,
               [&](auto& n, auto& f) { target = readPointer(r, n, f, true, false).value_or(""); });
  };
  read("backoffLimit", out.backoffLimit);
  read("activeDeadlineSeconds", out.activeDeadlineSeconds);
  read("ttlSecondsAfterFinished", out.ttlSecondsAfterFinished);
}

// A list of absolute pointer patterns (wildcards allowed).
std::vector<std::string> readPatterns(Reader& r, const YAML::Node& node, const std::string& field) {
  std::vector<std::string> patterns;
  if (!node.IsSequence()) {
    r.error(node, field, "must be a list of pointers such as /spec/replicas");
    return patterns;
  }
  for (size_t i = 0; i < node.size(); ++i) {
    if (auto pattern = readPointer(r, node[i], Reader::index(field, i), false, true)) {
      if (pattern->empty()) {
        r.error(node[i], Reader::index(field, i), "must not be empty");
        continue;
      }
      patterns.push_back(std::move(*pattern));
    }
  }
  return patterns;
}

// What an UPDATE may change without a rollout, and what it may not change.
void readUpdates(Reader& r, const YAML::Node& node, const std::string& field, UpdateRules& out) {
  if (!r.mapping(node, field, {"scale", "suspend", "immutable"})) return;
  r.optional(node, "scale", field, [&](auto& n, auto& f) { out.scale = readPatterns(r, n, f); });
  r.optional(node, "immutable", field,
             [&](auto& n, auto& f) { out.immutable = readPatterns(r, n, f); });
  r.optional(node, "suspend", field, [&](auto& n, auto& f) {
    out.suspend = readPointer(r, n, f, false, false).value_or("");
  });
}

// Where the operator reads its Pods' scheduling: one field each (no *), and
// the patterns whose presence says it gang-schedules them.
void readScheduling(Reader& r, const YAML::Node& node, const std::string& field,
                    SchedulingFields& out) {
  if (!r.mapping(node, field, {"schedulerName", "priorityClassName", "queue", "gang"})) return;
  auto read = [&](std::string_view key, std::string& target) {
    r.optional(node, key, field, [&](auto& n, auto& f) {
      const auto pointer = readPointer(r, n, f, false, false);
      if (pointer && pointer->empty()) r.error(n, f, "must not be empty");
      target = pointer.value_or("");
    });
  };
  read("schedulerName", out.schedulerName);
  read("priorityClassName", out.priorityClassName);
  read("queue", out.queue);
  r.optional(node, "gang", field, [&](auto& n, auto& f) { out.gang = readPatterns(r, n, f); });
}

// `unknown`, or a list of factors whose product is the Pod count.
void readReplicas(Reader& r, const YAML::Node& node, const std::string& field,
                  std::optional<std::vector<ReplicaFactor>>& out) {
  if (node.IsScalar() && node.Tag() == "?" && node.Scalar() == "unknown") {
    out.reset();
    return;
  }
  if (!node.IsSequence()) {
    r.error(node, field, "must be a list of factors or unknown, got " + Reader::kindOf(node));
    return;
  }
  std::vector<ReplicaFactor> factors;
  for (size_t i = 0; i < node.size(); ++i) {
    const YAML::Node item = node[i];
    const std::string path = Reader::index(field, i);
    if (!r.mapping(item, path,
                   {"path", "default", "atLeast", "atMost", "subtract", "subtractWhenPresent",
                    "unknownWhen"})) {
      continue;
    }
    ReplicaFactor factor;
    const YAML::Node pathNode = item["path"];
    if (!pathNode.IsDefined() || pathNode.IsNull()) {
      r.error(item, path + ".path", "is required (the field holding the number)");
    } else {
      factor.pointer = readPointer(r, pathNode, path + ".path", true, false).value_or("");
    }
    r.optional(item, "default", path,
               [&](auto& n, auto& f) { factor.defaultValue = r.count(n, f, 0, 1 << 30); });
    r.optional(item, "atLeast", path, [&](auto& n, auto& f) {
      factor.atLeast = readPointer(r, n, f, true, false).value_or("");
    });
    r.optional(item, "atMost", path, [&](auto& n, auto& f) {
      factor.atMost = readPointer(r, n, f, true, false).value_or("");
    });
    r.optional(item, "subtract", path,
               [&](auto& n, auto& f) { factor.subtract = r.count(n, f, 0, 1 << 30).value_or(0); });
    r.optional(item, "subtractWhenPresent", path, [&](auto& n, auto& f) {
      factor.subtractWhenPresent = readPointer(r, n, f, true, false).value_or("");
      if (factor.subtract == 0) r.error(n, f, "only applies with subtract");
    });
    r.optional(item, "unknownWhen", path, [&](auto& n, auto& f) {
      factor.unknownWhen = r.strings(n, f, [](const std::string& pointer) -> std::string {
        if (pointer.find('*') != std::string::npos || !checkPointerPattern(pointer, true).empty()) {
          return inQuotes(pointer) + " must be a pointer without *";
        }
        return "";
      });
    });
    factors.push_back(std::move(factor));
  }
  out = std::move(factors);
}

uint32_t readInjections(Reader& r, const YAML::Node& node, const std::string& field) {
  const std::vector<std::string> names =
      r.strings(node, field, [](const std::string& name) -> std::string {
        for (const InjectionName& entry : kInjectionNames) {
          if (entry.name == name) return "";
        }
        return inQuotes(name) + " is not one of " + describeInjections(kInjectAll);
      });
  uint32_t injections = 0;
  for (const std::string& name : names) {
    for (const InjectionName& entry : kInjectionNames) {
      if (entry.name == name) injections |= entry.injection;
    }
  }
  return injections;
}

// `annotatedClaim`: the keys of the object's annotations by which the
// operator claims devices for the template's Pods (AnnotatedClaim).
void readAnnotatedClaim(Reader& r, const YAML::Node& node, const std::string& field,
                        AnnotatedClaim& out) {
  if (!r.mapping(node, field, {"deviceClass", "count", "container"})) return;
  auto key = [&](std::string_view name, std::string& target) {
    r.optional(node, name, field, [&](auto& n, auto& f) {
      target = r.string(n, f).value_or("");
      if (target.empty()) r.error(n, f, "must be an annotation key");
    });
  };
  key("deviceClass", out.deviceClass);
  key("count", out.count);
  key("container", out.container);
  if (out.deviceClass.empty()) {
    r.error(node, field + ".deviceClass", "is required (the annotation naming the DeviceClass)");
  }
}

void readTemplate(Reader& r, const YAML::Node& node, const std::string& field,
                  const JobSettingPointers& typeSettings, std::vector<TemplateSlot>& out) {
  const int before = r.errorCount();
  if (!r.mapping(node, field,
                 {"role", "template", "podSpec", "metadata", "intermediateMetadata", "resources",
                  "sparkPod", "containerObjects", "annotatedClaim", "replicas", "jobSettings",
                  "inject", "note"})) {
    return;
  }
  TemplateSlot slot;
  slot.replicas = std::vector<ReplicaFactor>{};
  slot.jobSettings = typeSettings;
  const YAML::Node role = node["role"];
  if (!role.IsDefined() || role.IsNull()) {
    r.error(node, field + ".role", "is required (\"worker\", \"{key}\", \"{.name}\")");
  } else if (auto text = r.string(role, field + ".role")) {
    slot.role = *text;
    if (std::string problem = checkRoleTemplate(slot.role); !problem.empty()) {
      r.error(role, field + ".role", inQuotes(slot.role) + " " + problem);
    }
  }
  int shapes = 0;
  r.optional(node, "template", field, [&](auto& n, auto& f) {
    ++shapes;
    const std::string base = readPointer(r, n, f, false, true).value_or("");
    slot.spec = base + "/spec";
    slot.metadata = base + "/metadata";
  });
  r.optional(node, "podSpec", field, [&](auto& n, auto& f) {
    ++shapes;
    slot.spec = readPointer(r, n, f, false, true).value_or("");
  });
  r.optional(node, "resources", field, [&](auto& n, auto& f) {
    ++shapes;
    slot.shape = TemplateShape::Resources;
    slot.spec = readPointer(r, n, f, false, true).value_or("");
    slot.injectable = kInjectGpuLimits;
  });
  r.optional(node, "sparkPod", field, [&](auto& n, auto& f) {
    ++shapes;
    slot.shape = TemplateShape::SparkPod;
    slot.spec = readPointer(r, n, f, false, true).value_or("");
    slot.metadata = slot.spec;  // its labels and annotations are the Pods'
    slot.injectable = kSparkPodInjectable;
  });
  if (shapes != 1) {
    r.error(node, field,
            "set exactly one of template (a PodTemplateSpec), podSpec (a PodSpec), resources "
            "(a ResourceRequirements) or sparkPod (a Spark operator SparkPodSpec)");
  }
  r.optional(node, "metadata", field, [&](auto& n, auto& f) {
    if (!node["podSpec"].IsDefined()) {
      r.error(n, f, "only applies with podSpec (a template's metadata is TEMPLATE/metadata)");
      return;
    }
    slot.metadata = readPointer(r, n, f, false, true).value_or("");
  });
  r.optional(node, "intermediateMetadata", field, [&](auto& n, auto& f) {
    if (node["resources"].IsDefined()) {
      r.error(n, f,
              "only applies with template or podSpec (a resources template has no Pods' metadata)");
      return;
    }
    slot.intermediateMetadata = readPointer(r, n, f, false, true).value_or("");
  });
  r.optional(node, "containerObjects", field, [&](auto& n, auto& f) {
    slot.containerObjects = r.strings(n, f, [](const std::string& pointer) -> std::string {
      if (pointer.empty() || pointer.front() == '/' || pointer.find('*') != std::string::npos ||
          !checkPointerPattern(pointer, true).empty()) {
        return inQuotes(pointer) + " must be a pointer relative to the pod spec, without *";
      }
      return "";
    });
  });
  r.optional(node, "annotatedClaim", field,
             [&](auto& n, auto& f) { readAnnotatedClaim(r, n, f, slot.annotatedClaim); });
  r.optional(node, "replicas", field,
             [&](auto& n, auto& f) { readReplicas(r, n, f, slot.replicas); });
  r.optional(node, "jobSettings", field,
             [&](auto& n, auto& f) { readJobSettings(r, n, f, slot.jobSettings); });
  r.optional(node, "inject", field, [&](auto& n, auto& f) {
    const uint32_t asked = readInjections(r, n, f);
    if ((asked & ~slot.injectable) != 0) {
      r.error(n, f,
              "a " + std::string(slot.shape == TemplateShape::SparkPod ? "sparkPod" : "resources") +
                  " template can take only " + describeInjections(slot.injectable));
    }
    slot.injectable &= asked;
  });
  r.optional(node, "note", field,
             [&](auto& n, auto& f) { slot.note = r.string(n, f).value_or(""); });
  if (r.errorCount() != before) return;
  // What only the whole slot shows: placeholders without a wildcard,
  // metadata that does not follow the spec's wildcards.
  if (std::string problem = checkTemplateSlot(slot); !problem.empty()) {
    r.error(node, field, problem);
    return;
  }
  out.push_back(std::move(slot));
}

template <typename Check>
void requiredString(Reader& r, const YAML::Node& parent, std::string_view key,
                    const std::string& field, const std::string& hint, std::string& target,
                    Check check) {
  const YAML::Node node = parent[std::string(key)];
  if (!node.IsDefined() || node.IsNull()) {
    r.error(parent, field, "is required (" + hint + ")");
    return;
  }
  auto text = r.string(node, field);
  if (!text) return;
  target = *text;
  if (!check(target)) r.error(node, field, inQuotes(target) + " is not " + hint);
}

void readSpec(Reader& r, const YAML::Node& spec, WorkloadTypeDocument& doc) {
  WorkloadType& type = doc.type;
  if (!r.mapping(spec, "spec",
                 {"group", "kind", "versions", "resource", "class", "classReason", "lifecycle",
                  "jobSettings", "updates", "scheduling", "entrypoint", "templates"})) {
    return;
  }
  requiredString(r, spec, "group", "spec.group", "an API group such as kubeflow.org", type.group,
                 yaml_fields::isDnsSubdomain);
  requiredString(r, spec, "kind", "spec.kind", "a kind such as Notebook", type.kind, isKindName);
  doc.kindLocation = Reader::locationOf(spec["kind"]);
  requiredString(r, spec, "resource", "spec.resource", "a plural resource name such as notebooks",
                 type.resource, isDnsLabel);
  r.optional(spec, "versions", "spec", [&](auto& n, auto& f) {
    type.versions = r.strings(n, f, [](const std::string& version) -> std::string {
      return isDnsLabel(version) ? "" : inQuotes(version) + " is not a version such as v1beta1";
    });
  });
  const YAML::Node classNode = spec["class"];
  if (!classNode.IsDefined() || classNode.IsNull()) {
    r.error(spec, "spec.class", "is required (training, batch or realtime)");
  } else if (auto text = r.string(classNode, "spec.class")) {
    if (yaml_fields::oneOf(r, classNode, "spec.class", *text, {"training", "batch", "realtime"})) {
      type.workloadClass = parseClass(*text).value_or(WorkloadClass::None);
    }
  }
  type.classReason = "a " + type.kind + " is " + std::string(className(type.workloadClass)) +
                     " work (WorkloadType " + doc.name + ")";
  r.optional(spec, "classReason", "spec",
             [&](auto& n, auto& f) { type.classReason = r.string(n, f).value_or(""); });
  r.optional(spec, "lifecycle", "spec", [&](auto& n, auto& f) {
    const std::string text = r.string(n, f).value_or("");
    if (!yaml_fields::oneOf(r, n, f, text, {"RunsToCompletion", "LongRunning", "Either"})) return;
    type.lifecycle = text == "RunsToCompletion" ? Lifecycle::RunsToCompletion
                     : text == "LongRunning"    ? Lifecycle::LongRunning
                                                : Lifecycle::Either;
  });
  r.optional(spec, "updates", "spec",
             [&](auto& n, auto& f) { readUpdates(r, n, f, type.updates); });
  r.optional(spec, "scheduling", "spec",
             [&](auto& n, auto& f) { readScheduling(r, n, f, type.scheduling); });
  r.optional(spec, "entrypoint", "spec", [&](auto& n, auto& f) {
    const auto pointer = readPointer(r, n, f, false, false);
    if (pointer && pointer->empty()) r.error(n, f, "must not be empty");
    type.entrypoint = pointer.value_or("");
  });
  JobSettingPointers typeSettings;
  r.optional(spec, "jobSettings", "spec",
             [&](auto& n, auto& f) { readJobSettings(r, n, f, typeSettings); });
  const YAML::Node templates = spec["templates"];
  if (!templates.IsDefined() || templates.IsNull()) {
    r.error(spec, "spec.templates", "is required (at least one pod template)");
  } else if (!templates.IsSequence() || templates.size() == 0) {
    r.error(templates, "spec.templates", "must be a list of at least one template");
  } else {
    for (size_t i = 0; i < templates.size(); ++i) {
      readTemplate(r, templates[i], Reader::index("spec.templates", i), typeSettings,
                   type.templates);
    }
  }
}

}  // namespace

bool isWorkloadTypeDocument(const YAML::Node& document) {
  if (!document.IsMap()) return false;
  const YAML::Node kind = document["kind"];
  return kind.IsDefined() && kind.IsScalar() && kind.Scalar() == "WorkloadType";
}

void readWorkloadTypeDocument(Reader& r, const YAML::Node& doc, const std::string& file,
                              std::vector<WorkloadTypeDocument>& out) {
  const int before = r.errorCount();
  if (!r.mapping(doc, "", {"apiVersion", "kind", "metadata", "spec"})) return;
  WorkloadTypeDocument document;
  document.file = file;
  DocumentName name;
  readDocumentHeader(r, doc, "name", name);
  document.name = std::move(name.name);
  document.nameLocation = name.location;
  yaml_fields::readRequiredSpec(r, doc,
                                [&](const YAML::Node& spec) { readSpec(r, spec, document); });
  if (r.errorCount() != before) return;
  document.type.source = file + ":" + std::to_string(Reader::locationOf(doc).line);
  out.push_back(std::move(document));
}

std::shared_ptr<const WorkloadTypeTable> buildWorkloadTypeTable(
    std::vector<WorkloadTypeDocument> documents, std::vector<ProfileError>& errors) {
  const size_t before = errors.size();
  const auto builtIn = WorkloadTypeTable::builtIn();
  std::map<std::string, const WorkloadTypeDocument*> byKind;
  std::map<std::string, const WorkloadTypeDocument*> byName;
  for (const WorkloadTypeDocument& document : documents) {
    const WorkloadType& type = document.type;
    const auto at = [&](const SourceLocation& location, std::string field, std::string message) {
      errors.push_back(
          {document.file, location.line, location.column, std::move(field), std::move(message)});
    };
    if (builtIn->findGroupKind(type.group, type.kind) != nullptr) {
      at(document.kindLocation, "spec.kind",
         type.qualifiedKind() +
             " is built in and cannot be redefined (docs/workload-types.md lists the built-in "
             "kinds)");
    } else if (auto [it, added] = byKind.emplace(type.qualifiedKind(), &document); !added) {
      at(document.kindLocation, "spec.kind",
         type.qualifiedKind() + " is already defined (" + it->second->type.source + ")");
    }
    if (auto [it, added] = byName.emplace(document.name, &document); !added) {
      at(document.nameLocation, "metadata.name",
         "duplicate WorkloadType name " + inQuotes(document.name) + " (first defined at " +
             it->second->type.source + ")");
    }
  }
  if (errors.size() != before) return nullptr;
  std::vector<WorkloadType> types;
  types.reserve(documents.size());
  for (WorkloadTypeDocument& document : documents) types.push_back(std::move(document.type));
  std::string error;
  auto table = WorkloadTypeTable::withAdded(std::move(types), &error);
  if (table == nullptr) errors.push_back({"", 0, 0, "", error});
  return table;
}

}  // namespace aiadmit
