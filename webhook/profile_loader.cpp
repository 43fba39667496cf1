#include "webhook/profile_loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <set>
#include <sstream>

namespace aiadmit {

std::string ProfileError::format() const {
  std::string out = file;
  if (line > 0) {
    out.push_back(':');
    out += std::to_string(line);
    out.push_back(':');
    out += std::to_string(column);
  }
  out += ": ";
  if (!field.empty()) out += field + ": ";
  out += message;
  return out;
}

namespace {

// Walks one YAML document, keeping the field path and collecting errors, so a
// profile author sees every mistake of a file at once.
class Reader {
 public:
  Reader(const std::string& file, std::vector<ProfileError>& errors)
      : file_(file), errors_(errors) {}

  void error(const YAML::Node& node, const std::string& field, const std::string& message) {
    ProfileError e;
    e.file = file_;
    if (node.IsDefined()) {
      const YAML::Mark mark = node.Mark();
      if (mark.line >= 0) {
        e.line = mark.line + 1;
        e.column = mark.column + 1;
      }
    }
    e.field = field;
    e.message = message;
    errors_.push_back(std::move(e));
    ++count_;
  }
  int errorCount() const { return count_; }

  // A mapping whose keys must all be in `allowed`.
  bool mapping(const YAML::Node& node, const std::string& field,
               std::initializer_list<std::string_view> allowed) {
    if (!node.IsMap()) {
      error(node, field, "must be a mapping");
      return false;
    }
    for (const auto& entry : node) {
      const std::string key = entry.first.Scalar();
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        std::string list;
        for (std::string_view name : allowed) list += (list.empty() ? "" : ", ") + std::string(name);
        error(entry.first, join(field, key), "unknown field (known fields: " + list + ")");
      }
    }
    return true;
  }

  static std::string join(const std::string& field, const std::string& key) {
    return field.empty() ? key : field + "." + key;
  }
  static std::string index(const std::string& field, size_t i) {
    return field + "[" + std::to_string(i) + "]";
  }

  std::optional<std::string> string(const YAML::Node& node, const std::string& field) {
    if (!node.IsScalar()) {
      error(node, field, "must be a string");
      return std::nullopt;
    }
    return node.Scalar();
  }

  std::optional<bool> boolean(const YAML::Node& node, const std::string& field) {
    bool value = false;
    if (!node.IsScalar() || !YAML::convert<bool>::decode(node, value)) {
      error(node, field, "must be true or false");
      return std::nullopt;
    }
    return value;
  }

  std::optional<int64_t> count(const YAML::Node& node, const std::string& field,
                               int64_t minimum = 0) {
    if (!node.IsScalar()) {
      error(node, field, "must be a whole number");
      return std::nullopt;
    }
    const std::string& text = node.Scalar();
    int64_t value = 0;
    size_t i = text.size() > 0 && text[0] == '-' ? 1 : 0;
    if (i == text.size()) {
      error(node, field, "must be a whole number, got \"" + text + "\"");
      return std::nullopt;
    }
    for (; i < text.size(); ++i) {
      if (text[i] < '0' || text[i] > '9' || value > 100000000000000LL) {
        error(node, field, "must be a whole number, got \"" + text + "\"");
        return std::nullopt;
      }
      value = value * 10 + (text[i] - '0');
    }
    if (text[0] == '-') value = -value;
    if (value < minimum) {
      error(node, field, "must be at least " + std::to_string(minimum) + ", got " + text);
      return std::nullopt;
    }
    return value;
  }

  std::vector<std::string> strings(const YAML::Node& node, const std::string& field) {
    std::vector<std::string> out;
    if (!node.IsSequence()) {
      error(node, field, "must be a list of strings");
      return out;
    }
    for (size_t i = 0; i < node.size(); ++i) {
      if (auto value = string(node[i], index(field, i))) out.push_back(*value);
    }
    return out;
  }

  std::map<std::string, std::string> stringMap(const YAML::Node& node, const std::string& field) {
    std::map<std::string, std::string> out;
    if (!node.IsMap()) {
      error(node, field, "must be a mapping of strings");
      return out;
    }
    for (const auto& entry : node) {
      const std::string key = entry.first.Scalar();
      if (auto value = string(entry.second, join(field, key))) out[key] = *value;
    }
    return out;
  }

  template <typename Fn>
  void optional(const YAML::Node& parent, std::string_view key, const std::string& field, Fn fn) {
    const YAML::Node node = parent[std::string(key)];
    if (!node.IsDefined() || node.IsNull()) return;
    const std::string path = join(field, std::string(key));
    fn(node, path);
  }

 private:
  const std::string& file_;
  std::vector<ProfileError>& errors_;
  int count_ = 0;
};

bool oneOf(Reader& r, const YAML::Node& node, const std::string& field, const std::string& value,
           std::initializer_list<std::string_view> allowed) {
  if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return true;
  std::string list;
  for (std::string_view option : allowed) {
    if (option.empty()) continue;
    list += (list.empty() ? "" : ", ") + std::string(option);
  }
  r.error(node, field, "\"" + value + "\" is not one of " + list);
  return false;
}

void readTolerations(Reader& r, const YAML::Node& node, const std::string& field,
                     std::vector<Toleration>& out) {
  if (!node.IsSequence()) {
    r.error(node, field, "must be a list of tolerations");
    return;
  }
  for (size_t i = 0; i < node.size(); ++i) {
    const YAML::Node item = node[i];
    const std::string path = Reader::index(field, i);
    if (!r.mapping(item, path, {"key", "operator", "value", "effect", "tolerationSeconds"})) continue;
    Toleration t;
    r.optional(item, "key", path, [&](auto& n, auto& f) { t.key = r.string(n, f).value_or(""); });
    r.optional(item, "operator", path, [&](auto& n, auto& f) {
      t.op = r.string(n, f).value_or("Equal");
      oneOf(r, n, f, t.op, {"Equal", "Exists"});
    });
    r.optional(item, "value", path, [&](auto& n, auto& f) { t.value = r.string(n, f).value_or(""); });
    r.optional(item, "effect", path, [&](auto& n, auto& f) {
      t.effect = r.string(n, f).value_or("");
      oneOf(r, n, f, t.effect, {"", "NoSchedule", "PreferNoSchedule", "NoExecute"});
    });
    r.optional(item, "tolerationSeconds", path, [&](auto& n, auto& f) {
      t.tolerationSeconds = r.count(n, f);
      if (t.effect != "NoExecute") {
        r.error(n, f, "only applies to effect NoExecute");
      }
    });
    if (t.op == "Exists" && !t.value.empty()) {
      r.error(item, path + ".value", "must be empty when operator is Exists");
    }
    if (t.key.empty() && t.op != "Exists") {
      r.error(item, path + ".key", "an empty key needs operator Exists");
    }
    out.push_back(std::move(t));
  }
}

void readNodeAffinity(Reader& r, const YAML::Node& node, const std::string& field,
                      std::vector<NodeSelectorRequirement>& out) {
  if (!node.IsSequence()) {
    r.error(node, field, "must be a list of node selector requirements");
    return;
  }
  for (size_t i = 0; i < node.size(); ++i) {
    const YAML::Node item = node[i];
    const std::string path = Reader::index(field, i);
    if (!r.mapping(item, path, {"key", "operator", "values"})) continue;
    NodeSelectorRequirement req;
    r.optional(item, "key", path, [&](auto& n, auto& f) { req.key = r.string(n, f).value_or(""); });
    r.optional(item, "operator", path, [&](auto& n, auto& f) {
      req.op = r.string(n, f).value_or("");
      oneOf(r, n, f, req.op, {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"});
    });
    r.optional(item, "values", path, [&](auto& n, auto& f) { req.values = r.strings(n, f); });
    if (req.key.empty()) r.error(item, path + ".key", "is required");
    if (req.op.empty()) r.error(item, path + ".operator", "is required");
    const bool needsValues = req.op == "In" || req.op == "NotIn" || req.op == "Gt" || req.op == "Lt";
    if (needsValues && req.values.empty()) {
      r.error(item, path + ".values", "must not be empty for operator " + req.op);
    }
    if (!needsValues && !req.values.empty()) {
      r.error(item, path + ".values", "must be empty for operator " + req.op);
    }
    out.push_back(std::move(req));
  }
}

void readProbe(Reader& r, const YAML::Node& node, const std::string& field, ProbeSpec& probe) {
  if (!r.mapping(node, field,
                 {"httpGet", "tcpSocket", "periodSeconds", "timeoutSeconds", "failureThreshold"})) {
    return;
  }
  const bool http = node["httpGet"].IsDefined();
  const bool tcp = node["tcpSocket"].IsDefined();
  if (http && tcp) r.error(node, field, "set httpGet or tcpSocket, not both");
  auto readPort = [&](const YAML::Node& n, const std::string& f) {
    if (auto port = r.count(n, f, 1)) {
      if (*port > 65535) {
        r.error(n, f, "must be a port number (1-65535)");
      } else {
        probe.port = static_cast<int>(*port);
      }
    }
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
             [&](auto& n, auto& f) { probe.periodSeconds = static_cast<int>(r.count(n, f, 1).value_or(10)); });
  r.optional(node, "timeoutSeconds", field,
             [&](auto& n, auto& f) { probe.timeoutSeconds = static_cast<int>(r.count(n, f, 1).value_or(1)); });
  r.optional(node, "failureThreshold", field, [&](auto& n, auto& f) {
    probe.failureThreshold = static_cast<int>(r.count(n, f, 1).value_or(3));
  });
}

void readSpec(Reader& r, const YAML::Node& spec, Profile& p) {
  const std::string field = "spec";
  if (!r.mapping(spec, field,
                 {"class", "scope", "gpu", "placement", "scheduling", "probes", "jobDefaults",
                  "sharedMemory", "mutations", "rules"})) {
    return;
  }
  const YAML::Node classNode = spec["class"];
  if (!classNode.IsDefined()) {
    r.error(spec, "spec.class", "is required (training, batch or realtime)");
  } else if (auto text = r.string(classNode, "spec.class")) {
    if (auto parsed = parseClass(*text)) {
      p.workloadClass = *parsed;
    } else {
      oneOf(r, classNode, "spec.class", *text, {"training", "batch", "realtime"});
    }
  }

  r.optional(spec, "scope", field, [&](auto& n, auto& f) {
    if (!r.mapping(n, f, {"namespaces", "matchLabels"})) return;
    r.optional(n, "namespaces", f, [&](auto& v, auto& vf) { p.scope.namespaces = r.strings(v, vf); });
    r.optional(n, "matchLabels", f, [&](auto& v, auto& vf) { p.scope.matchLabels = r.stringMap(v, vf); });
  });

  r.optional(spec, "gpu", field, [&](auto& n, auto& f) {
    if (!r.mapping(n, f, {"resourceName", "allowedResources", "sharingAllowed", "defaultCount",
                          "gpusPerNode", "allowedNamespaces"})) {
      return;
    }
    r.optional(n, "resourceName", f, [&](auto& v, auto& vf) {
      p.gpu.resourceName = r.string(v, vf).value_or(p.gpu.resourceName);
      if (p.gpu.resourceName.find('/') == std::string::npos) {
        r.error(v, vf, "must be an extended resource name with a domain (nvidia.com/gpu)");
      }
    });
    r.optional(n, "allowedResources", f, [&](auto& v, auto& vf) { p.gpu.allowedResources = r.strings(v, vf); });
    r.optional(n, "sharingAllowed", f, [&](auto& v, auto& vf) { p.gpu.sharingAllowed = r.boolean(v, vf).value_or(false); });
    r.optional(n, "defaultCount", f, [&](auto& v, auto& vf) { p.gpu.defaultCount = r.count(v, vf).value_or(0); });
    r.optional(n, "gpusPerNode", f, [&](auto& v, auto& vf) { p.gpu.gpusPerNode = r.count(v, vf, 1).value_or(8); });
    r.optional(n, "allowedNamespaces", f, [&](auto& v, auto& vf) { p.gpu.allowedNamespaces = r.strings(v, vf); });
  });
  if (p.gpu.defaultCount > p.gpu.gpusPerNode) {
    r.error(spec["gpu"], "spec.gpu.defaultCount",
            "is more than gpusPerNode (" + std::to_string(p.gpu.gpusPerNode) + ")");
  }

  r.optional(spec, "placement", field, [&](auto& n, auto& f) {
    if (!r.mapping(n, f, {"nodeSelector", "requiredNodeAffinity", "tolerations"})) return;
    r.optional(n, "nodeSelector", f, [&](auto& v, auto& vf) { p.placement.nodeSelector = r.stringMap(v, vf); });
    r.optional(n, "requiredNodeAffinity", f,
               [&](auto& v, auto& vf) { readNodeAffinity(r, v, vf, p.placement.requiredNodeAffinity); });
    r.optional(n, "tolerations", f,
               [&](auto& v, auto& vf) { readTolerations(r, v, vf, p.placement.tolerations); });
  });

  r.optional(spec, "scheduling", field, [&](auto& n, auto& f) {
    if (!r.mapping(n, f, {"priorityClassName", "allowedPriorityClasses", "schedulerName", "labels",
                          "annotations", "gangScheduling"})) {
      return;
    }
    Scheduling& s = p.scheduling;
    r.optional(n, "priorityClassName", f, [&](auto& v, auto& vf) { s.priorityClassName = r.string(v, vf).value_or(""); });
    r.optional(n, "allowedPriorityClasses", f, [&](auto& v, auto& vf) { s.allowedPriorityClasses = r.strings(v, vf); });
    r.optional(n, "schedulerName", f, [&](auto& v, auto& vf) { s.schedulerName = r.string(v, vf).value_or(""); });
    r.optional(n, "labels", f, [&](auto& v, auto& vf) { s.labels = r.stringMap(v, vf); });
    r.optional(n, "annotations", f, [&](auto& v, auto& vf) { s.annotations = r.stringMap(v, vf); });
    r.optional(n, "gangScheduling", f, [&](auto& v, auto& vf) {
      if (!r.mapping(v, vf, {"required", "schedulerName", "queueLabel"})) return;
      r.optional(v, "required", vf, [&](auto& g, auto& gf) { s.gang.required = r.boolean(g, gf).value_or(false); });
      r.optional(v, "schedulerName", vf, [&](auto& g, auto& gf) { s.gang.schedulerName = r.string(g, gf).value_or(""); });
      r.optional(v, "queueLabel", vf, [&](auto& g, auto& gf) { s.gang.queueLabel = r.string(g, gf).value_or(""); });
      if (s.gang.required && s.gang.schedulerName.empty() && s.gang.queueLabel.empty()) {
        r.error(v, vf, "required gang scheduling needs schedulerName or queueLabel to recognise it");
      }
    });
  });

  r.optional(spec, "probes", field, [&](auto& n, auto& f) {
    if (!r.mapping(n, f, {"enabled", "readiness", "startup", "startupBudgetSeconds"})) return;
    p.probes.enabled = true;
    r.optional(n, "enabled", f, [&](auto& v, auto& vf) { p.probes.enabled = r.boolean(v, vf).value_or(true); });
    r.optional(n, "readiness", f, [&](auto& v, auto& vf) { readProbe(r, v, vf, p.probes.readiness); });
    r.optional(n, "startup", f, [&](auto& v, auto& vf) { readProbe(r, v, vf, p.probes.startup); });
    r.optional(n, "startupBudgetSeconds", f, [&](auto& v, auto& vf) {
      p.probes.startupBudgetSeconds = static_cast<int>(r.count(v, vf, 1).value_or(600));
    });
  });
  if (p.probes.enabled && p.workloadClass != WorkloadClass::Realtime &&
      p.workloadClass != WorkloadClass::None) {
    r.error(spec["probes"], "spec.probes", "only applies to class realtime");
  }

  r.optional(spec, "jobDefaults", field, [&](auto& n, auto& f) {
    if (!r.mapping(n, f, {"backoffLimit", "activeDeadlineSeconds", "ttlSecondsAfterFinished"})) return;
    r.optional(n, "backoffLimit", f, [&](auto& v, auto& vf) { p.jobDefaults.backoffLimit = r.count(v, vf); });
    r.optional(n, "activeDeadlineSeconds", f,
               [&](auto& v, auto& vf) { p.jobDefaults.activeDeadlineSeconds = r.count(v, vf, 1); });
    r.optional(n, "ttlSecondsAfterFinished", f,
               [&](auto& v, auto& vf) { p.jobDefaults.ttlSecondsAfterFinished = r.count(v, vf); });
  });

  r.optional(spec, "sharedMemory", field, [&](auto& n, auto& f) {
    if (!r.mapping(n, f, {"enabled", "minGpus", "sizeLimit"})) return;
    p.sharedMemory.enabled = true;
    r.optional(n, "enabled", f, [&](auto& v, auto& vf) { p.sharedMemory.enabled = r.boolean(v, vf).value_or(true); });
    r.optional(n, "minGpus", f, [&](auto& v, auto& vf) { p.sharedMemory.minGpus = r.count(v, vf, 1).value_or(2); });
    r.optional(n, "sizeLimit", f, [&](auto& v, auto& vf) { p.sharedMemory.sizeLimit = r.string(v, vf).value_or(""); });
  });

  r.optional(spec, "mutations", field, [&](auto& n, auto& f) {
    if (!r.mapping(n, f, {"gpuLimits", "tolerations", "placement", "scheduling", "probes",
                          "jobDefaults", "sharedMemory", "stamp"})) {
      return;
    }
    MutationSwitches& m = p.mutations;
    auto flag = [&](std::string_view key, bool& target) {
      r.optional(n, key, f, [&](auto& v, auto& vf) { target = r.boolean(v, vf).value_or(true); });
    };
    flag("gpuLimits", m.gpuLimits);
    flag("tolerations", m.tolerations);
    flag("placement", m.placement);
    flag("scheduling", m.scheduling);
    flag("probes", m.probes);
    flag("jobDefaults", m.jobDefaults);
    flag("sharedMemory", m.sharedMemory);
    flag("stamp", m.stamp);
  });

  r.optional(spec, "rules", field, [&](auto& n, auto& f) {
    if (!n.IsMap()) {
      r.error(n, f, "must be a mapping of rule IDs to deny, warn or off");
      return;
    }
    for (const auto& entry : n) {
      const std::string key = entry.first.Scalar();
      const auto rule = RuleId::parse(key);
      if (!rule) {
        r.error(entry.first, Reader::join(f, key), "unknown rule (rules are AIA001 to AIA015)");
        continue;
      }
      const auto text = r.string(entry.second, Reader::join(f, key));
      if (!text) continue;
      if (auto action = parseAction(*text)) {
        p.rules.set(*rule, *action);
      } else {
        oneOf(r, entry.second, Reader::join(f, key), *text, {"deny", "warn", "off"});
      }
    }
  });
}

bool isValidName(const std::string& name) {
  if (name.empty() || name.size() > 63) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return name.front() != '-' && name.back() != '-';
}

void readDocument(Reader& r, const YAML::Node& doc, const std::string& file,
                  std::vector<Profile>& out) {
  if (!r.mapping(doc, "", {"apiVersion", "kind", "metadata", "spec"})) return;
  const int before = r.errorCount();
  const YAML::Node apiVersion = doc["apiVersion"];
  if (!apiVersion.IsDefined()) {
    r.error(doc, "apiVersion", "is required (aiadmit.dev/v1)");
  } else if (apiVersion.Scalar() != "aiadmit.dev/v1") {
    r.error(apiVersion, "apiVersion", "\"" + apiVersion.Scalar() + "\" is not aiadmit.dev/v1");
  }
  const YAML::Node kind = doc["kind"];
  if (!kind.IsDefined()) {
    r.error(doc, "kind", "is required (Profile)");
  } else if (kind.Scalar() != "Profile") {
    r.error(kind, "kind", "\"" + kind.Scalar() + "\" is not Profile");
  }
  Profile profile;
  profile.sourceFile = file;
  profile.sourceLine = doc.Mark().line + 1;
  const YAML::Node metadata = doc["metadata"];
  if (!metadata.IsDefined()) {
    r.error(doc, "metadata.name", "is required");
  } else if (r.mapping(metadata, "metadata", {"name", "annotations", "labels"})) {
    const YAML::Node name = metadata["name"];
    if (!name.IsDefined()) {
      r.error(metadata, "metadata.name", "is required");
    } else if (auto text = r.string(name, "metadata.name")) {
      profile.name = *text;
      if (!isValidName(profile.name)) {
        r.error(name, "metadata.name",
                "\"" + profile.name + "\" must be a DNS label (a-z, 0-9, '-', at most 63)");
      }
    }
  }
  const YAML::Node spec = doc["spec"];
  if (!spec.IsDefined()) {
    r.error(doc, "spec", "is required");
  } else {
    readSpec(r, spec, profile);
  }
  if (r.errorCount() == before) out.push_back(std::move(profile));
}

bool couldOverlap(const ProfileScope& a, const ProfileScope& b) {
  // Scopes with different label values never select the same object.
  for (const auto& [key, value] : a.matchLabels) {
    auto it = b.matchLabels.find(key);
    if (it != b.matchLabels.end() && it->second != value) return false;
  }
  if (a.namespaces.empty() || b.namespaces.empty()) return true;
  for (const std::string& x : a.namespaces) {
    for (const std::string& y : b.namespaces) {
      if (globMatch(x, y) || globMatch(y, x)) return true;
      const bool xGlob = x.find_first_of("*?") != std::string::npos;
      const bool yGlob = y.find_first_of("*?") != std::string::npos;
      if (xGlob && yGlob) return true;  // two globs: assume some namespace matches both
    }
  }
  return false;
}

int scopeRank(const ProfileScope& scope) {
  int namespaceRank = 0;
  for (const std::string& pattern : scope.namespaces) {
    namespaceRank = std::max(namespaceRank, pattern.find_first_of("*?") == std::string::npos ? 2 : 1);
  }
  return namespaceRank * 1000 + static_cast<int>(scope.matchLabels.size());
}

}  // namespace

void parseProfileDocuments(std::string_view text, const std::string& fileName,
                           std::vector<Profile>& out, std::vector<ProfileError>& errors) {
  Reader reader(fileName, errors);
  std::vector<YAML::Node> documents;
  try {
    documents = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    ProfileError error;
    error.file = fileName;
    error.line = e.mark.line + 1;
    error.column = e.mark.column + 1;
    error.message = "invalid YAML: " + e.msg;
    errors.push_back(std::move(error));
    return;
  }
  for (const YAML::Node& doc : documents) {
    if (doc.IsNull()) continue;  // an empty document between separators
    try {
      readDocument(reader, doc, fileName, out);
    } catch (const YAML::Exception& e) {
      reader.error(doc, "", "invalid YAML: " + e.msg);
    }
  }
}

ProfileLoadResult buildProfileSet(std::vector<Profile> profiles, std::vector<ProfileError> errors,
                                  std::string source) {
  std::map<std::string, const Profile*> byName;
  for (const Profile& profile : profiles) {
    auto [it, inserted] = byName.emplace(profile.name, &profile);
    if (!inserted) {
      errors.push_back({profile.sourceFile, profile.sourceLine, 1, "metadata.name",
                        "duplicate profile name \"" + profile.name + "\" (first defined in " +
                            it->second->sourceFile + ":" + std::to_string(it->second->sourceLine) +
                            ")"});
    }
  }
  for (size_t i = 0; i < profiles.size(); ++i) {
    for (size_t j = i + 1; j < profiles.size(); ++j) {
      const Profile& a = profiles[i];
      const Profile& b = profiles[j];
      if (a.workloadClass != b.workloadClass || a.name == b.name) continue;
      if (scopeRank(a.scope) != scopeRank(b.scope) || !couldOverlap(a.scope, b.scope)) continue;
      errors.push_back({b.sourceFile, b.sourceLine, 1, "spec.scope",
                        "profiles \"" + a.name + "\" (" + a.sourceFile + ":" +
                            std::to_string(a.sourceLine) + ") and \"" + b.name +
                            "\" could both be selected for the same " +
                            std::string(className(a.workloadClass)) +
                            " workload with equal precedence; make one scope more specific"});
    }
  }
  if (profiles.empty() && errors.empty()) {
    errors.push_back({source, 0, 0, "", "no profiles found"});
  }
  ProfileLoadResult result;
  result.errors = std::move(errors);
  if (result.errors.empty()) {
    result.set = std::make_shared<const ProfileSet>(std::move(profiles), std::move(source));
  }
  return result;
}

ProfileLoadResult loadProfileText(std::string_view text, const std::string& fileName) {
  std::vector<Profile> profiles;
  std::vector<ProfileError> errors;
  parseProfileDocuments(text, fileName, profiles, errors);
  return buildProfileSet(std::move(profiles), std::move(errors), fileName);
}

ProfileLoadResult loadProfileDirectory(const std::string& directory) {
  namespace fs = std::filesystem;
  std::vector<Profile> profiles;
  std::vector<ProfileError> errors;
  std::error_code ec;
  std::vector<fs::path> files;
  for (fs::directory_iterator it(directory, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    const std::string extension = it->path().extension().string();
    if (extension != ".yaml" && extension != ".yml") continue;
    if (!fs::is_regular_file(it->path(), ec)) continue;
    files.push_back(it->path());
  }
  if (ec) {
    errors.push_back({directory, 0, 0, "", "cannot read profile directory: " + ec.message()});
    return buildProfileSet({}, std::move(errors), directory);
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& path : files) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      errors.push_back({path.string(), 0, 0, "", "cannot open file"});
      continue;
    }
    std::ostringstream text;
    text << in.rdbuf();
    parseProfileDocuments(text.str(), path.string(), profiles, errors);
  }
  return buildProfileSet(std::move(profiles), std::move(errors), directory);
}

}  // namespace aiadmit
