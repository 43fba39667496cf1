// `aiadmit check --summary`: a policy report of a set of objects, typically
// the cluster as it stands (`kubectl get pods,deployments,... -A -o yaml`).
// Counts by rule, namespace and kind, worst first. Objects a controller of
// the same input owns are counted under that controller, not twice.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "webhook/codec/json.h"
#include "webhook/engine/engine.h"

namespace aiadmit {

// One object of the input; `validation` is null for objects check skipped
// (kinds it does not admit), which still count as owners.
struct ReportInput {
  const JsonValue* object = nullptr;
  std::string namespaceName;
  const Evaluation* validation = nullptr;
  bool admitted = true;
};

struct RuleCount {
  RuleId rule;
  size_t denied = 0, warned = 0, audited = 0;  // workloads, by the action applied
  size_t workloads() const { return denied + warned + audited; }
};

struct GroupCount {
  std::string name;  // a namespace, or a kind
  size_t workloads = 0;
  size_t violating = 0;  // workloads that break at least one rule
  size_t denied = 0;
  size_t violations = 0;  // rule breaches, one per workload and rule
};

// A workload that breaks rules: an object nothing else in the input controls,
// with what the objects it controls broke.
struct Offender {
  std::string kind, namespaceName, name;
  bool denied = false;
  std::vector<Evaluation::RuleDecision> rules;  // in rule order, strongest action per rule
  size_t owned = 0;                             // objects counted under it
};

struct CheckReport {
  size_t objects = 0;    // objects checked
  size_t workloads = 0;  // what is counted: objects less those counted under a controller
  size_t folded = 0;     // objects counted under their controller
  size_t skipped = 0;    // objects of kinds check does not admit (they may own others)
  size_t denied = 0, warned = 0, auditedOnly = 0, clean = 0;  // workloads
  std::vector<RuleCount> byRule;
  std::vector<GroupCount> byNamespace;
  std::vector<GroupCount> byKind;
  std::vector<Offender> offenders;
};

CheckReport summarize(const std::vector<ReportInput>& inputs);

void printReportText(const CheckReport& report, std::ostream& out);
void printReportJson(const CheckReport& report, std::ostream& out);

}  // namespace aiadmit
