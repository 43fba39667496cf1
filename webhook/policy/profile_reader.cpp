#include "webhook/policy/profile_reader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <limits>
#include <set>

#include "webhook/kube/quantity.h"
#include "webhook/kube/text.h"

namespace aiadmit {

namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// The strict reader and the name syntax are shared with WorkloadType documents.
using namespace yaml_fields;

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

int readInt(Reader& r, const YAML::Node& n, const std::string& f, int64_t minimum, int fallback) {
  return static_cast<int>(r.count(n, f, minimum, kInt32Max).value_or(fallback));
}

void readTolerations(Reader& r, const YAML::Node& node, const std::string& field,
                     std::vector<Toleration>& out) {
  if (!node.IsSequence()) {
    r.error(node, field, "must be a list of tolerations, got " + Reader::kindOf(node));
    return;
  }
  for (size_t i = 0; i < node.size(); ++i) {
    const YAML::Node item = node[i];
    const std::string path = Reader::index(field, i);
    const int before = r.errorCount();
    if (!r.mapping(item, path, {"key", "operator", "value", "effect", "tolerationSeconds"}))
      continue;
    Toleration t;
    r.optional(item, "key", path, [&](auto& n, auto& f) {
      t.key = r.string(n, f).value_or("");
      if (!t.key.empty() && !isQualifiedName(t.key)) r.error(n, f, checkLabelKey(t.key));
    });
    r.optional(item, "operator", path, [&](auto& n, auto& f) {
      t.op = r.string(n, f).value_or("Equal");
      oneOf(r, n, f, t.op, {"Equal", "Exists"});
    });
    r.optional(item, "value", path, [&](auto& n, auto& f) {
      t.value = r.string(n, f).value_or("");
      if (!isLabelValue(t.value)) r.error(n, f, checkLabelValue(t.value));
    });
    r.optional(item, "effect", path, [&](auto& n, auto& f) {
      t.effect = r.string(n, f).value_or("");
      oneOf(r, n, f, t.effect, {"", "NoSchedule", "PreferNoSchedule", "NoExecute"});
    });
    r.optional(item, "tolerationSeconds", path, [&](auto& n, auto& f) {
      t.tolerationSeconds = r.count(n, f, 0, kInt64Max);
      if (t.effect != "NoExecute") r.error(n, f, "only applies to effect NoExecute");
    });
    if (t.op == "Exists" && !t.value.empty()) {
      r.error(item["value"], path + ".value", "must be empty when operator is Exists");
    }
    if (t.key.empty() && t.op != "Exists") {
      r.error(item, path + ".key",
              "is required unless operator is Exists (which tolerates every taint)");
    }
    if (r.errorCount() != before) continue;
    const bool repeated = std::any_of(out.begin(), out.end(), [&](const Toleration& other) {
      return other.key == t.key && other.op == t.op && other.value == t.value &&
             other.effect == t.effect;
    });
    if (repeated) {
      r.error(item, path, "repeats an earlier toleration");
      continue;
    }
    out.push_back(std::move(t));
  }
}

bool isInteger(const std::string& text) {
  size_t i = !text.empty() && text[0] == '-' ? 1 : 0;
  if (i == text.size() || text.size() > 19) return false;
  return std::all_of(text.begin() + static_cast<std::ptrdiff_t>(i), text.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

void readNodeAffinity(Reader& r, const YAML::Node& node, const std::string& field,
                      std::vector<NodeSelectorRequirement>& out) {
  if (!node.IsSequence()) {
    r.error(node, field,
            "must be a list of node selector requirements, got " + Reader::kindOf(node));
    return;
  }
  for (size_t i = 0; i < node.size(); ++i) {
    const YAML::Node item = node[i];
    const std::string path = Reader::index(field, i);
    if (!r.mapping(item, path, {"key", "operator", "values"})) continue;
    NodeSelectorRequirement req;
    r.optional(item, "key", path, [&](auto& n, auto& f) {
      req.key = r.string(n, f).value_or("");
      if (!req.key.empty() && !isQualifiedName(req.key)) r.error(n, f, checkLabelKey(req.key));
    });
    r.optional(item, "operator", path, [&](auto& n, auto& f) {
      req.op = r.string(n, f).value_or("");
      oneOf(r, n, f, req.op, {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"});
    });
    const bool numeric = req.op == "Gt" || req.op == "Lt";
    r.optional(item, "values", path, [&](auto& n, auto& f) {
      req.values = r.strings(n, f, [&](const std::string& value) -> std::string {
        if (numeric) return isInteger(value) ? "" : inQuotes(value) + " is not an integer";
        return checkLabelValue(value);
      });
    });
    if (req.key.empty()) r.error(item, path + ".key", "is required");
    if (req.op.empty()) r.error(item, path + ".operator", "is required");
    const bool needsValues = req.op == "In" || req.op == "NotIn";
    if (needsValues && req.values.empty()) {
      r.error(item, path + ".values", "must not be empty for operator " + req.op);
    } else if (numeric && req.values.size() != 1) {
      r.error(item, path + ".values", "must hold exactly one integer for operator " + req.op);
    } else if ((req.op == "Exists" || req.op == "DoesNotExist") && !req.values.empty()) {
      r.error(item["values"], path + ".values", "must be empty for operator " + req.op);
    }
    out.push_back(std::move(req));
  }
}

void readProbe(Reader& r, const YAML::Node& node, const std::string& field, ProbeSpec& probe,
               bool startup) {
  if (!r.mapping(node, field,
                 {"httpGet", "tcpSocket", "periodSeconds", "timeoutSeconds", "failureThreshold"})) {
    return;
  }
  const bool http = node["httpGet"].IsDefined();
  const bool tcp = node["tcpSocket"].IsDefined();
  if (http && tcp) r.error(node, field, "set httpGet or tcpSocket, not both");
  auto readPort = [&](const YAML::Node& n, const std::string& f) {
    if (auto port = r.count(n, f, 1, 65535)) probe.port = static_cast<int>(*port);
  };
  r.optional(node, "httpGet", field, [&](auto& n, auto& f) {
    probe.handler = ProbeSpec::Handler::HttpGet;
    if (!r.mapping(n, f, {"path", "port", "scheme"})) return;
    r.optional(n, "path", f, [&](auto& pn, auto& pf) {
      probe.path = r.string(pn, pf).value_or("/");
      if (probe.path.empty() || probe.path[0] != '/') r.error(pn, pf, "must start with /");
    });
    r.optional(n, "port", f, readPort);
    r.optional(n, "scheme", f, [&](auto& sn, auto& sf) {
      probe.scheme = r.string(sn, sf).value_or("HTTP");
      oneOf(r, sn, sf, probe.scheme, {"HTTP", "HTTPS"});
    });
  });
  r.optional(node, "tcpSocket", field, [&](auto& n, auto& f) {
    probe.handler = ProbeSpec::Handler::TcpSocket;
    if (!r.mapping(n, f, {"port"})) return;
    r.optional(n, "port", f, readPort);
  });
  r.optional(node, "periodSeconds", field,
             [&](auto& n, auto& f) { probe.periodSeconds = readInt(r, n, f, 1, 10); });
  r.optional(node, "timeoutSeconds", field,
             [&](auto& n, auto& f) { probe.timeoutSeconds = readInt(r, n, f, 1, 1); });
  r.optional(node, "failureThreshold", field, [&](auto& n, auto& f) {
    if (startup) {
      r.error(n, f, "is derived from probes.startupBudgetSeconds; set that instead");
      return;
    }
    probe.failureThreshold = readInt(r, n, f, 1, 3);
  });
}

void readScope(Reader& r, const YAML::Node& node, const std::string& field, Profile& p) {
  if (!r.mapping(node, field, {"namespaces", "matchLabels"})) return;
  r.optional(node, "namespaces", field, [&](auto& n, auto& f) {
    p.scope.namespaces = r.strings(n, f, checkNamespacePattern);
    if (n.IsSequence() && n.size() == 0) {
      r.error(n, f, "must not be empty (leave it out to mean every namespace)");
    }
  });
  r.optional(node, "matchLabels", field, [&](auto& n, auto& f) {
    p.scope.matchLabels = r.stringMap(n, f, checkLabelKey, checkLabelValue);
  });
}

void readGpu(Reader& r, const YAML::Node& node, const std::string& field, Profile& p) {
  if (!r.mapping(node, field,
                 {"resourceName", "allowedResources", "sharingAllowed", "defaultCount",
                  "gpusPerNode", "maxNodeGpus", "allowedNamespaces", "deviceClasses"})) {
    return;
  }
  GpuPool& gpu = p.gpu;
  YAML::Node resourceNode, defaultCountNode, maxNodeGpusNode;
  bool resourceValid = true;
  r.optional(node, "resourceName", field, [&](auto& n, auto& f) {
    resourceNode = n;
    const int before = r.errorCount();
    gpu.resourceName = r.string(n, f).value_or(gpu.resourceName);
    if (isGlob(gpu.resourceName)) {
      r.error(n, f, "must name one resource, not a pattern (patterns go in allowedResources)");
    } else if (const std::string problem = checkResourceName(gpu.resourceName); !problem.empty()) {
      r.error(n, f, problem);
    }
    resourceValid = r.errorCount() == before;
  });
  r.optional(node, "allowedResources", field,
             [&](auto& n, auto& f) { gpu.allowedResources = r.strings(n, f, checkResourceName); });
  r.optional(node, "sharingAllowed", field,
             [&](auto& n, auto& f) { gpu.sharingAllowed = r.boolean(n, f).value_or(false); });
  r.optional(node, "gpusPerNode", field,
             [&](auto& n, auto& f) { gpu.gpusPerNode = r.count(n, f, 1, 1024).value_or(8); });
  r.optional(node, "maxNodeGpus", field, [&](auto& n, auto& f) {
    maxNodeGpusNode = n;
    gpu.maxNodeGpus = r.count(n, f, 1, 1024);
  });
  r.optional(node, "defaultCount", field, [&](auto& n, auto& f) {
    defaultCountNode = n;
    gpu.defaultCount = r.count(n, f, 0, 1024).value_or(0);
  });
  r.optional(node, "allowedNamespaces", field, [&](auto& n, auto& f) {
    gpu.allowedNamespaces = r.strings(n, f, checkNamespacePattern);
    if (n.IsSequence() && n.size() == 0) {
      r.error(n, f, "must not be empty (leave it out to allow GPUs in every namespace)");
    }
  });
  r.optional(node, "deviceClasses", field, [&](auto& n, auto& f) {
    gpu.deviceClasses = r.strings(n, f, checkDnsSubdomain);
    if (n.IsSequence() && n.size() == 0) {
      r.error(n, f, "must not be empty (leave it out for gpu.nvidia.com and mig.nvidia.com)");
    }
  });
  if (gpu.defaultCount > gpu.gpusPerNode) {
    r.error(defaultCountNode, field + ".defaultCount",
            "is more than gpusPerNode (" + std::to_string(gpu.gpusPerNode) +
                "): such a pod could never be scheduled");
  }
  // gpusPerNode is the pool's largest node, the ones the autoscaler adds
  // included: AIA006 would refuse what AIA016 lets through otherwise.
  if (gpu.maxNodeGpus && *gpu.maxNodeGpus > gpu.gpusPerNode) {
    r.error(maxNodeGpusNode, field + ".maxNodeGpus",
            "is more than gpusPerNode (" + std::to_string(gpu.gpusPerNode) +
                "), the GPUs of the pool's largest node; raise gpusPerNode to " +
                std::to_string(*gpu.maxNodeGpus) + " too");
  }
  if (!gpu.sharingAllowed) {
    if (resourceValid && isSharedGpuResource(gpu.resourceName)) {
      r.error(resourceNode, field + ".resourceName",
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
      r.error(
          allowed[i], Reader::index(field + ".allowedResources", i),
          inQuotes(name) + " shares GPUs, but sharingAllowed is false (AIA013 would refuse it)");
    }
  }
}

void readPlacement(Reader& r, const YAML::Node& node, const std::string& field, Profile& p) {
  if (!r.mapping(node, field, {"nodeSelector", "requiredNodeAffinity", "tolerations"})) return;
  r.optional(node, "nodeSelector", field, [&](auto& n, auto& f) {
    p.placement.nodeSelector = r.stringMap(n, f, checkLabelKey, checkLabelValue);
  });
  r.optional(node, "requiredNodeAffinity", field, [&](auto& n, auto& f) {
    readNodeAffinity(r, n, f, p.placement.requiredNodeAffinity);
  });
  r.optional(node, "tolerations", field,
             [&](auto& n, auto& f) { readTolerations(r, n, f, p.placement.tolerations); });
}

void readScheduling(Reader& r, const YAML::Node& node, const std::string& field, Profile& p) {
  if (!r.mapping(node, field,
                 {"priorityClassName", "allowedPriorityClasses", "schedulerName", "labels",
                  "annotations", "gangScheduling"})) {
    return;
  }
  Scheduling& s = p.scheduling;
  r.optional(node, "priorityClassName", field, [&](auto& n, auto& f) {
    s.priorityClassName = r.string(n, f).value_or("");
    if (const std::string problem = checkDnsSubdomain(s.priorityClassName); !problem.empty()) {
      r.error(n, f, problem);
    }
  });
  r.optional(node, "allowedPriorityClasses", field, [&](auto& n, auto& f) {
    s.allowedPriorityClasses = r.strings(n, f, checkDnsSubdomain);
    std::sort(s.allowedPriorityClasses.begin(), s.allowedPriorityClasses.end());
  });
  r.optional(node, "schedulerName", field, [&](auto& n, auto& f) {
    s.schedulerName = r.string(n, f).value_or("");
    if (const std::string problem = checkDnsSubdomain(s.schedulerName); !problem.empty()) {
      r.error(n, f, problem);
    }
  });
  r.optional(node, "labels", field, [&](auto& n, auto& f) {
    s.labels = r.stringMap(n, f, checkLabelKey, checkLabelValue);
  });
  r.optional(node, "annotations", field, [&](auto& n, auto& f) {
    s.annotations = r.stringMap(n, f, checkLabelKey, checkAnyValue);
  });
  r.optional(node, "gangScheduling", field, [&](auto& n, auto& f) {
    if (!r.mapping(n, f, {"required", "schedulerName", "queueLabel"})) return;
    r.optional(n, "required", f,
               [&](auto& v, auto& vf) { s.gang.required = r.boolean(v, vf).value_or(false); });
    r.optional(n, "schedulerName", f, [&](auto& v, auto& vf) {
      s.gang.schedulerName = r.string(v, vf).value_or("");
      if (const std::string problem = checkDnsSubdomain(s.gang.schedulerName); !problem.empty()) {
        r.error(v, vf, problem);
      }
    });
    r.optional(n, "queueLabel", f, [&](auto& v, auto& vf) {
      s.gang.queueLabel = r.string(v, vf).value_or("");
      if (const std::string problem = checkLabelKey(s.gang.queueLabel); !problem.empty()) {
        r.error(v, vf, problem);
      }
    });
    if (s.gang.required && s.gang.schedulerName.empty() && s.gang.queueLabel.empty()) {
      r.error(n, f, "required gang scheduling needs schedulerName or queueLabel to recognise it");
    }
  });
}

void readProbes(Reader& r, const YAML::Node& node, const std::string& field, Profile& p) {
  if (!r.mapping(node, field, {"enabled", "readiness", "startup", "startupBudgetSeconds"})) return;
  p.probes.enabled = true;
  r.optional(node, "enabled", field,
             [&](auto& n, auto& f) { p.probes.enabled = r.boolean(n, f).value_or(true); });
  r.optional(node, "readiness", field,
             [&](auto& n, auto& f) { readProbe(r, n, f, p.probes.readiness, false); });
  r.optional(node, "startup", field,
             [&](auto& n, auto& f) { readProbe(r, n, f, p.probes.startup, true); });
  r.optional(node, "startupBudgetSeconds", field,
             [&](auto& n, auto& f) { p.probes.startupBudgetSeconds = readInt(r, n, f, 1, 600); });
}

void readJobDefaults(Reader& r, const YAML::Node& node, const std::string& field, Profile& p) {
  if (!r.mapping(node, field,
                 {"backoffLimit", "activeDeadlineSeconds", "ttlSecondsAfterFinished"})) {
    return;
  }
  JobDefaults& j = p.jobDefaults;
  r.optional(node, "backoffLimit", field,
             [&](auto& n, auto& f) { j.backoffLimit = r.count(n, f, 0, kInt32Max); });
  r.optional(node, "activeDeadlineSeconds", field,
             [&](auto& n, auto& f) { j.activeDeadlineSeconds = r.count(n, f, 1, kInt64Max); });
  r.optional(node, "ttlSecondsAfterFinished", field,
             [&](auto& n, auto& f) { j.ttlSecondsAfterFinished = r.count(n, f, 0, kInt32Max); });
}

void readSharedMemory(Reader& r, const YAML::Node& node, const std::string& field, Profile& p) {
  if (!r.mapping(node, field, {"enabled", "minGpus", "sizeLimit"})) return;
  SharedMemory& shm = p.sharedMemory;
  shm.enabled = true;
  r.optional(node, "enabled", field,
             [&](auto& n, auto& f) { shm.enabled = r.boolean(n, f).value_or(true); });
  r.optional(node, "minGpus", field,
             [&](auto& n, auto& f) { shm.minGpus = r.count(n, f, 1, 1024).value_or(2); });
  r.optional(node, "sizeLimit", field, [&](auto& n, auto& f) {
    shm.sizeLimit = r.string(n, f).value_or("");
    const auto quantity = Quantity::parse(shm.sizeLimit);
    if (!quantity || quantity->isNegative() || quantity->isZero()) {
      r.error(n, f, inQuotes(shm.sizeLimit) + " is not a positive quantity (such as 16Gi)");
    }
  });
}

// The switches the profile turns off, over those off by default: each key
// set false turns its switch off, each set true turns it on.
void readMutations(Reader& r, const YAML::Node& node, const std::string& field,
                   std::span<const MutationSwitch> switches, MutationSwitches& out) {
  std::vector<std::string_view> keys;
  for (const MutationSwitch& declared : switches) keys.push_back(declared.key);
  if (!r.mapping(node, field, keys)) return;
  for (const MutationSwitch& declared : switches) {
    r.optional(node, declared.key, field, [&](const YAML::Node& value, const std::string& path) {
      if (r.boolean(value, path).value_or(declared.onByDefault)) {
        out.off.erase(std::string(declared.key));
      } else {
        out.off.emplace(declared.key);
      }
    });
  }
}

void readRules(Reader& r, const YAML::Node& node, const std::string& field, Profile& p) {
  if (!node.IsMap()) {
    r.error(node, field, "must be a mapping of rule IDs to deny, warn, audit or off");
    return;
  }
  std::set<std::string> seen;
  for (const auto& entry : node) {
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "";
    const std::string path = Reader::join(field, key);
    const auto rule = RuleId::parse(key);
    if (!rule) {
      r.error(entry.first, path,
              "unknown rule (rules are " + RuleId{kFirstRule}.name() + " to " +
                  RuleId{kLastRule}.name() + ")");
      continue;
    }
    if (!seen.insert(key).second) {
      r.error(entry.first, path, "is set twice");
      continue;
    }
    const auto text = r.string(entry.second, path);
    if (!text) continue;
    if (auto action = parseAction(*text)) {
      p.rules.set(*rule, *action);
    } else {
      oneOf(r, entry.second, path, *text, {"deny", "warn", "audit", "off"});
    }
  }
}

void readSpec(Reader& r, const YAML::Node& spec, std::span<const MutationSwitch> switches,
              Profile& p) {
  const std::string field = "spec";
  if (!r.mapping(spec, field,
                 {"class", "scope", "gpu", "placement", "scheduling", "probes", "jobDefaults",
                  "sharedMemory", "mutations", "rules"})) {
    return;
  }
  p.scopeLocation = Reader::locationOf(spec);
  for (const auto& entry : spec) {
    if (entry.first.IsScalar() && entry.first.Scalar() == "scope") {
      p.scopeLocation = Reader::locationOf(entry.first);
    }
  }
  const YAML::Node classNode = spec["class"];
  if (!classNode.IsDefined() || classNode.IsNull()) {
    r.error(spec, "spec.class", "is required (training, batch or realtime)");
  } else if (auto text = r.string(classNode, "spec.class")) {
    if (auto parsed = parseClass(*text)) {
      p.workloadClass = *parsed;
    } else {
      oneOf(r, classNode, "spec.class", *text, {"training", "batch", "realtime"});
    }
  }

  r.optional(spec, "scope", field, [&](auto& n, auto& f) { readScope(r, n, f, p); });
  r.optional(spec, "gpu", field, [&](auto& n, auto& f) { readGpu(r, n, f, p); });
  r.optional(spec, "placement", field, [&](auto& n, auto& f) { readPlacement(r, n, f, p); });
  r.optional(spec, "scheduling", field, [&](auto& n, auto& f) { readScheduling(r, n, f, p); });
  r.optional(spec, "probes", field, [&](auto& n, auto& f) { readProbes(r, n, f, p); });
  r.optional(spec, "jobDefaults", field, [&](auto& n, auto& f) { readJobDefaults(r, n, f, p); });
  r.optional(spec, "sharedMemory", field, [&](auto& n, auto& f) { readSharedMemory(r, n, f, p); });
  for (const MutationSwitch& declared : switches) {
    if (!declared.onByDefault) p.mutations.off.emplace(declared.key);
  }
  r.optional(spec, "mutations", field,
             [&](auto& n, auto& f) { readMutations(r, n, f, switches, p.mutations); });
  r.optional(spec, "rules", field, [&](auto& n, auto& f) { readRules(r, n, f, p); });

  // Sections that can never take effect for the class are mistakes.
  if (p.probes.enabled && p.workloadClass != WorkloadClass::Realtime &&
      p.workloadClass != WorkloadClass::None) {
    r.error(spec["probes"], "spec.probes", "only applies to class realtime");
  }
  const bool anyJobDefault = p.jobDefaults.backoffLimit || p.jobDefaults.activeDeadlineSeconds ||
                             p.jobDefaults.ttlSecondsAfterFinished;
  if (anyJobDefault && p.workloadClass == WorkloadClass::Realtime) {
    r.error(spec["jobDefaults"], "spec.jobDefaults",
            "only applies to classes training and batch (realtime work is not a Job)");
  }

  // The pool's own resource is always allowed; one sorted list keeps lookups simple.
  auto& allowed = p.gpu.allowedResources;
  if (std::find(allowed.begin(), allowed.end(), p.gpu.resourceName) == allowed.end()) {
    allowed.push_back(p.gpu.resourceName);
  }
  std::sort(allowed.begin(), allowed.end());
}

}  // namespace

void readDocumentHeader(Reader& r, const YAML::Node& doc, std::string_view noun,
                        DocumentName& out) {
  const YAML::Node apiVersion = doc["apiVersion"];
  if (!apiVersion.IsDefined() || apiVersion.IsNull()) {
    r.error(doc, "apiVersion", "is required (aiadmit.dev/v1)");
  } else if (auto text = r.string(apiVersion, "apiVersion"); text && *text != "aiadmit.dev/v1") {
    r.error(apiVersion, "apiVersion", inQuotes(*text) + " is not aiadmit.dev/v1");
  }
  const YAML::Node metadata = doc["metadata"];
  if (!metadata.IsDefined() || metadata.IsNull()) {
    r.error(doc, "metadata.name", "is required");
    return;
  }
  if (!r.mapping(metadata, "metadata", {"name", "annotations", "labels"})) return;
  const YAML::Node name = metadata["name"];
  if (!name.IsDefined() || name.IsNull()) {
    r.error(metadata, "metadata.name", "is required");
  } else if (auto text = r.string(name, "metadata.name")) {
    out.name = *text;
    out.location = Reader::locationOf(name);
    if (!isNamespaceName(out.name)) {
      r.error(name, "metadata.name",
              inQuotes(out.name) + " is not a valid " + std::string(noun) +
                  " (lowercase letters, digits and '-', at most 63, starting and ending with a "
                  "letter or digit)");
    }
  }
  r.optional(metadata, "labels", "metadata",
             [&](auto& n, auto& f) { r.stringMap(n, f, checkLabelKey, checkLabelValue); });
  r.optional(metadata, "annotations", "metadata",
             [&](auto& n, auto& f) { r.stringMap(n, f, checkLabelKey, checkAnyValue); });
}

void readProfileDocument(Reader& r, const YAML::Node& doc, const std::string& file,
                         std::span<const MutationSwitch> switches, std::vector<Profile>& out) {
  const int before = r.errorCount();
  if (!r.mapping(doc, "", {"apiVersion", "kind", "metadata", "spec"})) return;
  const YAML::Node kind = doc["kind"];
  if (!kind.IsDefined() || kind.IsNull()) {
    r.error(doc, "kind", "is required (Profile)");
  } else if (auto text = r.string(kind, "kind"); text && *text != "Profile") {
    r.error(kind, "kind", inQuotes(*text) + " is not Profile");
  }
  Profile profile;
  profile.sourceFile = file;
  profile.sourceLine = Reader::locationOf(doc).line;
  DocumentName name;
  readDocumentHeader(r, doc, "profile name", name);
  profile.name = std::move(name.name);
  profile.nameLocation = name.location;
  const YAML::Node spec = doc["spec"];
  if (!spec.IsDefined() || spec.IsNull()) {
    r.error(doc, "spec", "is required");
  } else {
    readSpec(r, spec, switches, profile);
  }
  if (r.errorCount() == before) out.push_back(std::move(profile));
}

}  // namespace aiadmit
