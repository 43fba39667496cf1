// A validator checks one rule (AIA001-AIA015) against the final object, the
// one the API server will store, and reports violations. The engine applies
// the profile's action (deny, warn, off) and formats the answer.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "webhook/admission.h"
#include "webhook/classify.h"
#include "webhook/json.h"
#include "webhook/profile.h"
#include "webhook/profile_set.h"
#include "webhook/rules.h"
#include "webhook/workload.h"

namespace aiadmit {

struct Violation {
  RuleId rule;
  std::string field;    // kubectl field path: spec.template.spec.containers[0].resources.limits
  std::string problem;  // what is wrong
  std::string fix;      // how to fix it

  // "[AIA004] spec.containers[0].resources.limits: ...; ..."
  std::string format() const;
  bool operator==(const Violation&) const = default;
};

struct ValidationContext {
  const JsonValue& object;
  WorkloadKind kind;
  PodTemplateView view;
  const Classification& classification;
  // The selected profile; null for objects that are not AI workloads (only
  // validators that apply to unclassified objects run then) or when no
  // profile applies.
  const Profile* profile;
  const ProfileSet& profiles;
  std::string_view namespaceName;
  Operation operation;
};

class Validator {
 public:
  virtual ~Validator() = default;
  virtual RuleId rule() const = 0;
  // Most rules only concern AI workloads; AIA007 also looks at the rest.
  virtual bool appliesToUnclassified() const { return false; }
  virtual void check(const ValidationContext& context, std::vector<Violation>& out) const = 0;
};

// All validators, in rule order (validators/registry.cpp).
const std::vector<std::unique_ptr<const Validator>>& allValidators();

// "spec.template.spec.containers[1]" for the container at `index` of `list`.
std::string containerFieldPath(WorkloadKind kind, ContainerList list, size_t index);

}  // namespace aiadmit
