#include "webhook/policy/profile_fields.h"

#include <algorithm>
#include <limits>
#include <set>

#include "webhook/codec/text.h"
#include "webhook/model/quantity.h"

namespace aiadmit {

using namespace yaml_fields;

namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// An extended resource name: domain/name; a glob may stand for part of it.
bool isResourceNamePattern(std::string_view name) {
  const size_t slash = name.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == name.size()) return false;
  std::string literal(name);
  std::replace_if(
      literal.begin(), literal.end(), [](char c) { return c == '*' || c == '?'; }, 'x');
  return isQualifiedName(literal);
}

// A namespace name or a glob over namespace names.
bool isNamespacePatternSyntax(std::string_view pattern) {
  if (pattern.empty() || pattern.size() > 63) return false;
  return std::all_of(pattern.begin(), pattern.end(),
                     [](char c) { return isLowerAlnum(c) || c == '-' || c == '*' || c == '?'; });
}

std::string checkDnsSubdomain(const std::string& name) {
  return isDnsSubdomain(name)
             ? ""
             : inQuotes(name) + " is not a valid name (lowercase letters, digits, '-', '.')";
}

std::string checkNamespacePattern(const std::string& pattern) {
  if (!isNamespacePatternSyntax(pattern)) {
    return inQuotes(pattern) +
           " is not a namespace name or pattern (lowercase letters, digits, '-', and * or ?)";
  }
  if (!isGlob(pattern)) {
    return isNamespaceName(pattern) ? "" : inQuotes(pattern) + " is not a valid namespace name";
  }
  if (!namespaceMatchedByAll({pattern})) return inQuotes(pattern) + " matches no namespace name";
  return "";
}

std::string checkResourceName(const std::string& name) {
  return isResourceNamePattern(name)
             ? ""
             : inQuotes(name) + " is not an extended resource name with a domain (nvidia.com/gpu)";
}

std::string checkLabelKeyIfSet(const std::string& key) {
  return key.empty() ? "" : checkLabelKey(key);
}

std::string checkPositiveQuantity(const std::string& text) {
  const auto quantity = Quantity::parse(text);
  if (quantity && !quantity->isNegative() && !quantity->isZero()) return "";
  return inQuotes(text) + " is not a positive quantity (such as 16Gi)";
}

std::string checkProbePath(const std::string& path) {
  return path.empty() || path[0] != '/' ? "must start with /" : "";
}

// The pool's own resource is one resource, never a pattern.
std::string checkPoolResource(const std::string& name) {
  if (isGlob(name))
    return "must name one resource, not a pattern (patterns go in allowedResources)";
  return checkResourceName(name);
}

bool isInteger(const std::string& text) {
  size_t i = !text.empty() && text[0] == '-' ? 1 : 0;
  if (i == text.size() || text.size() > 19) return false;
  return std::all_of(text.begin() + static_cast<std::ptrdiff_t>(i), text.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

bool isNumericOperator(const std::string& op) {
  return op == "Gt" || op == "Lt";
}

const Fields<Toleration>& tolerationFields() {
  static const Fields<Toleration> fields = {
      {"key", text(&Toleration::key, checkLabelKeyIfSet)},
      {"operator", text(&Toleration::op, oneOfThese({"Equal", "Exists"}))},
      {"value", text(&Toleration::value, checkLabelValue)},
      {"effect",
       text(&Toleration::effect, oneOfThese({"", "NoSchedule", "PreferNoSchedule", "NoExecute"}))},
      {"tolerationSeconds",
       [](Reader& reader, const YAML::Node& value, const std::string& field,
          Toleration& toleration) {
         toleration.tolerationSeconds = reader.count(value, field, 0, kInt64Max);
         if (toleration.effect != "NoExecute") {
           reader.error(value, field, "only applies to effect NoExecute");
         }
       }},
  };
  return fields;
}

void readTolerations(Reader& reader, const YAML::Node& node, const std::string& field,
                     std::vector<Toleration>& out) {
  if (!node.IsSequence()) {
    reader.error(node, field, "must be a list of tolerations, got " + Reader::kindOf(node));
    return;
  }
  for (size_t i = 0; i < node.size(); ++i) {
    const YAML::Node item = node[i];
    const std::string path = Reader::index(field, i);
    const int before = reader.errorCount();
    Toleration toleration;
    if (!readFields(reader, item, path, tolerationFields(), toleration)) continue;
    if (toleration.op == "Exists" && !toleration.value.empty()) {
      reader.error(item["value"], path + ".value", "must be empty when operator is Exists");
    }
    if (toleration.key.empty() && toleration.op != "Exists") {
      reader.error(item, path + ".key",
                   "is required unless operator is Exists (which tolerates every taint)");
    }
    if (reader.errorCount() != before) continue;
    const bool repeated = std::any_of(out.begin(), out.end(), [&](const Toleration& other) {
      return other.key == toleration.key && other.op == toleration.op &&
             other.value == toleration.value && other.effect == toleration.effect;
    });
    if (repeated) {
      reader.error(item, path, "repeats an earlier toleration");
      continue;
    }
    out.push_back(std::move(toleration));
  }
}

const Fields<NodeSelectorRequirement>& requirementFields() {
  static const Fields<NodeSelectorRequirement> fields = {
      {"key", text(&NodeSelectorRequirement::key, checkLabelKeyIfSet)},
      {"operator", text(&NodeSelectorRequirement::op,
                        oneOfThese({"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"}))},
      {"values",
       [](Reader& reader, const YAML::Node& value, const std::string& field,
          NodeSelectorRequirement& requirement) {
         const bool numeric = isNumericOperator(requirement.op);
         requirement.values =
             reader.strings(value, field, [&](const std::string& entry) -> std::string {
               if (numeric) return isInteger(entry) ? "" : inQuotes(entry) + " is not an integer";
               return checkLabelValue(entry);
             });
       }},
  };
  return fields;
}

void readNodeAffinity(Reader& reader, const YAML::Node& node, const std::string& field,
                      std::vector<NodeSelectorRequirement>& out) {
  if (!node.IsSequence()) {
    reader.error(node, field,
                 "must be a list of node selector requirements, got " + Reader::kindOf(node));
    return;
  }
  for (size_t i = 0; i < node.size(); ++i) {
    const YAML::Node item = node[i];
    const std::string path = Reader::index(field, i);
    NodeSelectorRequirement requirement;
    if (!readFields(reader, item, path, requirementFields(), requirement)) continue;
    const std::string& op = requirement.op;
    if (requirement.key.empty()) reader.error(item, path + ".key", "is required");
    if (op.empty()) reader.error(item, path + ".operator", "is required");
    const bool needsValues = op == "In" || op == "NotIn";
    if (needsValues && requirement.values.empty()) {
      reader.error(item, path + ".values", "must not be empty for operator " + op);
    } else if (isNumericOperator(op) && requirement.values.size() != 1) {
      reader.error(item, path + ".values", "must hold exactly one integer for operator " + op);
    } else if ((op == "Exists" || op == "DoesNotExist") && !requirement.values.empty()) {
      reader.error(item["values"], path + ".values", "must be empty for operator " + op);
    }
    out.push_back(std::move(requirement));
  }
}

const Fields<ProbeSpec>& httpGetFields() {
  static const Fields<ProbeSpec> fields = {
      {"path", text(&ProbeSpec::path, checkProbePath)},
      {"port", count(&ProbeSpec::port, 1, 65535)},
      {"scheme", text(&ProbeSpec::scheme, oneOfThese({"HTTP", "HTTPS"}))},
  };
  return fields;
}

const Fields<ProbeSpec>& tcpSocketFields() {
  static const Fields<ProbeSpec> fields = {{"port", count(&ProbeSpec::port, 1, 65535)}};
  return fields;
}

// A probe's fields; only `failureThreshold` differs between the two probes.
Fields<ProbeSpec> probeFields(ReadField<ProbeSpec> failureThreshold) {
  return {
      {"httpGet",
       [](Reader& reader, const YAML::Node& value, const std::string& field, ProbeSpec& probe) {
         probe.handler = ProbeSpec::Handler::HttpGet;
         readFields(reader, value, field, httpGetFields(), probe);
       }},
      {"tcpSocket",
       [](Reader& reader, const YAML::Node& value, const std::string& field, ProbeSpec& probe) {
         probe.handler = ProbeSpec::Handler::TcpSocket;
         readFields(reader, value, field, tcpSocketFields(), probe);
       }},
      {"periodSeconds", count(&ProbeSpec::periodSeconds, 1, kInt32Max)},
      {"timeoutSeconds", count(&ProbeSpec::timeoutSeconds, 1, kInt32Max)},
      {"failureThreshold", std::move(failureThreshold)},
  };
}

const Fields<ProbeSpec>& readinessFields() {
  static const Fields<ProbeSpec> fields =
      probeFields(count(&ProbeSpec::failureThreshold, 1, kInt32Max));
  return fields;
}

const Fields<ProbeSpec>& startupFields() {
  static const Fields<ProbeSpec> fields = probeFields(
      [](Reader& reader, const YAML::Node& value, const std::string& field, ProbeSpec&) {
        reader.error(value, field, "is derived from probes.startupBudgetSeconds; set that instead");
      });
  return fields;
}

void readProbe(Reader& reader, const YAML::Node& node, const std::string& field,
               const Fields<ProbeSpec>& fields, ProbeSpec& probe) {
  if (!knownFields(reader, node, field, fields)) return;
  if (node["httpGet"].IsDefined() && node["tcpSocket"].IsDefined()) {
    reader.error(node, field, "set httpGet or tcpSocket, not both");
  }
  readEachField(reader, node, field, fields, probe);
}

const Fields<GangScheduling>& gangFields() {
  static const Fields<GangScheduling> fields = {
      {"required", boolean(&GangScheduling::required)},
      {"schedulerName", text(&GangScheduling::schedulerName, checkDnsSubdomain)},
      {"queueLabel", text(&GangScheduling::queueLabel, checkLabelKey)},
      {"native", boolean(&GangScheduling::native)},
  };
  return fields;
}

}  // namespace

const Fields<ProfileScope>& scopeFields() {
  static const Fields<ProfileScope> fields = {
      {"namespaces", strings(&ProfileScope::namespaces, checkNamespacePattern,
                             "must not be empty (leave it out to mean every namespace)")},
      {"matchLabels", stringMap(&ProfileScope::matchLabels, checkLabelKey, checkLabelValue)},
  };
  return fields;
}

std::string checkLabelKey(const std::string& key) {
  return isQualifiedName(key) ? ""
                              : inQuotes(key) +
                                    " is not a valid label key ([prefix/]name, name: at most 63 "
                                    "letters, digits, '-', '_', '.')";
}

std::string checkLabelValue(const std::string& value) {
  return isLabelValue(value) ? ""
                             : inQuotes(value) +
                                   " is not a valid label value (at most 63 letters, digits, "
                                   "'-', '_', '.', starting and ending with a letter or digit)";
}

std::string checkAnyValue(const std::string&) {
  return "";
}

const Fields<Placement>& placementFields() {
  static const Fields<Placement> fields = {
      {"nodeSelector", stringMap(&Placement::nodeSelector, checkLabelKey, checkLabelValue)},
      {"requiredNodeAffinity",
       [](Reader& reader, const YAML::Node& value, const std::string& field, Placement& placement) {
         readNodeAffinity(reader, value, field, placement.requiredNodeAffinity);
       }},
      {"tolerations",
       [](Reader& reader, const YAML::Node& value, const std::string& field, Placement& placement) {
         readTolerations(reader, value, field, placement.tolerations);
       }},
  };
  return fields;
}

const Fields<Probes>& probesFields() {
  static const Fields<Probes> fields = {
      {"enabled", boolean(&Probes::enabled)},
      {"readiness",
       [](Reader& reader, const YAML::Node& value, const std::string& field, Probes& probes) {
         readProbe(reader, value, field, readinessFields(), probes.readiness);
       }},
      {"startup",
       [](Reader& reader, const YAML::Node& value, const std::string& field, Probes& probes) {
         readProbe(reader, value, field, startupFields(), probes.startup);
       }},
      {"startupBudgetSeconds", count(&Probes::startupBudgetSeconds, 1, kInt32Max)},
  };
  return fields;
}

const Fields<GpuPool>& gpuFields() {
  static const Fields<GpuPool> fields = {
      {"resourceName", text(&GpuPool::resourceName, checkPoolResource)},
      {"allowedResources", strings(&GpuPool::allowedResources, checkResourceName)},
      {"sharingAllowed", boolean(&GpuPool::sharingAllowed)},
      {"defaultCount", count(&GpuPool::defaultCount, 0, 1024)},
      {"gpusPerNode", count(&GpuPool::gpusPerNode, 1, 1024)},
      {"maxNodeGpus", count(&GpuPool::maxNodeGpus, 1, 1024)},
      {"allowedNamespaces",
       strings(&GpuPool::allowedNamespaces, checkNamespacePattern,
               "must not be empty (leave it out to allow GPUs in every namespace)")},
      {"deviceClasses",
       strings(&GpuPool::deviceClasses, checkDnsSubdomain,
               "must not be empty (leave it out for gpu.nvidia.com and mig.nvidia.com)")},
  };
  return fields;
}

// What the pool's fields say together; each error points at the field the
// pool section wrote (those it leaves out keep values that agree).
void checkGpuPool(Reader& reader, const YAML::Node& node, const std::string& field,
                  const GpuPool& gpu) {
  if (gpu.defaultCount > gpu.gpusPerNode) {
    reader.error(node["defaultCount"], field + ".defaultCount",
                 "is more than gpusPerNode (" + std::to_string(gpu.gpusPerNode) +
                     "): such a pod could never be scheduled");
  }
  // gpusPerNode is the pool's largest node, the ones the autoscaler adds
  // included: AIA006 would refuse what AIA016 lets through otherwise.
  if (gpu.maxNodeGpus && *gpu.maxNodeGpus > gpu.gpusPerNode) {
    reader.error(node["maxNodeGpus"], field + ".maxNodeGpus",
                 "is more than gpusPerNode (" + std::to_string(gpu.gpusPerNode) +
                     "), the GPUs of the pool's largest node; raise gpusPerNode to " +
                     std::to_string(*gpu.maxNodeGpus) + " too");
  }
  if (gpu.sharingAllowed) return;
  if (checkPoolResource(gpu.resourceName).empty() && isSharedGpuResource(gpu.resourceName)) {
    reader.error(node["resourceName"], field + ".resourceName",
                 inQuotes(gpu.resourceName) + " shares GPUs, but sharingAllowed is false");
  }
  // By the entries as written, so that each error points at its own line.
  const YAML::Node allowed = node["allowedResources"];
  std::set<std::string> seen;
  for (size_t i = 0; allowed.IsDefined() && allowed.IsSequence() && i < allowed.size(); ++i) {
    if (!allowed[i].IsScalar()) continue;
    const std::string name = allowed[i].Scalar();
    if (!seen.insert(name).second || !isResourceNamePattern(name)) continue;
    if (!isSharedGpuResource(name)) continue;
    reader.error(
        allowed[i], Reader::index(field + ".allowedResources", i),
        inQuotes(name) + " shares GPUs, but sharingAllowed is false (AIA013 would refuse it)");
  }
}

const Fields<Scheduling>& schedulingFields() {
  static const Fields<Scheduling> fields = {
      {"priorityClassName", text(&Scheduling::priorityClassName, checkDnsSubdomain)},
      {"allowedPriorityClasses",
       [](Reader& reader, const YAML::Node& value, const std::string& field,
          Scheduling& scheduling) {
         auto& allowed = scheduling.allowedPriorityClasses;
         allowed = reader.strings(value, field, checkDnsSubdomain);
         std::sort(allowed.begin(), allowed.end());
       }},
      {"schedulerName", text(&Scheduling::schedulerName, checkDnsSubdomain)},
      {"labels", stringMap(&Scheduling::labels, checkLabelKey, checkLabelValue)},
      {"annotations", stringMap(&Scheduling::annotations, checkLabelKey, checkAnyValue)},
      {"gangScheduling",
       [](Reader& reader, const YAML::Node& value, const std::string& field,
          Scheduling& scheduling) {
         const GangScheduling& gang = scheduling.gang;
         if (!readFields(reader, value, field, gangFields(), scheduling.gang)) return;
         if (gang.required && gang.schedulerName.empty() && gang.queueLabel.empty() &&
             !gang.native) {
           reader.error(value, field,
                        "required gang scheduling needs schedulerName, queueLabel or native to "
                        "recognise it");
         }
       }},
  };
  return fields;
}

const Fields<JobDefaults>& jobDefaultsFields() {
  static const Fields<JobDefaults> fields = {
      {"backoffLimit", count(&JobDefaults::backoffLimit, 0, kInt32Max)},
      {"activeDeadlineSeconds", count(&JobDefaults::activeDeadlineSeconds, 1, kInt64Max)},
      {"ttlSecondsAfterFinished", count(&JobDefaults::ttlSecondsAfterFinished, 0, kInt32Max)},
  };
  return fields;
}

const Fields<SharedMemory>& sharedMemoryFields() {
  static const Fields<SharedMemory> fields = {
      {"enabled", boolean(&SharedMemory::enabled)},
      {"minGpus", count(&SharedMemory::minGpus, 1, 1024)},
      {"sizeLimit", text(&SharedMemory::sizeLimit, checkPositiveQuantity)},
  };
  return fields;
}

const Fields<ClassificationPolicy>& classificationFields() {
  static const Fields<ClassificationPolicy> fields = {
      {"enforceInferred", boolean(&ClassificationPolicy::enforceInferred)},
  };
  return fields;
}

}  // namespace aiadmit
