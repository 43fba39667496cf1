// The rule registry: the rule catalogue with its checks, one row per rule
// (validators/registry.cpp). The engine runs the rows in ID order, so that
// messages list violations deterministically.
#pragma once

#include <span>

#include "validators/claim_validator.h"
#include "validators/validator.h"
#include "webhook/codec/bounded_list.h"
#include "webhook/policy/rules.h"

namespace aiadmit {

// A rule's facts (its catalogue entry, which ruleCatalogue() hands the
// policy layer) and the declarations that check it: on a workload's
// templates, and on DRA claim objects.
struct RuleRow {
  RuleInfo rule;
  BoundedList<const ValidatorDeclaration*, 2> checks = {};
  BoundedList<const ClaimValidatorDeclaration*, 2> claimChecks = {};
};

// Every rule, in ID order.
std::span<const RuleRow> ruleRows();

}  // namespace aiadmit
