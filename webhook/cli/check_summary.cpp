#include "webhook/cli/check_summary.h"
#include "webhook/codec/text.h"

#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <ostream>
#include <tuple>

namespace aiadmit {

namespace {

using ObjectKey = std::tuple<std::string, std::string, std::string>;  // namespace, kind, name

struct ControllerRef {
  std::string_view kind, name, uid;
};

// The ownerReference with controller: true, as the API server allows only one.
std::optional<ControllerRef> controllerOf(const JsonValue& object) {
  const JsonValue* refs = member(member(&object, "metadata"), "ownerReferences");
  if (!isArray(refs)) return std::nullopt;
  for (const JsonValue& ref : refs->GetArray()) {
    const JsonValue* controller = member(&ref, "controller");
    if (controller == nullptr || !controller->IsBool() || !controller->GetBool()) continue;
    return ControllerRef{stringMember(&ref, "kind"), stringMember(&ref, "name"),
                         stringMember(&ref, "uid")};
  }
  return std::nullopt;
}

class OwnerIndex {
 public:
  explicit OwnerIndex(const std::vector<ReportInput>& inputs) : inputs_(inputs) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      const JsonValue* metadata = member(inputs[i].object, "metadata");
      const std::string_view uid = stringMember(metadata, "uid");
      if (!uid.empty()) byUid_.emplace(std::string(uid), i);
      byName_.emplace(key(inputs[i].namespaceName, stringMember(inputs[i].object, "kind"),
                          stringMember(metadata, "name")),
                      i);
    }
  }

  // The object a workload is counted under: the top of its chain of
  // controllers that are in the input.
  size_t rootOf(size_t index) const {
    // A chain is short (Pod, ReplicaSet, Deployment); the bound stops cycles.
    for (int depth = 0; depth < 8; ++depth) {
      const std::optional<size_t> parent = parentOf(index);
      if (!parent || *parent == index) break;
      index = *parent;
    }
    return index;
  }

 private:
  static ObjectKey key(std::string_view ns, std::string_view kind, std::string_view name) {
    return {std::string(ns), std::string(kind), std::string(name)};
  }

  std::optional<size_t> find(const ObjectKey& k) const {
    const auto at = byName_.find(k);
    if (at == byName_.end()) return std::nullopt;
    return at->second;
  }

  std::optional<size_t> parentOf(size_t index) const {
    const ReportInput& input = inputs_[index];
    const std::optional<ControllerRef> ref = controllerOf(*input.object);
    if (!ref) return std::nullopt;
    if (!ref->uid.empty()) {
      if (const auto at = byUid_.find(std::string(ref->uid)); at != byUid_.end()) {
        return at->second;
      }
    }
    if (auto found = find(key(input.namespaceName, ref->kind, ref->name))) return found;
    // `kubectl get pods,deployments` lists no ReplicaSets: a Deployment names
    // its ReplicaSets "<deployment>-<pod-template-hash>" and labels their Pods
    // with that hash, which leads from the Pod to the Deployment.
    if (ref->kind != "ReplicaSet") return std::nullopt;
    const std::string_view hash =
        stringMember(member(member(input.object, "metadata"), "labels"), "pod-template-hash");
    if (hash.empty() || ref->name.size() <= hash.size() + 1) return std::nullopt;
    const std::string_view prefix = ref->name.substr(0, ref->name.size() - hash.size() - 1);
    if (ref->name.substr(prefix.size()) != "-" + std::string(hash)) return std::nullopt;
    return find(key(input.namespaceName, "Deployment", prefix));
  }

  const std::vector<ReportInput>& inputs_;
  std::map<std::string, size_t> byUid_;
  std::map<ObjectKey, size_t> byName_;
};

void mergeDecision(std::vector<Evaluation::RuleDecision>& into,
                   const Evaluation::RuleDecision& decision) {
  auto at = std::lower_bound(into.begin(), into.end(), decision.rule,
                             [](const auto& d, RuleId r) { return d.rule < r; });
  if (at != into.end() && at->rule == decision.rule) {
    if (actionSeverity(decision.applied) > actionSeverity(at->applied)) *at = decision;
  } else {
    into.insert(at, decision);
  }
}

struct Workload {
  Offender offender;
  size_t evaluated = 0;
};

RuleAction strongest(const Offender& offender) {
  RuleAction action = RuleAction::Off;
  for (const auto& decision : offender.rules) {
    if (actionSeverity(decision.applied) > actionSeverity(action)) action = decision.applied;
  }
  return action;
}

size_t countApplied(const Offender& offender, RuleAction action) {
  return static_cast<size_t>(std::count_if(offender.rules.begin(), offender.rules.end(),
                                           [&](const auto& d) { return d.applied == action; }));
}

// Rules that would deny at --enforcement=deny.
size_t countWouldDeny(const Offender& offender) {
  return static_cast<size_t>(
      std::count_if(offender.rules.begin(), offender.rules.end(),
                    [](const auto& d) { return d.configured == RuleAction::Deny; }));
}

void countInto(std::map<std::string, GroupCount>& groups, const std::string& name,
               const Offender& offender) {
  GroupCount& group = groups[name];
  group.name = name;
  ++group.workloads;
  if (!offender.rules.empty()) ++group.violating;
  if (offender.denied) ++group.denied;
  group.violations += offender.rules.size();
}

std::vector<GroupCount> worstFirst(std::map<std::string, GroupCount> groups) {
  std::vector<GroupCount> out;
  for (auto& [name, group] : groups) out.push_back(std::move(group));
  std::stable_sort(out.begin(), out.end(), [](const GroupCount& a, const GroupCount& b) {
    return std::tie(b.denied, b.violating, b.violations, b.workloads) <
           std::tie(a.denied, a.violating, a.violations, a.workloads);
  });
  return out;
}

}  // namespace

CheckReport summarize(const std::vector<ReportInput>& inputs) {
  CheckReport report;
  const OwnerIndex owners(inputs);
  std::map<size_t, Workload> workloads;  // by the index of the object counted
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ReportInput& input = inputs[i];
    if (input.validation == nullptr) {
      ++report.skipped;
      continue;
    }
    ++report.objects;
    const size_t root = owners.rootOf(i);
    Workload& workload = workloads[root];
    ++workload.evaluated;
    if (root != i) ++workload.offender.owned;
    if (!input.admitted) workload.offender.denied = true;
    for (const auto& decision : input.validation->rules) {
      mergeDecision(workload.offender.rules, decision);
    }
  }

  std::map<RuleId, RuleCount> rules;
  std::map<std::string, GroupCount> namespaces, kinds;
  for (auto& [root, workload] : workloads) {
    Offender& offender = workload.offender;
    const JsonValue* object = inputs[root].object;
    offender.kind = std::string(stringMember(object, "kind"));
    offender.namespaceName = inputs[root].namespaceName;
    offender.name = std::string(stringMember(member(object, "metadata"), "name"));
    ++report.workloads;
    report.folded += workload.evaluated - (inputs[root].validation != nullptr ? 1 : 0);
    const RuleAction worst = strongest(offender);
    if (offender.denied) {
      ++report.denied;
    } else if (worst == RuleAction::Warn) {
      ++report.warned;
    } else if (worst == RuleAction::Audit) {
      ++report.auditedOnly;
    } else {
      ++report.clean;
    }
    for (const auto& decision : offender.rules) {
      RuleCount& count = rules[decision.rule];
      count.rule = decision.rule;
      if (decision.applied == RuleAction::Deny) ++count.denied;
      if (decision.applied == RuleAction::Warn) ++count.warned;
      if (decision.applied == RuleAction::Audit) ++count.audited;
    }
    countInto(namespaces, offender.namespaceName, offender);
    countInto(kinds, offender.kind, offender);
    if (offender.denied || !offender.rules.empty()) report.offenders.push_back(offender);
  }

  for (const auto& [rule, count] : rules) report.byRule.push_back(count);
  std::stable_sort(
      report.byRule.begin(), report.byRule.end(), [](const RuleCount& a, const RuleCount& b) {
        return std::tuple(b.denied, b.workloads()) < std::tuple(a.denied, a.workloads());
      });
  report.byNamespace = worstFirst(std::move(namespaces));
  report.byKind = worstFirst(std::move(kinds));
  std::stable_sort(report.offenders.begin(), report.offenders.end(),
                   [](const Offender& a, const Offender& b) {
                     const auto rank = [](const Offender& o) {
                       return std::tuple(o.denied, countApplied(o, RuleAction::Deny),
                                         countWouldDeny(o), o.rules.size(), o.owned);
                     };
                     return rank(b) < rank(a);
                   });
  return report;
}

namespace {

std::string rulesText(const std::vector<Evaluation::RuleDecision>& rules) {
  std::string out;
  for (const auto& decision : rules) {
    if (!out.empty()) out += ",";
    out += decision.rule.name() + "=" + std::string(actionName(decision.applied));
    // What the profile says, when --enforcement lowered it: "AIA009=audit(deny)".
    if (decision.configured != decision.applied) {
      out += "(" + std::string(actionName(decision.configured)) + ")";
    }
  }
  return out.empty() ? "-" : out;
}

// Rows of cells printed in columns, the first left-aligned, numbers right-aligned.
void printTable(std::ostream& out, const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line = " ";
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string pad(widths[c] - row[c].size(), ' ');
      line += " " + (c == 0 ? row[c] + pad : pad + row[c]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  }
}

void printGroups(std::ostream& out, const char* title, const std::vector<GroupCount>& groups) {
  std::vector<std::vector<std::string>> rows{
      {title, "WORKLOADS", "VIOLATING", "DENIED", "VIOLATIONS"}};
  for (const GroupCount& g : groups) {
    rows.push_back({g.name, std::to_string(g.workloads), std::to_string(g.violating),
                    std::to_string(g.denied), std::to_string(g.violations)});
  }
  printTable(out, rows);
}

}  // namespace

void printReportText(const CheckReport& report, std::ostream& out) {
  out << report.workloads << (report.workloads == 1 ? " workload" : " workloads") << " ("
      << report.objects << " objects, " << report.folded
      << " counted under their controller): " << report.denied << " denied, " << report.warned
      << " warned, " << report.auditedOnly << " audited only, " << report.clean << " clean";
  if (report.skipped > 0) {
    out << "; " << report.skipped << " skipped (not a kind that runs Pods)";
  }
  out << "\n";
  if (report.byRule.empty()) return;
  out << "\nRules broken, by workloads and the action applied:\n";
  std::vector<std::vector<std::string>> rules{{"RULE", "WORKLOADS", "DENY", "WARN", "AUDIT"}};
  for (const RuleCount& r : report.byRule) {
    rules.push_back({r.rule.name(), std::to_string(r.workloads()), std::to_string(r.denied),
                     std::to_string(r.warned), std::to_string(r.audited)});
  }
  printTable(out, rules);
  out << "\nBy namespace:\n";
  printGroups(out, "NAMESPACE", report.byNamespace);
  out << "\nBy kind:\n";
  printGroups(out, "KIND", report.byKind);
  out << "\nWorst offenders:\n";
  std::vector<std::vector<std::string>> offenders{{"WORKLOAD", "NAMESPACE", "DECISION", "RULES"}};
  for (const Offender& o : report.offenders) {
    // kubectl's "deployment/vllm".
    std::string label = lowercase(o.kind) + "/" + o.name;
    if (o.owned > 0) label += " (+" + std::to_string(o.owned) + " owned)";
    offenders.push_back(
        {label, o.namespaceName, o.denied ? "denied" : "admitted", rulesText(o.rules)});
  }
  // Left-aligned text columns read better here than right-aligned numbers.
  std::vector<size_t> widths(4, 0);
  for (const auto& row : offenders) {
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  for (const auto& row : offenders) {
    std::string line = " ";
    for (size_t c = 0; c < row.size(); ++c) {
      line +=
          " " + row[c] + (c + 1 < row.size() ? std::string(widths[c] - row[c].size(), ' ') : "");
    }
    out << line << "\n";
  }
}

namespace {

using JsonWriter = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

void field(JsonWriter& w, const char* key, std::string_view value) {
  w.Key(key);
  w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
}

void count(JsonWriter& w, const char* key, size_t value) {
  w.Key(key);
  w.Uint64(value);
}

// `key`: an array of one object per item, whose members writeMembers writes.
template <class Items, class WriteMembers>
void objects(JsonWriter& w, const char* key, const Items& items, WriteMembers writeMembers) {
  w.Key(key);
  w.StartArray();
  for (const auto& item : items) {
    w.StartObject();
    writeMembers(item);
    w.EndObject();
  }
  w.EndArray();
}

void writeGroups(JsonWriter& w, const char* key, const char* nameKey,
                 const std::vector<GroupCount>& groups) {
  objects(w, key, groups, [&](const GroupCount& g) {
    field(w, nameKey, g.name);
    count(w, "workloads", g.workloads);
    count(w, "violating", g.violating);
    count(w, "denied", g.denied);
    count(w, "violations", g.violations);
  });
}

}  // namespace

void printReportJson(const CheckReport& report, std::ostream& out) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.SetIndent(' ', 2);
  w.StartObject();
  count(w, "objects", report.objects);
  count(w, "workloads", report.workloads);
  count(w, "countedUnderController", report.folded);
  count(w, "denied", report.denied);
  count(w, "warned", report.warned);
  count(w, "auditedOnly", report.auditedOnly);
  count(w, "clean", report.clean);
  count(w, "skipped", report.skipped);
  objects(w, "byRule", report.byRule, [&](const RuleCount& r) {
    field(w, "rule", r.rule.name());
    count(w, "workloads", r.workloads());
    count(w, "deny", r.denied);
    count(w, "warn", r.warned);
    count(w, "audit", r.audited);
  });
  writeGroups(w, "byNamespace", "namespace", report.byNamespace);
  writeGroups(w, "byKind", "kind", report.byKind);
  objects(w, "offenders", report.offenders, [&](const Offender& o) {
    field(w, "kind", o.kind);
    field(w, "namespace", o.namespaceName);
    field(w, "name", o.name);
    w.Key("denied");
    w.Bool(o.denied);
    count(w, "owned", o.owned);
    objects(w, "rules", o.rules, [&](const auto& decision) {
      field(w, "rule", decision.rule.name());
      field(w, "action", actionName(decision.applied));
      if (decision.configured != decision.applied)
        field(w, "profileAction", actionName(decision.configured));
    });
  });
  w.EndObject();
  out << std::string_view(buffer.GetString(), buffer.GetSize()) << "\n";
}

}  // namespace aiadmit
